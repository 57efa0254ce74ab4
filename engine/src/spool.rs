//! The spool's layout: work a hook could not finish (store busy, deadline passed) kept in plain
//! files under `<data dir>/spool/`, for the next hook that gets the store
//! ([`crate::hooks`] drains it).
//!
//! - `transcripts.txt`: one transcript path per line (appended with `O_APPEND`, one write per
//!   line, so concurrent hooks never interleave). Archiving is incremental, so a path listed
//!   twice costs nothing.
//! - `tools/<nanos>-<pid>.json`: one PostToolUse call each ([`SpooledTool`]), redacted before
//!   it is written (secrets are never stored, not even for a moment), written aside and renamed
//!   into place so that a reader never sees half a file.
//!
//! Its own module, below the engine facade: forget removes spooled calls too, and the hooks
//! that drain the spool sit above the facade.

use crate::error::{EngineError, StoreError};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Largest spooled tool call (the swap's own entry limit is lower; this bounds the file read).
pub(crate) const TOOL_MAX_BYTES: u64 = 80 << 20;

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> EngineError + '_ {
    move |source| {
        EngineError::Store(StoreError::Io {
            path: path.to_path_buf(),
            source,
        })
    }
}

pub(crate) fn spool_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("spool")
}

pub(crate) fn transcripts_path(data_dir: &Path) -> PathBuf {
    spool_dir(data_dir).join("transcripts.txt")
}

pub(crate) fn tools_dir(data_dir: &Path) -> PathBuf {
    spool_dir(data_dir).join("tools")
}

/// Remember a transcript to archive later.
pub(crate) fn spool_transcript(data_dir: &Path, transcript: &Path) -> Result<(), EngineError> {
    let path = transcripts_path(data_dir);
    crate::paths::ensure_private_dir(&spool_dir(data_dir))?;
    let mut f = crate::paths::append_private(&path).map_err(io_err(&path))?;
    f.write_all(format!("{}\n", transcript.display()).as_bytes())
        .map_err(io_err(&path))
}

/// One PostToolUse call kept for later (already redacted).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct SpooledTool {
    pub(crate) session_id: String,
    pub(crate) project: String,
    pub(crate) tool_name: String,
    pub(crate) tool_input: String,
    pub(crate) tool_response: String,
    pub(crate) tool_use_id: Option<String>,
    pub(crate) failed: bool,
}

fn redacted_json_text(text: &str) -> String {
    crate::redact::redact_json(text).unwrap_or_else(|| crate::redact::redact(text).into_owned())
}

/// Keep a tool call whose output could not be stored now.
pub(crate) fn spool_tool(
    data_dir: &Path,
    call: &crate::swap::ToolCall<'_>,
) -> Result<(), EngineError> {
    let dir = tools_dir(data_dir);
    crate::paths::ensure_private_dir(&dir)?;
    let rec = SpooledTool {
        session_id: call.session_id.to_string(),
        project: call.project.to_string(),
        tool_name: call.tool_name.to_string(),
        tool_input: redacted_json_text(call.tool_input),
        tool_response: redacted_json_text(call.tool_response),
        tool_use_id: call.tool_use_id.map(str::to_string),
        failed: call.failed,
    };
    let bytes = serde_json::to_vec(&rec)
        .map_err(|e| io_err(&dir)(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let name = format!("{nanos:024}-{}", std::process::id());
    let tmp = dir.join(format!(".{name}.tmp"));
    let fin = dir.join(format!("{name}.json"));
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    let mut f = o.open(&tmp).map_err(io_err(&tmp))?;
    f.write_all(&bytes).map_err(io_err(&tmp))?;
    drop(f);
    std::fs::rename(&tmp, &fin).map_err(io_err(&fin))
}

/// Forget: delete the spooled tool calls `sel` names (not stored yet, they would be stored by
/// the next hook that drains the spool); `remove` false only counts them. Calls a drainer has
/// claimed are left to it. Returns how many matched.
pub(crate) fn forget_tools(
    data_dir: &Path,
    sel: &crate::swap::forget::SwapSelector,
    remove: bool,
) -> Result<u64, EngineError> {
    let dir = tools_dir(data_dir);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(io_err(&dir)(e)),
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".json") else {
            continue;
        };
        // `<nanos>-<pid>.json`: the time the hook spooled it.
        let created_at = stem
            .split('-')
            .next()
            .and_then(|n| n.parse::<u128>().ok())
            .map_or(0, |n| (n / 1_000_000_000) as i64);
        let path = entry.path();
        let rec = match crate::paths::read_regular(&path, TOOL_MAX_BYTES) {
            Ok(b) => serde_json::from_slice::<SpooledTool>(&b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue, // drained meanwhile
            Err(e) => return Err(io_err(&path)(e)),
        };
        let Ok(rec) = rec else {
            continue; // unreadable: the drainer sets it aside
        };
        let content = format!("{}\n{}", rec.tool_input, rec.tool_response);
        if !sel.matches_call(&rec.session_id, &rec.project, created_at, &content) {
            continue;
        }
        if !remove {
            removed += 1;
        } else {
            match std::fs::remove_file(&path) {
                Ok(()) => removed += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_err(&path)(e)),
            }
        }
    }
    Ok(removed)
}
