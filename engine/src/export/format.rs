//! The export format: JSON Lines, one typed [`Record`] per line, tagged by `kind`
//! (documented for users in `docs/export-format.md`).
//!
//! Why JSON Lines and not the store file: a redb file is tied to memctl's schema version and
//! carries derived data (postings, int8 blocks, dedup hashes) that is rebuilt for free; a line
//! per record can be streamed both ways in constant memory, read with `jq`, diffed, and
//! merged into a store that already holds part of it.
//!
//! Versioning: [`VERSION`] changes only when a reader of the previous version would misread a
//! file; new optional fields may be added within a version (`#[serde(default)]`, and unknown
//! fields are ignored by readers). Readers accept every version up to their own and refuse a
//! newer one with an error naming both.

use crate::summary::SessionSummary;
use crate::swap::SwapEntry;
use base64::Engine as _;
use serde::{Deserialize, Serialize};

/// The `format` of the header: what this file is.
pub const FORMAT: &str = "memctl-export";
/// The newest format version this build writes and reads.
pub const VERSION: u32 = 1;

/// One line of an export file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[allow(clippy::large_enum_variant)] // one record at a time is in memory
pub enum Record {
    /// The first line.
    Header(Header),
    /// A project (the directory sessions ran in).
    Project(ProjectRec),
    /// A forgotten turn or text (no text: a uuid or a sha256).
    Tombstone(TombstoneRec),
    /// One stored chunk (a turn, or one part of a long turn) with its metadata.
    Chunk(ChunkRec),
    /// A turn of another session that resolves to an identical chunk already in the file.
    TurnLink(TurnLinkRec),
    /// A session record, its summaries included (after its chunks).
    Session(SessionRec),
    /// A stored tool output with its exact content.
    SwapOutput(SwapOutputRec),
    /// A project memory file (`.memctl/memory/<name>`).
    MemoryFile(MemoryFileRec),
    /// The last line: counts of every kind, so a truncated file is detected.
    Trailer(Trailer),
}

impl Record {
    /// The `kind` tag of this record.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Header(_) => "header",
            Self::Project(_) => "project",
            Self::Tombstone(_) => "tombstone",
            Self::Chunk(_) => "chunk",
            Self::TurnLink(_) => "turn_link",
            Self::Session(_) => "session",
            Self::SwapOutput(_) => "swap_output",
            Self::MemoryFile(_) => "memory_file",
            Self::Trailer(_) => "trailer",
        }
    }
}

/// Every `kind` a reader of [`VERSION`] knows (an unknown one is an error naming it).
pub const KINDS: [&str; 9] = [
    "header",
    "project",
    "tombstone",
    "chunk",
    "turn_link",
    "session",
    "swap_output",
    "memory_file",
    "trailer",
];

/// First line of a file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Always [`FORMAT`].
    pub format: String,
    /// Format version ([`VERSION`] when written by this build).
    pub version: u32,
    /// Version of the memctl that wrote the file.
    pub memctl: String,
    /// When the file was written (RFC 3339, UTC).
    pub created: String,
    /// Embedding space of the vectors in the file (`model@version/dims`); `None` without vectors.
    #[serde(default)]
    pub embedder: Option<String>,
    /// What was exported (`--project`, `--session`, `--since`), for people reading the file.
    #[serde(default)]
    pub scope: Vec<String>,
}

/// A project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectRec {
    /// Its path (Claude Code's `cwd`).
    pub path: String,
}

/// What a tombstone names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TombstoneKind {
    /// The uuid of the transcript line that opened a forgotten turn.
    Turn,
    /// The sha256 (hex) of a forgotten chunk's text.
    Text,
}

/// A tombstone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TombstoneRec {
    /// Turn uuid or text hash.
    pub what: TombstoneKind,
    /// The uuid or the lowercase hex sha256.
    pub key: String,
    /// Unix seconds it was forgotten.
    pub forgotten_at: i64,
}

/// A model vector of a chunk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorRec {
    /// Embedding space (`model@version/dims`).
    pub embedder: String,
    /// Little-endian f32 values, base64 (standard alphabet, padded).
    pub f32le: String,
}

impl VectorRec {
    /// Encode a vector.
    pub fn new(embedder: String, v: &[f32]) -> Self {
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        Self {
            embedder,
            f32le: base64::engine::general_purpose::STANDARD.encode(bytes),
        }
    }

    /// The values; an error when the base64 is bad or its length is not whole f32s.
    pub fn values(&self) -> Result<Vec<f32>, String> {
        let b = base64::engine::general_purpose::STANDARD
            .decode(&self.f32le)
            .map_err(|e| format!("vector of {}: bad base64: {e}", self.embedder))?;
        if !b.len().is_multiple_of(4) {
            return Err(format!(
                "vector of {}: {} bytes is not a whole number of f32",
                self.embedder,
                b.len()
            ));
        }
        Ok(b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }
}

/// A chunk: [`crate::Chunk`] without its hash, plus the ranking metadata of its record.
/// Derived data (the sha256, BM25 length, the project id, hash vectors) is rebuilt on import.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkRec {
    /// Session id.
    pub session: String,
    /// Project.
    pub project: String,
    /// Turn index in the session.
    pub turn: u32,
    /// Part of the turn (0 for a single-part turn).
    pub part: u16,
    /// Parts the turn has.
    pub parts: u16,
    /// uuid of the line that opened the turn.
    pub turn_uuid: String,
    /// uuids of the lines in the chunk.
    #[serde(default)]
    pub line_uuids: Vec<String>,
    /// RFC 3339 start.
    #[serde(default)]
    pub started_at: Option<String>,
    /// RFC 3339 end.
    #[serde(default)]
    pub ended_at: Option<String>,
    /// The (redacted) text.
    pub text: String,
    /// Tools called.
    #[serde(default)]
    pub tools: Vec<String>,
    /// Files touched.
    #[serde(default)]
    pub files: Vec<String>,
    /// One-line summary.
    #[serde(default)]
    pub summary: String,
    /// A compaction summary written by Claude Code.
    #[serde(default)]
    pub is_compact_summary: bool,
    /// Unix seconds it was archived.
    pub ingested_at: i64,
    /// Times it was used.
    #[serde(default)]
    pub access_count: u32,
    /// Unix seconds of the last use.
    #[serde(default)]
    pub last_access: Option<i64>,
    /// Ranking confidence.
    pub confidence: f32,
    /// Never pruned.
    #[serde(default)]
    pub pinned: bool,
    /// Model vectors (with `--vectors`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vectors: Vec<VectorRec>,
}

/// A turn that resolves to a chunk of another turn (identical text: forks, resumed
/// transcripts). The chunk record comes earlier in the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnLinkRec {
    /// Session of the turn.
    pub session: String,
    /// Project (the chunk is found by its hash within it).
    pub project: String,
    /// Turn index.
    pub turn: u32,
    /// Part.
    pub part: u16,
    /// sha256 (hex) of the chunk's text as written in this file.
    pub text_sha256: String,
}

/// A session record ([`crate::store::SessionRecord`] without the project id).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRec {
    /// Session id.
    pub id: String,
    /// Project.
    pub project: String,
    /// Transcript file it was archived from.
    #[serde(default)]
    pub transcript_path: Option<String>,
    /// First timestamp.
    #[serde(default)]
    pub first_ts: Option<String>,
    /// Last timestamp.
    #[serde(default)]
    pub last_ts: Option<String>,
    /// Highest turn index + 1.
    pub turns: u32,
    /// Unix seconds of the last update.
    pub updated_at: i64,
    /// The rendered session summary.
    #[serde(default)]
    pub summary: Option<String>,
    /// Claude Code's own compaction summary.
    #[serde(default)]
    pub compact_summary: Option<String>,
    /// Compactions seen.
    #[serde(default)]
    pub compactions: u32,
    /// The agent that wrote the session (files written before agents were told apart have
    /// none: Claude Code).
    #[serde(default)]
    pub agent: crate::agent::Agent,
    /// The structured summary (`memctl summarize`), when one was stored.
    #[serde(default)]
    pub structured_summary: Option<SessionSummary>,
}

/// A stored tool output: its entry and its exact content. memctl stores only UTF-8 outputs
/// (checked against the id when read), so the content is always a JSON string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwapOutputRec {
    /// The entry (id = sha256 of the content, session, tool, sizes, times, digest).
    pub entry: SwapEntry,
    /// The content, byte for byte.
    pub content: String,
}

/// A project memory file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryFileRec {
    /// Project it belongs to.
    pub project: String,
    /// File name inside the memory directory (no directories).
    pub name: String,
    /// Its text.
    pub text: String,
}

impl MemoryFileRec {
    /// A name safe to join to a directory: one plain file name, `.md` or `.json`.
    pub fn name_is_safe(name: &str) -> bool {
        let ext_ok = name.ends_with(".md") || name.ends_with(".json");
        let chars_ok = name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
        ext_ok && chars_ok && !name.starts_with('.') && !name.contains("..") && name.len() <= 128
    }
}

/// Records of each kind in a file (the trailer's, and what a reader counted).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// `project` records.
    #[serde(default)]
    pub projects: u64,
    /// `tombstone` records.
    #[serde(default)]
    pub tombstones: u64,
    /// `chunk` records.
    #[serde(default)]
    pub chunks: u64,
    /// `turn_link` records.
    #[serde(default)]
    pub turn_links: u64,
    /// `session` records.
    #[serde(default)]
    pub sessions: u64,
    /// `swap_output` records.
    #[serde(default)]
    pub swap_outputs: u64,
    /// `memory_file` records.
    #[serde(default)]
    pub memory_files: u64,
    /// Vectors inside chunk records.
    #[serde(default)]
    pub vectors: u64,
}

impl Counts {
    /// Count one record.
    pub fn add(&mut self, r: &Record) {
        match r {
            Record::Project(_) => self.projects += 1,
            Record::Tombstone(_) => self.tombstones += 1,
            Record::Chunk(c) => {
                self.chunks += 1;
                self.vectors += c.vectors.len() as u64;
            }
            Record::TurnLink(_) => self.turn_links += 1,
            Record::Session(_) => self.sessions += 1,
            Record::SwapOutput(_) => self.swap_outputs += 1,
            Record::MemoryFile(_) => self.memory_files += 1,
            Record::Header(_) | Record::Trailer(_) => {}
        }
    }

    /// Records counted (vectors are inside chunk records, not records of their own).
    pub fn records(&self) -> u64 {
        self.projects
            + self.tombstones
            + self.chunks
            + self.turn_links
            + self.sessions
            + self.swap_outputs
            + self.memory_files
    }
}

/// Last line of a file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trailer {
    /// Records of each kind between the header and this line.
    pub counts: Counts,
}
