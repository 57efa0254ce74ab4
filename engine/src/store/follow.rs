//! Following one space's int8 blocks from outside the store: what a long-lived vector index
//! (the resident service's graph) reads to stay in step with every writer, and what a search
//! scans exactly to cover the entries such an index has not taken in yet.
//!
//! Invariant it relies on: for a given block epoch, blocks only grow at their tail
//! (`flush_blocks` appends; every other rewrite bumps the epoch). So a [`BlockCursor`] of an
//! epoch names a prefix of the project's entries that stays what it was.

use super::schema::{META, VEC_BLOCKS, VEC_TAILS};
use super::vectors::block_epoch;
use super::{ChunkId, StoreError, StoreReader};
use crate::embed::EmbedderId;
use crate::index::{Hit, TopK, quant};
use redb::ReadableTable;

/// How far a follower has read one project's blocks of a space: every entry before entry
/// `count` of block `block` (blocks are numbered from 0, [`super::BLOCK_VECTORS`] entries each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BlockCursor {
    /// The project.
    pub project: u32,
    /// The block the next entry is in.
    pub block: u64,
    /// Entries of that block already read.
    pub count: u32,
}

/// One int8 entry as a follower sees it.
#[derive(Debug, Clone, Copy)]
pub struct FeedEntry<'a> {
    /// The project whose blocks hold it.
    pub project: u32,
    /// The chunk.
    pub id: ChunkId,
    /// Its quantization scale (`max|v| / 127`).
    pub scale: f32,
    /// Its int8 components, as raw bytes.
    pub codes: &'a [u8],
}

/// What [`StoreReader::follow_vectors`] read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Followed {
    /// The block epoch of the snapshot read.
    pub epoch: u64,
    /// Where each project of the space stands now (every project with blocks in it).
    pub cursors: Vec<BlockCursor>,
    /// Whether everything was read from the start (the epoch differed from the caller's): the
    /// caller drops what it holds that was not visited.
    pub from_start: bool,
    /// Entries visited.
    pub visited: u64,
}

/// What [`StoreReader::newest_vectors`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Newest {
    /// Where to start each project.
    pub from: Vec<BlockCursor>,
    /// Vectors from there on.
    pub scanned: u64,
    /// Vectors in all.
    pub total: u64,
}

impl StoreReader {
    /// The block epoch of this snapshot: it changes whenever int8 blocks are rewritten other
    /// than by an append at a tail (compaction, forget, rewrite).
    pub fn vector_block_epoch(&self) -> Result<u64, StoreError> {
        block_epoch(&self.tx.open_table(META)?)
    }

    /// Visit the entries of space `emb` appended after `from` (for every project with blocks in
    /// that space), or every entry when `epoch` is not this snapshot's (`None`: first read).
    /// Stops after about `limit` entries (at a whole block) so a follower can take a huge
    /// backlog in pieces; the returned cursors say where it stopped.
    pub fn follow_vectors(
        &self,
        emb: &EmbedderId,
        from: &[BlockCursor],
        epoch: Option<u64>,
        limit: u64,
        visit: &mut dyn FnMut(FeedEntry<'_>),
    ) -> Result<Followed, StoreError> {
        let key = emb.key();
        let now = self.vector_block_epoch()?;
        let from_start = epoch != Some(now);
        let mut out = Followed {
            epoch: now,
            from_start,
            ..Followed::default()
        };
        let blocks = self.tx.open_table(VEC_BLOCKS)?;
        for tail in self.space_tails(&key)? {
            let project = tail.project;
            let start = match from.iter().find(|c| c.project == project) {
                Some(c) if !from_start => *c,
                _ => BlockCursor {
                    project,
                    block: 0,
                    count: 0,
                },
            };
            let mut at = start;
            if out.visited < limit {
                for row in blocks.range(
                    (project, key.as_str(), start.block)..=(project, key.as_str(), u64::MAX),
                )? {
                    let (k, v) = row?;
                    let no = k.value().2;
                    let view = quant::BlockView::parse(v.value())?;
                    view.ensure_embedder(emb)?;
                    let skip = if no == start.block {
                        start.count as usize
                    } else {
                        0
                    };
                    for (i, (id, scale, codes)) in view.entries().enumerate() {
                        if i >= skip {
                            visit(FeedEntry {
                                project,
                                id,
                                scale,
                                codes,
                            });
                            out.visited += 1;
                        }
                    }
                    at = BlockCursor {
                        project,
                        block: no,
                        count: view.len() as u32,
                    };
                    if out.visited >= limit {
                        break;
                    }
                }
            }
            out.cursors.push(at);
        }
        Ok(out)
    }

    /// Exact int8 scores of the entries of space `emb` after `from` in `project_ids` (projects
    /// with no cursor are scanned whole), best `n` first: the part of a search a follower's
    /// index does not cover yet.
    pub fn scan_vectors_after(
        &self,
        project_ids: &[u32],
        emb: &EmbedderId,
        query: &[f32],
        from: &[BlockCursor],
        n: usize,
    ) -> Result<Vec<Hit>, StoreError> {
        let key = emb.key();
        let q = quant::QuantQuery::new(emb.dims, query)?;
        let blocks = self.tx.open_table(VEC_BLOCKS)?;
        let mut top = TopK::new(n);
        for &p in project_ids {
            let start = from
                .iter()
                .find(|c| c.project == p)
                .copied()
                .unwrap_or(BlockCursor {
                    project: p,
                    block: 0,
                    count: 0,
                });
            for row in blocks.range((p, key.as_str(), start.block)..=(p, key.as_str(), u64::MAX))? {
                let (k, v) = row?;
                let view = quant::BlockView::parse(v.value())?;
                view.ensure_embedder(emb)?;
                let skip = if k.value().2 == start.block {
                    start.count as usize
                } else {
                    0
                };
                for (id, scale, codes) in view.entries().skip(skip) {
                    top.push(id, q.approx(scale, codes));
                }
            }
        }
        Ok(top.into_sorted())
    }

    /// Where to start scanning `project_ids` in space `emb` to cover about their newest `cap`
    /// vectors (whole blocks, spread evenly over the projects), and how many that is of all.
    pub fn newest_vectors(
        &self,
        project_ids: &[u32],
        emb: &EmbedderId,
        cap: u64,
    ) -> Result<Newest, StoreError> {
        let key = emb.key();
        let tails = self.tx.open_table(VEC_TAILS)?;
        let per_project = cap / project_ids.len().max(1) as u64;
        let mut out = Newest::default();
        for &p in project_ids {
            let Some((block, count)) = tails.get((p, key.as_str()))?.map(|g| g.value()) else {
                continue;
            };
            let total = block * super::BLOCK_VECTORS as u64 + u64::from(count);
            let blocks_back =
                per_project.saturating_sub(u64::from(count)) / super::BLOCK_VECTORS as u64;
            let first = block.saturating_sub(blocks_back);
            out.total += total;
            out.scanned += total - first * super::BLOCK_VECTORS as u64;
            out.from.push(BlockCursor {
                project: p,
                block: first,
                count: 0,
            });
        }
        Ok(out)
    }

    /// The end of every project's blocks in space `key`: its tail block and the entries in it.
    fn space_tails(&self, key: &str) -> Result<Vec<BlockCursor>, StoreError> {
        let tails = self.tx.open_table(VEC_TAILS)?;
        let mut out = Vec::new();
        for row in tails.iter()? {
            let (k, v) = row?;
            let (project, space) = k.value();
            if space == key {
                let (block, count) = v.value();
                out.push(BlockCursor {
                    project,
                    block,
                    count,
                });
            }
        }
        Ok(out)
    }
}
