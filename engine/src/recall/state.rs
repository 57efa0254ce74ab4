//! What the live context of a session holds, as far as memctl knows: a small JSON file per
//! session (`<data dir>/context/<sanitized session id>.json`), written atomically by the hooks
//! (SessionStart sets the boundary, restore and recall add what they injected).
//!
//! Why a file and not the store: SessionStart must not pay a redb commit (two fsyncs in the
//! shared mode), and the state is a per-session cache that may be lost (a missing or unreadable
//! file means "nothing known": recall stays off until the next boundary).

use crate::error::StoreError;
use crate::store::ChunkId;
use std::path::{Path, PathBuf};

/// A session's view of its live context.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ContextState {
    /// The session lost part of its conversation (compacted, resumed after compaction, or
    /// started by `/clear`): prompt-time recall is on.
    pub lost: bool,
    /// Turns of this session with a lower index are not in the live context any more.
    pub boundary_turn: u32,
    /// Chunks injected (restore blocks and recall) since the last boundary: a restore never
    /// shows them again (no stacking on resume).
    pub injected: Vec<ChunkId>,
    /// Chunks recall injected since the last boundary: recall never shows them again. A chunk
    /// a restore block showed is still recallable (the block had its one-line summary, not the
    /// passage that answers the prompt), but its summary is not repeated.
    pub recalled: Vec<ChunkId>,
    /// Chunks injected (restore, recall) that wait for a verdict on use: boosted when the
    /// agent's later turns use them, decayed when they do not ([`super::reinforce`]). Unlike
    /// `injected`, kept across boundaries: a verdict looks at the turns after the injection,
    /// whatever happened to the context since. Absent in state files of earlier releases.
    pub pending: Vec<super::reinforce::PendingUse>,
}

impl ContextState {
    /// Add chunks a restore block injected (kept unique, in order).
    pub fn add_injected(&mut self, ids: &[ChunkId]) {
        for id in ids {
            if !self.injected.contains(id) {
                self.injected.push(*id);
            }
        }
    }

    /// Add chunks recall injected (also counted as injected).
    pub fn add_recalled(&mut self, ids: &[ChunkId]) {
        self.add_injected(ids);
        for id in ids {
            if !self.recalled.contains(id) {
                self.recalled.push(*id);
            }
        }
    }
}

/// A state file is small; anything bigger is not ours.
const STATE_MAX_BYTES: u64 = 1 << 20;

/// `<data dir>/context/<sanitized session id>.json`.
pub fn state_path(data_dir: &Path, session_id: &str) -> PathBuf {
    data_dir.join("context").join(format!(
        "{}.json",
        crate::paths::sanitize_component(session_id)
    ))
}

/// Load a session's state; a missing file is the default state, an unreadable one too (logged).
pub fn load_state(data_dir: &Path, session_id: &str) -> ContextState {
    let path = state_path(data_dir, session_id);
    match crate::paths::read_regular(&path, STATE_MAX_BYTES) {
        Ok(b) => serde_json::from_slice(&b).unwrap_or_else(|e| {
            tracing::warn!(file = %path.display(), error = %e, "context state unreadable; starting over");
            ContextState::default()
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => ContextState::default(),
        Err(e) => {
            tracing::warn!(file = %path.display(), error = %e, "context state unreadable; starting over");
            ContextState::default()
        }
    }
}

/// Save a session's state atomically (temp file + rename, 0600 in a 0700 dir).
pub fn save_state(data_dir: &Path, session_id: &str, st: &ContextState) -> Result<(), StoreError> {
    let bytes = serde_json::to_vec(st).map_err(|e| StoreError::Encode(e.to_string()))?;
    crate::paths::write_private_atomic(&state_path(data_dir, session_id), &bytes)
}
