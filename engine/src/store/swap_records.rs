//! The swap's stored record: one swapped tool output of one session. Its tables are in
//! `super::schema` (`swap_*`); the swap itself (`crate::swap`) writes and reads them through
//! the raw transaction. The record lives here so that the store (its check, its migrations)
//! never imports the swap: the swap depends on the store, not the other way round.

use serde::{Deserialize, Serialize};

impl crate::codec::Record for SwapEntry {
    const WHAT: &'static str = "swap entry";
    const VERSION: u8 = 1;
}

/// One swapped output of one session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwapEntry {
    /// sha256 (hex) of the stored (redacted) content.
    pub id: String,
    /// Session that produced it.
    pub session_id: String,
    /// Project (cwd).
    pub project: String,
    /// Tool name (`Read`, `Bash`, ...).
    pub tool: String,
    /// Claude Code's tool use id.
    pub tool_use_id: Option<String>,
    /// One line: file path, command, pattern, URL (redacted).
    pub input_summary: String,
    /// The tool failed (PostToolUseFailure).
    pub failed: bool,
    /// Bytes of the stored content (what `swap show` prints).
    pub bytes: u64,
    /// Bytes of the stored blob (after compression).
    pub stored_bytes: u64,
    /// Lines of the content.
    pub lines: u64,
    /// Unix seconds when it was stored (or last stored again).
    pub created_at: i64,
    /// Unix seconds of the last `swap show`.
    pub last_access: Option<i64>,
    /// Times it was shown.
    pub access_count: u32,
    /// Extractive one-line summary.
    pub summary: String,
    /// Key patterns: defined names, files, counts.
    pub patterns: Vec<String>,
    /// First error-looking line.
    pub first_error: Option<String>,
}
