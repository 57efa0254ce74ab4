//! The in-memory vector indexes: `HnswIndex` (hnsw_rs graph, for a long-lived process and large
//! N) and its oracle `ExactIndex` (contiguous int8 scan + f32 re-score).
//!
//! Why here and not in the engine: no shipped process keeps a warm index (hooks and one-shot CLI
//! commands scan the store's encoded int8 blocks, `memctl_engine::retrieve`), and cargo unifies
//! a package's features across every member of a workspace build: an engine feature that this
//! crate turned on linked hnsw_rs into `memctl` and `memctl-hook` on any `cargo build
//! --workspace`. Only this crate depends on hnsw_rs (checked by
//! `tests/tests/testsuite/shipped_deps.rs`).
//!
//! Both implement the engine's [`VectorIndex`] trait and are tested against the same
//! conformance suite (`conformance.rs`) and recall bounds (`recall_tests.rs`).

mod exact;
mod hnsw;

#[cfg(test)]
mod conformance;
#[cfg(test)]
mod recall_tests;

pub use exact::{DEFAULT_RESCORE_N, ExactIndex};
pub use hnsw::{HnswIndex, HnswParams};
pub use memctl_engine::{Hit, VectorIndex};
