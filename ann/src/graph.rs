//! One project's graph: hnsw_rs over [`crate::dist`] points, with our chunk ids beside it.
//!
//! hnsw_rs numbers points by the order we give it (the "data id"); `ids[data id]` is the
//! chunk. It has no delete: a chunk gone from the store is a tombstone (`dead`), skipped by
//! searches, and the graph is rebuilt from the store when tombstones must not stay (a forget)
//! — see [`crate::service`].

use crate::AnnError;
use crate::dist::DotI8;
use hnsw_rs::prelude::Hnsw;
use memctl_engine::{AnnHit, TopK};
use std::collections::{HashMap, HashSet};
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// hnsw_rs dumps fail unless the graph was created with its maximum layer count.
pub(crate) const MAX_LAYER: usize = 16;

/// Graph parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GraphParams {
    /// Neighbours per node and layer (twice that on layer 0).
    pub m: usize,
    /// Candidate list while inserting.
    pub ef_construction: usize,
    /// The widest search beam: a graph searches with the beam its size needs up to this
    /// (and always at least 10 × the hits asked for).
    pub ef_search: usize,
}

impl Default for GraphParams {
    /// M = 16, efC = 128 and a search beam of at most 3,000, growing with the graph
    /// ([`size_beam`]). A short keyword query lies far from every chunk, and the graph
    /// reaches its true neighbours only through a wide beam over a well-built graph (efC 64
    /// recalled 0.84 at 1e6 with a beam of 2,000). At 1e6 the beam of 3,000 recalls 0.992. The build costs ~1 ms of CPU per point (hnsw_rs spends an insert in its layer
    /// search: efC × M), 2 % of embedding the chunk; a larger M would cost memory. Figures:
    /// docs/perf/scale.md.
    fn default() -> Self {
        Self {
            m: 16,
            ef_construction: 128,
            ef_search: 3000,
        }
    }
}

/// Chunk ids beside the graph.
#[derive(Debug, Default, Clone)]
pub(crate) struct Ids {
    /// data id → chunk.
    pub(crate) chunk: Vec<u64>,
    /// data id → tombstone.
    pub(crate) dead: Vec<bool>,
    pub(crate) n_dead: usize,
    /// chunk → live data id.
    pub(crate) live: HashMap<u64, usize>,
}

/// A project's graph.
pub struct Graph {
    pub(crate) hnsw: Hnsw<'static, i8, DotI8>,
    pub(crate) params: GraphParams,
    ids: RwLock<Ids>,
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids = self.ids();
        f.debug_struct("Graph")
            .field("points", &ids.chunk.len())
            .field("live", &ids.live.len())
            .finish_non_exhaustive()
    }
}

impl Graph {
    /// An empty graph expecting about `capacity` points.
    pub fn new(params: GraphParams, capacity: usize) -> Self {
        let hnsw = Hnsw::new(
            params.m.clamp(2, 255),
            capacity.max(1024),
            MAX_LAYER,
            params.ef_construction.max(params.m),
            DotI8,
        );
        Self::from_parts(hnsw, params, Ids::default())
    }

    /// The graph with another search beam (not part of its structure: a loaded graph
    /// searches as this build asks, not as the build that saved it did).
    pub fn with_ef_search(mut self, ef: usize) -> Self {
        self.params.ef_search = ef;
        self
    }

    pub(crate) fn from_parts(
        hnsw: Hnsw<'static, i8, DotI8>,
        params: GraphParams,
        ids: Ids,
    ) -> Self {
        Self {
            hnsw,
            params,
            ids: RwLock::new(ids),
        }
    }

    pub(crate) fn ids(&self) -> RwLockReadGuard<'_, Ids> {
        self.ids.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn ids_mut(&self) -> RwLockWriteGuard<'_, Ids> {
        self.ids.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Live points.
    pub fn len(&self) -> usize {
        self.ids().live.len()
    }

    /// True when no live point is left.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Tombstones.
    pub fn dead(&self) -> usize {
        self.ids().n_dead
    }

    /// Whether `chunk` is a live point.
    pub fn contains(&self, chunk: u64) -> bool {
        self.ids().live.contains_key(&chunk)
    }

    /// Insert points (on rayon's threads); chunks already live are skipped (a chunk's vector in
    /// one space never changes). Searches may run meanwhile.
    pub fn insert(&self, points: &[(u64, Vec<i8>)]) {
        let mut todo: Vec<(&[i8], usize)> = Vec::with_capacity(points.len());
        {
            let mut ids = self.ids_mut();
            for (chunk, p) in points {
                if ids.live.contains_key(chunk) {
                    continue;
                }
                let data_id = ids.chunk.len();
                ids.chunk.push(*chunk);
                ids.dead.push(false);
                ids.live.insert(*chunk, data_id);
                todo.push((p.as_slice(), data_id));
            }
        }
        match todo.len() {
            0 => {}
            1 => self.hnsw.insert_slice(todo[0]),
            _ => self.hnsw.parallel_insert_slice(&todo),
        }
    }

    /// The live points with their chunks (a rebuild re-inserts them). hnsw_rs lists each
    /// point once, on the layer it was drawn for.
    pub(crate) fn live_points(&self) -> Vec<(u64, Vec<i8>)> {
        let ids = self.ids();
        let pi = self.hnsw.get_point_indexation();
        let mut out = Vec::with_capacity(ids.live.len());
        for layer in 0..=self.hnsw.get_max_level_observed() {
            for p in pi.get_layer_iterator(usize::from(layer)) {
                let id = p.get_origin_id();
                if ids.dead.get(id) == Some(&false) {
                    out.push((ids.chunk[id], p.get_v().to_vec()));
                }
            }
        }
        out
    }

    /// Tombstone every live chunk not in `keep`; returns how many.
    pub fn retain(&self, keep: &HashSet<u64>) -> usize {
        self.ids_mut().retain(keep)
    }

    /// The `k` nearest live chunks to the query point `q`, best first (approximate cosines).
    pub fn search(&self, q: &[i8], k: usize) -> Vec<AnnHit> {
        self.search_ef(q, k, 0)
    }

    /// [`Self::search`] with a beam of at least `ef` (for measurements: examples/graph_recall).
    pub fn search_ef(&self, q: &[i8], k: usize, ef: usize) -> Vec<AnnHit> {
        let Some(fetch) = self.ids().fetch(k) else {
            return Vec::new();
        };
        let points = self.ids().chunk.len();
        let found = self
            .hnsw
            .search(q, fetch, beam(&self.params, points, fetch, ef));
        self.ids()
            .top(k, found.iter().map(|nb| (nb.d_id, nb.distance)))
    }
}

/// The hits of `top`, best first.
pub(crate) fn hits(top: TopK) -> Vec<AnnHit> {
    top.into_sorted()
        .into_iter()
        .map(|h| AnnHit {
            id: h.id,
            score: h.score,
        })
        .collect()
}

/// The search beam for `fetch` neighbours in a graph of `points` points: the beam its size
/// needs ([`size_beam`]) up to the graph's `ef_search`, at least the caller's `ef` and 10 ×
/// `fetch` (a narrow beam returns an arbitrary few of many near-ties).
pub(crate) fn beam(params: &GraphParams, points: usize, fetch: usize, ef: usize) -> usize {
    size_beam(points)
        .min(params.ef_search)
        .max(10 * fetch)
        .max(ef)
}

/// The beam a graph of `points` points needs for recall@10 ≥ 0.95: about 3.2 × √points.
/// Measured on the service's graphs of the mixed stores (docs/perf/scale.md): at 1e5 a
/// beam of 1,000 recalls 0.983 (3,000: 0.984, in 3.7 × the time); at 1e6 3,000 recalls
/// 0.992 and 2,000 0.948.
pub(crate) fn size_beam(points: usize) -> usize {
    (3.2 * (points as f64).sqrt()) as usize
}

impl Ids {
    /// The ids of a saved graph: its chunk per data id and the data ids that are tombstones
    /// (checked: every tombstone in range, no chunk live twice).
    pub(crate) fn from_lists(chunk: Vec<u64>, dead_list: &[u64]) -> Result<Ids, AnnError> {
        let mut dead = vec![false; chunk.len()];
        for &i in dead_list {
            match dead.get_mut(i as usize) {
                Some(d) => *d = true,
                None => return Err(AnnError::Corrupt(format!("tombstone {i} out of range"))),
            }
        }
        let mut live = HashMap::with_capacity(chunk.len());
        for (i, (&c, &d)) in chunk.iter().zip(&dead).enumerate() {
            if !d && live.insert(c, i).is_some() {
                return Err(AnnError::Corrupt(format!("chunk {c} live twice")));
            }
        }
        Ok(Ids {
            n_dead: dead_list.len(),
            chunk,
            dead,
            live,
        })
    }

    /// How many neighbours a search for `k` live hits asks the graph for: `k` over-fetched by
    /// the dead fraction, so tombstones do not eat the `k`. None when there is nothing to find.
    pub(crate) fn fetch(&self, k: usize) -> Option<usize> {
        let (live, total) = (self.live.len(), self.chunk.len());
        if k == 0 || live == 0 {
            return None;
        }
        Some((k * total).div_ceil(live).min(total))
    }

    /// The best `k` live chunks of `found` (data id, distance), best first, scored
    /// `1 − distance`; tombstones and unknown data ids are skipped.
    pub(crate) fn top(&self, k: usize, found: impl Iterator<Item = (usize, f32)>) -> Vec<AnnHit> {
        let mut top = TopK::new(k);
        for (d_id, distance) in found {
            if self.dead.get(d_id).copied().unwrap_or(true) {
                continue;
            }
            if let Some(&chunk) = self.chunk.get(d_id) {
                top.push(chunk, 1.0 - distance);
            }
        }
        hits(top)
    }

    /// Tombstone every live chunk not in `keep`; returns how many.
    pub(crate) fn retain(&mut self, keep: &HashSet<u64>) -> usize {
        let gone: Vec<(u64, usize)> = self
            .live
            .iter()
            .filter(|(c, _)| !keep.contains(c))
            .map(|(c, d)| (*c, *d))
            .collect();
        for (c, d) in &gone {
            self.live.remove(c);
            if let Some(slot) = self.dead.get_mut(*d) {
                *slot = true;
            }
        }
        self.n_dead += gone.len();
        gone.len()
    }
}

#[cfg(test)]
mod tests {
    use super::{GraphParams, beam, size_beam};
    use proptest::prelude::*;

    const SEED: u64 = 0xbea_3000;

    fn config() -> proptest::test_runner::Config {
        crate::tests::proptest_config(SEED, 256)
    }

    proptest! {
        #![proptest_config(config())]

        /// The beam never narrows as the graph grows, never exceeds the widest of its bounds,
        /// and is always at least what the caller asked and 10 × the hits fetched.
        #[test]
        fn the_beam_grows_with_the_graph_within_its_bounds(
            points in 0usize..4_000_000,
            more in 0usize..1_000_000,
            fetch in 1usize..200,
            ef in 0usize..5_000,
            ef_search in 0usize..5_000,
        ) {
            let p = GraphParams { ef_search, ..GraphParams::default() };
            let b = beam(&p, points, fetch, ef);
            prop_assert!(b >= 10 * fetch && b >= ef);
            prop_assert!(b <= ef_search.max(10 * fetch).max(ef));
            prop_assert!(beam(&p, points + more, fetch, ef) >= b);
        }
    }

    #[test]
    fn the_measured_sizes_get_the_measured_beams() {
        let p = GraphParams::default();
        assert_eq!(beam(&p, 100_000, 50, 0), size_beam(100_000));
        assert!((1_000..1_100).contains(&size_beam(100_000)));
        assert_eq!(beam(&p, 1_000_000, 50, 0), 3_000);
        assert_eq!(beam(&p, 10_000, 50, 0), 500);
    }
}
