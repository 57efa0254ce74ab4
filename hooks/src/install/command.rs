//! The `memctl install` / `uninstall` command: which settings file, how the binaries are named,
//! the status line, and the double-install warning.
//!
//! Which file, for the project scope: Claude Code's `.claude/settings.json` is shared (teams
//! commit it), `.claude/settings.local.json` is this machine's (untracked). A hook command
//! that names a path of this machine (a checkout's `target/release/memctl-hook`, or a
//! `--data-dir`) is useless, even harmful, to a teammate, so install writes it to
//! `settings.local.json`; a command that is just `memctl-hook <Event>` (the binary found on
//! PATH, e.g. after `cargo install --locked --path cli && cargo install --locked --path hooks`) works for everyone who installed memctl and
//! goes to `settings.json`. `--local` and `--project` choose the file explicitly.

use super::{Invocation, Settings, load, sources, write_atomic};
use crate::agent::Agent;
use anyhow::{Context, Result, bail};
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `memctl install` / `uninstall`.
#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// The coding agent: Claude Code (the default), Codex CLI (`.codex/hooks.json` and
    /// `config.toml`) or Gemini CLI (`.gemini/settings.json`); with --user, the agent's own
    /// config dir.
    #[arg(long, value_parser = crate::agent::parse_agent, default_value_t = Agent::ClaudeCode)]
    pub agent: Agent,
    /// This project's shared `.claude/settings.json` (the default when the hook commands hold
    /// no path of this machine).
    #[arg(long, conflicts_with_all = ["user", "local"])]
    pub project: bool,
    /// This project's untracked `.claude/settings.local.json` (the default when the hook
    /// commands name a path of this machine: a binary not on PATH, or --data-dir).
    #[arg(long, conflicts_with = "user")]
    pub local: bool,
    /// The user's `~/.claude/settings.json` (every project).
    #[arg(long)]
    pub user: bool,
    /// Also set (uninstall: remove) `memctl statusline` as Claude Code's status line, in the
    /// user settings (the only place Claude Code reads it).
    #[arg(long)]
    pub statusline: bool,
    /// With --statusline: replace a status line that is not memctl's.
    #[arg(long)]
    pub force: bool,
    /// Print the resulting settings instead of writing them.
    #[arg(long)]
    pub dry_run: bool,
    /// Also add (uninstall: remove) the memory protocol block in ./CLAUDE.md.
    #[arg(long)]
    pub claude_md: bool,
}

/// An agent's user config dir: Claude Code's `CLAUDE_CONFIG_DIR` (else `~/.claude`), Codex's
/// `CODEX_HOME` (else `~/.codex`), Gemini CLI's `~/.gemini`. `None` without a home.
pub fn agent_dir(s: &memctl_engine::Settings, agent: Agent) -> Option<PathBuf> {
    let home = |dir: &str| s.home_dir.as_ref().map(|h| h.join(dir));
    match agent {
        Agent::ClaudeCode => s.restore.claude_dir.clone(),
        Agent::Codex => std::env::var_os("CODEX_HOME")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| home(".codex")),
        Agent::Gemini => home(".gemini"),
    }
}

/// What install needs from the outside world (read once by the binary; tests build it).
#[derive(Debug, Clone)]
pub struct InstallEnv {
    /// Claude Code's user config dir (`CLAUDE_CONFIG_DIR`, else `~/.claude`).
    pub claude_dir: Option<PathBuf>,
    /// Codex's user config dir (`CODEX_HOME`, else `~/.codex`).
    pub codex_home: Option<PathBuf>,
    /// Gemini CLI's user settings dir (`~/.gemini`).
    pub gemini_dir: Option<PathBuf>,
    /// The project (the current directory).
    pub project_dir: PathBuf,
    /// `PATH`, to name binaries by their bare name when the shell finds these very files.
    pub path_var: Option<OsString>,
    /// The directory of memctl's binaries (the running executable's).
    pub bin_dir: PathBuf,
    /// `--data-dir` as given on the command line: carried into every command written.
    pub data_dir: Option<PathBuf>,
    /// Where the plugin's launcher (`plugin/bin/memctl-run`) looks besides PATH:
    /// `$MEMCTL_BIN_DIR`, then `~/.cargo/bin`.
    pub launcher_dirs: Vec<PathBuf>,
}

impl InstallEnv {
    /// The environment of this process.
    pub fn current(s: &memctl_engine::Settings, data_dir: Option<&Path>) -> Result<Self> {
        let project_dir = std::env::current_dir().context("current directory")?;
        let exe = std::env::current_exe().context("locating the memctl executable")?;
        let bin_dir = exe
            .parent()
            .context("the executable has no directory")?
            .to_path_buf();
        let launcher_dirs = std::env::var_os("MEMCTL_BIN_DIR")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .into_iter()
            .chain(s.home_dir.as_ref().map(|h| h.join(".cargo/bin")))
            .collect();
        Ok(Self {
            claude_dir: agent_dir(s, Agent::ClaudeCode),
            codex_home: agent_dir(s, Agent::Codex),
            gemini_dir: agent_dir(s, Agent::Gemini),
            launcher_dirs,
            data_dir: data_dir.map(|d| project_dir.join(d)),
            project_dir,
            path_var: std::env::var_os("PATH"),
            bin_dir,
        })
    }

    /// The settings file of a scope.
    pub fn settings_file(&self, scope: Scope) -> Result<PathBuf> {
        Ok(match scope {
            Scope::User => self
                .claude_dir
                .as_ref()
                .context("HOME is not set: no user settings")?
                .join("settings.json"),
            Scope::Project => self.project_dir.join(".claude/settings.json"),
            Scope::Local => self.project_dir.join(".claude/settings.local.json"),
        })
    }

    /// How settings run our binary `name`: its bare name when a shell with this `PATH` finds
    /// this very file, else its absolute path; plus `--data-dir` when one was given.
    pub fn invocation(&self, name: &str) -> Result<Invocation> {
        let path = self.bin_dir.join(name);
        if !path.is_file() {
            bail!(
                "{} not found: build it (cargo build --release) or install it (cargo install --locked --path cli && cargo install --locked --path hooks)",
                path.display()
            );
        }
        let bin = if self.resolves_to(name, &path) {
            name.to_string()
        } else {
            super::shell_quote(&path)
        };
        Ok(Invocation {
            bin,
            data_dir: self.data_dir.clone(),
        })
    }

    /// Whether `name` on `PATH` is the file `path`.
    pub fn resolves_to(&self, name: &str, path: &Path) -> bool {
        let found = self.which(name);
        let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
        found.is_some_and(|f| same(&f, path))
    }

    /// `name` as a shell with this `PATH` finds it.
    pub fn which(&self, name: &str) -> Option<PathBuf> {
        which::which_in(name, self.path_var.as_ref(), &self.project_dir).ok()
    }
}

/// A Claude Code settings scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `~/.claude/settings.json`.
    User,
    /// `.claude/settings.json` (shared).
    Project,
    /// `.claude/settings.local.json` (this machine).
    Local,
}

impl Scope {
    /// Every scope, in the order Claude Code lists them.
    pub const ALL: [Scope; 3] = [Scope::User, Scope::Project, Scope::Local];

    /// `user`, `project`, `local`.
    pub fn name(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
        }
    }
}

/// The files one run edits, each loaded once (the hooks' file and the user settings may be
/// the same file).
#[derive(Default)]
struct Edits(Vec<(PathBuf, Settings, String)>);

impl Edits {
    fn get(&mut self, path: &Path) -> Result<&mut Settings> {
        let i = match self.0.iter().position(|(p, _, _)| p == path) {
            Some(i) => i,
            None => {
                let s = load(path)?;
                let before = s.text()?;
                self.0.push((path.to_path_buf(), s, before));
                self.0.len() - 1
            }
        };
        Ok(&mut self.0[i].1)
    }
}

/// Run `memctl install` (`add`) or `uninstall`.
pub fn run(a: &InstallArgs, add: bool, env: &InstallEnv, out: &mut dyn Write) -> Result<()> {
    if a.agent != Agent::ClaudeCode {
        return super::agents::run(a, add, env, out);
    }
    if a.claude_md {
        super::claude_md(add, a.dry_run, out)?;
    }
    let mut edits = Edits::default();
    let hook_files = if add {
        vec![add_hooks(a, env, &mut edits, out)?]
    } else {
        remove_hooks(a, env, &mut edits)?
    };
    if a.statusline {
        edit_status_line(a, add, env, &mut edits)?;
    }
    let Some(changed) = write_or_preview(a, &edits, out)? else {
        return Ok(());
    };
    let events = super::EVENTS.map(|e| e.as_str()).join(", ");
    for path in &hook_files {
        let did = changed.iter().any(|p| p == path);
        match (add, did) {
            (true, true) => writeln!(out, "installed hooks in {}: {events}", path.display())?,
            (false, true) => writeln!(out, "removed hooks from {}", path.display())?,
            (true, false) => writeln!(out, "{}: already installed", path.display())?,
            (false, false) => writeln!(out, "{}: already clean", path.display())?,
        }
    }
    if a.statusline {
        let path = env.settings_file(Scope::User)?;
        let did = changed.contains(&path);
        let what = match (add, did) {
            (true, true) => "status line set to memctl statusline",
            (true, false) => "status line already memctl statusline",
            (false, true) => "removed memctl's status line",
            (false, false) => "no memctl status line to remove",
        };
        writeln!(out, "{}: {what}", path.display())?;
    }
    if add {
        // After the write: report what Claude Code will now see, every file included.
        if let Some(w) = sources::Found::scan(env).double_install() {
            eprintln!("memctl: warning: {}", w.message());
        }
    }
    Ok(())
}

/// Merge the hooks into the settings file the flags (or the command's portability) choose;
/// returns that file. A command naming paths of this machine goes to the untracked local file
/// unless `--project` says otherwise, with a note either way.
fn add_hooks(
    a: &InstallArgs,
    env: &InstallEnv,
    edits: &mut Edits,
    out: &mut dyn Write,
) -> Result<PathBuf> {
    let hook = env.invocation(super::HOOK_BIN)?;
    let scope = if a.user {
        Scope::User
    } else if a.local || (!a.project && !hook.portable()) {
        Scope::Local
    } else {
        Scope::Project
    };
    let note = if scope == Scope::Local && !a.local {
        Some(format!(
            "note: the hook commands name paths of this machine ({}), so they go to the untracked \
             .claude/settings.local.json; with memctl-hook on PATH (cargo install --locked --path cli && cargo install --locked --path hooks) and no \
             --data-dir they would go to the shared .claude/settings.json (--project forces that)",
            hook.command("<Event>")
        ))
    } else if scope == Scope::Project && !hook.portable() {
        Some(format!(
            "note: .claude/settings.json is usually committed, and these commands name paths of this machine: {}",
            hook.command("<Event>")
        ))
    } else {
        None
    };
    // A dry run's stdout is the settings text alone.
    match note {
        Some(n) if a.dry_run => eprintln!("memctl: {n}"),
        Some(n) => writeln!(out, "{n}")?,
        None => {}
    }
    let path = env.settings_file(scope)?;
    edits.get(&path)?.merge_hooks(&hook)?;
    Ok(path)
}

/// Remove the hooks from the files the flags name (default: both project files).
fn remove_hooks(a: &InstallArgs, env: &InstallEnv, edits: &mut Edits) -> Result<Vec<PathBuf>> {
    let scopes: &[Scope] = if a.user {
        &[Scope::User]
    } else if a.local {
        &[Scope::Local]
    } else if a.project {
        &[Scope::Project]
    } else {
        &[Scope::Project, Scope::Local]
    };
    let mut files = Vec::new();
    for &scope in scopes {
        let path = env.settings_file(scope)?;
        edits.get(&path)?.remove_hooks()?;
        files.push(path);
    }
    Ok(files)
}

/// Set (never over another one without `--force`) or remove memctl's status line in the
/// user settings, the only place Claude Code reads it.
fn edit_status_line(a: &InstallArgs, add: bool, env: &InstallEnv, edits: &mut Edits) -> Result<()> {
    let path = env.settings_file(Scope::User)?;
    let user = edits.get(&path)?;
    if add {
        let command = env.invocation("memctl")?.command("statusline");
        if let Some(old) = user.set_status_line(&command, a.force) {
            bail!(
                "{} already has a status line: {old:?}; not replacing it (nothing written): \
                 rerun with --force to replace it, or without --statusline",
                path.display()
            );
        }
    } else {
        user.remove_status_line();
    }
    Ok(())
}

/// Write the files that changed and return them; a dry run prints every file's text instead
/// (stdout stays the files' text, a preview to diff or pipe; where it would go is said on
/// stderr) and returns `None`.
fn write_or_preview(
    a: &InstallArgs,
    edits: &Edits,
    out: &mut dyn Write,
) -> Result<Option<Vec<PathBuf>>> {
    let mut changed = Vec::new();
    for (path, s, before) in &edits.0 {
        let text = s.text()?;
        if a.dry_run {
            let verb = if text == *before {
                "unchanged"
            } else {
                "would write"
            };
            eprintln!("memctl: dry run: {verb} {}", path.display());
            if edits.0.len() > 1 {
                writeln!(out, "--- {}", path.display())?;
            }
            write!(out, "{text}")?;
        } else if text != *before {
            changed.push((path.clone(), text));
        }
    }
    if a.dry_run {
        return Ok(None);
    }
    for (path, text) in &changed {
        write_atomic(path, text)?;
    }
    Ok(Some(changed.into_iter().map(|(p, _)| p).collect()))
}
