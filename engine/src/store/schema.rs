//! Table definitions and record types.
//!
//! A record type that gains a field bumps its own `Record::VERSION` (see [`crate::codec`]); a
//! table whose key or fixed-width value type changes bumps [`SCHEMA_VERSION`] and adds a
//! migration (`super::migrate`).

use crate::chunk::Chunk;
use redb::{MultimapTableDefinition, TableDefinition};
use serde::{Deserialize, Serialize};

/// Version of the table layout. An older store is migrated (`memctl migrate`), a newer one is
/// refused with a clear error. 2: every record value starts with its format version byte.
pub const SCHEMA_VERSION: u32 = 2;

pub(super) const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
pub(super) const META_SCHEMA: &str = "schema_version";
pub(super) const META_NEXT_CHUNK: &str = "next_chunk_id";
/// project (cwd) → project id.
pub(super) const PROJECTS: TableDefinition<&str, u32> = TableDefinition::new("projects");
/// chunk id → bincode [`ChunkRecord`].
pub(super) const CHUNKS: TableDefinition<u64, &[u8]> = TableDefinition::new("chunks");
/// (session, turn index, part) → chunk id.
pub(super) const TURNS: TableDefinition<(&str, u32, u16), u64> = TableDefinition::new("turns");
/// (project id, sha256 hex) → chunk id: dedup across sessions.
pub(super) const HASHES: TableDefinition<(u32, &str), u64> = TableDefinition::new("hashes");
/// session id → bincode [`SessionRecord`].
pub(super) const SESSIONS: TableDefinition<&str, &[u8]> = TableDefinition::new("sessions");
/// session id → chunk ids.
pub(super) const SESSION_CHUNKS: MultimapTableDefinition<&str, u64> =
    MultimapTableDefinition::new("session_chunks");
/// transcript path → bincode [`CursorRecord`].
pub(super) const CURSORS: TableDefinition<&str, &[u8]> = TableDefinition::new("cursors");
/// (chunk id, embedder key) → f32 little-endian vector (re-scoring, re-embedding).
pub(super) const VECTORS: TableDefinition<(u64, &str), &[u8]> = TableDefinition::new("vectors");
/// (project id, embedder key, block no) → int8 block (see `index::quant`).
pub(super) const VEC_BLOCKS: TableDefinition<(u32, &str, u64), &[u8]> =
    TableDefinition::new("vec_blocks");
/// (project id, embedder key) → (last block no, vectors in it).
pub(super) const VEC_TAILS: TableDefinition<(u32, &str), (u64, u32)> =
    TableDefinition::new("vec_tails");
/// (project id, term) → (chunk id, term frequency, doc length).
pub(super) const POSTINGS: MultimapTableDefinition<(u32, &str), (u64, u32, u32)> =
    MultimapTableDefinition::new("postings");
/// project id → (documents, total terms).
pub(super) const LEX_STATS: TableDefinition<u32, (u64, u64)> = TableDefinition::new("lex_stats");
/// chunk ids that still lack a model embedding.
pub(super) const PENDING: TableDefinition<u64, ()> = TableDefinition::new("pending_embed");

// Tool-output swap (`crate::swap`). Added after schema v1 shipped: readers treat a missing swap
// table as empty, the first swap write creates it.
/// content id (sha256 hex of the redacted output) → codec byte + payload (`swap::db`).
pub(crate) const SWAP_BLOBS: TableDefinition<&str, &[u8]> = TableDefinition::new("swap_blobs");
/// (session, content id) → bincode `swap::SwapEntry`.
pub(crate) const SWAP_ENTRIES: TableDefinition<(&str, &str), &[u8]> =
    TableDefinition::new("swap_entries");
/// (content id, session): which sessions hold a blob (blob refcount, lookup by id).
pub(crate) const SWAP_REFS: TableDefinition<(&str, &str), ()> = TableDefinition::new("swap_refs");
/// (tier, unix seconds, session, content id): eviction/expiry order. Tier 0 = never accessed
/// (time = created), tier 1 = accessed (time = last access).
pub(crate) const SWAP_ORDER: TableDefinition<(u8, i64, &str, &str), ()> =
    TableDefinition::new("swap_order");
/// (session, content id) → hash-embedder vector (f32 little-endian) of summary + head.
pub(crate) const SWAP_VECTORS: TableDefinition<(&str, &str), &[u8]> =
    TableDefinition::new("swap_vectors");
/// "bytes" → total original bytes of stored blobs; "blobs" → number of blobs.
pub(crate) const SWAP_STATS: TableDefinition<&str, u64> = TableDefinition::new("swap_stats");

// Forgetting (`store::remove`). Added after schema v1 shipped: a missing table reads as empty.
/// (kind, key) → unix seconds it was forgotten: turns that must not be archived again
/// ([`TOMBSTONE_TURN`]: the turn's opening line uuid; [`TOMBSTONE_TEXT`]: a chunk's sha256).
/// No text: a tombstone says *that* something was forgotten, never what.
pub(crate) const FORGOTTEN: TableDefinition<(u8, &str), i64> = TableDefinition::new("forgotten");
/// Tombstone kind: a turn uuid.
pub(crate) const TOMBSTONE_TURN: u8 = 0;
/// Tombstone kind: the sha256 of a chunk's text.
pub(crate) const TOMBSTONE_TEXT: u8 = 1;

/// A stored chunk with its ranking metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkRecord {
    /// The chunk itself (redacted text and provenance).
    pub chunk: Chunk,
    /// Project namespace id.
    pub project_id: u32,
    /// Number of indexed terms (BM25 document length).
    pub doc_len: u32,
    /// Unix seconds when it was stored.
    pub ingested_at: i64,
    /// Times it was restored or opened from search.
    pub access_count: u32,
    /// Unix seconds of the last access.
    pub last_access: Option<i64>,
    /// Confidence in [floor, 1]: decays with time, boosted on use.
    pub confidence: f32,
    /// Pinned chunks are never pruned.
    pub pinned: bool,
    /// Embedder keys this chunk has vectors for.
    pub embedders: Vec<String>,
    /// Other sessions whose turns resolve to this chunk (identical text, e.g. forked
    /// transcripts). A shared chunk is never deleted when its owner's turn changes.
    pub shared_with: Vec<String>,
}

impl crate::codec::Record for ChunkRecord {
    const WHAT: &'static str = "chunk record";
    const VERSION: u8 = 1;
}

/// Per-session facts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// Project (cwd).
    pub project: String,
    /// Project namespace id.
    pub project_id: u32,
    /// Transcript file, when known.
    pub transcript_path: Option<String>,
    /// Timestamp of the first archived line.
    pub first_ts: Option<String>,
    /// Timestamp of the last archived line.
    pub last_ts: Option<String>,
    /// Highest turn index seen + 1.
    pub turns: u32,
    /// Unix seconds of the last update.
    pub updated_at: i64,
    /// Extractive session summary, when one was made.
    pub summary: Option<String>,
    /// Claude Code's own compaction summary (PostCompact), to avoid restoring what it says.
    pub compact_summary: Option<String>,
    /// Compactions seen in the transcript (compact-summary turns archived).
    pub compactions: u32,
}

/// [`SessionRecord`] as stores written before `compactions` was appended hold it (schema v1
/// without a version bump, issue 10): same fields, minus the last.
#[derive(Deserialize)]
struct SessionRecordBeforeCompactions {
    project: String,
    project_id: u32,
    transcript_path: Option<String>,
    first_ts: Option<String>,
    last_ts: Option<String>,
    turns: u32,
    updated_at: i64,
    summary: Option<String>,
    compact_summary: Option<String>,
}

impl crate::codec::Record for SessionRecord {
    const WHAT: &'static str = "session record";
    const VERSION: u8 = 1;
}

/// Decode a session record of schema 1 (no version byte), of either of its layouts (the
/// migration to schema 2 uses it). Records of the older layout read with `compactions` 0
/// (compactions are counted again from the next archived summary on).
pub(super) fn decode_session(b: &[u8]) -> Result<SessionRecord, crate::error::CodecError> {
    use crate::codec::decode_prefix;
    match decode_prefix::<SessionRecord>(b, "session record") {
        Ok((rec, used)) if used == b.len() => Ok(rec),
        current => {
            let Ok((old, used)) =
                decode_prefix::<SessionRecordBeforeCompactions>(b, "session record (v1)")
            else {
                return current.map(|(rec, _)| rec);
            };
            if used != b.len() {
                return current.map(|(rec, _)| rec);
            }
            Ok(SessionRecord {
                project: old.project,
                project_id: old.project_id,
                transcript_path: old.transcript_path,
                first_ts: old.first_ts,
                last_ts: old.last_ts,
                turns: old.turns,
                updated_at: old.updated_at,
                summary: old.summary,
                compact_summary: old.compact_summary,
                compactions: 0,
            })
        }
    }
}

impl crate::codec::Record for CursorRecord {
    const WHAT: &'static str = "cursor record";
    const VERSION: u8 = 1;
}

/// Where incremental ingest of one transcript stopped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CursorRecord {
    /// Byte offset up to which lines were consumed.
    pub offset: u64,
    /// File identity (device, inode) when it was read: a new identity means a new file.
    pub dev: u64,
    /// Inode number.
    pub ino: u64,
    /// sha256 (hex) of the first bytes of the file: a rewrite changes it.
    pub head_sha: String,
    /// How many head bytes `head_sha` covers.
    pub head_len: u64,
    /// Serialized chunker state to resume with.
    pub state: Vec<u8>,
    /// Session the transcript belongs to.
    pub session_id: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Old<'a> {
        project: &'a str,
        project_id: u32,
        transcript_path: Option<&'a str>,
        first_ts: Option<&'a str>,
        last_ts: Option<&'a str>,
        turns: u32,
        updated_at: i64,
        summary: Option<&'a str>,
        compact_summary: Option<&'a str>,
    }

    /// Issue 10: `compactions` was appended after schema v1 shipped, and a store written before
    /// then passed the version check and failed to decode every session.
    #[test]
    fn session_record_written_before_compactions_existed_still_decodes() {
        let old = Old {
            project: "/home/dev/src/quill-notes",
            project_id: 3,
            transcript_path: Some("/t.jsonl"),
            first_ts: Some("2025-10-24T11:41:50.695Z"),
            last_ts: None,
            turns: 41,
            updated_at: 1_760_000_000,
            summary: None,
            compact_summary: Some("the summary"),
        };
        let bytes = crate::codec::encode(&old).unwrap_or_else(|e| panic!("encode: {e}"));
        let rec = decode_session(&bytes).unwrap_or_else(|e| panic!("legacy decode: {e}"));
        assert_eq!(rec.project, old.project);
        assert_eq!(rec.turns, 41);
        assert_eq!(rec.compact_summary.as_deref(), Some("the summary"));
        assert_eq!(rec.compactions, 0);
        // The current layout still decodes as itself.
        let now = SessionRecord {
            compactions: 2,
            ..rec
        };
        let bytes = crate::codec::encode(&now).unwrap_or_else(|e| panic!("encode: {e}"));
        assert_eq!(decode_session(&bytes).ok(), Some(now));
        assert!(decode_session(&[0xff; 3]).is_err(), "garbage is an error");
    }
}
