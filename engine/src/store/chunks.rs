//! Chunks and turns: the chunk records, their turn entries (session, turn, part → chunk),
//! content-hash dedup per project, and the project ids.
//!
//! Tables: `chunks`, `turns`, `hashes`, `projects` (and the chunk's links in the others:
//! `put_chunk` writes its vectors, postings and session entry through their modules).

use super::schema::*;
use super::{ChunkId, StoreError, StoreReader, StoreWriter, decode_opt};
use crate::chunk::Chunk;
use crate::codec::{self, encode_record};
use crate::embed::EmbedderId;
use crate::index::lexical;
use redb::{ReadableTable, ReadableTableMetadata};
use serde::{Deserialize, Serialize};

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

impl ChunkRecord {
    /// The record of a chunk stored now: `tf` its term counts, `vectors` the spaces it has.
    pub(super) fn new(
        chunk: &Chunk,
        project_id: u32,
        tf: &[(String, u32)],
        vectors: &[(EmbedderId, Vec<f32>)],
        now: i64,
    ) -> Self {
        Self {
            chunk: chunk.clone(),
            project_id,
            doc_len: tf.iter().map(|(_, n)| *n).sum(),
            ingested_at: now,
            access_count: 0,
            last_access: None,
            confidence: 1.0,
            pinned: false,
            embedders: vectors.iter().map(|(e, _)| e.key()).collect(),
            shared_with: Vec::new(),
        }
    }
}

/// The ranking metadata of a chunk record that an import carries over from its file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RecordMeta {
    /// Unix seconds it was archived.
    pub ingested_at: i64,
    /// Times it was used.
    pub access_count: u32,
    /// Unix seconds of the last use.
    pub last_access: Option<i64>,
    /// Ranking confidence.
    pub confidence: f32,
    /// Never pruned.
    pub pinned: bool,
}

impl RecordMeta {
    /// Overwrite `rec`'s ranking metadata with these values.
    pub(crate) fn apply(&self, rec: &mut ChunkRecord) {
        rec.ingested_at = self.ingested_at;
        rec.access_count = self.access_count;
        rec.last_access = self.last_access;
        rec.confidence = self.confidence;
        rec.pinned = self.pinned;
    }
}

/// Format 2: the bincode body of format 1, LZ4-compressed (size prepended). Why: the chunk's
/// text is most of a store's bytes (16 MB of 67 MB at 5,000 turns) and LZ4 decodes a 2.4 KB
/// record in microseconds. Format-1 rows stay as they are
/// and still decode (no migration).
impl crate::codec::Record for ChunkRecord {
    const WHAT: &'static str = "chunk record";
    const VERSION: u8 = 2;

    fn encode_body(&self) -> Result<Vec<u8>, crate::codec::CodecError> {
        Ok(lz4_flex::compress_prepend_size(&codec::encode(self)?))
    }

    fn decode_body(version: u8, body: &[u8]) -> Result<Self, crate::codec::CodecError> {
        match version {
            1 => codec::decode_exact(body, Self::WHAT),
            2 => {
                let plain = lz4_flex::decompress_size_prepended(body).map_err(|e| {
                    crate::codec::CodecError::Decode(format!("{}: lz4: {e}", Self::WHAT))
                })?;
                codec::decode_exact(&plain, Self::WHAT)
            }
            v => Err(crate::codec::CodecError::Decode(format!(
                "{}: unknown format version {v}",
                Self::WHAT
            ))),
        }
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

#[cfg(test)]
impl PutOutcome {
    /// The chunk id the turn part now resolves to.
    pub fn id(self) -> ChunkId {
        match self {
            Self::Inserted(i) | Self::Replaced(i) | Self::Unchanged(i) | Self::Duplicate(i) => i,
        }
    }
}

impl StoreWriter {
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
    pub(super) fn next_chunk_id(&mut self) -> Result<ChunkId, StoreError> {
        let mut meta = self.tx.open_table(META)?;
        let cur = super::bulk::read_next_chunk_id(&meta)?;
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
        self.put_chunk_with_terms(chunk, vectors, now, None)
    }

    /// [`Self::put_chunk`] with the chunk's term frequencies already counted
    /// ([`lexical::term_frequencies`] of its text; ingest counts them on every core before the
    /// write transaction). `None`: counted here.
    pub fn put_chunk_with_terms(
        &mut self,
        chunk: &Chunk,
        vectors: &[(EmbedderId, Vec<f32>)],
        now: i64,
        terms: Option<Vec<(String, u32)>>,
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
                    // Unnamed first (both paths below name the turn again), so that the
                    // release sees only the *other* turns that name the old chunk.
                    self.tx.open_table(TURNS)?.remove(turn_key)?;
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
        let tf = terms.unwrap_or_else(|| lexical::term_frequencies(&chunk.text));
        let rec = ChunkRecord::new(chunk, project_id, &tf, vectors, now);
        let doc_len = rec.doc_len;
        self.tx
            .open_table(CHUNKS)?
            .insert(id, encode_record(&rec)?.as_slice())?;
        self.tx.open_table(TURNS)?.insert(turn_key, id)?;
        self.tx.open_table(HASHES)?.insert(hash_key, id)?;
        self.tx
            .open_multimap_table(SESSION_CHUNKS)?
            .insert(chunk.session_id.as_str(), id)?;
        self.buffer_postings(project_id, id, tf, doc_len);
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

    /// One turn of `session` no longer uses chunk `id` (its `TURNS` entry is already gone):
    /// delete the chunk when nobody else uses it, else just unlink. A session that repeats a
    /// turn word for word names one chunk from several turns: while another turn of it still
    /// does, the chunk and its session link stay (deleting it would leave that turn dangling).
    pub(super) fn release_chunk(
        &mut self,
        id: ChunkId,
        rec: &ChunkRecord,
        session: &str,
    ) -> Result<(), StoreError> {
        if self.turn_names(session, id)? {
            return Ok(());
        }
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

    /// Whether some turn of `session` names chunk `id`. A scan of the session's turns: only
    /// a replaced or re-chunked turn asks, never the append path.
    fn turn_names(&self, session: &str, id: ChunkId) -> Result<bool, StoreError> {
        let t = self.tx.open_table(TURNS)?;
        for row in t.range((session, 0, 0)..=(session, u32::MAX, u16::MAX))? {
            if row?.1.value() == id {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Remove a chunk: record, postings, re-scoring vectors. Its int8 block entries stay until the
    /// next compaction (readers skip ids without a record: tombstone by absence).
    pub fn delete_chunk(&mut self, id: ChunkId, rec: &ChunkRecord) -> Result<(), StoreError> {
        self.tx.open_table(CHUNKS)?.remove(id)?;
        let terms = lexical::term_frequencies(&rec.chunk.text);
        self.remove_postings(rec.project_id, id, terms.iter().map(|(t, _)| t.as_str()))?;
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
                if vt.remove((id, e.as_str()))?.is_some() {
                    super::vectors::count_rows(&mut self.vec_counts, e, -1);
                }
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
}

impl StoreReader {
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

    /// The id of every project.
    pub fn project_ids(&self) -> Result<Vec<u32>, StoreError> {
        Ok(self.projects()?.into_iter().map(|(_, id)| id).collect())
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
}
