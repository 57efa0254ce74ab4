//! The redb store: one file per user, projects as namespaces.
//!
//! Why one file: `memctl search --all-projects` and session rotation after `/clear` need to see
//! several sessions at once, and redb's `MultiWriter` mode (verified here with 8 processes) lets
//! every hook process of every parallel session open the same file. Project isolation is by key
//! prefix: every per-project table is keyed by a small project id.
//!
//! Why vectors in blocks: a full scan of redb rows costs ~7 µs per row, so the search path reads
//! a few big values (int8 blocks of [`BLOCK_VECTORS`] vectors, see [`crate::index::quant`]) and
//! re-scores the best candidates with their f16 vectors, fetched by key.
//!
//! Concurrency: `begin_write` blocks without a timeout, so writers use `try_begin_write` in a
//! bounded loop ([`Store::write`]) and report [`StoreError::Busy`] past the deadline; callers
//! (hooks) then spool the event and ingest it later.

mod bulk;
#[cfg(test)]
mod bulk_tests;
pub mod check;
#[cfg(test)]
mod check_tests;
mod check_vectors;
mod chunks;
#[cfg(test)]
mod corrupt_tests;
mod create;
#[cfg(test)]
mod fault_inject;
mod follow;
#[cfg(test)]
mod follow_tests;
mod handle;
pub(crate) mod migrate;
pub(crate) mod port;
pub(crate) mod postings;
pub(crate) mod reclaim;
pub(crate) mod remove;
pub(crate) mod rewrite;
mod schema;
mod sessions;
mod swap_records;
#[cfg(test)]
mod vec_counts_tests;
mod vectors;

pub(crate) use bulk::{BulkOptions, ChunkToPut, Put};
pub(crate) use chunks::RecordMeta;
pub use chunks::{ChunkRecord, PutOutcome};
pub use follow::{BlockCursor, FeedEntry, Followed};
pub(crate) use port::TurnState;
pub(crate) use postings::StoreLexical;
pub use reclaim::{FileCompaction, ReclaimReport};
pub use schema::SCHEMA_VERSION;
pub(crate) use schema::{
    SUMMARIES, SWAP_BLOBS, SWAP_ENTRIES, SWAP_ORDER, SWAP_REFS, SWAP_STATS, SWAP_VECTORS,
};
pub(crate) use sessions::session_from;
pub use sessions::{CursorRecord, SessionRecord};
pub use swap_records::SwapEntry;
pub use vectors::CompactReport;
pub(crate) use vectors::ResidentBlocks;

use handle::{Handle, Opened};

use crate::codec;
use crate::embed::EmbedderId;
use crate::error::StoreError;
use redb::{Database, ReadTransaction, ReadableTable, WriteTransaction};
use schema::*;
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, Instant};

/// Vectors per int8 block value.
pub const BLOCK_VECTORS: usize = 256;

/// Identifier of a stored chunk (dense, never reused).
pub type ChunkId = u64;

/// `((turn index, part), chunk id)` of one stored turn part.
pub type TurnRef = ((u32, u16), ChunkId);

/// Handle on the store file.
#[derive(Debug)]
pub(crate) struct Store {
    /// The open database; replaced when the file at `path` was replaced ([`handle`]).
    opened: RwLock<Arc<Opened>>,
    path: PathBuf,
    write_timeout: Duration,
    /// No write waits past this instant (a hook's deadline), whatever `write_timeout` says.
    deadline: Option<Instant>,
}

impl Store {
    /// Open (or create) the store at `path` in multi-process mode, creating tables and checking
    /// the schema version.
    ///
    /// A store file that exists but cannot be opened for writing (a read-only mount, a file of
    /// another user) is opened read-only instead: `status`, `search` and restores still work,
    /// and writes fail with [`StoreError::ReadOnly`] (rather than every command failing).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref().to_path_buf();
        if create::exists_read_only(&path) {
            return Self::open_read_only(&path);
        }
        if let Some(dir) = path.parent() {
            crate::paths::ensure_private_dir(dir)?;
        }
        let store = Self::open_unchecked(&path)?;
        crate::paths::restrict_file(&path)?;
        store.init_schema()?;
        Ok(store)
    }

    /// Open the store at `path` read-write without checking its schema version (a migration
    /// reads the version under the write lock itself).
    fn open_unchecked(path: &Path) -> Result<Self, StoreError> {
        let path = path.to_path_buf();
        let opened = Opened::open(&path, || {
            create::open_or_create(&path, Self::init_new).map(Handle::ReadWrite)
        })?;
        Ok(Self {
            opened: RwLock::new(Arc::new(opened)),
            path,
            write_timeout: Duration::from_millis(2000),
            deadline: None,
        })
    }

    /// Open an existing store for reading only (never creates, never writes).
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref().to_path_buf();
        let opened = Opened::open(&path, || Self::open_read_only_handle(&path))?;
        let store = Self {
            opened: RwLock::new(Arc::new(opened)),
            path,
            write_timeout: Duration::ZERO,
            deadline: None,
        };
        store.init_schema()?;
        Ok(store)
    }

    fn open_read_only_handle(path: &Path) -> Result<Handle, StoreError> {
        create::builder()
            .open_read_only(path)
            .map(Handle::ReadOnly)
            .map_err(|e| StoreError::Open {
                path: path.to_path_buf(),
                reason: e.to_string(),
            })
    }

    /// True when the store was opened read-only.
    pub fn is_read_only(&self) -> bool {
        self.opened
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_read_only()
    }

    /// How long [`Store::write`] waits for another process's write transaction.
    pub fn set_write_timeout(&mut self, t: Duration) {
        self.write_timeout = t;
    }

    /// Never wait for another writer past `deadline` (the hook's own): a hook with 300 ms left
    /// must not wait the full write timeout and be killed by Claude Code mid-way.
    pub fn set_deadline(&mut self, deadline: Instant) {
        self.deadline = Some(deadline);
    }

    /// The store file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Tables and schema version of a database nobody else can see yet (see [`create`]).
    fn init_new(db: &Database) -> Result<(), StoreError> {
        let mut w = StoreWriter::new(db.begin_write()?);
        w.create_tables()?;
        {
            let mut meta = w.tx.open_table(META)?;
            meta.insert(META_SCHEMA, SCHEMA_VERSION.to_le_bytes().as_slice())?;
        }
        w.tx.commit()?;
        Ok(())
    }

    fn init_schema(&self) -> Result<(), StoreError> {
        // Fast path: tables exist and the version matches (one read transaction).
        {
            let rtx = self.current()?.db.begin_read()?;
            if let Ok(meta) = rtx.open_table(META) {
                match meta.get(META_SCHEMA)? {
                    Some(v) if v.value() == SCHEMA_VERSION.to_le_bytes() => return Ok(()),
                    Some(v) => {
                        let got = codec::le_bytes::<4>(v.value(), "schema version").map_err(
                            |source| StoreError::Corrupt {
                                what: "meta table",
                                source,
                            },
                        )?;
                        let found = u32::from_le_bytes(got);
                        if found < SCHEMA_VERSION {
                            return Err(StoreError::NeedsMigration {
                                path: self.path.clone(),
                                found,
                                supported: SCHEMA_VERSION,
                            });
                        }
                        return Err(StoreError::SchemaVersion {
                            found,
                            supported: SCHEMA_VERSION,
                        });
                    }
                    None => {}
                }
            }
        }
        if self.is_read_only() {
            // Nothing to create here; reads of missing tables report themselves.
            return Ok(());
        }
        self.write(|w| {
            w.create_tables()?;
            let mut meta = w.tx.open_table(META)?;
            if meta.get(META_SCHEMA)?.is_none() {
                meta.insert(META_SCHEMA, SCHEMA_VERSION.to_le_bytes().as_slice())?;
            }
            Ok(())
        })
    }

    /// Run `f` in one write transaction and commit it.
    ///
    /// Waits at most the write timeout for another writer (bounded `try_begin_write` loop) and
    /// then fails with [`StoreError::Busy`]. Nothing is committed when `f` fails.
    pub fn write<T>(
        &self,
        f: impl FnOnce(&mut StoreWriter) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let (_opened, tx) = self.begin_write()?;
        let mut w = StoreWriter::new(tx);
        let out = f(&mut w)?;
        w.flush()?;
        w.tx.commit()?;
        Ok(out)
    }

    /// A consistent read view.
    pub fn read(&self) -> Result<StoreReader, StoreError> {
        Ok(StoreReader {
            tx: self.current()?.db.begin_read()?,
        })
    }
}

/// Writes inside one transaction. Created by [`Store::write`].
pub(crate) struct StoreWriter {
    tx: WriteTransaction,
    /// Int8 block appends, grouped at commit: appending vectors one at a time would rewrite
    /// the tail block (up to [`BLOCK_VECTORS`] vectors) once per vector.
    pending_blocks: Vec<(u32, EmbedderId, ChunkId, Vec<f32>)>,
    /// BM25 postings of the chunks put in this transaction, written per term at commit
    /// (`postings`): one posting at a time rewrote the same pages ~7 times.
    pending_postings: postings::Pending,
    /// Rows of `vectors` added (+) or removed (−) per space in this transaction, added to
    /// `vec_counts` at commit (one update per space, not one per vector).
    vec_counts: vectors::CountDeltas,
}

impl std::fmt::Debug for StoreWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StoreWriter")
    }
}

impl StoreWriter {
    fn new(tx: WriteTransaction) -> Self {
        Self {
            tx,
            pending_blocks: Vec::new(),
            pending_postings: postings::Pending::default(),
            vec_counts: vectors::CountDeltas::default(),
        }
    }

    /// Write what the transaction grouped for its commit: postings, int8 block appends, vector
    /// counts.
    fn flush(&mut self) -> Result<(), StoreError> {
        self.flush_postings()?;
        self.flush_blocks()?;
        self.flush_vec_counts()
    }

    fn create_tables(&mut self) -> Result<(), StoreError> {
        self.tx.open_table(META)?;
        self.tx.open_table(PROJECTS)?;
        self.tx.open_table(CHUNKS)?;
        self.tx.open_table(TURNS)?;
        self.tx.open_table(HASHES)?;
        self.tx.open_table(SESSIONS)?;
        self.tx.open_table(CURSORS)?;
        self.tx.open_table(VECTORS)?;
        self.tx.open_table(VEC_COUNTS)?;
        self.tx.open_table(VEC_BLOCKS)?;
        self.tx.open_table(VEC_TAILS)?;
        self.tx.open_table(LEX_STATS)?;
        self.tx.open_table(PENDING)?;
        self.tx.open_table(POSTING_LISTS)?;
        self.tx.open_multimap_table(SESSION_CHUNKS)?;
        // The swap module's tables (its rows are written through `raw_tx`).
        self.tx.open_table(SWAP_BLOBS)?;
        self.tx.open_table(SWAP_ENTRIES)?;
        self.tx.open_table(SWAP_REFS)?;
        self.tx.open_table(SWAP_ORDER)?;
        self.tx.open_table(SWAP_VECTORS)?;
        self.tx.open_table(SWAP_STATS)?;
        self.tx.open_table(FORGOTTEN)?;
        Ok(())
    }

    /// The raw transaction, for modules that own their tables (`crate::swap`).
    pub(crate) fn raw_tx(&self) -> &WriteTransaction {
        &self.tx
    }
}

/// Reads from one consistent snapshot. Created by [`Store::read`].
#[derive(Debug)]
pub(crate) struct StoreReader {
    tx: ReadTransaction,
}

impl StoreReader {
    /// The raw transaction, for modules that own their tables (`crate::swap`).
    pub(crate) fn raw_tx(&self) -> &ReadTransaction {
        &self.tx
    }
}

impl StoreWriter {
    /// Set a value of the meta table. Keys of the store itself are refused.
    pub fn set_meta_value(&mut self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        if key == META_SCHEMA || key == META_NEXT_CHUNK || key == META_BLOCK_EPOCH {
            return Err(StoreError::Encode(format!("meta key {key} is reserved")));
        }
        self.tx.open_table(META)?.insert(key, value)?;
        Ok(())
    }
}

impl StoreReader {
    /// A value of the meta table.
    pub fn meta_value(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        meta_get(&self.tx.open_table(META)?, key)
    }
}

/// A value of the meta table, from a read or a write transaction's view of it.
fn meta_get(
    t: &impl ReadableTable<&'static str, &'static [u8]>,
    key: &str,
) -> Result<Option<Vec<u8>>, StoreError> {
    Ok(t.get(key)?.map(|v| v.value().to_vec()))
}

/// Decode an optional stored value (`table.get(..)?`).
fn decode_opt<T: codec::Record>(
    v: Option<redb::AccessGuard<'_, &[u8]>>,
) -> Result<Option<T>, StoreError> {
    Ok(v.map(|g| codec::decode_record(g.value())).transpose()?)
}
