//! Vector and lexical indexes.
//!
//! - [`VectorIndex`]: the small trait every vector index implements. Vectors carry the
//!   [`EmbedderId`] of their space: inserting or searching with another embedder's vector is an
//!   [`IndexError::EmbedderMismatch`], never a silently meaningless score.
//! - [`quant`]: the int8 layer, as *encoded blocks* the store persists a few big values at a
//!   time and scans without building any index: ~25 ns per vector, what short-lived hook
//!   processes need (reloading an HNSW dump costs ~7 µs per vector).
//! - The in-memory implementations of [`VectorIndex`] (`ExactIndex`, the f32 oracle, and
//!   `HnswIndex`, hnsw_rs) live in the benches crate (`memctl_benches::index`): no shipped
//!   process keeps a warm index (see [`crate::retrieve`]), and a workspace build must not link
//!   hnsw_rs into the binaries. [`TopK`] and [`checked_normalized`] are public for them.
//! - [`lexical`]: the one BM25 scorer over a [`Postings`] source (the store's redb postings ship;
//!   [`MemLexicalIndex`] is the reference).
//! - [`synth`]: a seeded text generator shared by tests and benches.

mod bm25_topk;
mod bm25_window;
pub mod lexical;
pub mod quant;
pub mod synth;
pub(crate) mod terms;

#[cfg(test)]
mod lexical_conformance;

pub use lexical::{
    Bm25Hits, Bm25Params, MemLexicalIndex, Posting, PostingBlock, Postings, bm25_search_since,
};

use crate::embed::EmbedderId;
use crate::error::IndexError;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// One search result: an external id and its similarity (cosine for vector indexes, BM25 for
/// lexical). Higher is better.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// The caller's id (a chunk id in the store).
    pub id: u64,
    /// Similarity; higher is better.
    pub score: f32,
}

impl Hit {
    /// The result order used everywhere: best score first, ties broken by the smaller id, so
    /// equal inputs always give equal outputs (restore text must be reproducible).
    pub fn rank_cmp(a: &Hit, b: &Hit) -> Ordering {
        b.score.total_cmp(&a.score).then(a.id.cmp(&b.id))
    }
}

/// A nearest-neighbour index over L2-normalized vectors of one embedding space.
///
/// Scores are cosine similarities (dot products of normalized vectors); results come best first
/// with ties broken by id ([`Hit::rank_cmp`]). Every call that takes a vector also takes the
/// [`EmbedderId`] that produced it, and fails with [`IndexError::EmbedderMismatch`] when it is not
/// the index's: the check lives in the signature so no caller can forget it.
///
/// Inserting an id that is already present replaces its vector.
pub trait VectorIndex: Send + Sync + std::fmt::Debug {
    /// The embedding space of every vector in the index.
    fn embedder(&self) -> &EmbedderId;

    /// Number of live (not removed) vectors.
    fn len(&self) -> usize;

    /// True when no live vector is left.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Insert (or replace) `id`. The vector is re-normalized on the way in, so cosine semantics
    /// hold even for a caller that passes a slightly off-norm vector.
    fn insert(&mut self, embedder: &EmbedderId, id: u64, vector: &[f32]) -> Result<(), IndexError>;

    /// Insert many vectors; implementations may parallelize. Same semantics as repeated
    /// [`insert`](Self::insert) (a later duplicate id wins).
    fn insert_batch(
        &mut self,
        embedder: &EmbedderId,
        items: &[(u64, &[f32])],
    ) -> Result<(), IndexError> {
        for (id, v) in items {
            self.insert(embedder, *id, v)?;
        }
        Ok(())
    }

    /// Remove `id`; returns whether it was present. Removing an absent id is not an error.
    fn remove(&mut self, id: u64) -> bool;

    /// The `k` nearest live vectors to `query`, best first.
    fn search(
        &self,
        embedder: &EmbedderId,
        query: &[f32],
        k: usize,
    ) -> Result<Vec<Hit>, IndexError>;
}

/// Check a vector against the index's space and return a normalized copy.
///
/// Non-finite values are refused: one NaN would make every score it touches NaN, and hnsw_rs
/// asserts on distances (a panic in a hook is a failed hook).
pub fn checked_normalized(
    index_embedder: &EmbedderId,
    embedder: &EmbedderId,
    vector: &[f32],
) -> Result<Vec<f32>, IndexError> {
    index_embedder.ensure_same(embedder)?;
    check_dims_finite(index_embedder.dims, vector)?;
    let mut v = vector.to_vec();
    crate::embed::l2_normalize(&mut v);
    Ok(v)
}

/// Dimension and finiteness check shared by every entry point.
pub fn check_dims_finite(dims: usize, vector: &[f32]) -> Result<(), IndexError> {
    if vector.len() != dims {
        return Err(IndexError::DimensionMismatch {
            expected: dims,
            got: vector.len(),
        });
    }
    if let Some(pos) = vector.iter().position(|x| !x.is_finite()) {
        return Err(IndexError::InvalidVector(format!(
            "non-finite value at position {pos}"
        )));
    }
    Ok(())
}

/// Heap entry ordered so that the heap's maximum is the *worst* hit (lowest score, then
/// largest id): a max-heap of the worst gives O(log k) replacement of the worst kept hit.
#[derive(Debug, Clone, Copy)]
struct Worst(Hit);

impl PartialEq for Worst {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Worst {}
impl PartialOrd for Worst {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Worst {
    fn cmp(&self, other: &Self) -> Ordering {
        // Worse = greater. `rank_cmp(a, b) == Less` means a ranks before (is better than) b.
        Hit::rank_cmp(&self.0, &other.0)
    }
}

/// Bounded top-k collector with the deterministic [`Hit::rank_cmp`] order.
#[derive(Debug)]
pub struct TopK {
    k: usize,
    heap: BinaryHeap<Worst>,
}

impl TopK {
    /// A collector of the best `k` hits.
    pub fn new(k: usize) -> Self {
        Self {
            k,
            // Cap the pre-allocation: k may be huge ("give me everything").
            heap: BinaryHeap::with_capacity(k.min(4096)),
        }
    }

    /// Offer a hit; kept only if it beats the worst of the current k.
    #[inline]
    pub fn push(&mut self, id: u64, score: f32) {
        if self.k == 0 {
            return;
        }
        let hit = Worst(Hit { id, score });
        if self.heap.len() < self.k {
            self.heap.push(hit);
        } else if let Some(mut worst) = self.heap.peek_mut()
            && hit < *worst
        {
            *worst = hit;
        }
    }

    /// The worst kept hit once `k` are kept (a new hit enters only if it ranks before it).
    pub fn worst_kept(&self) -> Option<Hit> {
        if self.k > 0 && self.heap.len() >= self.k {
            self.heap.peek().map(|w| w.0)
        } else {
            None
        }
    }

    /// The kept hits, best first.
    pub fn into_sorted(self) -> Vec<Hit> {
        // into_sorted_vec is ascending by Ord, i.e. best first.
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|w| w.0)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn topk_equals_sort_then_truncate(
            scores in proptest::collection::vec((0u64..50, -4i32..4), 0..200),
            k in 0usize..20,
        ) {
            let mut t = TopK::new(k);
            let mut all = Vec::new();
            for (id, s) in &scores {
                // Small integer scores force many ties.
                t.push(*id, *s as f32);
                all.push(Hit { id: *id, score: *s as f32 });
            }
            all.sort_by(Hit::rank_cmp);
            all.truncate(k);
            prop_assert_eq!(t.into_sorted(), all);
        }
    }
}
