//! `memctl config`: every key with its effective value and where it came from; `config path`
//! (the files read); `config get KEY` (one value, for scripts).
//!
//! The values shown are rendered from the parsed settings, so they are what memctl uses (a bad
//! value shows its default, and the error is printed after the table).

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use memctl_engine::{ConfigEntry, FileScope, Loaded, ProjectRule, SettingSource, SettingsError};
use serde::Serialize;
use std::io::Write;
use std::path::Path;

/// `memctl config`.
#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// What to show (default: every key).
    #[command(subcommand)]
    pub action: Option<ConfigAction>,
    /// JSON output.
    #[arg(long, global = true)]
    pub json: bool,
}

impl ConfigArgs {
    /// Whether this is `config get KEY`.
    pub fn is_get(&self) -> bool {
        matches!(self.action, Some(ConfigAction::Get { .. }))
    }
}

/// `memctl config ...`.
#[derive(Debug, Subcommand)]
pub enum ConfigAction {
    /// Every key, its effective value and its source (the default action).
    Show,
    /// The config files memctl reads (user, project) and whether they exist.
    Path,
    /// The effective value of one key (`restore_chars` or `MEMCTL_RESTORE_CHARS`).
    Get {
        /// The key.
        key: String,
    },
}

/// One key in `--json` output.
#[derive(Debug, Serialize)]
struct EntryJson<'a> {
    key: &'static str,
    variable: &'static str,
    /// The effective value (`null`: unset, see `note`).
    value: Option<&'a str>,
    /// `default`, `user_file`, `project_file`, `environment` or `command_line`.
    source: &'static str,
    /// The file, for the file sources.
    file: Option<&'a Path>,
    note: Option<&'a str>,
    /// Whether a project file may set it: `allowed`, `inside_project` or `refused`.
    project_file: &'static str,
}

/// One file in `config path --json`.
#[derive(Debug, Serialize)]
struct FileJson<'a> {
    /// `user` or `project`.
    scope: &'static str,
    path: &'a Path,
    exists: bool,
    /// Named by `MEMCTL_CONFIG`.
    from_env: bool,
}

/// Run `memctl config` with what the binary loaded; `data_dir`: the `--data-dir` flag.
pub(super) fn config(
    loaded: &Loaded,
    data_dir: Option<&Path>,
    a: ConfigArgs,
    out: &mut dyn Write,
) -> Result<()> {
    let mut entries = loaded.entries();
    if let Some(d) = data_dir
        && let Some(home) = entries.iter_mut().find(|e| e.key.name == "home")
    {
        home.value = Some(d.display().to_string());
        home.source = SettingSource::CommandLine;
        home.note = Some("--data-dir".into());
    }
    match a.action.unwrap_or(ConfigAction::Show) {
        ConfigAction::Show => show(&entries, a.json, out),
        ConfigAction::Path => paths(loaded, a.json, out),
        ConfigAction::Get { key } => {
            let Some(e) = entries
                .iter()
                .find(|e| e.key.name == key || e.key.var == key)
            else {
                bail!("unknown key {key:?} (`memctl config` lists the keys)");
            };
            // A script asking for one key gets its value or an error about it, never both: a
            // bad value of this key fails (the default it fell back to is not what was asked
            // for); a bad value elsewhere is only a warning.
            let (own, other): (Vec<_>, Vec<_>) = loaded
                .errors
                .iter()
                .partition(|err| concerns(err, e.key.var));
            for err in &other {
                eprintln!("memctl: warning: {err}");
            }
            if !own.is_empty() {
                let all: Vec<String> = own.iter().map(ToString::to_string).collect();
                bail!("{}", all.join("; "));
            }
            if a.json {
                serde_json::to_writer(&mut *out, &json(e))?;
                writeln!(out)?;
            } else if let Some(v) = &e.value {
                writeln!(out, "{v}")?;
            } else {
                // Unset: nothing on stdout (scripts test for empty), the meaning on stderr.
                let why = e.note.as_deref().unwrap_or("no value");
                eprintln!("memctl: {key} is unset: {why}");
            }
            Ok(())
        }
    }
}

/// Whether a settings error may be about the variable `var`: one that names it, or a file that
/// could not be used at all (it might have set it).
fn concerns(err: &SettingsError, var: &str) -> bool {
    match err.var() {
        Some(v) => v == var,
        None => !matches!(err, SettingsError::UnknownKey { .. }),
    }
}

fn json(e: &ConfigEntry) -> EntryJson<'_> {
    EntryJson {
        key: e.key.name,
        variable: e.key.var,
        value: e.value.as_deref(),
        source: e.source.kind(),
        file: e.source.file(),
        note: e.note.as_deref(),
        project_file: match e.key.project {
            ProjectRule::Allowed => "allowed",
            ProjectRule::InsideProject => "inside_project",
            _ => "refused",
        },
    }
}

/// `environment (MEMCTL_X)`, `user file /p`, `default (per event)`.
fn source_text(e: &ConfigEntry) -> String {
    let base = match &e.source {
        SettingSource::Environment => format!("environment ({})", e.key.var),
        other => other.to_string(),
    };
    match &e.note {
        Some(n) => format!("{base} ({n})"),
        None => base,
    }
}

fn show(entries: &[ConfigEntry], as_json: bool, out: &mut dyn Write) -> Result<()> {
    if as_json {
        let list: Vec<EntryJson<'_>> = entries.iter().map(json).collect();
        serde_json::to_writer(&mut *out, &list)?;
        writeln!(out)?;
        return Ok(());
    }
    let rows: Vec<(&str, &str, String)> = entries
        .iter()
        .map(|e| {
            (
                e.key.name,
                e.value.as_deref().unwrap_or("-"),
                source_text(e),
            )
        })
        .collect();
    let kw = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let vw = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0);
    writeln!(out, "{:kw$}  {:vw$}  source", "key", "value")?;
    for (k, v, s) in rows {
        writeln!(out, "{k:kw$}  {v:vw$}  {s}")?;
    }
    Ok(())
}

fn paths(loaded: &Loaded, as_json: bool, out: &mut dyn Write) -> Result<()> {
    let scope = |s: FileScope| match s {
        FileScope::User => "user",
        _ => "project",
    };
    if as_json {
        let list: Vec<FileJson<'_>> = loaded
            .files
            .iter()
            .map(|f| FileJson {
                scope: scope(f.scope),
                path: &f.path,
                exists: f.exists,
                from_env: f.from_env,
            })
            .collect();
        serde_json::to_writer(&mut *out, &list)?;
        writeln!(out)?;
        return Ok(());
    }
    if loaded.files.is_empty() {
        writeln!(
            out,
            "no config file: neither HOME, XDG_CONFIG_HOME nor MEMCTL_CONFIG is set, and no project directory"
        )?;
    }
    for f in &loaded.files {
        writeln!(
            out,
            "{:<8} {} ({}{})",
            scope(f.scope),
            f.path.display(),
            if f.exists { "exists" } else { "missing" },
            if f.from_env {
                ", from MEMCTL_CONFIG"
            } else {
                ""
            }
        )?;
    }
    Ok(())
}
