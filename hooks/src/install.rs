//! `memctl install` / `uninstall`: merge our hook entries into Claude Code's settings.json.
//!
//! The file belongs to the user: unknown keys and other hooks are preserved exactly (typed
//! structs with flattened "everything else" maps), our entries are recognised by the
//! `memctl-hook` command name, the merge is idempotent, and the file is replaced atomically
//! (temp file + rename) so a crash never leaves half a settings file.

use anyhow::{Context, Result};
use memctl_engine::hooks::HookEventName;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// Our events ([`HookEventName::ALL`]), their matcher ([`HookEventName::tool_matcher`]) and
/// timeout ([`HookEventName::install_timeout_secs`]) come from the engine's hook policy.
pub const EVENTS: [HookEventName; 7] = HookEventName::ALL;

/// Marker that identifies our hook commands.
pub const HOOK_BIN: &str = "memctl-hook";

#[derive(Debug, Default, Serialize, Deserialize)]
struct Settings {
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    hooks: Map<String, Value>,
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

/// The settings file for a scope (`home`: the user's home directory, `HOME`).
pub fn settings_path(user: bool, home: Option<&Path>) -> Result<PathBuf> {
    if user {
        let home = home.context("HOME is not set")?;
        Ok(home.join(".claude/settings.json"))
    } else {
        Ok(std::env::current_dir()?.join(".claude/settings.json"))
    }
}

/// The `memctl-hook` binary next to the running executable.
pub fn hook_binary() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("locating the memctl executable")?;
    let dir = exe.parent().context("executable has no directory")?;
    Ok(dir.join(HOOK_BIN))
}

fn shell_quote(p: &Path) -> String {
    let s = p.display().to_string();
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c))
    {
        s
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn load(path: &Path) -> Result<Settings> {
    match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Ok(Settings::default()),
        Ok(text) => serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not valid settings JSON; not touching it",
                path.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Settings::default()),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

fn groups(s: &Settings, event: &str) -> Result<Vec<MatcherGroup>> {
    match s.hooks.get(event) {
        None => Ok(Vec::new()),
        Some(v) => serde_json::from_value(v.clone())
            .with_context(|| format!("hooks.{event} has an unexpected shape; not touching it")),
    }
}

/// Merge our entries (idempotent). Returns the new JSON text and whether it changed.
pub fn merged(path: &Path, hook_bin: &Path) -> Result<(String, bool)> {
    let mut s = load(path)?;
    let before = serde_json::to_string(&s)?;
    for ev in EVENTS {
        let (event, timeout) = (ev.as_str(), ev.install_timeout_secs());
        let mut gs = groups(&s, event)?;
        let command = format!("{} {event}", shell_quote(hook_bin));
        let mut found = false;
        for g in &mut gs {
            for e in g.hooks.iter_mut().filter(|e| is_ours(e)) {
                found = true;
                e.command.clone_from(&command);
                e.timeout = Some(timeout);
            }
        }
        if !found {
            gs.push(MatcherGroup {
                matcher: ev.tool_matcher(),
                hooks: vec![HookEntry {
                    kind: "command".into(),
                    command,
                    timeout: Some(timeout),
                    rest: Map::new(),
                }],
                rest: Map::new(),
            });
        }
        s.hooks.insert(event.to_string(), serde_json::to_value(gs)?);
    }
    let after = serde_json::to_string(&s)?;
    Ok((serde_json::to_string_pretty(&s)? + "\n", before != after))
}

/// Remove our entries. Returns the new JSON text and whether it changed.
pub fn removed(path: &Path) -> Result<(String, bool)> {
    let mut s = load(path)?;
    let before = serde_json::to_string(&s)?;
    let events: Vec<String> = s.hooks.keys().cloned().collect();
    for event in events {
        let mut gs = groups(&s, &event)?;
        for g in &mut gs {
            g.hooks.retain(|e| !is_ours(e));
        }
        gs.retain(|g| !g.hooks.is_empty());
        if gs.is_empty() {
            s.hooks.remove(&event);
        } else {
            s.hooks.insert(event, serde_json::to_value(gs)?);
        }
    }
    let after = serde_json::to_string(&s)?;
    Ok((serde_json::to_string_pretty(&s)? + "\n", before != after))
}

/// Write `text` to `path` atomically (temp file in the same directory, then rename).
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let dir = path.parent().context("settings path has no directory")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let tmp = dir.join(format!(".settings.json.memctl-{}", std::process::id()));
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("replacing {}", path.display()))?;
    Ok(())
}

/// Which of our events are installed in `path`, and the commands' binaries.
pub fn installed(path: &Path) -> Result<Vec<(String, String)>> {
    let s = load(path)?;
    let mut out = Vec::new();
    for event in EVENTS.map(HookEventName::as_str) {
        for g in groups(&s, event)? {
            for e in g.hooks.iter().filter(|e| is_ours(e)) {
                out.push((event.to_string(), e.command.clone()));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_is_idempotent_and_preserves_other_hooks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(
            &path,
            r#"{"model":"x","hooks":{"PreCompact":[{"hooks":[{"type":"command","command":"other.sh","timeout":3}]}],"Stop":[{"hooks":[{"type":"command","command":"stop.sh"}]}]}}"#,
        )
        .unwrap();
        let bin = Path::new("/opt/memctl/memctl-hook");
        let (text, changed) = merged(&path, bin).unwrap();
        assert!(changed);
        write_atomic(&path, &text).unwrap();
        let (again, changed2) = merged(&path, bin).unwrap();
        assert!(!changed2, "second install must change nothing");
        assert_eq!(text, again);
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["model"], "x");
        assert_eq!(v["hooks"]["Stop"][0]["hooks"][0]["command"], "stop.sh");
        assert_eq!(
            v["hooks"]["PreCompact"][0]["hooks"][0]["command"],
            "other.sh"
        );
        assert_eq!(
            v["hooks"]["PreCompact"][1]["hooks"][0]["command"],
            "/opt/memctl/memctl-hook PreCompact"
        );
        assert_eq!(installed(&path).unwrap().len(), EVENTS.len());
        let (un, changed3) = removed(&path).unwrap();
        assert!(changed3);
        let v: Value = serde_json::from_str(&un).unwrap();
        assert_eq!(
            v["hooks"]["PreCompact"][0]["hooks"][0]["command"],
            "other.sh"
        );
        assert!(v["hooks"].get("UserPromptSubmit").is_none());
        assert_eq!(v["model"], "x");
    }

    #[test]
    fn invalid_settings_are_refused_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "{not json").unwrap();
        assert!(merged(&path, Path::new("/x/memctl-hook")).is_err());
    }
}
