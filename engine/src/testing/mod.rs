//! Helpers for other crates' tests (cargo feature `testing`): what a test needs from the store
//! without making the store public, and the fuzz harness ([`fuzz`]) that the engine's fuzz
//! targets and an adapter's payload fuzzing share.

pub mod fuzz;

pub use crate::redact::corpus::{Sample as RedactionSample, samples as redaction_samples};

use crate::error::StoreError;
use std::path::Path;

/// Create the store file at `path` when it does not exist (the same create-aside-then-link
/// path the engine uses).
pub fn create_store(path: &Path) -> Result<(), StoreError> {
    crate::store::Store::open(path).map(drop)
}

/// Hold the store's write lock the way another process's long commit would: open `path`,
/// begin a write transaction, call `held` (e.g. to release a barrier), then `work` while
/// holding it, and commit. Used to test hooks against a busy store.
pub fn hold_write_lock(
    path: &Path,
    held: impl FnOnce(),
    work: impl FnOnce(),
) -> Result<(), StoreError> {
    let store = crate::store::Store::open(path)?;
    store.write(|_| {
        held();
        work();
        Ok(())
    })
}

/// Leave the store at `path` as a forget killed after its removal committed leaves it: the
/// rewrite still to do (what the next command or the store's upkeep finishes).
pub fn mark_forget_unfinished(path: &Path) -> Result<(), StoreError> {
    let store = crate::store::Store::open(path)?;
    store.write(|w| w.set_meta_value(crate::store::rewrite::META_REWRITE_PENDING, &[1]))
}

/// Whether a forget's rewrite is still to do in the store at `path` (read only: nothing is
/// finished by asking).
pub fn forget_unfinished(path: &Path) -> Result<bool, StoreError> {
    let store = crate::store::Store::open_read_only(path)?;
    let r = store.read()?;
    Ok(r.meta_value(crate::store::rewrite::META_REWRITE_PENDING)?
        .is_some())
}
