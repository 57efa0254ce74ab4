//! memctl's resident vector index: one index per project over the store's int8
//! vectors of the model's space, kept in step with every writer of the store by following its
//! int8 blocks ([`memctl_engine::Engine::follow_vectors`]), persisted beside the store, and
//! served by the resident service (`memctl embedder`) through
//! [`memctl_engine::DenseService`].
//!
//! Only `memctl` links this crate: the hook binary never holds a graph, it asks the service.
//!
//! - [`dist`]: the points (int8 components and their scale) and their distance.
//! - [`Graph`]: one project's graph, with chunk ids and tombstones.
//! - [`FlatGraph`]: a frozen, flat copy of a built graph (the same search, about a fifth of the
//!   memory).
//! - [`Layered`]: a project's index: a frozen flat base and a live hnsw_rs tail.
//! - [`persist`]: the index on disk.
//! - [`AnnService`]: the follower thread and the search the service answers with.
//! - [`check_index`]: the saved graphs against the store (`memctl check`).

mod check;
pub mod dist;
mod flat;
#[cfg(test)]
mod flat_tests;
mod graph;
mod layered;
pub mod persist;
mod service;
#[cfg(test)]
mod tests;

pub use check::{GraphCheck, GraphState, IndexCheck, check_index};
pub use flat::FlatGraph;
pub use graph::{Graph, GraphParams};
pub use layered::{FreezePolicy, Layered};
pub use service::{AnnConfig, AnnService};

use std::path::PathBuf;

/// What can go wrong with a graph on disk or its store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AnnError {
    /// Reading or writing a file failed.
    #[error("vector index I/O at {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file does not hold what its sidecar says (the graph is rebuilt from the store).
    #[error("vector index files: {0}")]
    Corrupt(String),
    /// The store could not be read.
    #[error(transparent)]
    Store(#[from] memctl_engine::StoreError),
    /// The engine failed.
    #[error(transparent)]
    Engine(#[from] memctl_engine::EngineError),
}
