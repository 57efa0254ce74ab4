//! Vectors: f32 vectors per (chunk, embedder) for re-scoring, int8 blocks per (project,
//! embedder) for the scan, and the queue of chunks still waiting for a model vector.
//!
//! Tables: `vectors`, `vec_blocks`, `vec_tails`, `pending_embed`.

use super::BLOCK_VECTORS;
use super::schema::*;
use super::{ChunkId, StoreError, StoreReader, StoreWriter};
use crate::codec;
use crate::embed::EmbedderId;
use crate::index::quant;
use redb::{ReadableTable, ReadableTableMetadata};

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
}

impl StoreReader {
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
