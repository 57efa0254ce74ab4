//! The restore block the session start after a compaction prints, built just before the
//! compaction.
//!
//! Why: Claude Code runs PreCompact ([`EventKind::BeforeCompact`]), then its summariser
//! (seconds), then SessionStart(compact), and only after that PostCompact. The event before
//! the compaction archives the session's last turns, so nothing the compaction restore reads
//! changes in between: the turns are the same, the stored summary is the one just written, and
//! the compact summary the restore discounts against is the previous compaction's at both
//! moments. So the event before the compaction builds the block, redacts it and leaves it in
//! `<data dir>/prepared/<session>.json`; the start after the compaction serves it without
//! opening the store and without compiling a pattern, and builds the block as before when the
//! file is missing, unreadable, older than [`MAX_AGE_SECS`], or made by another memctl build,
//! restore configuration or set of redaction rules ([`fingerprint`]). A file is used once.
//!
//! Forget: a prepared block quotes archived text, so every forget removes all of them
//! ([`crate::restore::prepared_files::remove_all`]), and the event that prepares one reads the
//! forget epoch again after writing it: a forget that committed in between either finds the
//! file and removes it, or has moved the epoch, and the file is removed here.

use super::event::{AgentEvent, Reply};
use super::handle::{HookAnswer, HookEffects, new_window, remember_restored, wants_resident};
use crate::engine::{Engine, EngineOptions};
use crate::error::{EngineError, StoreError};
use crate::redact::Redacted;
use crate::restore::prepared_files::{dir, path, remove};
use crate::restore::{RestoreConfig, RestoreKind, RestoreMode};
use crate::store::ChunkId;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::Path;

/// A prepared block older than this is not served (a compaction takes seconds to minutes).
pub(crate) const MAX_AGE_SECS: i64 = 600;

/// Largest prepared file read (a restore block is capped far below this).
const MAX_FILE_BYTES: u64 = 1 << 20;

/// What PreCompact leaves for SessionStart(compact).
#[derive(Debug, Serialize, Deserialize)]
struct Prepared {
    session_id: String,
    project: String,
    /// [`fingerprint`] of the build, restore configuration and redaction rules that made it.
    fingerprint: String,
    /// Unix seconds when it was made.
    prepared_at: i64,
    /// The first turn after the compaction ([`ContextState::boundary_turn`]).
    boundary_turn: u32,
    /// The agent turn from which the restored chunks' use is judged.
    next_agent_turn: u32,
    /// Chunks whose lines are in `text`.
    chunk_ids: Vec<ChunkId>,
    /// The block, redacted.
    text: String,
}

/// Same value only for the same memctl build, restore configuration and redaction rules: a
/// block made by anything else is rebuilt, never served.
fn fingerprint(cfg: &RestoreConfig) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(env!("CARGO_PKG_VERSION"));
    h.update(format!("{cfg:?}"));
    h.update(crate::redact::rules_fingerprint());
    format!("{:x}", h.finalize())
}

/// Before a compaction: build and leave the compaction restore (after the archive and the summary).
/// Failures are logged, never returned: SessionStart then builds the block itself.
pub(crate) fn prepare(engine: &Engine, p: &AgentEvent, cfg: &RestoreConfig) {
    let session = p.session_id.as_str();
    if session.is_empty() {
        return;
    }
    let file = path(engine.data_dir(), session);
    if cfg.sources.mode(RestoreKind::Compact) == RestoreMode::Off {
        remove(&file);
        return;
    }
    if let Err(e) = write_prepared(engine, p, cfg, &file) {
        tracing::warn!(error = %e, "compaction restore not prepared");
        remove(&file);
    }
    crate::restore::prepared_files::remove_stale(
        engine.data_dir(),
        std::time::Duration::from_secs(MAX_AGE_SECS.unsigned_abs()),
    );
}

fn write_prepared(
    engine: &Engine,
    p: &AgentEvent,
    cfg: &RestoreConfig,
    file: &Path,
) -> Result<(), EngineError> {
    let session = p.session_id.as_str();
    let project = p.project();
    let epoch = forget_epoch(engine)?;
    let restored = engine.restore_excluding(
        session,
        &project,
        RestoreKind::Compact,
        cfg,
        &HashSet::new(),
    )?;
    let prepared = Prepared {
        session_id: session.to_string(),
        project,
        fingerprint: fingerprint(cfg),
        prepared_at: crate::clock::unix_now(),
        boundary_turn: engine.last_turn(session)?.map_or(0, |t| t + 1),
        next_agent_turn: engine.next_agent_turn(session)?,
        chunk_ids: restored.chunk_ids,
        text: Redacted::new(&restored.text).into_string(),
    };
    let bytes = serde_json::to_vec(&prepared).map_err(|e| StoreError::Encode(e.to_string()))?;
    crate::paths::ensure_private_dir(&dir(engine.data_dir()))?;
    crate::paths::write_private_atomic(file, &bytes)?;
    if forget_epoch(engine)? != epoch {
        tracing::info!(
            session,
            "a forget ran while the restore was prepared; dropped it"
        );
        remove(file);
    }
    Ok(())
}

fn forget_epoch(engine: &Engine) -> Result<u64, EngineError> {
    Ok(engine.core().store().read()?.forget_epoch()?)
}

/// The start after a compaction from the block prepared before it, or None (build it as before).
pub(crate) fn serve(
    p: &AgentEvent,
    opts: &EngineOptions,
    cfg: &super::HookConfig,
) -> Option<HookAnswer> {
    let session = p.session_id.as_str();
    if session.is_empty() || cfg.restore.sources.mode(RestoreKind::Compact) == RestoreMode::Off {
        return None;
    }
    let file = path(&opts.data_dir, session);
    let bytes = match crate::paths::read_regular(&file, MAX_FILE_BYTES) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            tracing::warn!(file = %file.display(), error = %e, "prepared restore unreadable");
            return None;
        }
    };
    // Used once, whatever it holds: a stale block is not left on disk.
    remove(&file);
    let prepared: Prepared = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            tracing::warn!(file = %file.display(), error = %e, "prepared restore unreadable");
            return None;
        }
    };
    let age = crate::clock::unix_now() - prepared.prepared_at;
    if prepared.session_id != session
        || prepared.project != p.project()
        || prepared.fingerprint != fingerprint(&cfg.restore)
        || !(0..=MAX_AGE_SECS).contains(&age)
    {
        tracing::debug!(session, age, "prepared restore not current; building it");
        return None;
    }
    Some(answer(prepared, opts, cfg))
}

/// The context state and the output of a served block (what `on_session_start` does with a
/// block it built).
fn answer(prepared: Prepared, opts: &EngineOptions, cfg: &super::HookConfig) -> HookAnswer {
    let session = prepared.session_id.as_str();
    let pending = crate::recall::load_state(&opts.data_dir, session).pending;
    let mut state = new_window(prepared.boundary_turn, pending);
    remember_restored(
        &opts.data_dir,
        session,
        &mut state,
        &prepared.chunk_ids,
        prepared.next_agent_turn,
    );
    let effects = HookEffects {
        start_resident: cfg.recall.enabled && wants_resident(opts),
        ..HookEffects::default()
    };
    let reply = if prepared.text.is_empty() {
        Reply::None
    } else {
        // Redacted by this build's rules when it was prepared (the fingerprint says so).
        Reply::RedactedContext(Redacted::assume(prepared.text))
    };
    HookAnswer { reply, effects }
}
