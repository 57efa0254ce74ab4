//! The engine's part of the hook policy, the same for every agent: when a prompt hands a
//! transcript's backlog to a background process (one at a time per transcript:
//! [`super::jobs`]). An agent's own policy (its event names, deadlines, the tools it swaps)
//! is its adapter's.

use crate::engine::Engine;
use crate::error::EngineError;
use std::path::Path;

/// Default of `MEMCTL_HOOK_INLINE_BYTES`: unarchived bytes above which a prompt hands the work
/// to a background process (4 MiB ≈ 250 turns). A compaction always archives inline.
pub const INLINE_BYTES: u64 = 4 << 20;

/// Bytes of `path` not yet archived (whole file when it has no cursor).
pub(super) fn backlog(engine: &Engine, path: &Path) -> Result<u64, EngineError> {
    let len = std::fs::metadata(path).map_or(0, |m| m.len());
    let key = std::fs::canonicalize(path).map_or_else(
        |_| path.display().to_string(),
        |p| p.to_string_lossy().into_owned(),
    );
    let done = engine.store().read()?.cursor(&key)?.map_or(0, |c| c.offset);
    Ok(len.saturating_sub(done))
}

/// Claim the background ingest of `path`: false when one is already running (it serves this
/// request, see [`super::jobs`]) or no request can be recorded (logged).
pub(super) fn claim_background(engine: &Engine, path: &Path) -> bool {
    super::jobs::request(engine.data_dir(), super::jobs::INGEST, path).unwrap_or_else(|e| {
        tracing::warn!(transcript = %path.display(), error = %e, "background ingest not requested");
        false
    })
}
