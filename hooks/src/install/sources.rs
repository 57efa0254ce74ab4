//! Every place Claude Code would take memctl's hooks from: the user, project and local settings
//! files, and an enabled `memctl` plugin (its `hooks/hooks.json` runs the same events).
//!
//! Why it matters: Claude Code merges hooks from all of them and runs each distinct command, so
//! hooks installed twice archive every turn twice and inject restore blocks twice. Identical
//! command strings are deduplicated by Claude Code (its hooks reference), so two files with the
//! very same commands are a warning, not a fault; the plugin's commands (through its launcher)
//! never equal an installed command.

use super::command::{InstallEnv, Scope};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// memctl's hooks in one settings file.
#[derive(Debug, Clone)]
pub struct FileHooks {
    /// Which scope.
    pub scope: Scope,
    /// The settings file.
    pub path: PathBuf,
    /// (event, command) of each of our entries.
    pub hooks: Vec<(String, String)>,
}

/// A `memctl` plugin enabled in a settings file.
#[derive(Debug, Clone)]
pub struct PluginUse {
    /// `memctl@<marketplace>`.
    pub key: String,
    /// The settings file that enables it.
    pub path: PathBuf,
}

/// What [`Found::scan`] saw.
#[derive(Debug, Clone, Default)]
pub struct Found {
    /// Every settings file (of the scopes that have one), with our entries (maybe none).
    pub files: Vec<FileHooks>,
    /// Enabled memctl plugins.
    pub plugins: Vec<PluginUse>,
    /// Settings files that could not be read: (file, error).
    pub unreadable: Vec<(PathBuf, String)>,
}

/// Hooks installed in more than one place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoubleInstall {
    /// Each place, e.g. `user (~/.claude/settings.json)` or `plugin memctl@memctl (...)`.
    pub places: Vec<String>,
    /// Every place runs the very same commands (Claude Code then runs them once).
    pub identical: bool,
}

impl Found {
    /// Read the settings files of every scope.
    pub fn scan(env: &InstallEnv) -> Self {
        let mut found = Found::default();
        for scope in Scope::ALL {
            let Ok(path) = env.settings_file(scope) else {
                continue;
            };
            let hooks = super::load(&path).and_then(|s| {
                for key in s.memctl_plugins() {
                    if !found.plugins.iter().any(|p| p.key == key) {
                        found.plugins.push(PluginUse {
                            key,
                            path: path.clone(),
                        });
                    }
                }
                s.our_hooks()
            });
            match hooks {
                Ok(hooks) => found.files.push(FileHooks { scope, path, hooks }),
                Err(e) => found.unreadable.push((path, format!("{e:#}"))),
            }
        }
        found
    }

    /// The files that hold our hooks.
    pub fn installed(&self) -> impl Iterator<Item = &FileHooks> {
        self.files.iter().filter(|f| !f.hooks.is_empty())
    }

    /// Our hooks in more than one place, if they are.
    pub fn double_install(&self) -> Option<DoubleInstall> {
        let mut places: Vec<String> = self
            .installed()
            .map(|f| format!("{} ({})", f.scope.name(), f.path.display()))
            .collect();
        places.extend(
            self.plugins
                .iter()
                .map(|p| format!("plugin {} (enabled in {})", p.key, p.path.display())),
        );
        if places.len() < 2 {
            return None;
        }
        let sets: BTreeSet<Vec<(String, String)>> = self
            .installed()
            .map(|f| {
                let mut h = f.hooks.clone();
                h.sort();
                h
            })
            .collect();
        Some(DoubleInstall {
            places,
            identical: self.plugins.is_empty() && sets.len() == 1,
        })
    }
}

impl DoubleInstall {
    /// One line for the user: where, what happens, what to do.
    pub fn message(&self) -> String {
        let what = if self.identical {
            "with identical commands, which Claude Code runs once; keep one anyway, so that a later \
             install in one place does not make them differ"
        } else {
            "Claude Code runs each of them, so every event is archived and restored twice; keep one"
        };
        format!(
            "memctl's hooks are installed in {} places: {}; {what} (memctl uninstall --user, \
             --project or --local; or disable the plugin with /plugin)",
            self.places.len(),
            self.places.join(", ")
        )
    }
}
