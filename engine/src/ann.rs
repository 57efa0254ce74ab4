//! The engine's side of the resident vector index: the graph itself lives in the resident
//! service (crate `memctl-ann`, linked by `memctl` only, so hooks stay lean); this module holds
//! what both sides share.
//!
//! - A service index follows the store's int8 blocks ([`crate::Engine::follow_vectors`]) and answers
//!   [`DenseService::search`] with hits and the [`BlockCursor`]s it covers.
//! - The caller scans exactly what the answer does not cover (entries appended since, projects
//!   without a graph), re-scores everything with the stored f16 vectors and loads chunks from
//!   its own snapshot: a chunk deleted or forgotten since the service last read is never
//!   returned, and an answer from another block epoch is not used at all.

use crate::embed::EmbedderId;
pub use crate::store::{BlockCursor, FeedEntry, Followed};
use std::path::{Path, PathBuf};

/// One hit of a service index: a chunk and its approximate cosine.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AnnHit {
    /// The chunk.
    pub id: u64,
    /// Approximate cosine (int8).
    pub score: f32,
}

/// What a service index answers for one query.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AnnAnswer {
    /// The space searched ([`EmbedderId::key`]).
    pub space: String,
    /// The block epoch the index reflects.
    pub epoch: u64,
    /// Per project searched, how far its index had read; projects left out were not searched.
    pub covered: Vec<BlockCursor>,
    /// Best first.
    pub hits: Vec<AnnHit>,
}

/// A vector index kept by a long-lived process.
pub trait DenseService: Send + Sync {
    /// The `k` nearest chunks to `query` in `projects`, or `None` when the index cannot answer
    /// for that space (still loading, another model).
    fn search(
        &self,
        space: &EmbedderId,
        projects: &[u32],
        query: &[f32],
        k: usize,
    ) -> Option<AnnAnswer>;

    /// Keep the index in step with the store until the process ends: the service runs it on a
    /// thread of its own once it holds the data dir's lock.
    fn follow(&self);

    /// True when the index freed more memory than the process gives back (a big graph was
    /// replaced by its compact copy, and the allocator keeps the freed pages): the service
    /// then exits at its next quiet moment, and the next client that needs it starts it again,
    /// which loads the compact copy from its file.
    fn restart_wanted(&self) -> bool {
        false
    }
}

/// Settings of the service index (`MEMCTL_ANN`, `MEMCTL_ANN_MIN`, `MEMCTL_ANN_SAVE_SECS`,
/// `MEMCTL_ANN_FREEZE_MIN`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexSettings {
    /// Keep the index in the resident service (default on: without it a search of a store
    /// beyond the cold cap covers only its newest vectors; its memory, ~0.5 KB per vector of a
    /// frozen base and ~2.4 KB of a live tail, is in docs/perf/scale.md).
    pub enabled: bool,
    /// Projects with fewer vectors are left to the caller's exact scan, as fast at that size
    /// (default 20,000).
    pub min_vectors: usize,
    /// A graph is saved once unchanged for this long (default 30 s).
    pub save_after: std::time::Duration,
    /// A quiet graph of at least this many points is frozen into its project's compact base
    /// (default 20,000; 0: never).
    pub freeze_min: usize,
}

impl Default for IndexSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            min_vectors: 20_000,
            save_after: std::time::Duration::from_secs(30),
            freeze_min: 20_000,
        }
    }
}

/// The directory of the service index's files in `data_dir` (every forget removes it).
pub fn ann_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("ann")
}
