//! `memctl install` / `uninstall`: merge our hook entries (and, on request, the status line)
//! into Claude Code's settings files; with `--agent codex|gemini`, into Codex's `hooks.json`
//! and `config.toml` or Gemini CLI's `settings.json` ([`agents`]).
//!
//! The files belong to the user: unknown keys and other hooks are preserved exactly (typed
//! structs with flattened "everything else" maps), our entries are recognised by the
//! `memctl-hook` command name, the merge is idempotent, and a file is replaced atomically
//! (temp file + rename) so a crash never leaves half a settings file.
//!
//! [`command`] is the command itself (which file, which binary name, the warnings);
//! [`sources`] finds every place memctl's hooks are installed (for the double-install warning
//! and `memctl doctor`).

pub mod agents;
#[cfg(test)]
mod agents_tests;
mod claude_md;
pub mod command;
pub mod sources;
#[cfg(test)]
mod tests;

pub use command::{InstallArgs, InstallEnv};

use crate::claude::HookEventName;
use anyhow::{Context, Result};
pub use claude_md::claude_md;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// Our events ([`HookEventName::ALL`]), their matcher ([`HookEventName::tool_matcher`]) and
/// timeout ([`HookEventName::install_timeout_secs`]) come from the adapter's hook policy.
pub const EVENTS: [HookEventName; 7] = HookEventName::ALL;

/// Marker that identifies our hook commands.
pub const HOOK_BIN: &str = "memctl-hook";

/// A Claude Code settings file, as far as memctl reads or writes it.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Settings {
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    hooks: Map<String, Value>,
    #[serde(
        rename = "statusLine",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    status_line: Option<StatusLine>,
    #[serde(
        rename = "enabledPlugins",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    enabled_plugins: Option<Map<String, Value>>,
    #[serde(flatten)]
    rest: Map<String, Value>,
}

/// `statusLine`: `{"type": "command", "command": "..."}` (other keys, e.g. `padding`, kept).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct StatusLine {
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    command: Option<String>,
    #[serde(flatten)]
    rest: Map<String, Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct MatcherGroup {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    matcher: Option<String>,
    #[serde(default)]
    hooks: Vec<HookEntry>,
    #[serde(flatten)]
    rest: Map<String, Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct HookEntry {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    command: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timeout: Option<u32>,
    #[serde(flatten)]
    rest: Map<String, Value>,
}

fn is_ours(e: &HookEntry) -> bool {
    e.command.contains(HOOK_BIN)
}

/// How settings name a binary and the data dir: `<bin> [--data-dir <dir>] <args>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The binary as written: a bare name (found on PATH) or a quoted absolute path.
    pub bin: String,
    /// `--data-dir` carried into the command (absolute).
    pub data_dir: Option<PathBuf>,
}

impl Invocation {
    /// The command line for `args` (e.g. an event name, or `statusline`).
    pub fn command(&self, args: &str) -> String {
        match &self.data_dir {
            Some(d) => format!("{} --data-dir {} {args}", self.bin, shell_quote(d)),
            None => format!("{} {args}", self.bin),
        }
    }

    /// Whether the command holds no path of this machine (fit for a committed settings file).
    pub fn portable(&self) -> bool {
        self.data_dir.is_none() && !self.bin.contains('/')
    }
}

/// Quote a path for a POSIX shell when it needs it (Claude Code runs hook commands with sh).
pub fn shell_quote(p: &Path) -> String {
    let s = p.display().to_string();
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c))
    {
        s
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Read a settings file; a missing or empty file is empty settings, invalid JSON an error
/// (we never overwrite a file we cannot read).
pub fn load(path: &Path) -> Result<Settings> {
    load_json(path)
}

/// [`load`] for any JSON settings file memctl edits (Claude Code's, Codex's `hooks.json`,
/// Gemini CLI's `settings.json`).
pub(crate) fn load_json<T: DeserializeOwned + Default>(path: &Path) -> Result<T> {
    match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Ok(T::default()),
        Ok(text) => serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not valid settings JSON; not touching it",
                path.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(T::default()),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

fn groups(hooks: &Map<String, Value>, event: &str) -> Result<Vec<MatcherGroup>> {
    match hooks.get(event) {
        None => Ok(Vec::new()),
        Some(v) => serde_json::from_value(v.clone())
            .with_context(|| format!("hooks.{event} has an unexpected shape; not touching it")),
    }
}

/// One hook entry install writes: the event, its matcher and timeout (in the agent's unit),
/// and the arguments after the binary (`<Event>`, or `--agent codex <Event>`).
#[derive(Debug, Clone)]
pub(crate) struct HookSpec {
    pub(crate) event: &'static str,
    pub(crate) matcher: Option<String>,
    pub(crate) timeout: u32,
    pub(crate) args: String,
}

/// Claude Code's entries, from its hook policy.
fn claude_specs() -> Vec<HookSpec> {
    EVENTS
        .iter()
        .map(|ev| HookSpec {
            event: ev.as_str(),
            matcher: ev.tool_matcher(),
            timeout: ev.install_timeout_secs(),
            args: ev.as_str().to_string(),
        })
        .collect()
}

/// Merge our entries into a `hooks` table (the shape Claude Code, Codex and Gemini CLI share:
/// event → matcher groups → entries), each running `hook`. Idempotent; existing entries of
/// ours are updated in place, so a changed binary path or data dir replaces the old one.
pub(crate) fn merge_table(
    hooks: &mut Map<String, Value>,
    specs: &[HookSpec],
    hook: &Invocation,
) -> Result<()> {
    for spec in specs {
        let mut gs = groups(hooks, spec.event)?;
        let command = hook.command(&spec.args);
        let mut found = false;
        for g in &mut gs {
            for e in g.hooks.iter_mut().filter(|e| is_ours(e)) {
                found = true;
                e.command.clone_from(&command);
                e.timeout = Some(spec.timeout);
            }
        }
        if !found {
            gs.push(MatcherGroup {
                matcher: spec.matcher.clone(),
                hooks: vec![HookEntry {
                    kind: "command".into(),
                    command,
                    timeout: Some(spec.timeout),
                    rest: Map::new(),
                }],
                rest: Map::new(),
            });
        }
        hooks.insert(spec.event.to_string(), serde_json::to_value(gs)?);
    }
    Ok(())
}

/// Remove our entries from a `hooks` table (and groups and events left empty). A value that is
/// no list of matcher groups (a flag some agent versions keep there) is not ours: left as is.
pub(crate) fn remove_from_table(hooks: &mut Map<String, Value>) -> Result<()> {
    let events: Vec<String> = hooks
        .iter()
        .filter(|(_, v)| v.is_array())
        .map(|(k, _)| k.clone())
        .collect();
    for event in events {
        let mut gs = groups(hooks, &event)?;
        for g in &mut gs {
            g.hooks.retain(|e| !is_ours(e));
        }
        gs.retain(|g| !g.hooks.is_empty());
        if gs.is_empty() {
            hooks.remove(&event);
        } else {
            hooks.insert(event, serde_json::to_value(gs)?);
        }
    }
    Ok(())
}

/// Our entries of `events` in a `hooks` table: (event, command).
pub(crate) fn ours_in_table(
    hooks: &Map<String, Value>,
    events: &[&str],
) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for &event in events {
        for g in groups(hooks, event)? {
            for e in g.hooks.iter().filter(|e| is_ours(e)) {
                out.push((event.to_string(), e.command.clone()));
            }
        }
    }
    Ok(out)
}

impl Settings {
    /// The settings as the file text we write (pretty JSON, trailing newline).
    pub(crate) fn text(&self) -> Result<String> {
        Ok(serde_json::to_string_pretty(self)? + "\n")
    }

    /// Merge our hook entries, each running `hook` ([`merge_table`]).
    pub(crate) fn merge_hooks(&mut self, hook: &Invocation) -> Result<()> {
        merge_table(&mut self.hooks, &claude_specs(), hook)
    }

    /// Remove our hook entries (and groups left empty).
    pub(crate) fn remove_hooks(&mut self) -> Result<()> {
        remove_from_table(&mut self.hooks)
    }

    /// Our hook entries: (event, command).
    pub(crate) fn our_hooks(&self) -> Result<Vec<(String, String)>> {
        ours_in_table(&self.hooks, &EVENTS.map(HookEventName::as_str))
    }

    /// The status line command, when one is set.
    pub fn status_command(&self) -> Option<&str> {
        self.status_line.as_ref()?.command.as_deref()
    }

    /// Set the status line to `command`. Returns the command already there when it is
    /// someone else's and `force` is off (then nothing changes).
    pub(crate) fn set_status_line(&mut self, command: &str, force: bool) -> Option<String> {
        if let Some(old) = self.status_command()
            && !is_our_statusline(old)
            && !force
        {
            return Some(old.to_string());
        }
        let mut line = self.status_line.take().unwrap_or(StatusLine {
            kind: None,
            command: None,
            rest: Map::new(),
        });
        line.kind = Some("command".into());
        line.command = Some(command.to_string());
        self.status_line = Some(line);
        None
    }

    /// Remove the status line when it is ours.
    pub(crate) fn remove_status_line(&mut self) {
        if self.status_command().is_some_and(is_our_statusline) {
            self.status_line = None;
        }
    }

    /// Enabled plugins named `memctl` (`memctl@<marketplace>`): they install the same hooks.
    pub(crate) fn memctl_plugins(&self) -> Vec<String> {
        self.enabled_plugins
            .iter()
            .flatten()
            .filter(|(k, v)| k.split('@').next() == Some("memctl") && v.as_bool() == Some(true))
            .map(|(k, _)| k.clone())
            .collect()
    }
}

/// Whether a status line command is `memctl [--data-dir D] statusline` (any path to memctl).
pub fn is_our_statusline(command: &str) -> bool {
    let Some(words) = shlex::split(command) else {
        return false;
    };
    let named_memctl = words
        .first()
        .and_then(|b| Path::new(b).file_name())
        .is_some_and(|n| n == "memctl");
    named_memctl && words.last().is_some_and(|w| w == "statusline")
}

/// Write `text` to `path` atomically (temp file in the same directory, then rename).
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let dir = path.parent().context("settings path has no directory")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.memctl-{}", std::process::id()));
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("replacing {}", path.display()))?;
    Ok(())
}

/// Which of our events are installed in `path`, and their commands.
pub fn installed(path: &Path) -> Result<Vec<(String, String)>> {
    load(path)?.our_hooks()
}
