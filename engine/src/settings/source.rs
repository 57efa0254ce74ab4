//! Provenance: where each effective value came from, and the effective values as text (what
//! `memctl config` prints).

use super::keys::{KEYS, Key};
use super::{EmbedderChoice, Settings};
use crate::restore::RestoreMode;
use std::path::{Path, PathBuf};

/// Where an effective value came from. Lowest to highest precedence: default, user file,
/// project file, environment (a binary's command-line flag, e.g. `--data-dir`, beats all).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Source {
    /// memctl's default (or, for paths, what it found by searching).
    Default,
    /// The user's config file (`$XDG_CONFIG_HOME/memctl/config.toml` or `MEMCTL_CONFIG`).
    UserFile(PathBuf),
    /// The project's `.memctl/config.toml`.
    ProjectFile(PathBuf),
    /// An environment variable.
    Environment,
    /// A command-line flag (set by the binary, never by [`Settings::load`]).
    CommandLine,
}

impl Source {
    /// A short name for machine output: `default`, `user_file`, `project_file`,
    /// `environment`, `command_line`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::UserFile(_) => "user_file",
            Self::ProjectFile(_) => "project_file",
            Self::Environment => "environment",
            Self::CommandLine => "command_line",
        }
    }

    /// The file, for the file sources.
    pub fn file(&self) -> Option<&Path> {
        match self {
            Self::UserFile(p) | Self::ProjectFile(p) => Some(p),
            _ => None,
        }
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Default => f.write_str("default"),
            Self::UserFile(p) => write!(f, "user file {}", p.display()),
            Self::ProjectFile(p) => write!(f, "project file {}", p.display()),
            Self::Environment => f.write_str("environment"),
            Self::CommandLine => f.write_str("command line"),
        }
    }
}

/// One setting as `memctl config` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigEntry {
    /// The setting (file key, variable, project rule).
    pub key: &'static Key,
    /// The effective value as text (`None`: unset, see `note`).
    pub value: Option<String>,
    /// Where it came from.
    pub source: Source,
    /// What an unset or searched value means (`per event`, `found by search`).
    pub note: Option<String>,
}

/// The effective value of every key of [`KEYS`], rendered from the parsed settings (so what is
/// shown is what memctl uses, not what was written). `project` is the project directory the
/// files were looked up for (for the default memory directory).
pub(super) fn describe(
    s: &Settings,
    project: Option<&Path>,
) -> Vec<(&'static Key, Option<String>, Option<String>)> {
    let onnx = crate::embed::OnnxConfig::from_settings(s);
    KEYS.iter()
        .map(|k| {
            let (value, note) = value_of(s, k.var, &onnx, project);
            (k, value, note)
        })
        .collect()
}

fn shown(v: impl ToString) -> Option<String> {
    Some(v.to_string())
}

fn mode(m: RestoreMode) -> Option<String> {
    shown(match m {
        RestoreMode::Full => "full",
        RestoreMode::Brief => "brief",
        RestoreMode::Off => "off",
    })
}

/// A path memctl searched for when none was given: say whether the search found it.
fn searched(given: bool, path: &Path) -> (Option<String>, Option<String>) {
    let note = (!given).then(|| {
        if path.exists() {
            "found by search".to_string()
        } else {
            "not found by search".to_string()
        }
    });
    (shown(path.display()), note)
}

fn value_of(
    s: &Settings,
    var: &str,
    onnx: &crate::embed::OnnxConfig,
    project: Option<&Path>,
) -> (Option<String>, Option<String>) {
    let src = &s.restore.sources;
    let mem = &s.restore.memory;
    let plain = match var {
        "MEMCTL_HOME" => shown(s.data_dir.display()),
        "MEMCTL_EMBEDDER" => shown(match s.embed.embedder {
            EmbedderChoice::Onnx => "onnx",
            EmbedderChoice::Hash => "hash",
        }),
        "MEMCTL_MODEL_DIR" => return searched(s.embed.model_dir.is_some(), &onnx.model_dir),
        "ORT_DYLIB_PATH" => return searched(s.embed.ort_dylib.is_some(), &onnx.dylib_path),
        "MEMCTL_ORT_THREADS" => shown(s.embed.ort_threads),
        "MEMCTL_EMBED_THREADS" => shown(s.embed.embed_threads),
        "MEMCTL_BACKGROUND_EMBED" => shown(s.embed.background),
        "MEMCTL_RESTORE_CHARS" => shown(s.restore.budget.max_chars),
        "MEMCTL_PRECOMPACT_CHARS" => shown(s.restore.precompact_chars),
        "MEMCTL_RESTORE_ON_COMPACT" => mode(src.compact),
        "MEMCTL_RESTORE_ON_RESUME" => mode(src.resume),
        "MEMCTL_RESTORE_ON_CLEAR" => mode(src.clear),
        "MEMCTL_RESTORE_ON_STARTUP" => mode(src.startup),
        "MEMCTL_MEMORY" => shown(mem.enabled),
        "MEMCTL_MEMORY_CHARS" => shown(mem.budget_chars),
        "MEMCTL_MEMORY_FILE_CHARS" => shown(mem.file_chars),
        "MEMCTL_MEMORY_DIR" => match &mem.dir {
            Some(d) => shown(d.display()),
            None => {
                let note = match project {
                    Some(p) => format!(
                        "per project: {}",
                        p.join(crate::memory::MEMORY_DIR).display()
                    ),
                    None => format!("per project: <project>/{}", crate::memory::MEMORY_DIR),
                };
                return (None, Some(note));
            }
        },
        "MEMCTL_CONTEXT_WINDOW" => shown(s.autopilot.window_tokens),
        "MEMCTL_AUTOPILOT_WARN" => shown(s.autopilot.warn_pct),
        "MEMCTL_AUTOPILOT_CRITICAL" => shown(s.autopilot.critical_pct),
        "MEMCTL_AUTOPILOT_NOTE" => shown(s.autopilot.note),
        "MEMCTL_AUTO_PRUNE" => shown(s.auto_prune.enabled),
        "MEMCTL_SWAP" => shown(s.swap.enabled),
        "MEMCTL_SWAP_IN_PLACE" => shown(s.swap.in_place_enabled),
        "MEMCTL_SWAP_IN_PLACE_CHARS" => match s.swap.in_place.iter().find(|(t, _)| t == "Bash") {
            Some((_, n)) => shown(n),
            None => shown("off"),
        },
        "MEMCTL_RECALL" => shown(s.recall.enabled),
        "MEMCTL_RECALL_CHARS" => shown(s.recall.budget_chars),
        "MEMCTL_RESIDENT" => shown(s.resident.enabled),
        "MEMCTL_RESIDENT_IDLE_SECS" => shown(s.resident.idle.as_secs()),
        "MEMCTL_MCP_RESIDENT_VECTORS" => shown(s.mcp_resident_vectors),
        "MEMCTL_ANN" => shown(s.index.enabled),
        "MEMCTL_ANN_MIN" => shown(s.index.min_vectors),
        "MEMCTL_ANN_SAVE_SECS" => shown(s.index.save_after.as_secs()),
        "MEMCTL_ANN_FREEZE_MIN" => shown(s.index.freeze_min),
        "MEMCTL_SUMMARIZER_CMD" => match &s.summarizer.command {
            Some(c) => shown(c),
            None => return (None, Some("off".to_string())),
        },
        "MEMCTL_SUMMARIZER_TIMEOUT_SECS" => shown(s.summarizer.timeout.as_secs()),
        "MEMCTL_HOOK_INLINE_BYTES" => shown(s.hook.inline_bytes),
        "MEMCTL_HOOK_INLINE_PROMPT_ARCHIVE" => shown(s.hook.inline_prompt_archive),
        "MEMCTL_HOOK_DEADLINE_MS" => match s.hook.deadline_ms {
            Some(ms) => shown(ms),
            None => return (None, Some("per event".to_string())),
        },
        "MEMCTL_LOG" => match &s.log {
            Some(l) => shown(l),
            None => return (None, Some("warn for the CLI, info for hooks".to_string())),
        },
        // A connection string may carry a password: `memctl config` says only whether it is set.
        "MEMCTL_TEAM_URL" => match &s.team.url {
            Some(_) => shown("set (not shown: it may hold a password)"),
            None => {
                return (
                    None,
                    Some("off (libpq PG* variables or team_url_file)".to_string()),
                );
            }
        },
        "MEMCTL_TEAM_URL_FILE" => match &s.team.url_file {
            Some(p) => shown(p.display()),
            None => return (None, Some("<data dir>/team.url when it exists".to_string())),
        },
        "MEMCTL_TEAM_CA_FILE" => match &s.team.ca_file {
            Some(p) => shown(p.display()),
            None => {
                return (
                    None,
                    Some("off (Mozilla's roots for verify-ca/verify-full)".to_string()),
                );
            }
        },
        // Every key of KEYS is listed above (a test checks that each one is described).
        _ => None,
    };
    (plain, None)
}
