//! Many chunks in one write transaction, with each table opened once per run of new chunks.
//!
//! Why: a first archive stores thousands of chunks in one transaction, and storing them one
//! [`StoreWriter::put_chunk_with_terms`] at a time opened a redb table about fifteen times per
//! chunk and read and rewrote the same three bookkeeping values every time (the next chunk id,
//! the project's BM25 statistics, the session record): about 135 µs per chunk, most of the
//! write transaction of a 5,000-turn first archive.
//!
//! [`StoreWriter::put_chunks`] gives each chunk the outcome the one-at-a-time path would give
//! it. New chunks (no entry for their turn part, no identical text in the project, no stale
//! parts after their turn's last part, not forgotten) go through the *lane*: tables open once,
//! the three bookkeeping values kept in memory and written when the lane ends. Anything else
//! (a re-emitted turn, a duplicate, a re-chunked turn) ends the lane and takes the one-at-a-time
//! path, which sees everything the lane wrote.

use super::chunks::{ChunkRecord, PutOutcome, RecordMeta};
use super::postings::buffer_into;
use super::schema::*;
use super::sessions::{SessionRecord, session_from};
use super::{ChunkId, StoreError, StoreWriter};
use crate::chunk::Chunk;
use crate::codec::{self, encode_record};
use crate::embed::EmbedderId;
use crate::index::lexical;
use redb::{ReadableTable, ReadableTableMetadata, WriteTransaction};
use std::iter::Peekable;

/// One chunk for [`StoreWriter::put_chunks`].
#[derive(Debug)]
pub(crate) struct ChunkToPut<'a> {
    /// The chunk (text already redacted).
    pub chunk: &'a Chunk,
    /// Its vectors, one per space it has.
    pub vectors: Vec<(EmbedderId, Vec<f32>)>,
    /// Its term counts when already counted (see [`StoreWriter::put_chunk_with_terms`]).
    pub terms: Option<Vec<(String, u32)>>,
    /// Ranking metadata to store instead of a new chunk's defaults (an imported chunk keeps
    /// the file's); `None`: the defaults of a chunk stored now.
    pub meta: Option<RecordMeta>,
}

/// How [`StoreWriter::put_chunks_with`] treats a run of chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BulkOptions {
    /// Mark every new or replaced chunk pending (it waits for the model's vector).
    pub pending: bool,
    /// After a turn's last part, drop the parts the store has beyond it (ingest: a turn
    /// re-chunked into fewer parts). Import leaves a store's other parts as they are.
    pub drop_stale_parts: bool,
}

/// What [`StoreWriter::put_chunks`] did with one chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Put {
    /// Stored (or found stored) as the outcome says.
    Stored(PutOutcome),
    /// Not stored: its turn or its text was forgotten.
    Forgotten,
}

impl StoreWriter {
    /// Store `items` in order, each as [`Self::is_forgotten`], then
    /// [`Self::put_chunk_with_terms`], then [`Self::mark_pending`] for a new or replaced chunk
    /// when `pending`, then [`Self::drop_parts_from`] after its turn's last part would: the same
    /// rows and outcomes, faster (see the module doc).
    pub(crate) fn put_chunks(
        &mut self,
        items: Vec<ChunkToPut<'_>>,
        now: i64,
        pending: bool,
    ) -> Result<Vec<Put>, StoreError> {
        let opts = BulkOptions {
            pending,
            drop_stale_parts: true,
        };
        self.put_chunks_with(items, now, opts)
    }

    /// [`Self::put_chunks`] with its options spelled out: without `drop_stale_parts`, a
    /// chunk's outcome is the one [`Self::put_chunk_with_terms`] alone gives it (then
    /// [`Self::update_record`] with its `meta` when it is new).
    pub(crate) fn put_chunks_with(
        &mut self,
        items: Vec<ChunkToPut<'_>>,
        now: i64,
        opts: BulkOptions,
    ) -> Result<Vec<Put>, StoreError> {
        let mut out = Vec::with_capacity(items.len());
        let mut items = items.into_iter().peekable();
        while items.peek().is_some() {
            self.lane(&mut items, &mut out, now, opts)?;
            if let Some(item) = items.next() {
                out.push(self.put_one(item, now, opts)?);
            }
        }
        Ok(out)
    }

    /// The one-at-a-time path for one chunk.
    fn put_one(
        &mut self,
        item: ChunkToPut<'_>,
        now: i64,
        opts: BulkOptions,
    ) -> Result<Put, StoreError> {
        let c = item.chunk;
        if self.is_forgotten(c)? {
            return Ok(Put::Forgotten);
        }
        let put = self.put_chunk_with_terms(c, &item.vectors, now, item.terms)?;
        if let PutOutcome::Inserted(id) | PutOutcome::Replaced(id) = put {
            if let Some(meta) = &item.meta
                && let Some(mut rec) = self.get_record(id)?
            {
                meta.apply(&mut rec);
                self.update_record(id, &rec)?;
            }
            if opts.pending {
                self.mark_pending(id)?;
            }
        }
        if opts.drop_stale_parts && c.part + 1 == c.parts {
            self.drop_parts_from(&c.session_id, c.turn_index, c.parts)?;
        }
        Ok(Put::Stored(put))
    }

    /// Store the new chunks at the front of `items` (see the module doc); stop before the
    /// first one that needs the one-at-a-time path, leaving it in `items`.
    fn lane<'a>(
        &mut self,
        items: &mut Peekable<impl Iterator<Item = ChunkToPut<'a>>>,
        out: &mut Vec<Put>,
        now: i64,
        opts: BulkOptions,
    ) -> Result<(), StoreError> {
        let Self {
            tx,
            pending_blocks,
            pending_postings,
            vec_counts,
        } = self;
        let forgotten = tx.open_table(FORGOTTEN)?;
        let mut projects = tx.open_table(PROJECTS)?;
        let mut turns = tx.open_table(TURNS)?;
        let mut hashes = tx.open_table(HASHES)?;
        let mut chunks = tx.open_table(CHUNKS)?;
        let mut session_chunks = tx.open_multimap_table(SESSION_CHUNKS)?;
        let mut vectors = tx.open_table(VECTORS)?;
        let mut pending_t = tx.open_table(PENDING)?;
        let mut next_id: Option<ChunkId> = None;
        // (project id, documents added, terms added), in first-seen order.
        let mut stats: Vec<(u32, u64, u64)> = Vec::new();
        let mut sessions: Vec<(String, SessionRecord)> = Vec::new();
        let mut project: Option<(String, u32)> = None;
        {
            let session_t = tx.open_table(SESSIONS)?;
            while let Some(item) = items.peek() {
                let c = item.chunk;
                if super::remove::forgotten_in(&forgotten, c)? {
                    out.push(Put::Forgotten);
                    items.next();
                    continue;
                }
                let project_id = match &project {
                    Some((name, id)) if *name == c.project => *id,
                    _ => {
                        let id = project_id_of(&mut projects, &c.project)?;
                        project = Some((c.project.clone(), id));
                        id
                    }
                };
                let turn_key = (c.session_id.as_str(), c.turn_index, c.part);
                let hash_key = (project_id, c.sha256.as_str());
                let stale_parts = opts.drop_stale_parts
                    && c.part + 1 == c.parts
                    && turns
                        .range(
                            (c.session_id.as_str(), c.turn_index, c.parts)
                                ..=(c.session_id.as_str(), c.turn_index, u16::MAX),
                        )?
                        .next()
                        .is_some();
                if stale_parts || turns.get(turn_key)?.is_some() || hashes.get(hash_key)?.is_some()
                {
                    break;
                }
                let Some(item) = items.next() else { break };
                let id = match next_id {
                    Some(id) => id,
                    None => read_next_chunk_id(&tx.open_table(META)?)?,
                };
                next_id = Some(id + 1);
                let tf = item
                    .terms
                    .unwrap_or_else(|| lexical::term_frequencies(&c.text));
                let mut rec = ChunkRecord::new(c, project_id, &tf, &item.vectors, now);
                if let Some(meta) = &item.meta {
                    meta.apply(&mut rec);
                }
                chunks.insert(id, encode_record(&rec)?.as_slice())?;
                turns.insert(turn_key, id)?;
                hashes.insert(hash_key, id)?;
                session_chunks.insert(c.session_id.as_str(), id)?;
                match stats.iter_mut().find(|s| s.0 == project_id) {
                    Some(s) => {
                        s.1 += 1;
                        s.2 += u64::from(rec.doc_len);
                    }
                    None => stats.push((project_id, 1, u64::from(rec.doc_len))),
                }
                buffer_into(pending_postings, project_id, id, tf, rec.doc_len);
                for (emb, v) in item.vectors {
                    let bytes = codec::f32s_to_f16_bytes(&v);
                    let key = emb.key();
                    if vectors
                        .insert((id, key.as_str()), bytes.as_slice())?
                        .is_none()
                    {
                        super::vectors::count_rows(vec_counts, &key, 1);
                    }
                    pending_blocks.push((project_id, emb, id, v));
                }
                if opts.pending {
                    pending_t.insert(id, ())?;
                }
                let at = match sessions.iter().position(|(s, _)| *s == c.session_id) {
                    Some(at) => at,
                    None => {
                        let rec = match session_t.get(c.session_id.as_str())? {
                            Some(v) => session_from(v.value())?,
                            None => SessionRecord {
                                project: c.project.clone(),
                                project_id,
                                ..SessionRecord::default()
                            },
                        };
                        sessions.push((c.session_id.clone(), rec));
                        sessions.len() - 1
                    }
                };
                sessions[at].1.touch(c, now);
                out.push(Put::Stored(PutOutcome::Inserted(id)));
            }
        }
        write_lane_totals(tx, next_id, stats, sessions)
    }
}

/// The id of `project`, given one the first time it is seen.
fn project_id_of(
    projects: &mut redb::Table<'_, &'static str, u32>,
    project: &str,
) -> Result<u32, StoreError> {
    if let Some(id) = projects.get(project)?.map(|v| v.value()) {
        return Ok(id);
    }
    let id = projects.len()? as u32 + 1;
    projects.insert(project, id)?;
    Ok(id)
}

/// What a lane adds up while it stores chunks, written once at its end: the next chunk id,
/// per project the documents and terms added (first-seen order), the sessions touched.
fn write_lane_totals(
    tx: &WriteTransaction,
    next_id: Option<ChunkId>,
    stats: Vec<(u32, u64, u64)>,
    sessions: Vec<(String, SessionRecord)>,
) -> Result<(), StoreError> {
    if let Some(next) = next_id {
        tx.open_table(META)?
            .insert(META_NEXT_CHUNK, next.to_le_bytes().as_slice())?;
    }
    if !stats.is_empty() {
        let mut t = tx.open_table(LEX_STATS)?;
        for (project_id, docs, terms) in stats {
            let (d, n) = t.get(project_id)?.map(|v| v.value()).unwrap_or((0, 0));
            t.insert(project_id, (d + docs, n + terms))?;
        }
    }
    if !sessions.is_empty() {
        let mut t = tx.open_table(SESSIONS)?;
        for (id, rec) in sessions {
            t.insert(id.as_str(), encode_record(&rec)?.as_slice())?;
        }
    }
    Ok(())
}

/// The next chunk id stored in the meta table (see [`StoreWriter::next_chunk_id`]).
pub(super) fn read_next_chunk_id(
    meta: &impl ReadableTable<&'static str, &'static [u8]>,
) -> Result<ChunkId, StoreError> {
    match meta.get(META_NEXT_CHUNK)? {
        Some(v) => Ok(u64::from_le_bytes(
            codec::le_bytes::<8>(v.value(), "next chunk id").map_err(|source| {
                StoreError::Corrupt {
                    what: "meta table",
                    source,
                }
            })?,
        )),
        None => Ok(1),
    }
}
