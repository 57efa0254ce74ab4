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

mod schema;

pub use schema::{ChunkRecord, CursorRecord, SCHEMA_VERSION, SessionRecord};

use crate::chunk::Chunk;
use crate::embed::EmbedderId;
use crate::error::StoreError;
use crate::index::lexical;
use crate::index::quant;
use redb::{
    Builder, ConcurrencyMode, Database, ReadTransaction, ReadableDatabase, ReadableTable,
    ReadableTableMetadata, WriteTransaction,
};
use schema::*;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Vectors per int8 block value.
pub const BLOCK_VECTORS: usize = 256;

/// Identifier of a stored chunk (dense, never reused).
pub type ChunkId = u64;

/// `((turn index, part), chunk id)` of one stored turn part.
pub type TurnRef = ((u32, u16), ChunkId);

/// Handle on the store file.
#[derive(Debug)]
pub struct Store {
    db: Database,
    path: PathBuf,
    write_timeout: Duration,
}

impl Store {
    /// Open (or create) the store at `path` in multi-process mode, creating tables and checking
    /// the schema version.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref().to_path_buf();
        if let Some(dir) = path.parent() {
            crate::paths::ensure_private_dir(dir)?;
        }
        let db = Builder::new()
            .set_concurrency_mode(ConcurrencyMode::MultiWriter)
            .set_cache_size(16 << 20)
            .create(&path)
            .map_err(|e| StoreError::Open {
                path: path.clone(),
                reason: e.to_string(),
            })?;
        crate::paths::restrict_file(&path)?;
        let store = Self {
            db,
            path,
            write_timeout: Duration::from_millis(2000),
        };
        store.init_schema()?;
        Ok(store)
    }

    /// How long [`Store::write`] waits for another process's write transaction.
    pub fn set_write_timeout(&mut self, t: Duration) {
        self.write_timeout = t;
    }

    /// The store file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn init_schema(&self) -> Result<(), StoreError> {
        // Fast path: tables exist and the version matches (one read transaction).
        {
            let rtx = self.db.begin_read()?;
            if let Ok(meta) = rtx.open_table(META) {
                match meta.get(META_SCHEMA)? {
                    Some(v) if v.value() == SCHEMA_VERSION.to_le_bytes() => return Ok(()),
                    Some(v) => {
                        let got = v.value();
                        let got = u32::from_le_bytes(got.try_into().unwrap_or([0; 4]));
                        return Err(StoreError::SchemaVersion {
                            found: got,
                            supported: SCHEMA_VERSION,
                        });
                    }
                    None => {}
                }
            }
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
        let start = Instant::now();
        let mut sleep = Duration::from_micros(200);
        let tx = loop {
            match self.db.try_begin_write() {
                Ok(tx) => break tx,
                Err(redb::TransactionError::WouldBlock) => {
                    if start.elapsed() >= self.write_timeout {
                        return Err(StoreError::Busy {
                            waited_ms: start.elapsed().as_millis() as u64,
                        });
                    }
                    std::thread::sleep(sleep);
                    sleep = (sleep * 2).min(Duration::from_millis(20));
                }
                Err(e) => return Err(e.into()),
            }
        };
        let mut w = StoreWriter { tx };
        let out = f(&mut w)?;
        w.tx.commit()?;
        Ok(out)
    }

    /// A consistent read view.
    pub fn read(&self) -> Result<StoreReader, StoreError> {
        Ok(StoreReader {
            tx: self.db.begin_read()?,
        })
    }
}

/// Writes inside one transaction. Created by [`Store::write`].
pub struct StoreWriter {
    tx: WriteTransaction,
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
        Ok(())
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

    fn next_chunk_id(&mut self) -> Result<ChunkId, StoreError> {
        let mut meta = self.tx.open_table(META)?;
        let cur = match meta.get(META_NEXT_CHUNK)? {
            Some(v) => u64::from_le_bytes(v.value().try_into().unwrap_or([0; 8])),
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
            .insert(id, encode(&rec)?.as_slice())?;
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
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.tx
            .open_table(VECTORS)?
            .insert((id, key.as_str()), bytes.as_slice())?;
        let mut tails = self.tx.open_table(VEC_TAILS)?;
        let (block_no, count) = tails
            .get((project_id, key.as_str()))?
            .map(|g| g.value())
            .unwrap_or((0, 0));
        let mut blocks = self.tx.open_table(VEC_BLOCKS)?;
        let single = quant::encode_block(emb, &[id], &[v])?;
        let (block_no, block) = if count > 0 && (count as usize) < BLOCK_VECTORS {
            let old = blocks
                .get((project_id, key.as_str(), block_no))?
                .map(|g| g.value().to_vec())
                .unwrap_or_default();
            (block_no, quant::concat_blocks(&old, &single)?)
        } else if count == 0 {
            (block_no, single)
        } else {
            (block_no + 1, single)
        };
        let n_in_block = quant::BlockView::parse(&block)?.len();
        blocks.insert((project_id, key.as_str(), block_no), block.as_slice())?;
        tails.insert((project_id, key.as_str()), (block_no, n_in_block as u32))?;
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
        let out = match t.get(id)? {
            Some(v) => Some(decode(v.value())?),
            None => None,
        };
        Ok(out)
    }

    /// Overwrite a chunk record (ranking metadata updates).
    pub fn update_record(&mut self, id: ChunkId, rec: &ChunkRecord) -> Result<(), StoreError> {
        self.tx
            .open_table(CHUNKS)?
            .insert(id, encode(rec)?.as_slice())?;
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
            Some(v) => decode(v.value())?,
            None => SessionRecord {
                project: chunk.project.clone(),
                project_id,
                ..SessionRecord::default()
            },
        };
        rec.turns = rec.turns.max(chunk.turn_index + 1);
        if rec.first_ts.is_none() {
            rec.first_ts.clone_from(&chunk.started_at);
        }
        if chunk.ended_at.is_some() {
            rec.last_ts.clone_from(&chunk.ended_at);
        }
        rec.updated_at = now;
        t.insert(chunk.session_id.as_str(), encode(&rec)?.as_slice())?;
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
            Some(v) => decode(v.value())?,
            None => SessionRecord {
                project: project.to_string(),
                project_id,
                ..SessionRecord::default()
            },
        };
        f(&mut rec);
        t.insert(session_id, encode(&rec)?.as_slice())?;
        Ok(())
    }

    /// The ingest cursor of a transcript.
    pub fn cursor(&self, transcript: &str) -> Result<Option<CursorRecord>, StoreError> {
        let t = self.tx.open_table(CURSORS)?;
        let out = match t.get(transcript)? {
            Some(v) => Some(decode(v.value())?),
            None => None,
        };
        Ok(out)
    }

    /// Save the ingest cursor of a transcript.
    pub fn set_cursor(&mut self, transcript: &str, c: &CursorRecord) -> Result<(), StoreError> {
        self.tx
            .open_table(CURSORS)?
            .insert(transcript, encode(c)?.as_slice())?;
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
pub struct StoreReader {
    tx: ReadTransaction,
}

impl StoreReader {
    /// A chunk record by id (None once deleted).
    pub fn chunk(&self, id: ChunkId) -> Result<Option<ChunkRecord>, StoreError> {
        let t = self.tx.open_table(CHUNKS)?;
        let out = match t.get(id)? {
            Some(v) => Some(decode(v.value())?),
            None => None,
        };
        Ok(out)
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
        let out = match t.get(id)? {
            Some(v) => Some(decode(v.value())?),
            None => None,
        };
        Ok(out)
    }

    /// Every session record.
    pub fn sessions(&self) -> Result<Vec<(String, SessionRecord)>, StoreError> {
        let t = self.tx.open_table(SESSIONS)?;
        let mut out = Vec::new();
        for row in t.iter()? {
            let (k, v) = row?;
            out.push((k.value().to_string(), decode(v.value())?));
        }
        Ok(out)
    }

    /// Chunk ids of a session (including duplicates it shares with other sessions).
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
        let out = match t.get(transcript)? {
            Some(v) => Some(decode(v.value())?),
            None => None,
        };
        Ok(out)
    }

    /// The f32 vector of a chunk in one embedding space.
    pub fn vector(&self, id: ChunkId, emb: &EmbedderId) -> Result<Option<Vec<f32>>, StoreError> {
        let key = emb.key();
        let t = self.tx.open_table(VECTORS)?;
        let out = t.get((id, key.as_str()))?.map(|v| {
            v.value()
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect()
        });
        Ok(out)
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
            f(k.value(), decode(v.value())?)?;
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

/// BM25 postings of some projects, read from the store.
#[derive(Debug)]
pub struct StoreLexical<'a> {
    reader: &'a StoreReader,
    project_ids: Vec<u32>,
    docs: u64,
    total: u64,
}

impl StoreLexical<'_> {
    /// Number of documents.
    pub fn doc_count(&self) -> u64 {
        self.docs
    }

    /// Total document length (terms).
    pub fn total_len(&self) -> u64 {
        self.total
    }

    /// Postings (doc, tf, doc_len) of a term over the selected projects.
    pub fn postings(&self, term: &str) -> Result<Vec<(u64, u32, u32)>, StoreError> {
        let t = self.reader.tx.open_multimap_table(POSTINGS)?;
        let mut out = Vec::new();
        for &p in &self.project_ids {
            for v in t.get((p, term))? {
                out.push(v?.value());
            }
        }
        Ok(out)
    }
}

fn encode<T: serde::Serialize>(v: &T) -> Result<Vec<u8>, StoreError> {
    bincode::serde::encode_to_vec(v, bincode::config::standard())
        .map_err(|e| StoreError::Encode(e.to_string()))
}

fn decode<T: serde::de::DeserializeOwned>(b: &[u8]) -> Result<T, StoreError> {
    bincode::serde::decode_from_slice(b, bincode::config::standard())
        .map(|(v, _)| v)
        .map_err(|e| StoreError::Decode(e.to_string()))
}
