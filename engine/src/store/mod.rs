//! The redb store: one file per user, projects as namespaces.
//!
//! Why one file: `memctl search --all-projects` and session rotation after `/clear` need to see
//! several sessions at once, and redb's `MultiWriter` mode (verified here with 8 processes) lets
//! every hook process of every parallel session open the same file. Project isolation is by key
//! prefix: every per-project table is keyed by a small project id.
//!
//! Why vectors in blocks: a full scan of redb rows costs ~7 µs per row, so the search path reads
//! a few big values (int8 blocks of [`BLOCK_VECTORS`] vectors, see [`crate::index::quant`]) and
//! re-scores the best candidates with their f32 vectors, fetched by key.
//!
//! Concurrency: `begin_write` blocks without a timeout, so writers use `try_begin_write` in a
//! bounded loop ([`Store::write`]) and report [`StoreError::Busy`] past the deadline; callers
//! (hooks) then spool the event and ingest it later.

pub mod check;
#[cfg(test)]
mod check_tests;
mod check_vectors;
#[cfg(test)]
mod corrupt_tests;
mod create;
#[cfg(test)]
mod fault_inject;
mod handle;
pub(crate) mod migrate;
pub(crate) mod port;
pub(crate) mod remove;
pub(crate) mod rewrite;
mod schema;

pub use schema::{ChunkRecord, CursorRecord, SCHEMA_VERSION, SessionRecord};
pub(crate) use schema::{
    SWAP_BLOBS, SWAP_ENTRIES, SWAP_ORDER, SWAP_REFS, SWAP_STATS, SWAP_VECTORS,
};

use handle::{Handle, Opened};

use crate::chunk::Chunk;
use crate::codec::{self, encode_record};
use crate::embed::EmbedderId;
use crate::error::StoreError;
use crate::index::lexical;
use crate::index::quant;
use redb::{Database, ReadTransaction, ReadableTable, ReadableTableMetadata, WriteTransaction};
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
    /// and writes fail with [`StoreError::ReadOnly`] (issue 10: they all failed before).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref().to_path_buf();
        if create::exists_read_only(&path) {
            return Self::open_read_only(&path);
        }
        if let Some(dir) = path.parent() {
            crate::paths::ensure_private_dir(dir)?;
        }
        let opened = Opened::open(&path, || {
            create::open_or_create(&path, Self::init_new).map(Handle::ReadWrite)
        })?;
        crate::paths::restrict_file(&path)?;
        let store = Self {
            opened: RwLock::new(Arc::new(opened)),
            path,
            write_timeout: Duration::from_millis(2000),
            deadline: None,
        };
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
        let mut w = StoreWriter {
            tx: db.begin_write()?,
            pending_blocks: Vec::new(),
        };
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
        let mut w = StoreWriter {
            tx,
            pending_blocks: Vec::new(),
        };
        let out = f(&mut w)?;
        w.flush_blocks()?;
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
}

impl std::fmt::Debug for StoreWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StoreWriter")
    }
}

/// What happened to one chunk given to [`StoreWriter::put_chunk`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PutOutcome {
    /// A new chunk was stored.
    Inserted(ChunkId),
    /// The same (session, turn, part) was stored with other text and has been replaced.
    Replaced(ChunkId),
    /// The same (session, turn, part) is already stored with this exact text.
    Unchanged(ChunkId),
    /// Identical text is stored for another session of the project; this turn now points at it.
    Duplicate(ChunkId),
}

impl PutOutcome {
    /// The chunk id the turn part now resolves to.
    pub fn id(self) -> ChunkId {
        match self {
            Self::Inserted(i) | Self::Replaced(i) | Self::Unchanged(i) | Self::Duplicate(i) => i,
        }
    }
}

impl StoreWriter {
    fn create_tables(&mut self) -> Result<(), StoreError> {
        self.tx.open_table(META)?;
        self.tx.open_table(PROJECTS)?;
        self.tx.open_table(CHUNKS)?;
        self.tx.open_table(TURNS)?;
        self.tx.open_table(HASHES)?;
        self.tx.open_table(SESSIONS)?;
        self.tx.open_table(CURSORS)?;
        self.tx.open_table(VECTORS)?;
        self.tx.open_table(VEC_BLOCKS)?;
        self.tx.open_table(VEC_TAILS)?;
        self.tx.open_table(LEX_STATS)?;
        self.tx.open_table(PENDING)?;
        self.tx.open_multimap_table(POSTINGS)?;
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

    /// A session record, read inside the write transaction.
    pub fn session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        let t = self.tx.open_table(SESSIONS)?;
        t.get(id)?.map(|g| session_from(g.value())).transpose()
    }

    /// The id of `project`, created on first use.
    pub fn project_id(&mut self, project: &str) -> Result<u32, StoreError> {
        let mut t = self.tx.open_table(PROJECTS)?;
        if let Some(v) = t.get(project)? {
            return Ok(v.value());
        }
        let next = t.len()? as u32 + 1;
        t.insert(project, next)?;
        Ok(next)
    }

    /// The next chunk id. A stored value of the wrong length is [`StoreError::Corrupt`]: read
    /// as 0 (as it once was), ids would restart and new chunks overwrite existing ones.
    fn next_chunk_id(&mut self) -> Result<ChunkId, StoreError> {
        let mut meta = self.tx.open_table(META)?;
        let cur = match meta.get(META_NEXT_CHUNK)? {
            Some(v) => {
                u64::from_le_bytes(codec::le_bytes::<8>(v.value(), "next chunk id").map_err(
                    |source| StoreError::Corrupt {
                        what: "meta table",
                        source,
                    },
                )?)
            }
            None => 1,
        };
        meta.insert(META_NEXT_CHUNK, (cur + 1).to_le_bytes().as_slice())?;
        Ok(cur)
    }

    /// Store one chunk (text already redacted) with its vectors, its lexical postings and its
    /// place in its session. See [`PutOutcome`] for dedup and replacement rules.
    pub fn put_chunk(
        &mut self,
        chunk: &Chunk,
        vectors: &[(EmbedderId, Vec<f32>)],
        now: i64,
    ) -> Result<PutOutcome, StoreError> {
        let project_id = self.project_id(&chunk.project)?;
        let turn_key = (chunk.session_id.as_str(), chunk.turn_index, chunk.part);
        let existing = self.tx.open_table(TURNS)?.get(turn_key)?.map(|v| v.value());
        let mut replaced = false;
        if let Some(old_id) = existing {
            let old = self.get_record(old_id)?;
            match old {
                Some(rec) if rec.chunk.sha256 == chunk.sha256 => {
                    return Ok(PutOutcome::Unchanged(old_id));
                }
                Some(rec) if rec.chunk.session_id == chunk.session_id => {
                    self.release_chunk(old_id, &rec, &chunk.session_id)?;
                    replaced = true;
                }
                _ => {
                    // The turn pointed at a chunk of another session (a duplicate) or at
                    // nothing: just repoint it below.
                }
            }
        }
        // Dedup across sessions of the same project (forked/resumed transcripts copy history).
        let hash_key = (project_id, chunk.sha256.as_str());
        let dup = self
            .tx
            .open_table(HASHES)?
            .get(hash_key)?
            .map(|v| v.value());
        if let Some(dup) = dup
            && let Some(mut rec) = self.get_record(dup)?
        {
            {
                if rec.chunk.session_id != chunk.session_id
                    && !rec.shared_with.contains(&chunk.session_id)
                {
                    rec.shared_with.push(chunk.session_id.clone());
                    self.update_record(dup, &rec)?;
                }
                self.tx.open_table(TURNS)?.insert(turn_key, dup)?;
                self.tx
                    .open_multimap_table(SESSION_CHUNKS)?
                    .insert(chunk.session_id.as_str(), dup)?;
                self.touch_session(chunk, project_id, now)?;
                return Ok(PutOutcome::Duplicate(dup));
            }
        }
        let id = self.next_chunk_id()?;
        let tf = lexical::term_frequencies(&chunk.text);
        let doc_len: u32 = tf.iter().map(|(_, n)| *n).sum();
        let rec = ChunkRecord {
            chunk: chunk.clone(),
            project_id,
            doc_len,
            ingested_at: now,
            access_count: 0,
            last_access: None,
            confidence: 1.0,
            pinned: false,
            embedders: vectors.iter().map(|(e, _)| e.key()).collect(),
            shared_with: Vec::new(),
        };
        self.tx
            .open_table(CHUNKS)?
            .insert(id, encode_record(&rec)?.as_slice())?;
        self.tx.open_table(TURNS)?.insert(turn_key, id)?;
        self.tx.open_table(HASHES)?.insert(hash_key, id)?;
        self.tx
            .open_multimap_table(SESSION_CHUNKS)?
            .insert(chunk.session_id.as_str(), id)?;
        {
            let mut post = self.tx.open_multimap_table(POSTINGS)?;
            for (term, n) in &tf {
                post.insert((project_id, term.as_str()), (id, *n, doc_len))?;
            }
        }
        {
            let mut stats = self.tx.open_table(LEX_STATS)?;
            let (docs, total) = stats.get(project_id)?.map(|v| v.value()).unwrap_or((0, 0));
            stats.insert(project_id, (docs + 1, total + u64::from(doc_len)))?;
        }
        for (emb, v) in vectors {
            self.put_vector(project_id, id, emb, v)?;
        }
        self.touch_session(chunk, project_id, now)?;
        Ok(if replaced {
            PutOutcome::Replaced(id)
        } else {
            PutOutcome::Inserted(id)
        })
    }

    /// Add (or add another embedder's) vector for a stored chunk.
    pub fn put_vector(
        &mut self,
        project_id: u32,
        id: ChunkId,
        emb: &EmbedderId,
        v: &[f32],
    ) -> Result<(), StoreError> {
        let key = emb.key();
        let bytes = codec::f32s_to_bytes(v);
        self.tx
            .open_table(VECTORS)?
            .insert((id, key.as_str()), bytes.as_slice())?;
        self.pending_blocks
            .push((project_id, emb.clone(), id, v.to_vec()));
        Ok(())
    }

    /// Append the pending vectors to their int8 blocks: per (project, embedder), the tail block
    /// is read once, filled up to [`BLOCK_VECTORS`], and new blocks are written whole.
    fn flush_blocks(&mut self) -> Result<(), StoreError> {
        if self.pending_blocks.is_empty() {
            return Ok(());
        }
        let mut pending = std::mem::take(&mut self.pending_blocks);
        // Stable sort keeps insertion order inside each group.
        pending.sort_by_key(|a| (a.0, a.1.key()));
        let mut tails = self.tx.open_table(VEC_TAILS)?;
        let mut blocks = self.tx.open_table(VEC_BLOCKS)?;
        let mut i = 0;
        while i < pending.len() {
            let (project_id, emb) = (pending[i].0, pending[i].1.clone());
            let key = emb.key();
            let mut j = i;
            while j < pending.len() && pending[j].0 == project_id && pending[j].1 == emb {
                j += 1;
            }
            let (mut block_no, count) = tails
                .get((project_id, key.as_str()))?
                .map(|g| g.value())
                .unwrap_or((0, 0));
            let mut current: Vec<u8> = if count > 0 && (count as usize) < BLOCK_VECTORS {
                blocks
                    .get((project_id, key.as_str(), block_no))?
                    .map(|g| g.value().to_vec())
                    .unwrap_or_default()
            } else {
                if count > 0 {
                    block_no += 1;
                }
                Vec::new()
            };
            let mut in_block = if current.is_empty() {
                0
            } else {
                count as usize
            };
            for chunk in pending[i..j].chunks(BLOCK_VECTORS) {
                let mut rest = chunk;
                while !rest.is_empty() {
                    let room = BLOCK_VECTORS - in_block;
                    let (now, later) = rest.split_at(room.min(rest.len()));
                    let ids: Vec<ChunkId> = now.iter().map(|x| x.2).collect();
                    let vecs: Vec<&[f32]> = now.iter().map(|x| x.3.as_slice()).collect();
                    let fresh = quant::encode_block(&emb, &ids, &vecs)?;
                    current = if current.is_empty() {
                        fresh
                    } else {
                        quant::concat_blocks(&current, &fresh)?
                    };
                    in_block += now.len();
                    blocks.insert((project_id, key.as_str(), block_no), current.as_slice())?;
                    tails.insert((project_id, key.as_str()), (block_no, in_block as u32))?;
                    if in_block == BLOCK_VECTORS {
                        block_no += 1;
                        in_block = 0;
                        current = Vec::new();
                    }
                    rest = later;
                }
            }
            i = j;
        }
        Ok(())
    }

    /// `session` no longer uses chunk `id`: delete it when nobody else does, else just unlink.
    fn release_chunk(
        &mut self,
        id: ChunkId,
        rec: &ChunkRecord,
        session: &str,
    ) -> Result<(), StoreError> {
        self.tx
            .open_multimap_table(SESSION_CHUNKS)?
            .remove(session, id)?;
        if rec.chunk.session_id == session && rec.shared_with.is_empty() {
            self.delete_chunk(id, rec)?;
        } else if rec.shared_with.iter().any(|s| s == session) {
            let mut r = rec.clone();
            r.shared_with.retain(|s| s != session);
            self.update_record(id, &r)?;
        }
        Ok(())
    }

    /// Remove a chunk: record, postings, f32 vectors. Its int8 block entries stay until the
    /// next compaction (readers skip ids without a record: tombstone by absence).
    pub fn delete_chunk(&mut self, id: ChunkId, rec: &ChunkRecord) -> Result<(), StoreError> {
        self.tx.open_table(CHUNKS)?.remove(id)?;
        {
            let mut post = self.tx.open_multimap_table(POSTINGS)?;
            for (term, n) in lexical::term_frequencies(&rec.chunk.text) {
                post.remove((rec.project_id, term.as_str()), (id, n, rec.doc_len))?;
            }
        }
        {
            let mut stats = self.tx.open_table(LEX_STATS)?;
            let (docs, total) = stats
                .get(rec.project_id)?
                .map(|v| v.value())
                .unwrap_or((0, 0));
            stats.insert(
                rec.project_id,
                (
                    docs.saturating_sub(1),
                    total.saturating_sub(u64::from(rec.doc_len)),
                ),
            )?;
        }
        {
            let mut vt = self.tx.open_table(VECTORS)?;
            for e in &rec.embedders {
                vt.remove((id, e.as_str()))?;
            }
        }
        {
            let mut h = self.tx.open_table(HASHES)?;
            let key = (rec.project_id, rec.chunk.sha256.as_str());
            if h.get(key)?.map(|v| v.value()) == Some(id) {
                h.remove(key)?;
            }
        }
        self.tx
            .open_multimap_table(SESSION_CHUNKS)?
            .remove(rec.chunk.session_id.as_str(), id)?;
        self.tx.open_table(PENDING)?.remove(id)?;
        Ok(())
    }

    /// Drop parts `from..` of a turn (a turn that was re-chunked into fewer parts).
    pub fn drop_parts_from(
        &mut self,
        session: &str,
        turn: u32,
        from: u16,
    ) -> Result<(), StoreError> {
        let stale: Vec<(u16, ChunkId)> = {
            let t = self.tx.open_table(TURNS)?;
            let mut v = Vec::new();
            for row in t.range((session, turn, from)..=(session, turn, u16::MAX))? {
                let (k, id) = row?;
                v.push((k.value().2, id.value()));
            }
            v
        };
        for (part, id) in stale {
            self.tx.open_table(TURNS)?.remove((session, turn, part))?;
            if let Some(rec) = self.get_record(id)? {
                self.release_chunk(id, &rec, session)?;
            }
        }
        Ok(())
    }

    /// Read a chunk record inside the write transaction.
    pub fn get_record(&self, id: ChunkId) -> Result<Option<ChunkRecord>, StoreError> {
        let t = self.tx.open_table(CHUNKS)?;
        decode_opt(t.get(id)?)
    }

    /// Overwrite a chunk record (ranking metadata updates).
    pub fn update_record(&mut self, id: ChunkId, rec: &ChunkRecord) -> Result<(), StoreError> {
        self.tx
            .open_table(CHUNKS)?
            .insert(id, encode_record(rec)?.as_slice())?;
        Ok(())
    }

    fn touch_session(
        &mut self,
        chunk: &Chunk,
        project_id: u32,
        now: i64,
    ) -> Result<(), StoreError> {
        let mut t = self.tx.open_table(SESSIONS)?;
        let mut rec: SessionRecord = match t.get(chunk.session_id.as_str())? {
            Some(v) => session_from(v.value())?,
            None => SessionRecord {
                project: chunk.project.clone(),
                project_id,
                ..SessionRecord::default()
            },
        };
        rec.turns = rec.turns.max(chunk.turn_index + 1);
        if chunk.is_compact_summary && chunk.part == 0 {
            rec.compactions += 1;
        }
        if rec.first_ts.is_none() {
            rec.first_ts.clone_from(&chunk.started_at);
        }
        if chunk.ended_at.is_some() {
            rec.last_ts.clone_from(&chunk.ended_at);
        }
        rec.updated_at = now;
        t.insert(chunk.session_id.as_str(), encode_record(&rec)?.as_slice())?;
        Ok(())
    }

    /// Update a session record in place (creating it with `project` when missing).
    pub fn update_session(
        &mut self,
        session_id: &str,
        project: &str,
        f: impl FnOnce(&mut SessionRecord),
    ) -> Result<(), StoreError> {
        let project_id = self.project_id(project)?;
        let mut t = self.tx.open_table(SESSIONS)?;
        let mut rec: SessionRecord = match t.get(session_id)? {
            Some(v) => session_from(v.value())?,
            None => SessionRecord {
                project: project.to_string(),
                project_id,
                ..SessionRecord::default()
            },
        };
        f(&mut rec);
        t.insert(session_id, encode_record(&rec)?.as_slice())?;
        Ok(())
    }

    /// The ingest cursor of a transcript.
    pub fn cursor(&self, transcript: &str) -> Result<Option<CursorRecord>, StoreError> {
        let t = self.tx.open_table(CURSORS)?;
        decode_opt(t.get(transcript)?)
    }

    /// Save the ingest cursor of a transcript.
    pub fn set_cursor(&mut self, transcript: &str, c: &CursorRecord) -> Result<(), StoreError> {
        self.tx
            .open_table(CURSORS)?
            .insert(transcript, encode_record(c)?.as_slice())?;
        Ok(())
    }

    /// Mark a chunk as waiting for a model embedding.
    pub fn mark_pending(&mut self, id: ChunkId) -> Result<(), StoreError> {
        self.tx.open_table(PENDING)?.insert(id, ())?;
        Ok(())
    }

    /// Clear a chunk's pending mark.
    pub fn clear_pending(&mut self, id: ChunkId) -> Result<(), StoreError> {
        self.tx.open_table(PENDING)?.remove(id)?;
        Ok(())
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

    /// A chunk record by id (None once deleted).
    pub fn chunk(&self, id: ChunkId) -> Result<Option<ChunkRecord>, StoreError> {
        let t = self.tx.open_table(CHUNKS)?;
        decode_opt(t.get(id)?)
    }

    /// The project id, when the project exists.
    pub fn project_id(&self, project: &str) -> Result<Option<u32>, StoreError> {
        Ok(self
            .tx
            .open_table(PROJECTS)?
            .get(project)?
            .map(|v| v.value()))
    }

    /// Every project with its id.
    pub fn projects(&self) -> Result<Vec<(String, u32)>, StoreError> {
        let t = self.tx.open_table(PROJECTS)?;
        let mut out = Vec::new();
        for row in t.iter()? {
            let (k, v) = row?;
            out.push((k.value().to_string(), v.value()));
        }
        Ok(out)
    }

    /// A session record.
    pub fn session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        let t = self.tx.open_table(SESSIONS)?;
        t.get(id)?.map(|g| session_from(g.value())).transpose()
    }

    /// Every session record.
    pub fn sessions(&self) -> Result<Vec<(String, SessionRecord)>, StoreError> {
        let t = self.tx.open_table(SESSIONS)?;
        let mut out = Vec::new();
        for row in t.iter()? {
            let (k, v) = row?;
            out.push((k.value().to_string(), session_from(v.value())?));
        }
        Ok(out)
    }

    /// Chunk ids of a session (including duplicates it shares with other sessions).
    #[cfg(test)]
    pub fn session_chunk_ids(&self, session: &str) -> Result<Vec<ChunkId>, StoreError> {
        let t = self.tx.open_multimap_table(SESSION_CHUNKS)?;
        let mut out = Vec::new();
        for v in t.get(session)? {
            out.push(v?.value());
        }
        Ok(out)
    }

    /// The chunk id a (session, turn, part) resolves to.
    pub fn turn_chunk(
        &self,
        session: &str,
        turn: u32,
        part: u16,
    ) -> Result<Option<ChunkId>, StoreError> {
        Ok(self
            .tx
            .open_table(TURNS)?
            .get((session, turn, part))?
            .map(|v| v.value()))
    }

    /// Every (session, turn, part) → chunk id of a session, in turn order.
    pub fn session_turns(&self, session: &str) -> Result<Vec<TurnRef>, StoreError> {
        let t = self.tx.open_table(TURNS)?;
        let mut out = Vec::new();
        for row in t.range((session, 0u32, 0u16)..=(session, u32::MAX, u16::MAX))? {
            let (k, v) = row?;
            let (_, turn, part) = k.value();
            out.push(((turn, part), v.value()));
        }
        Ok(out)
    }

    /// The (turn, part) entries of a session with `from <= turn <= to`, in turn order.
    pub fn session_turn_range(
        &self,
        session: &str,
        from: u32,
        to: u32,
    ) -> Result<Vec<TurnRef>, StoreError> {
        let t = self.tx.open_table(TURNS)?;
        let mut out = Vec::new();
        for row in t.range((session, from, 0u16)..=(session, to, u16::MAX))? {
            let (k, v) = row?;
            let (_, turn, part) = k.value();
            out.push(((turn, part), v.value()));
        }
        Ok(out)
    }

    /// The last `n` (turn, part) entries of a session, newest first.
    pub fn session_turns_rev(&self, session: &str, n: usize) -> Result<Vec<TurnRef>, StoreError> {
        let t = self.tx.open_table(TURNS)?;
        let mut out = Vec::with_capacity(n);
        for row in t
            .range((session, 0u32, 0u16)..=(session, u32::MAX, u16::MAX))?
            .rev()
            .take(n)
        {
            let (k, v) = row?;
            let (_, turn, part) = k.value();
            out.push(((turn, part), v.value()));
        }
        Ok(out)
    }

    /// The ingest cursor of a transcript.
    pub fn cursor(&self, transcript: &str) -> Result<Option<CursorRecord>, StoreError> {
        let t = self.tx.open_table(CURSORS)?;
        decode_opt(t.get(transcript)?)
    }

    /// The f32 vector of a chunk in one embedding space.
    pub fn vector(&self, id: ChunkId, emb: &EmbedderId) -> Result<Option<Vec<f32>>, StoreError> {
        let key = emb.key();
        let t = self.tx.open_table(VECTORS)?;
        let out = t.get((id, key.as_str()))?;
        Ok(out.map(|v| codec::bytes_to_f32s(v.value())).transpose()?)
    }

    /// Scan the int8 blocks of a project (or all projects) in one embedding space; returns the
    /// top `n` approximate candidates (some may be deleted: check [`Self::chunk`]).
    pub fn scan_vectors(
        &self,
        project_ids: &[u32],
        emb: &EmbedderId,
        query: &[f32],
        n: usize,
    ) -> Result<Vec<crate::index::Hit>, StoreError> {
        let key = emb.key();
        let t = self.tx.open_table(VEC_BLOCKS)?;
        let mut raw: Vec<redb::AccessGuard<'_, &[u8]>> = Vec::new();
        for &p in project_ids {
            for row in t.range((p, key.as_str(), 0u64)..=(p, key.as_str(), u64::MAX))? {
                let (_, v) = row?;
                raw.push(v);
            }
        }
        Ok(quant::scan_blocks(
            raw.iter().map(|g| g.value()),
            emb,
            query,
            n,
        )?)
    }

    /// Number of vectors stored for a project in an embedding space.
    pub fn vector_count(&self, project_id: u32, emb: &EmbedderId) -> Result<u64, StoreError> {
        let key = emb.key();
        let t = self.tx.open_table(VEC_TAILS)?;
        Ok(t.get((project_id, key.as_str()))?
            .map(|v| {
                let (b, c) = v.value();
                b * BLOCK_VECTORS as u64 + u64::from(c)
            })
            .unwrap_or(0))
    }

    /// Chunk ids waiting for a model embedding (at most `limit`).
    pub fn pending(&self, limit: usize) -> Result<Vec<ChunkId>, StoreError> {
        let t = self.tx.open_table(PENDING)?;
        let mut out = Vec::new();
        for row in t.iter()?.take(limit) {
            out.push(row?.0.value());
        }
        Ok(out)
    }

    /// Number of chunks waiting for a model embedding.
    pub fn pending_count(&self) -> Result<u64, StoreError> {
        Ok(self.tx.open_table(PENDING)?.len()?)
    }

    /// Number of stored chunks.
    pub fn chunk_count(&self) -> Result<u64, StoreError> {
        Ok(self.tx.open_table(CHUNKS)?.len()?)
    }

    /// Iterate every chunk record (for export, prune, rebuilds).
    pub fn for_each_chunk(
        &self,
        mut f: impl FnMut(ChunkId, ChunkRecord) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let t = self.tx.open_table(CHUNKS)?;
        for row in t.iter()? {
            let (k, v) = row?;
            f(k.value(), codec::decode_record(v.value())?)?;
        }
        Ok(())
    }

    /// A BM25 postings view over the given projects.
    pub fn lexical(&self, project_ids: &[u32]) -> Result<StoreLexical<'_>, StoreError> {
        let stats = self.tx.open_table(LEX_STATS)?;
        let mut docs = 0;
        let mut total = 0;
        for &p in project_ids {
            if let Some(v) = stats.get(p)? {
                let (d, t) = v.value();
                docs += d;
                total += t;
            }
        }
        Ok(StoreLexical {
            reader: self,
            project_ids: project_ids.to_vec(),
            docs,
            total,
        })
    }
}

/// BM25 postings of some projects, read from the store: the [`Postings`] source that ships
/// (search, restore and recall all score through [`crate::index::bm25_search`] over it).
///
/// [`Postings`]: crate::index::Postings
#[derive(Debug)]
pub(crate) struct StoreLexical<'a> {
    reader: &'a StoreReader,
    project_ids: Vec<u32>,
    docs: u64,
    total: u64,
}

impl StoreLexical<'_> {
    /// Number of documents.
    pub fn docs(&self) -> u64 {
        self.docs
    }

    /// Document frequency of a term over the selected projects (no postings are read).
    pub fn df(&self, term: &str) -> Result<u64, StoreError> {
        let t = self.reader.tx.open_multimap_table(POSTINGS)?;
        let mut n = 0;
        for &p in &self.project_ids {
            n += t.get((p, term))?.len();
        }
        Ok(n)
    }
}

impl crate::index::Postings for StoreLexical<'_> {
    type Error = StoreError;

    fn doc_count(&self) -> Result<u64, StoreError> {
        Ok(self.docs)
    }

    fn total_len(&self) -> Result<u64, StoreError> {
        Ok(self.total)
    }

    fn postings(&self, term: &str) -> Result<Vec<crate::index::Posting>, StoreError> {
        let t = self.reader.tx.open_multimap_table(POSTINGS)?;
        let mut out = Vec::new();
        for &p in &self.project_ids {
            for v in t.get((p, term))? {
                let (doc, tf, doc_len) = v?.value();
                out.push(crate::index::Posting { doc, tf, doc_len });
            }
        }
        Ok(out)
    }
}

// ---- Pruning and maintenance (used by `crate::prune`). ----

/// What [`StoreWriter::compact_vectors`] did for one project.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompactReport {
    /// Blocks before.
    pub blocks_before: u64,
    /// Blocks after.
    pub blocks_after: u64,
    /// Vectors kept.
    pub vectors_kept: u64,
    /// Vectors of deleted chunks dropped.
    pub vectors_dropped: u64,
}

impl StoreWriter {
    /// Remove every turn entry of `session` that resolves to chunk `id` (and the session's link
    /// to it). `hint` is the (turn, part) to try first; other turns are scanned only when the
    /// hint does not match (a duplicate shared by another session). Returns entries removed.
    pub fn unlink_turns(
        &mut self,
        session: &str,
        id: ChunkId,
        hint: Option<(u32, u16)>,
    ) -> Result<u64, StoreError> {
        let mut t = self.tx.open_table(TURNS)?;
        let mut removed = 0;
        if let Some((turn, part)) = hint
            && t.get((session, turn, part))?.map(|v| v.value()) == Some(id)
        {
            t.remove((session, turn, part))?;
            removed = 1;
        } else {
            let keys: Vec<(u32, u16)> = {
                let mut v = Vec::new();
                for row in t.range((session, 0u32, 0u16)..=(session, u32::MAX, u16::MAX))? {
                    let (k, cid) = row?;
                    if cid.value() == id {
                        let (_, turn, part) = k.value();
                        v.push((turn, part));
                    }
                }
                v
            };
            for (turn, part) in keys {
                t.remove((session, turn, part))?;
                removed += 1;
            }
        }
        drop(t);
        self.tx
            .open_multimap_table(SESSION_CHUNKS)?
            .remove(session, id)?;
        Ok(removed)
    }

    /// Rewrite a project's int8 vector blocks without the ids of deleted chunks (tombstones),
    /// re-packed into full blocks of [`BLOCK_VECTORS`]; the tail entry follows. Blocks of a
    /// space without dead ids are left untouched.
    pub fn compact_vectors(&mut self, project_id: u32) -> Result<CompactReport, StoreError> {
        let mut rep = CompactReport::default();
        let keys: Vec<String> = {
            let tails = self.tx.open_table(VEC_TAILS)?;
            let mut v = Vec::new();
            for row in tails.range((project_id, "")..(project_id.saturating_add(1), ""))? {
                let (k, _) = row?;
                if k.value().0 == project_id {
                    v.push(k.value().1.to_string());
                }
            }
            v
        };
        for key in keys {
            let blocks: Vec<(u64, Vec<u8>)> = {
                let t = self.tx.open_table(VEC_BLOCKS)?;
                let mut v = Vec::new();
                for row in t.range(
                    (project_id, key.as_str(), 0u64)..=(project_id, key.as_str(), u64::MAX),
                )? {
                    let (k, b) = row?;
                    v.push((k.value().2, b.value().to_vec()));
                }
                v
            };
            let chunks = self.tx.open_table(CHUNKS)?;
            let mut alive = std::collections::HashSet::new();
            let mut dead = 0u64;
            for (_, b) in &blocks {
                for id in quant::BlockView::parse(b)?.ids() {
                    if chunks.get(id)?.is_some() {
                        alive.insert(id);
                    } else {
                        dead += 1;
                    }
                }
            }
            drop(chunks);
            rep.blocks_before += blocks.len() as u64;
            rep.vectors_kept += alive.len() as u64;
            if dead == 0 {
                rep.blocks_after += blocks.len() as u64;
                continue;
            }
            rep.vectors_dropped += dead;
            // Re-pack the survivors in order into blocks of BLOCK_VECTORS.
            let mut packed: Vec<Vec<u8>> = Vec::new();
            let mut cur: Option<Vec<u8>> = None;
            let mut cur_len = 0usize;
            for (_, b) in &blocks {
                let kept = quant::BlockView::parse(b)?.retain(|id| alive.contains(&id));
                let view = quant::BlockView::parse(&kept)?;
                let ids: Vec<u64> = view.ids().collect();
                let mut start = 0;
                while start < ids.len() {
                    let room = BLOCK_VECTORS - cur_len;
                    let take: std::collections::HashSet<u64> = ids
                        [start..(start + room).min(ids.len())]
                        .iter()
                        .copied()
                        .collect();
                    let piece = view.retain(|id| take.contains(&id));
                    cur = Some(match cur.take() {
                        None => piece,
                        Some(c) => quant::concat_blocks(&c, &piece)?,
                    });
                    cur_len += take.len();
                    start += take.len();
                    if cur_len == BLOCK_VECTORS {
                        packed.extend(cur.take());
                        cur_len = 0;
                    }
                }
            }
            packed.extend(cur.take());
            let mut t = self.tx.open_table(VEC_BLOCKS)?;
            for (no, _) in &blocks {
                t.remove((project_id, key.as_str(), *no))?;
            }
            for (no, b) in packed.iter().enumerate() {
                t.insert((project_id, key.as_str(), no as u64), b.as_slice())?;
            }
            drop(t);
            let mut tails = self.tx.open_table(VEC_TAILS)?;
            match packed.last() {
                Some(last) => {
                    let n = quant::BlockView::parse(last)?.len() as u32;
                    tails.insert((project_id, key.as_str()), ((packed.len() - 1) as u64, n))?;
                }
                None => {
                    tails.remove((project_id, key.as_str()))?;
                }
            }
            rep.blocks_after += packed.len() as u64;
        }
        Ok(rep)
    }

    /// Set a value of the meta table. Keys of the store itself are refused.
    pub fn set_meta_value(&mut self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        if key == META_SCHEMA || key == META_NEXT_CHUNK {
            return Err(StoreError::Encode(format!("meta key {key} is reserved")));
        }
        self.tx.open_table(META)?.insert(key, value)?;
        Ok(())
    }
}

impl StoreReader {
    /// Up to `limit` chunk records with ids greater than `after`, in id order.
    pub fn chunks_after(
        &self,
        after: ChunkId,
        limit: usize,
    ) -> Result<Vec<(ChunkId, ChunkRecord)>, StoreError> {
        let t = self.tx.open_table(CHUNKS)?;
        let mut out = Vec::new();
        if after == u64::MAX {
            return Ok(out);
        }
        for row in t.range(after + 1..)?.take(limit) {
            let (k, v) = row?;
            out.push((k.value(), codec::decode_record(v.value())?));
        }
        Ok(out)
    }

    /// A value of the meta table.
    pub fn meta_value(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        meta_get(&self.tx.open_table(META)?, key)
    }

    /// Ids in a project's int8 blocks (all spaces) whose chunk no longer exists.
    pub fn dead_vector_ids(&self, project_id: u32) -> Result<u64, StoreError> {
        let blocks = self.tx.open_table(VEC_BLOCKS)?;
        let chunks = self.tx.open_table(CHUNKS)?;
        let mut dead = 0;
        for row in blocks.range((project_id, "", 0u64)..(project_id.saturating_add(1), "", 0u64))? {
            let (k, b) = row?;
            if k.value().0 != project_id {
                continue;
            }
            for id in quant::BlockView::parse(b.value())?.ids() {
                if chunks.get(id)?.is_none() {
                    dead += 1;
                }
            }
        }
        Ok(dead)
    }

    /// Every id in a project's int8 blocks of one space, in block order (tests, audits).
    #[cfg(test)]
    pub fn block_ids(&self, project_id: u32, emb: &EmbedderId) -> Result<Vec<ChunkId>, StoreError> {
        let key = emb.key();
        let t = self.tx.open_table(VEC_BLOCKS)?;
        let mut out = Vec::new();
        for row in
            t.range((project_id, key.as_str(), 0u64)..=(project_id, key.as_str(), u64::MAX))?
        {
            let (_, b) = row?;
            out.extend(quant::BlockView::parse(b.value())?.ids());
        }
        Ok(out)
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

/// A stored session record.
fn session_from(b: &[u8]) -> Result<SessionRecord, StoreError> {
    Ok(codec::decode_record(b)?)
}
