//! The unit of memory: one chunk per conversation turn (or a bounded part of a long turn).
//!
//! A *turn* is a real user prompt plus the assistant loop that answers it (assistant text,
//! tool calls with their inputs, bounded tool results). Long turns are split into parts that
//! keep the turn's identity (`turn_uuid`, `turn_index`), so nothing is lost and provenance is
//! exact.

use serde::{Deserialize, Serialize};

/// A chunk ready to be stored: text is already redacted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    /// Claude Code session id (the transcript file stem).
    pub session_id: String,
    /// Project namespace: the `cwd` the session ran in.
    pub project: String,
    /// 0-based index of the turn inside its session transcript.
    pub turn_index: u32,
    /// 0-based part number when a long turn is split; 0 for single-part turns.
    pub part: u16,
    /// Number of parts the turn was split into (>= 1).
    pub parts: u16,
    /// `uuid` of the transcript line that opened the turn (the user prompt).
    pub turn_uuid: String,
    /// `uuid`s of every transcript line whose content is in this chunk, in order.
    pub line_uuids: Vec<String>,
    /// RFC 3339 timestamp of the first line of the turn, when the transcript had one.
    pub started_at: Option<String>,
    /// RFC 3339 timestamp of the last line of the turn, when the transcript had one.
    pub ended_at: Option<String>,
    /// The chunk's text (redacted), as it is indexed and restored.
    pub text: String,
    /// Names of tools called in the turn (deduplicated, in first-use order).
    pub tools: Vec<String>,
    /// File paths the turn touched (tool inputs such as `file_path`, `path`, `notebook_path`).
    pub files: Vec<String>,
    /// Extractive one-line summary (no LLM): the prompt's first sentence and the outcome.
    pub summary: String,
    /// True when the turn is a compaction summary written by Claude Code (`isCompactSummary`).
    pub is_compact_summary: bool,
    /// Lowercase hex sha256 of `text`: the dedup key.
    pub sha256: String,
}

impl Chunk {
    /// Compute the lowercase hex sha256 of a chunk text.
    pub fn hash_text(text: &str) -> String {
        use sha2::{Digest, Sha256};
        hex::encode(Sha256::digest(text.as_bytes()))
    }
}
