//! Injection telemetry: per session and per hook, how many characters (and estimated tokens)
//! memctl put into the model's context, handed to the compaction summariser, and removed from
//! the context by swapping big tool outputs for digests; plus the latest context-window
//! numbers Claude Code passed to the status line.
//!
//! **Why a file per session, not redb.** Hooks are many concurrent short processes with a
//! budget of a few milliseconds; opening redb for a counter would make every hook wait for
//! the store's write lock (and some hooks never open the store at all). One `write_all` of a
//! whole line to a file opened with `O_APPEND` is atomic with respect to other appenders on a
//! local file system, so concurrent hooks of one session never interleave inside a line and
//! need no lock. Readers (`memctl status`, the status line) are rare and fold the lines.
//!
//! **Format.** `<data dir>/telemetry/<session>.jsonl` (session id through
//! [`crate::paths::sanitize_component`]), mode 0600, one JSON object per line, tagged by
//! `type`:
//!
//! ```text
//! {"type":"hook","session_id":"s1","hook":"SessionStart","at":1764090000,"injected_chars":1834,"summarizer_chars":0,"removed_chars":0}
//! {"type":"context","session_id":"s1","at":1764090042,"used_tokens":86000,"window_tokens":200000}
//! ```
//!
//! Characters are Unicode scalar values of the text as printed (after redaction). Tokens are
//! not stored: readers derive them with the one estimator
//! ([`crate::autopilot::tokens_from_chars`]) from the summed characters. A line that does not
//! parse (torn by a crash, garbage, a record type from a newer memctl) is skipped and counted.
//! A file stops growing at [`MAX_FILE_BYTES`] (the writer checks the size first; the reader's
//! cap is a little higher for the appenders that raced past the check).

mod report;

pub use report::{
    ContextFill, Counts, FillSource, HookCounts, SessionReport, TelemetryReport, report,
    session_report, summarize,
};

use crate::error::StoreError;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Directory of the telemetry files under the data dir.
pub const DIR: &str = "telemetry";

/// A session's file stops growing here (~100 bytes a line: about 160 000 records).
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// Readers accept this much more than [`MAX_FILE_BYTES`]: appenders that checked the size
/// just before another one crossed it.
const READ_SLACK_BYTES: u64 = 1 << 20;

/// What one hook output puts where, in characters as printed (after redaction). Built by the
/// agent's adapter as it renders a [`crate::hooks::Reply`] (Claude Code's:
/// `memctl_hooks::claude::HookOutput::render_measured`), recorded by [`record_hook`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Injection {
    /// Characters added to the model's context (`additionalContext`).
    #[serde(default)]
    pub injected_chars: u64,
    /// Characters handed to the compaction summariser (PreCompact's plain-text instructions).
    /// Counted apart: they shape the summary but do not sit in the context window.
    #[serde(default)]
    pub summarizer_chars: u64,
    /// Characters taken out of the context: a tool output's length minus the length of the
    /// digest that replaced it.
    #[serde(default)]
    pub removed_chars: u64,
}

impl Injection {
    /// Whether there is nothing to record.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// One hook run that printed something: a `"type":"hook"` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookInjection {
    /// Claude Code's session id, as given (the file name is its sanitized form).
    pub session_id: String,
    /// The hook event (`SessionStart`, `UserPromptSubmit`, `PreCompact`, `PostToolUse`, ...).
    pub hook: String,
    /// Unix seconds.
    pub at: i64,
    /// What it put where.
    #[serde(flatten)]
    pub injection: Injection,
}

/// The context-window numbers Claude Code passed to the status line: a `"type":"context"`
/// line. Preferred over memctl's own estimate wherever a context size is shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextSample {
    /// Session id.
    pub session_id: String,
    /// Unix seconds.
    pub at: i64,
    /// `current_usage` input + cache tokens (None right after `/clear`).
    #[serde(default)]
    pub used_tokens: Option<u64>,
    /// `context_window_size`.
    #[serde(default)]
    pub window_tokens: Option<u64>,
}

impl ContextSample {
    /// Same numbers (the time aside): the status line appends only changes.
    pub fn same_numbers(&self, other: &Self) -> bool {
        (self.used_tokens, self.window_tokens) == (other.used_tokens, other.window_tokens)
    }

    /// `used / window × 100`, when both are known.
    pub fn percent(&self) -> Option<f64> {
        let (u, w) = (self.used_tokens?, self.window_tokens.filter(|w| *w > 0)?);
        Some(u as f64 * 100.0 / w as f64)
    }
}

/// One line of a telemetry file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    /// A hook's injection.
    Hook(HookInjection),
    /// The status line's context-window numbers.
    Context(ContextSample),
}

/// Why telemetry could not be written or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TelemetryError {
    /// Reading or appending failed.
    #[error("telemetry file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The file reached [`MAX_FILE_BYTES`]; nothing more is appended.
    #[error("telemetry file {path} is full ({len} bytes); not appending")]
    Full {
        /// The file.
        path: PathBuf,
        /// Its size.
        len: u64,
    },
    /// The directory could not be made.
    #[error(transparent)]
    Dir(#[from] StoreError),
    /// A record did not serialize (not expected: plain numbers and strings).
    #[error("telemetry record: {0}")]
    Encode(#[from] serde_json::Error),
}

/// `<data dir>/telemetry/<sanitized session id>.jsonl`.
pub fn path(data_dir: &Path, session_id: &str) -> PathBuf {
    data_dir.join(DIR).join(format!(
        "{}.jsonl",
        crate::paths::sanitize_component(session_id)
    ))
}

/// Append one record to its session's file: one `write_all` of the whole line on an
/// `O_APPEND` descriptor (see the module doc), the directory made 0700 and the file 0600.
pub fn append(data_dir: &Path, record: &Record) -> Result<(), TelemetryError> {
    let session_id = match record {
        Record::Hook(h) => &h.session_id,
        Record::Context(c) => &c.session_id,
    };
    let p = path(data_dir, session_id);
    crate::paths::ensure_private_dir(&data_dir.join(DIR))?;
    let io = |source| TelemetryError::Io {
        path: p.clone(),
        source,
    };
    let mut line = serde_json::to_vec(record)?;
    line.push(b'\n');
    let mut f = crate::paths::append_private(&p).map_err(io)?;
    let len = f.metadata().map_err(io)?.len();
    if len >= MAX_FILE_BYTES {
        return Err(TelemetryError::Full { path: p, len });
    }
    f.write_all(&line).map_err(io)
}

/// Record a hook's injection (see [`HookInjection`]).
///
/// This is the one call for every kind of injection, swapping included: a hook that replaced
/// a tool output of `n` characters by a digest of `d` records
/// `Injection { removed_chars: n - d, .. }` (through the adapter's rendering of
/// [`crate::hooks::Reply::ReplaceToolOutput`]).
pub fn record(data_dir: &Path, injection: &HookInjection) -> Result<(), TelemetryError> {
    append(data_dir, &Record::Hook(injection.clone()))
}

/// The hook's step: record `injection` for `session_id` / `hook` now, unless it is empty or
/// the session unknown. Never fails the hook: a fault is a warning in the log.
pub fn record_hook(data_dir: &Path, session_id: &str, hook: &str, injection: Injection) {
    if injection.is_empty() || session_id.is_empty() {
        return;
    }
    let rec = HookInjection {
        session_id: session_id.to_string(),
        hook: hook.to_string(),
        at: crate::clock::unix_now(),
        injection,
    };
    if let Err(e) = record(data_dir, &rec) {
        tracing::warn!(error = %e, hook, "injection telemetry not recorded");
    }
}

/// The records of one file, and how many lines were skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionLog {
    /// Records in file order.
    pub records: Vec<Record>,
    /// Lines that did not parse (torn, garbage, unknown record types).
    pub skipped_lines: u64,
}

impl SessionLog {
    /// The latest context sample, if the status line recorded one.
    pub fn latest_context(&self) -> Option<&ContextSample> {
        self.records.iter().rev().find_map(|r| match r {
            Record::Context(c) => Some(c),
            Record::Hook(_) => None,
        })
    }
}

/// Parse a telemetry file's text (empty lines ignored, bad ones counted).
pub fn parse(text: &str) -> SessionLog {
    let mut log = SessionLog::default();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<Record>(line) {
            Ok(r) => log.records.push(r),
            Err(_) => log.skipped_lines += 1,
        }
    }
    log
}

/// Read one file (bounded: regular files of at most [`MAX_FILE_BYTES`] + slack).
pub fn read_file(p: &Path) -> Result<SessionLog, TelemetryError> {
    let text = crate::paths::read_regular_string(p, MAX_FILE_BYTES + READ_SLACK_BYTES).map_err(
        |source| TelemetryError::Io {
            path: p.to_path_buf(),
            source,
        },
    )?;
    Ok(parse(&text))
}

/// Read a session's file; `None` when it has none (nothing recorded yet).
pub fn read_session(
    data_dir: &Path,
    session_id: &str,
) -> Result<Option<SessionLog>, TelemetryError> {
    match read_file(&path(data_dir, session_id)) {
        Ok(log) => Ok(Some(log)),
        Err(TelemetryError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Status line step: append `sample` unless the session's latest sample has the same numbers
/// (`log`: the session's file as just read, when it was). Returns whether it appended.
pub fn record_context(
    data_dir: &Path,
    log: Option<&SessionLog>,
    sample: &ContextSample,
) -> Result<bool, TelemetryError> {
    if sample.session_id.is_empty()
        || (sample.used_tokens.is_none() && sample.window_tokens.is_none())
        || log
            .and_then(SessionLog::latest_context)
            .is_some_and(|c| c.same_numbers(sample))
    {
        return Ok(false);
    }
    append(data_dir, &Record::Context(sample.clone()))?;
    Ok(true)
}

#[cfg(test)]
mod tests;
