//! Table definitions and record types.
//!
//! A record type that gains a field bumps its own `Record::VERSION` (see [`crate::codec`]); a
//! table whose key or fixed-width value type changes bumps [`SCHEMA_VERSION`] and adds a
//! migration (`super::migrate`).

use redb::{MultimapTableDefinition, TableDefinition};

/// Version of the table layout. An older store is migrated (`memctl migrate`), a newer one is
/// refused with a clear error. 2: every record value starts with its format version byte.
/// 3: BM25 postings are packed per-term lists ([`POSTING_LISTS`]) instead of one multimap row
/// per (term, chunk). 4: re-scoring vectors ([`VECTORS`]) are f16, not f32. 5: the rows of
/// [`VECTORS`] are counted per space ([`VEC_COUNTS`]). 6: every posting segment starts with a
/// header (entries, max tf, min doc length) that bounds its BM25 scores (`super::postings`).
pub const SCHEMA_VERSION: u32 = 6;

/// The first schema version whose stores hold [`VEC_COUNTS`] (a copy of an older store made
/// as its backup gets none: the older release would not know the table).
pub(super) const VEC_COUNTS_SINCE: u32 = 5;

pub(super) const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
pub(super) const META_SCHEMA: &str = "schema_version";
pub(super) const META_NEXT_CHUNK: &str = "next_chunk_id";
/// Rewrites of int8 blocks other than tail appends (compactions): `vectors::ResidentBlocks`.
pub(super) const META_BLOCK_EPOCH: &str = "vec_blocks.epoch";
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
/// (chunk id, embedder key) → f16 little-endian vector (re-scoring, export, team sync);
/// schema 1–3 stored f32. Only the spaces the chunk's record lists (`ChunkRecord::embedders`):
/// once the model embedded a chunk, its hash vector is dropped (`store::vectors`).
pub(super) const VECTORS: TableDefinition<(u64, &str), &[u8]> = TableDefinition::new("vectors");
/// embedder key → rows of [`VECTORS`] in that space (spaces with none have no row). Kept
/// exact by every write of [`VECTORS`] in the same transaction (`store::vectors`) and
/// recounted from the rows whenever the file is copied (`super::rewrite`), so `status` reads
/// it instead of scanning [`VECTORS`]; `memctl check` compares it with the rows.
pub(super) const VEC_COUNTS: TableDefinition<&str, u64> = TableDefinition::new("vec_counts");
/// (project id, embedder key, block no) → int8 block (see `index::quant`).
pub(super) const VEC_BLOCKS: TableDefinition<(u32, &str, u64), &[u8]> =
    TableDefinition::new("vec_blocks");
/// (project id, embedder key) → (last block no, vectors in it).
pub(super) const VEC_TAILS: TableDefinition<(u32, &str), (u64, u32)> =
    TableDefinition::new("vec_tails");
/// (project id, term, base chunk id) → packed segment of (chunk id, term frequency, doc
/// length) entries behind a header of bounds (`super::postings`).
pub(super) const POSTING_LISTS: TableDefinition<(u32, &str, u64), &[u8]> =
    TableDefinition::new("posting_lists");
/// Schema 1–2 postings, frozen: (project id, term) → (chunk id, term frequency, doc length).
/// Read only by the migration to schema 3 (`super::migrate`).
pub(super) const LEGACY_POSTINGS: MultimapTableDefinition<(u32, &str), (u64, u32, u32)> =
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

/// session id → `crate::summary::SessionSummary` (format version byte + JSON). Added after
/// schema v1: a missing table reads as empty.
pub(crate) const SUMMARIES: TableDefinition<&str, &[u8]> =
    TableDefinition::new("session_summaries");
