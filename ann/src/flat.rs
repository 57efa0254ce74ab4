//! A frozen, flat copy of a built [`Graph`]: the same search over a fraction of the memory.
//!
//! hnsw_rs keeps every point as an `Arc` with its own vector copy, 16 pre-allocated layer
//! vectors and every edge as a separate `Arc` allocation (~2.2 KB a point at M 16). Here all
//! points sit in one contiguous buffer (`data id × dim`), layer 0 is a CSR of `u32` data ids,
//! and the few points above layer 0 keep their upper layers in a second, small CSR: ~388 bytes
//! of vector plus ~4 bytes an edge. The copy is read-only (no insert); tombstones work as in
//! [`Graph`]. A search is the standard HNSW one: a greedy descent through the upper layers,
//! then a beam on layer 0; its results go through the same over-fetch and tombstone filter as
//! [`Graph::search_ef`], so both answer alike for the same beam.

mod file;
mod order;

use crate::AnnError;
use crate::dist::cosine;
use crate::graph::{Graph, GraphParams, Ids, beam};
use memctl_engine::AnnHit;
use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashSet};
use std::sync::{Mutex, PoisonError, RwLock, RwLockReadGuard};

/// A read-only, flat copy of a [`Graph`].
pub struct FlatGraph {
    params: GraphParams,
    /// Bytes of a point (components and scale).
    dim: usize,
    /// Point of data id `i`: `vectors[i × dim .. (i + 1) × dim]`.
    vectors: Vec<i8>,
    /// Layer 0: the neighbours of `i` are `nbrs[offsets[i] .. offsets[i + 1]]`.
    offsets: Vec<u32>,
    nbrs: Vec<u32>,
    upper: Upper,
    /// A point of the highest level and that level; None for an empty graph.
    entry: Option<(u32, u8)>,
    ids: RwLock<Ids>,
    /// Visited sets of finished searches, reused: a search allocates nothing proportional to
    /// the points once as many sets exist as searches ever ran at once.
    visits: Mutex<Vec<Visited>>,
}

/// The layers above 0 (about one point in M has any): point `ids[j]` has the rows
/// `first[j] .. first[j + 1]`, row `first[j] + l − 1` holding its neighbours on layer `l`,
/// `nbrs[offsets[row] .. offsets[row + 1]]`. `ids` is sorted.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Upper {
    ids: Vec<u32>,
    first: Vec<u32>,
    offsets: Vec<u32>,
    nbrs: Vec<u32>,
}

impl Upper {
    /// The neighbours of `id` on `layer` (≥ 1); empty when it has none there.
    fn neighbours(&self, id: u32, layer: u8) -> &[u32] {
        let Ok(j) = self.ids.binary_search(&id) else {
            return &[];
        };
        let row = self.first[j] as usize + usize::from(layer).saturating_sub(1);
        if layer == 0 || row >= self.first[j + 1] as usize {
            return &[];
        }
        &self.nbrs[self.offsets[row] as usize..self.offsets[row + 1] as usize]
    }

    fn bytes(&self) -> usize {
        4 * (self.ids.capacity()
            + self.first.capacity()
            + self.offsets.capacity()
            + self.nbrs.capacity())
    }
}

impl std::fmt::Debug for FlatGraph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids = self.ids();
        f.debug_struct("FlatGraph")
            .field("points", &ids.chunk.len())
            .field("live", &ids.live.len())
            .field("edges", &self.nbrs.len())
            .field("upper_points", &self.upper.ids.len())
            .field("upper_edges", &self.upper.nbrs.len())
            .finish_non_exhaustive()
    }
}

/// A point met by a search: its distance to the query, then its data id (a total order).
#[derive(Debug, Clone, Copy)]
struct Cand {
    dist: f32,
    id: u32,
}

impl PartialEq for Cand {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Cand {}
impl PartialOrd for Cand {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Cand {
    fn cmp(&self, other: &Self) -> Ordering {
        self.dist
            .total_cmp(&other.dist)
            .then(self.id.cmp(&other.id))
    }
}

/// A set of data ids: a bitmap cleared word by word through the words it touched, so a
/// search costs what it visits, not the size of the graph.
#[derive(Debug)]
struct Visited {
    bits: Vec<u64>,
    touched: Vec<u32>,
}

impl Visited {
    fn new(n: usize) -> Self {
        Self {
            bits: vec![0; n.div_ceil(64)],
            touched: Vec::new(),
        }
    }

    /// Adds `id`; false when it was there already (or is out of range).
    fn insert(&mut self, id: u32) -> bool {
        let w = (id >> 6) as usize;
        let mask = 1u64 << (id & 63);
        let Some(word) = self.bits.get_mut(w) else {
            return false;
        };
        if *word & mask != 0 {
            return false;
        }
        if *word == 0 {
            self.touched.push(w as u32);
        }
        *word |= mask;
        true
    }

    fn clear(&mut self) {
        for &w in &self.touched {
            self.bits[w as usize] = 0;
        }
        self.touched.clear();
    }

    fn bytes(&self) -> usize {
        8 * self.bits.capacity() + 4 * self.touched.capacity()
    }
}

/// What [`FlatGraph::freeze`] collects from hnsw_rs before laying it out.
struct Walk {
    dim: usize,
    vectors: Vec<i8>,
    /// Layer-0 neighbours of every point, in the order hnsw_rs yields the points.
    nbrs: Vec<u32>,
    /// data id → (start in `nbrs`, count).
    span: Vec<(u32, u32)>,
    /// (data id, neighbours on layers 1..=level) of the points above layer 0.
    upper: Vec<(u32, Vec<Vec<u32>>)>,
    entry: Option<(u32, u8)>,
}

fn too_large(what: &str) -> AnnError {
    AnnError::Corrupt(format!("graph too large for the flat layout: {what}"))
}

fn to_u32(x: usize, what: &str) -> Result<u32, AnnError> {
    u32::try_from(x).map_err(|_| too_large(what))
}

impl FlatGraph {
    /// A flat copy of `g` (its points, edges and chunk ids as they are now). Meant for a graph
    /// nobody inserts into any more: a point hnsw_rs did not hold yet has no edges.
    ///
    /// Fails when the graph does not fit the layout (points of different lengths, more than
    /// 2³² points or edges). The points are numbered in search order ([`Self::in_search_order`]).
    pub fn freeze(g: &Graph) -> Result<Self, AnnError> {
        Self::freeze_unordered(g)?.in_search_order()
    }

    /// [`Self::freeze`] with hnsw_rs's numbering of the points.
    fn freeze_unordered(g: &Graph) -> Result<Self, AnnError> {
        let walk = walk(g)?;
        let ids = g.ids().clone();
        let n = ids.chunk.len();
        to_u32(n, "points")?;
        let mut vectors = walk.vectors;
        vectors.resize(n * walk.dim, 0);
        let mut offsets = Vec::with_capacity(n + 1);
        let mut nbrs = Vec::with_capacity(walk.nbrs.len());
        offsets.push(0u32);
        for i in 0..n {
            if let Some(&(start, len)) = walk.span.get(i) {
                let s = start as usize;
                let row = &walk.nbrs[s..s + len as usize];
                nbrs.extend(row.iter().copied().filter(|&x| (x as usize) < n));
            }
            offsets.push(to_u32(nbrs.len(), "layer-0 edges")?);
        }
        drop(walk.nbrs);
        let upper = upper_of(walk.upper, n)?;
        let entry = walk.entry.filter(|&(e, _)| (e as usize) < n);
        Ok(Self::from_parts(
            g.params,
            walk.dim,
            vectors,
            (offsets, nbrs),
            upper,
            entry,
            ids,
        ))
    }

    fn from_parts(
        params: GraphParams,
        dim: usize,
        vectors: Vec<i8>,
        (offsets, nbrs): (Vec<u32>, Vec<u32>),
        upper: Upper,
        entry: Option<(u32, u8)>,
        ids: Ids,
    ) -> Self {
        Self {
            params,
            dim,
            vectors,
            offsets,
            nbrs,
            upper,
            entry,
            ids: RwLock::new(ids),
            visits: Mutex::new(Vec::new()),
        }
    }

    /// The copy with another search beam (a loaded copy searches as this build asks).
    pub fn with_ef_search(mut self, ef: usize) -> Self {
        self.params.ef_search = ef;
        self
    }

    /// The graph parameters it was built with (and its search beam).
    pub fn params(&self) -> GraphParams {
        self.params
    }

    fn ids(&self) -> RwLockReadGuard<'_, Ids> {
        self.ids.read().unwrap_or_else(PoisonError::into_inner)
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

    /// Tombstone every live chunk not in `keep`; returns how many.
    pub fn retain(&self, keep: &HashSet<u64>) -> usize {
        self.ids
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(keep)
    }

    /// Bytes held: the capacities of its buffers, the chunk-id map estimated from its
    /// capacity (keys, values and a control byte a slot, 7/8 of the slots used).
    pub fn memory_bytes(&self) -> usize {
        let ids = self.ids();
        let map = ids.live.capacity() * (8 + 8 + 1) * 8 / 7;
        let visits: usize = self
            .visits
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(Visited::bytes)
            .sum();
        self.vectors.capacity()
            + 4 * (self.offsets.capacity() + self.nbrs.capacity())
            + self.upper.bytes()
            + 8 * ids.chunk.capacity()
            + ids.dead.capacity()
            + map
            + visits
    }

    /// The `k` nearest live chunks to the query point `q`, best first (approximate cosines).
    pub fn search(&self, q: &[i8], k: usize) -> Vec<AnnHit> {
        self.search_ef(q, k, 0)
    }

    /// [`Self::search`] with a beam of at least `ef`, as [`Graph::search_ef`].
    pub fn search_ef(&self, q: &[i8], k: usize, ef: usize) -> Vec<AnnHit> {
        let Some(fetch) = self.ids().fetch(k) else {
            return Vec::new();
        };
        let points = self.ids().chunk.len();
        let found = self.nearest(q, fetch, beam(&self.params, points, fetch, ef));
        self.ids()
            .top(k, found.iter().map(|c| (c.id as usize, c.dist)))
    }

    fn point(&self, id: u32) -> &[i8] {
        let s = id as usize * self.dim;
        &self.vectors[s..s + self.dim]
    }

    fn dist(&self, q: &[i8], id: u32) -> f32 {
        1.0 - cosine(q, self.point(id))
    }

    /// The `fetch` nearest points to `q` (tombstones included), nearest first.
    fn nearest(&self, q: &[i8], fetch: usize, ef: usize) -> Vec<Cand> {
        let Some((mut cur, level)) = self.entry else {
            return Vec::new();
        };
        let mut d = self.dist(q, cur);
        for layer in (1..=level).rev() {
            // Greedy: move to the nearest neighbour while one is nearer.
            loop {
                let mut moved = false;
                for &nb in self.upper.neighbours(cur, layer) {
                    let dn = self.dist(q, nb);
                    if dn < d {
                        (d, cur, moved) = (dn, nb, true);
                    }
                }
                if !moved {
                    break;
                }
            }
        }
        let mut visited = self
            .visits
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
            .unwrap_or_else(|| Visited::new(self.offsets.len().saturating_sub(1)));
        let mut found = self.layer0(q, Cand { dist: d, id: cur }, ef.max(fetch), &mut visited);
        visited.clear();
        self.visits
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(visited);
        found.truncate(fetch);
        found
    }

    /// The beam search on layer 0 from `start`: the `ef` nearest points it reaches, nearest
    /// first.
    fn layer0(&self, q: &[i8], start: Cand, ef: usize, visited: &mut Visited) -> Vec<Cand> {
        let mut todo = BinaryHeap::with_capacity(ef);
        let mut best = BinaryHeap::with_capacity(ef + 1);
        visited.insert(start.id);
        todo.push(Reverse(start));
        best.push(start);
        while let Some(Reverse(c)) = todo.pop() {
            if best.len() >= ef && best.peek().is_some_and(|f: &Cand| c.dist > f.dist) {
                break;
            }
            let i = c.id as usize;
            let (a, b) = (self.offsets[i] as usize, self.offsets[i + 1] as usize);
            for &e in &self.nbrs[a..b] {
                if !visited.insert(e) {
                    continue;
                }
                let cand = Cand {
                    dist: self.dist(q, e),
                    id: e,
                };
                if best.len() < ef || best.peek().is_some_and(|f| cand < *f) {
                    todo.push(Reverse(cand));
                    best.push(cand);
                    if best.len() > ef {
                        best.pop();
                    }
                }
            }
        }
        best.into_sorted_vec()
    }
}

/// Every point of `g`'s hnsw_rs graph: vectors by data id, layer-0 edges, upper layers.
fn walk(g: &Graph) -> Result<Walk, AnnError> {
    let hnsw = &g.hnsw;
    let n_hint = hnsw.get_nb_point();
    let top = hnsw.get_max_level_observed();
    let pi = hnsw.get_point_indexation();
    let mut w = Walk {
        dim: 0,
        vectors: Vec::new(),
        nbrs: Vec::with_capacity(n_hint * 2 * g.params.m),
        span: Vec::with_capacity(n_hint),
        upper: Vec::new(),
        entry: None,
    };
    for layer in 0..=top {
        for p in pi.get_layer_iterator(usize::from(layer)) {
            let id = p.get_origin_id();
            let v = p.get_v();
            if w.dim == 0 {
                w.dim = v.len();
                w.vectors.reserve(n_hint * w.dim);
            }
            if v.len() != w.dim {
                return Err(AnnError::Corrupt(format!(
                    "points of {} and {} bytes in one graph",
                    w.dim,
                    v.len()
                )));
            }
            let end = (id + 1) * w.dim;
            if w.vectors.len() < end {
                w.vectors.resize(end, 0);
            }
            w.vectors[id * w.dim..end].copy_from_slice(v);
            let level = p.get_point_id().0;
            let hood = p.get_neighborhood_id();
            let ids_on = |l: usize| -> Result<Vec<u32>, AnnError> {
                hood.get(l)
                    .map_or(&[][..], Vec::as_slice)
                    .iter()
                    .map(|nb| to_u32(nb.d_id, "data id"))
                    .collect()
            };
            let row = ids_on(0)?;
            if w.span.len() <= id {
                w.span.resize(id + 1, (0, 0));
            }
            w.span[id] = (to_u32(w.nbrs.len(), "edges")?, to_u32(row.len(), "edges")?);
            w.nbrs.extend(row);
            if level > 0 {
                let rows = (1..=usize::from(level))
                    .map(ids_on)
                    .collect::<Result<_, _>>()?;
                w.upper.push((to_u32(id, "data id")?, rows));
            }
            if w.entry.is_none_or(|(_, l)| level > l) {
                w.entry = Some((to_u32(id, "data id")?, level));
            }
        }
    }
    Ok(w)
}

/// The upper-layer CSR of the points above layer 0 (edges to data ids ≥ `n` dropped).
fn upper_of(mut points: Vec<(u32, Vec<Vec<u32>>)>, n: usize) -> Result<Upper, AnnError> {
    points.sort_by_key(|p| p.0);
    points.dedup_by_key(|p| p.0);
    let mut up = Upper::default();
    up.first.push(0);
    up.offsets.push(0);
    for (id, rows) in points {
        if id as usize >= n {
            continue;
        }
        up.ids.push(id);
        for row in rows {
            up.nbrs
                .extend(row.into_iter().filter(|&x| (x as usize) < n));
            up.offsets.push(to_u32(up.nbrs.len(), "upper edges")?);
        }
        up.first.push(to_u32(up.offsets.len() - 1, "upper rows")?);
    }
    Ok(up)
}

#[cfg(test)]
impl FlatGraph {
    /// Test access: whether two copies hold the same layout and ids.
    pub(crate) fn same_layout(&self, other: &Self) -> bool {
        let (a, b) = (self.ids(), other.ids());
        self.params == other.params
            && self.dim == other.dim
            && self.vectors == other.vectors
            && self.offsets == other.offsets
            && self.nbrs == other.nbrs
            && self.upper == other.upper
            && self.entry == other.entry
            && a.chunk == b.chunk
            && a.dead == b.dead
            && a.live == b.live
    }

    /// Test access: the layout's structural check (what a load runs).
    pub(crate) fn check(&self) -> Result<(), AnnError> {
        file::check(self)
    }
}

impl FlatGraph {
    /// The live points with their chunks, in data-id order (a rebuild re-inserts them).
    pub(crate) fn live_points(&self) -> Vec<(u64, Vec<i8>)> {
        let ids = self.ids();
        ids.chunk
            .iter()
            .enumerate()
            .filter(|(i, _)| !ids.dead.get(*i).copied().unwrap_or(true))
            .map(|(i, &chunk)| (chunk, self.point(i as u32).to_vec()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Visited;
    use proptest::prelude::*;
    use std::collections::HashSet;

    const SEED: u64 = 0x715_17ed;

    fn config() -> proptest::test_runner::Config {
        crate::tests::proptest_config(SEED, 128)
    }

    proptest! {
        #![proptest_config(config())]

        /// The bitmap answers as a set, and a cleared one is empty again.
        #[test]
        fn visited_is_a_set_that_clears(
            rounds in proptest::collection::vec(proptest::collection::vec(0u32..700, 0..200), 1..4)
        ) {
            let mut v = Visited::new(640);
            for ids in rounds {
                let mut set = HashSet::new();
                for id in ids {
                    let fresh = id < 640 && set.insert(id);
                    prop_assert_eq!(v.insert(id), fresh);
                }
                v.clear();
                prop_assert!(v.bits.iter().all(|&w| w == 0));
                prop_assert!(v.touched.is_empty());
            }
        }
    }
}
