//! Typed errors, one enum per operation family.

use crate::filter::FilterError;
use std::path::PathBuf;

/// The command that installs the runtime and model for every data dir of the machine.
pub const SETUP_COMMAND: &str = "memctl setup";

/// Errors from creating or running an embedder.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmbedError {
    /// The ONNX Runtime shared library could not be found or loaded. The message names the
    /// command that installs it (per machine, found by every data dir).
    #[error("ONNX Runtime library unavailable ({path}): {reason}; run `{SETUP_COMMAND}`")]
    RuntimeUnavailable { path: String, reason: String },
    /// The model or tokenizer file is missing.
    #[error("model file missing: {}; run `{SETUP_COMMAND}`", path.display())]
    ModelMissing { path: PathBuf },
    /// The tokenizer failed to load or encode.
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    /// ONNX Runtime returned an error during session creation or inference.
    #[error("onnx runtime: {0}")]
    Runtime(String),
    /// The model produced an output of an unexpected shape.
    #[error("unexpected model output shape {got:?}, expected [batch, seq, {expected_dim}]")]
    BadOutput {
        got: Vec<usize>,
        expected_dim: usize,
    },
}

/// Errors from vector and lexical indexes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IndexError {
    /// A vector of the wrong dimension was given.
    #[error("dimension mismatch: expected {expected}, got {got}")]
    DimensionMismatch { expected: usize, got: usize },
    /// Vectors from different embedders were compared.
    #[error("embedder mismatch: index holds {expected}, query is {got}")]
    EmbedderMismatch { expected: String, got: String },
    /// An I/O failure while persisting or loading an index.
    #[error("index I/O at {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A persisted index is unreadable; it should be rebuilt from the store.
    #[error("index is corrupt or stale: {0}")]
    Corrupt(String),
    /// A vector holds NaN or infinity (it would poison every score it touches).
    #[error("invalid vector: {0}")]
    InvalidVector(String),
}

/// Errors from the redb store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store file could not be opened or created.
    #[error("cannot open store {}: {reason}", path.display())]
    Open { path: PathBuf, reason: String },
    /// The store was written by a newer memctl (or holds a schema no migration leads from).
    #[error(
        "store schema version {found} is not supported (this memctl reads {supported}): it was \
         written by a newer memctl; upgrade memctl"
    )]
    SchemaVersion { found: u32, supported: u32 },
    /// The store was written by an earlier memctl and must be migrated before use.
    #[error(
        "store {} has schema version {found}, written by an earlier memctl (this one reads \
         {supported}): run `memctl migrate` (it keeps a backup of the old file)",
        path.display()
    )]
    NeedsMigration {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    /// A row could not be carried to the new schema: the migration stopped, nothing changed.
    #[error(
        "migration stopped at table {table}, row {row}: {reason} (the store is unchanged; \
         `memctl check` reports damaged rows)"
    )]
    Migrate {
        table: String,
        row: String,
        reason: String,
    },
    /// The store could only be opened for reading (read-only file or mount).
    #[error("store {} is read-only here: nothing can be written", path.display())]
    ReadOnly { path: PathBuf },
    /// Another process held the write lock past the timeout.
    #[error("store busy: another process held the write lock for {waited_ms} ms")]
    Busy { waited_ms: u64 },
    /// redb failed.
    #[error("store: {0}")]
    Db(#[from] redb::Error),
    /// A record could not be encoded.
    #[error("encode: {0}")]
    Encode(String),
    /// A record could not be decoded (corruption or version skew).
    #[error("decode: {0}")]
    Decode(String),
    /// A stored record or vector could not be encoded or decoded ([`crate::codec`]).
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// A stored bookkeeping value has an impossible shape: the store is damaged. Why an error
    /// and not a default: a next-chunk-id read as 0 would restart the ids and write new chunks
    /// over existing ones.
    #[error("store is corrupt: {what}: {source}")]
    Corrupt {
        what: &'static str,
        #[source]
        source: CodecError,
    },
    /// A vector block was unreadable.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// Filesystem failure (data dir, permissions).
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The store holds a table this memctl does not know (written by a newer version): a
    /// rewrite of the file (forget) would drop it, so it is refused.
    #[error(
        "the store holds a table this memctl does not know ({name:?}, written by a newer \
         version?): not rewriting the file"
    )]
    UnknownTable { name: String },
}

/// Errors from the one codec of stored values ([`crate::codec`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// A record could not be encoded.
    #[error("encode: {0}")]
    Encode(String),
    /// A record could not be decoded (corruption or version skew).
    #[error("decode: {0}")]
    Decode(String),
    /// A record of a format version this memctl does not know (written by a newer memctl).
    #[error(
        "{what}: format version {version} is newer than this memctl reads ({supported}); \
         upgrade memctl"
    )]
    NewerRecord {
        what: &'static str,
        version: u8,
        supported: u8,
    },
    /// A fixed-width value (a little-endian integer, an f32 vector) has the wrong byte length.
    #[error("{what}: {got} bytes, expected {expected}")]
    Length {
        what: &'static str,
        expected: String,
        got: usize,
    },
}

macro_rules! store_from_redb {
    ($($t:ty),*) => {$(
        impl From<$t> for StoreError {
            fn from(e: $t) -> Self {
                StoreError::Db(e.into())
            }
        }
    )*};
}
store_from_redb!(
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError,
    redb::DatabaseError,
    redb::CompactionError
);

/// A request that does not say what to forget, or a forget that could not finish.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ForgetError {
    /// No criterion at all.
    #[error(
        "nothing to forget was named: give chunk ids, a session, a project, a time range \
         (since/until) or a text; there is no \"forget everything\" (delete the store for that)"
    )]
    NoCriterion,
    /// A text criterion with no words.
    #[error("the text to forget is empty")]
    EmptyText,
    /// Chunk ids that name no stored chunk.
    #[error("no chunk with id {} (forgotten or pruned already? ids come from search or show)", .ids.iter().map(u64::to_string).collect::<Vec<_>>().join(", "))]
    UnknownChunks {
        /// The ids not found (store chunk ids; named `u64` so this leaf needs no store).
        ids: Vec<u64>,
    },
    /// `since` is not before `until`.
    #[error("the time range is empty: since {since} is not before until {until}")]
    EmptyRange {
        /// Parsed `since`.
        since: String,
        /// Parsed `until`.
        until: String,
    },
    /// A session, project or time that does not parse or resolve.
    #[error(transparent)]
    Filter(#[from] FilterError),
    /// The removal was committed but the store file was not rewritten: the forgotten bytes may
    /// still be in its free pages. The next memctl command (or forget) retries.
    #[error(
        "forgotten, but the store file could not be rewritten, so their bytes may still be in \
         its free pages (the next memctl command retries the rewrite)"
    )]
    Rewrite {
        /// Why the rewrite failed.
        #[source]
        source: StoreError,
    },
}

/// Errors from engine operations (ingest, search, restore).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Embedding failed.
    #[error(transparent)]
    Embed(#[from] EmbedError),
    /// An index failed.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// A transcript could not be read.
    #[error("cannot read transcript {}: {source}", path.display())]
    Transcript {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Bad input from the caller.
    #[error("{0}")]
    Invalid(String),
    /// A forget request that does not say what to forget ([`crate::forget`]).
    #[error(transparent)]
    Forget(#[from] ForgetError),
}
