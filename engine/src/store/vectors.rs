//! Vectors: f16 vectors per (chunk, embedder) for re-scoring, int8 blocks per (project,
//! embedder) for the scan, and the queue of chunks still waiting for a model vector.
//!
//! Tables: `vectors`, `vec_counts`, `vec_blocks`, `vec_tails`, `pending_embed`.
//!
//! Bytes: a chunk keeps one space once the model embedded it. Its hash vector is
//! only read while it waits for the model (search over pending chunks) or in a store that has
//! no model at all, so `embed_pending` drops the hash row when it adds the model's, and the
//! stale hash entry of the int8 blocks goes at the next [`StoreWriter::compact_vectors`]
//! (the background embedder runs it when nothing is left pending). Re-scoring vectors are f16
//! ([`codec::f32s_to_f16_bytes`]: half the bytes of f32, the same ranking).

use super::BLOCK_VECTORS;
use super::schema::*;
use super::{ChunkId, StoreError, StoreReader, StoreWriter};
use crate::codec;
use crate::embed::EmbedderId;
use crate::index::quant;
use redb::{ReadableTable, ReadableTableMetadata};

/// Rows of `vectors` per space key.
pub type VectorCounts = std::collections::BTreeMap<String, u64>;

/// Changes of `vectors` rows per space key in one write transaction ([`StoreWriter`]).
pub(super) type CountDeltas = std::collections::BTreeMap<String, i64>;

/// Note `delta` rows of `vectors` added (or removed, negative) in space `key`.
pub(super) fn count_rows(deltas: &mut CountDeltas, key: &str, delta: i64) {
    match deltas.get_mut(key) {
        Some(d) => *d += delta,
        None => {
            deltas.insert(key.to_owned(), delta);
        }
    }
}

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
    /// Add (or add another embedder's) vector for a stored chunk.
    pub fn put_vector(
        &mut self,
        project_id: u32,
        id: ChunkId,
        emb: &EmbedderId,
        v: &[f32],
    ) -> Result<(), StoreError> {
        let key = emb.key();
        let bytes = codec::f32s_to_f16_bytes(v);
        let added = self
            .tx
            .open_table(VECTORS)?
            .insert((id, key.as_str()), bytes.as_slice())?
            .is_none();
        if added {
            count_rows(&mut self.vec_counts, &key, 1);
        }
        self.pending_blocks
            .push((project_id, emb.clone(), id, v.to_vec()));
        Ok(())
    }

    /// Drop a chunk's re-scoring vector of one space (its int8 block entry stays until the
    /// next [`Self::compact_vectors`], which keeps only the spaces a chunk lists). The caller
    /// takes the space out of the chunk's record in the same transaction.
    pub fn drop_vector(&mut self, id: ChunkId, emb: &EmbedderId) -> Result<(), StoreError> {
        let key = emb.key();
        let removed = self
            .tx
            .open_table(VECTORS)?
            .remove((id, key.as_str()))?
            .is_some();
        if removed {
            count_rows(&mut self.vec_counts, &key, -1);
        }
        Ok(())
    }

    /// Add this transaction's changes of `vectors` rows to `vec_counts` (one update per space;
    /// a space left with no row loses its count row). Called by `Store::write` before commit.
    pub(super) fn flush_vec_counts(&mut self) -> Result<(), StoreError> {
        if self.vec_counts.is_empty() {
            return Ok(());
        }
        let deltas = std::mem::take(&mut self.vec_counts);
        let mut t = self.tx.open_table(VEC_COUNTS)?;
        for (key, delta) in deltas {
            if delta == 0 {
                continue;
            }
            let cur = t.get(key.as_str())?.map_or(0, |g| g.value());
            let next = cur.checked_add_signed(delta).unwrap_or_else(|| {
                // Rows are only counted as redb reports them added or removed, so this means
                // the stored count was already wrong (`memctl check` reports it).
                tracing::warn!(space = %key, count = cur, delta, "vector count below zero");
                0
            });
            if next == 0 {
                t.remove(key.as_str())?;
            } else {
                t.insert(key.as_str(), next)?;
            }
        }
        Ok(())
    }

    /// Append the pending vectors to their int8 blocks: per (project, embedder), the tail block
    /// is read once, filled up to [`BLOCK_VECTORS`], and new blocks are written whole.
    pub(super) fn flush_blocks(&mut self) -> Result<(), StoreError> {
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

    /// Count one rewrite of int8 blocks that is not an append to a tail ([`ResidentBlocks`]
    /// reloads everything when it changes).
    fn bump_block_epoch(&mut self) -> Result<(), StoreError> {
        let mut meta = self.tx.open_table(META)?;
        let cur = block_epoch(&meta)?;
        meta.insert(META_BLOCK_EPOCH, (cur + 1).to_le_bytes().as_slice())?;
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

    /// Rewrite a project's int8 vector blocks without the ids of deleted chunks (tombstones)
    /// and without the entries of a space a chunk no longer lists (the hash entry of a chunk the
    /// model embedded since), re-packed into full blocks of [`BLOCK_VECTORS`]; the tail entry
    /// follows. Blocks of a space without such ids are left untouched.
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
            let r = self.compact_space(project_id, &key)?;
            rep.blocks_before += r.blocks_before;
            rep.blocks_after += r.blocks_after;
            rep.vectors_kept += r.vectors_kept;
            rep.vectors_dropped += r.vectors_dropped;
        }
        Ok(rep)
    }

    /// [`Self::compact_vectors`] for one space of a project.
    pub(super) fn compact_space(
        &mut self,
        project_id: u32,
        key: &str,
    ) -> Result<CompactReport, StoreError> {
        let mut rep = CompactReport::default();
        let key = key.to_string();
        {
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
                    let lists = match chunks.get(id)? {
                        Some(g) => codec::decode_record::<super::ChunkRecord>(g.value())?
                            .embedders
                            .contains(&key),
                        None => false,
                    };
                    if lists {
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
                return Ok(rep);
            }
            rep.vectors_dropped += dead;
            // Blocks other than a tail are rewritten: resident copies must reload.
            self.bump_block_epoch()?;
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
}

impl StoreReader {
    /// The re-scoring vector of a chunk in one embedding space (stored as f16).
    pub fn vector(&self, id: ChunkId, emb: &EmbedderId) -> Result<Option<Vec<f32>>, StoreError> {
        self.vector_by_key(id, &emb.key())
    }

    /// [`Self::vector`] by the space's key ([`EmbedderId::key`], as a record's `embedders`
    /// lists it).
    pub fn vector_by_key(&self, id: ChunkId, key: &str) -> Result<Option<Vec<f32>>, StoreError> {
        let t = self.tx.open_table(VECTORS)?;
        let out = t.get((id, key))?;
        Ok(out
            .map(|v| codec::f16_bytes_to_f32s(v.value()))
            .transpose()?)
    }

    /// Scan the int8 blocks of a project (or all projects) in one embedding space; returns the
    /// top `n` approximate candidates (some may be deleted: check [`Self::chunk`]). With
    /// `resident`, the blocks come from its copy, brought up to date with this snapshot first
    /// (the same candidates).
    pub fn scan_vectors(
        &self,
        project_ids: &[u32],
        emb: &EmbedderId,
        query: &[f32],
        n: usize,
        resident: Option<&ResidentBlocks>,
    ) -> Result<Vec<crate::index::Hit>, StoreError> {
        let key = emb.key();
        if let Some(cache) = resident {
            let blocks = self.resident_blocks(cache, project_ids, &key)?;
            return Ok(quant::scan_blocks(
                blocks.iter().map(|b| &b[..]),
                emb,
                query,
                n,
            )?);
        }
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

    /// Re-scoring vectors per embedding space, over every project: one per (chunk, space)
    /// that exists, read from the counts the writes keep (`vec_counts`: one row per space, for
    /// `status`; [`Self::vector_count`] counts int8 entries, which also holds stale ones until
    /// the next compaction).
    pub fn live_vector_counts(&self) -> Result<VectorCounts, StoreError> {
        let t = match self.tx.open_table(VEC_COUNTS) {
            Ok(t) => t,
            // Only a damaged store lacks it (every schema-5 file is made with it): count.
            Err(redb::TableError::TableDoesNotExist(_)) => return self.scan_vector_counts(),
            Err(e) => return Err(e.into()),
        };
        let mut out = VectorCounts::new();
        for row in t.iter()? {
            let (k, v) = row?;
            out.insert(k.value().to_owned(), v.value());
        }
        Ok(out)
    }

    /// [`Self::live_vector_counts`] by a scan of every row of `vectors` (what the kept counts
    /// must equal; tests compare the two).
    pub fn scan_vector_counts(&self) -> Result<VectorCounts, StoreError> {
        let t = self.tx.open_table(VECTORS)?;
        let mut out = std::collections::BTreeMap::new();
        for row in t.iter()? {
            let (k, _) = row?;
            *out.entry(k.value().1.to_owned()).or_insert(0) += 1;
        }
        Ok(out)
    }

    /// Number of int8 block entries of a project in an embedding space (stale ones of
    /// replaced or re-embedded chunks included until the next compaction).
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

/// The block epoch in a meta table view (0 when never bumped).
pub(super) fn block_epoch(
    meta: &impl ReadableTable<&'static str, &'static [u8]>,
) -> Result<u64, StoreError> {
    match meta.get(META_BLOCK_EPOCH)? {
        None => Ok(0),
        Some(v) => Ok(u64::from_le_bytes(
            codec::le_bytes::<8>(v.value(), "block epoch").map_err(|source| {
                StoreError::Corrupt {
                    what: "meta table",
                    source,
                }
            })?,
        )),
    }
}

/// The int8 blocks of the projects a long-lived process searches, kept in memory between
/// queries (the MCP server: `Engine::keep_vectors_resident`).
///
/// Why: at ~1e5 chunks in a project a warm `search` spent ~60 % of its dense part reading the
/// blocks out of redb again on every query (copying ~40 MB of values; a bigger page cache did
/// not help), and an HNSW graph would cost minutes of CPU to build at each server start.
///
/// Freshness without rereading: blocks only change by appends to a space's tail block (and
/// new blocks after it), except when a compaction re-packs them, which bumps the store's block
/// epoch. So each cached space remembers the epoch and its tail (block number, count) it was
/// read at; a query reads both (two small gets): same epoch and tail, the copy is current; a
/// moved tail, the blocks from the cached tail on are read again; another epoch, all of them.
#[derive(Debug, Default)]
pub(crate) struct ResidentBlocks {
    spaces: std::sync::Mutex<std::collections::HashMap<(u32, String), Resident>>,
}

/// (block number, bytes) of one int8 block.
type NumberedBlock = (u64, std::sync::Arc<[u8]>);

#[derive(Debug)]
struct Resident {
    epoch: u64,
    tail: (u64, u32),
    /// (block number, bytes), in block order.
    blocks: Vec<NumberedBlock>,
}

impl ResidentBlocks {
    /// Bytes held.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        self.spaces
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .values()
            .flat_map(|r| r.blocks.iter().map(|(_, b)| b.len()))
            .sum()
    }
}

impl StoreReader {
    /// The blocks of `project_ids` in the space `key`, from the resident copy brought up to
    /// date with this snapshot (see [`ResidentBlocks`]).
    fn resident_blocks(
        &self,
        cache: &ResidentBlocks,
        project_ids: &[u32],
        key: &str,
    ) -> Result<Vec<std::sync::Arc<[u8]>>, StoreError> {
        let epoch = block_epoch(&self.tx.open_table(META)?)?;
        let tails = self.tx.open_table(VEC_TAILS)?;
        let table = self.tx.open_table(VEC_BLOCKS)?;
        let read = |p: u32, from: u64| -> Result<Vec<NumberedBlock>, StoreError> {
            let mut out = Vec::new();
            for row in table.range((p, key, from)..=(p, key, u64::MAX))? {
                let (k, v) = row?;
                out.push((k.value().2, std::sync::Arc::from(v.value())));
            }
            Ok(out)
        };
        let mut use_blocks: Vec<std::sync::Arc<[u8]>> = Vec::new();
        {
            let mut spaces = cache
                .spaces
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            for &p in project_ids {
                let slot = (p, key.to_string());
                let Some(tail) = tails.get((p, key))?.map(|g| g.value()) else {
                    spaces.remove(&slot);
                    continue;
                };
                match spaces.get_mut(&slot) {
                    Some(r) if r.epoch == epoch && r.tail == tail => {}
                    Some(r) if r.epoch == epoch && tail.0 >= r.tail.0 => {
                        r.blocks.retain(|(no, _)| *no < r.tail.0);
                        r.blocks.extend(read(p, r.tail.0)?);
                        r.tail = tail;
                    }
                    _ => {
                        spaces.insert(
                            slot.clone(),
                            Resident {
                                epoch,
                                tail,
                                blocks: read(p, 0)?,
                            },
                        );
                    }
                }
                if let Some(r) = spaces.get(&slot) {
                    use_blocks.extend(r.blocks.iter().map(|(_, b)| std::sync::Arc::clone(b)));
                }
            }
        }
        Ok(use_blocks)
    }
}

#[cfg(test)]
#[path = "vectors_tests.rs"]
mod tests;
