//! The swap's stored record: one swapped tool output of one session. Its tables are in
//! `super::schema` (`swap_*`); the swap itself (`crate::swap`) writes and reads them through
//! the raw transaction. The record lives here so that the store (its check, its migrations)
//! never imports the swap: the swap depends on the store, not the other way round.

use serde::{Deserialize, Serialize};

impl crate::codec::Record for SwapEntry {
    const WHAT: &'static str = "swap entry";
    /// 2: `in_place` (swap in place). Version 1 rows decode as `in_place: false`.
    const VERSION: u8 = 2;

    fn decode_body(version: u8, body: &[u8]) -> Result<Self, crate::codec::CodecError> {
        match version {
            1 => crate::codec::decode_exact::<SwapEntryV1>(body, Self::WHAT).map(Into::into),
            2 => crate::codec::decode_exact(body, Self::WHAT),
            v => Err(crate::codec::CodecError::Decode(format!(
                "{}: unknown format version {v}",
                Self::WHAT
            ))),
        }
    }
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
    /// The output was swapped *in place*: the live context (and the transcript) holds only
    /// its digest, which names this entry. Such an entry is never evicted for room and
    /// expires only with [`crate::swap::SwapConfig::ttl_in_place`] (the digest is its only
    /// way back to the exact bytes). `#[serde(default)]`: exports of earlier releases.
    #[serde(default)]
    pub in_place: bool,
}

impl SwapEntry {
    /// Its key in the expiry/eviction order `(tier, unix seconds)`: never-accessed entries
    /// (tier 0, by creation), accessed ones (tier 1, least recently accessed first), swapped
    /// in place (tier 2, by creation: eviction for room stops before this tier).
    pub fn order_key(&self) -> (u8, i64) {
        if self.in_place {
            (2, self.created_at)
        } else if self.access_count > 0 {
            (1, self.last_access.unwrap_or(self.created_at))
        } else {
            (0, self.created_at)
        }
    }
}

/// The record as format version 1 wrote it (frozen: never change it).
#[derive(Deserialize)]
struct SwapEntryV1 {
    id: String,
    session_id: String,
    project: String,
    tool: String,
    tool_use_id: Option<String>,
    input_summary: String,
    failed: bool,
    bytes: u64,
    stored_bytes: u64,
    lines: u64,
    created_at: i64,
    last_access: Option<i64>,
    access_count: u32,
    summary: String,
    patterns: Vec<String>,
    first_error: Option<String>,
}

impl From<SwapEntryV1> for SwapEntry {
    fn from(v: SwapEntryV1) -> Self {
        Self {
            id: v.id,
            session_id: v.session_id,
            project: v.project,
            tool: v.tool,
            tool_use_id: v.tool_use_id,
            input_summary: v.input_summary,
            failed: v.failed,
            bytes: v.bytes,
            stored_bytes: v.stored_bytes,
            lines: v.lines,
            created_at: v.created_at,
            last_access: v.last_access,
            access_count: v.access_count,
            summary: v.summary,
            patterns: v.patterns,
            first_error: v.first_error,
            in_place: false,
        }
    }
}
