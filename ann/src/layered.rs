//! One project's index as the service holds it: a frozen base ([`FlatGraph`]) and a live
//! hnsw_rs [`Graph`] (the tail) for what was read after the base was made.
//!
//! Why two parts: hnsw_rs keeps ~2.2 KB a point (an `Arc` per point and per edge, 16 layer
//! vectors), the flat copy ~0.5 KB, but the flat copy takes no insert. So points go into the
//! tail, and a tail that has stopped changing becomes the base ([`Layered::consolidated`]):
//! frozen as it is when there is no base yet, or rebuilt together with the base into one new
//! graph when it has grown past a share of it (a rebuild re-inserts every live point, so
//! rebuilding only when the tail is a fair share of the base keeps the total work a small
//! multiple of one build, and the tail's hnsw_rs memory bounded by that share).
//!
//! Invariant: a chunk is live in at most one part (the follower inserts only chunks neither
//! part holds), so a search merges the two parts' hits without duplicates.

use crate::AnnError;
use crate::flat::FlatGraph;
use crate::graph::{Graph, GraphParams};
use memctl_engine::{AnnHit, IndexSettings, TopK};
use std::collections::HashSet;
use std::sync::Arc;

/// When a quiet tail becomes (part of) the base.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FreezePolicy {
    /// A tail with fewer live points stays a tail (0: never freeze).
    pub min_points: usize,
    /// With a base, the tail is merged into it once it holds at least this many live points
    /// per 100 of the base's.
    pub merge_percent: usize,
}

impl Default for FreezePolicy {
    /// Freeze from the settings' default ([`IndexSettings::freeze_min`], the size below which
    /// the exact scan serves anyway); merge when the tail reaches a tenth of the base: at 1e6
    /// points a tail of 100,000 (~220 MB in hnsw_rs) before a rebuild that re-inserts
    /// everything (~1 ms of CPU a point).
    fn default() -> Self {
        Self {
            min_points: IndexSettings::default().freeze_min,
            merge_percent: 10,
        }
    }
}

/// A project's base and tail.
#[derive(Debug, Clone)]
pub struct Layered {
    /// The frozen part, if any.
    pub base: Option<Arc<FlatGraph>>,
    /// The live part: every point read since the base was made.
    pub tail: Arc<Graph>,
}

impl Layered {
    /// Only a tail.
    pub fn new(tail: Arc<Graph>) -> Self {
        Self { base: None, tail }
    }

    /// Live points of both parts.
    pub fn len(&self) -> usize {
        self.base.as_ref().map_or(0, |b| b.len()) + self.tail.len()
    }

    /// True when neither part holds a live point.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Tombstones of both parts.
    pub fn dead(&self) -> usize {
        self.base.as_ref().map_or(0, |b| b.dead()) + self.tail.dead()
    }

    /// Whether `chunk` is live in either part.
    pub fn contains(&self, chunk: u64) -> bool {
        self.tail.contains(chunk) || self.base.as_ref().is_some_and(|b| b.contains(chunk))
    }

    /// Tombstone in both parts every live chunk not in `keep`; returns (in the base, in the
    /// tail).
    pub fn retain(&self, keep: &HashSet<u64>) -> (usize, usize) {
        let base = self.base.as_ref().map_or(0, |b| b.retain(keep));
        (base, self.tail.retain(keep))
    }

    /// The `k` nearest live chunks of both parts, best first.
    pub fn search(&self, q: &[i8], k: usize) -> Vec<AnnHit> {
        self.search_ef(q, k, 0)
    }

    /// [`Self::search`] with a beam of at least `ef` in each part (measurements).
    pub fn search_ef(&self, q: &[i8], k: usize, ef: usize) -> Vec<AnnHit> {
        let mut top = TopK::new(k);
        for h in self.tail.search_ef(q, k, ef) {
            top.push(h.id, h.score);
        }
        if let Some(b) = &self.base {
            for h in b.search_ef(q, k, ef) {
                top.push(h.id, h.score);
            }
        }
        crate::graph::hits(top)
    }

    /// What this index becomes when its tail has stopped changing, under `policy`: None when
    /// it stays as it is; else a new base (the tail frozen, or base and tail rebuilt into one
    /// graph and frozen) and an empty tail. Long at scale (a rebuild inserts every point): the
    /// caller runs it off any lock, and `self` keeps serving meanwhile.
    pub fn consolidated(
        &self,
        policy: FreezePolicy,
        params: GraphParams,
    ) -> Result<Option<Self>, AnnError> {
        let tail = self.tail.len();
        if policy.min_points == 0 || tail < policy.min_points {
            return Ok(None);
        }
        let base = match &self.base {
            None => FlatGraph::freeze(&self.tail)?,
            Some(b) => {
                if tail * 100 < b.len() * policy.merge_percent {
                    return Ok(None);
                }
                let mut points = b.live_points();
                points.extend(self.tail.live_points());
                let g = Graph::new(params, points.len());
                g.insert(&points);
                drop(points);
                FlatGraph::freeze(&g)?
            }
        };
        let ef = params.ef_search;
        Ok(Some(Self {
            base: Some(Arc::new(base.with_ef_search(ef))),
            tail: Arc::new(Graph::new(params, 1024)),
        }))
    }
}
