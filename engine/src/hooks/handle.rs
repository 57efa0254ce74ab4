//! One handler per hook event. The binary (`memctl-hook`) parses, calls [`handle`], prints.
//!
//! Critical-path rules: no model load (new chunks get hash vectors and are marked pending for a
//! background `memctl embed-pending`), work proportional to new transcript lines, and a
//! deadline checked between steps. When the store is busy the transcript path is spooled and
//! archived by the next hook call that gets the store.

use super::payload::{HookEvent, HookOutput, HookPayload};
use crate::engine::Engine;
use crate::error::{EngineError, StoreError};
use crate::ingest::IngestReport;
use crate::restore::{RestoreConfig, RestoreKind};
use std::path::Path;
use std::time::Instant;

/// Hook settings (from the environment; defaults are the product's).
#[derive(Debug, Clone, Default)]
pub struct HookConfig {
    /// Restore settings.
    pub restore: RestoreConfig,
    /// Also restore on SessionStart(startup) (default off: a fresh session starts fresh).
    pub restore_on_startup: bool,
    /// Context autopilot (UserPromptSubmit samples and the optional note).
    pub autopilot: crate::autopilot::AutopilotConfig,
    /// Session summaries (PreCompact, SessionEnd).
    pub summary: crate::summary::SummaryConfig,
    /// Automatic bounded prune pass (SessionEnd; off unless `MEMCTL_AUTO_PRUNE=1`).
    pub auto_prune: crate::prune::AutoPruneConfig,
    /// Tool-output swap settings (PostToolUse).
    pub swap: crate::swap::SwapConfig,
}

impl HookConfig {
    /// Defaults overridden by `MEMCTL_RESTORE_CHARS`, `MEMCTL_PRECOMPACT_CHARS`,
    /// `MEMCTL_RESTORE_ON_STARTUP=1`.
    pub fn from_env() -> Self {
        let mut c = Self::default();
        let num = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<usize>().ok());
        if let Some(n) = num("MEMCTL_RESTORE_CHARS") {
            c.restore.budget.max_chars = n.min(crate::restore::MAX_RESTORE_CHARS);
        }
        if let Some(n) = num("MEMCTL_PRECOMPACT_CHARS") {
            c.restore.precompact_chars = n.min(crate::restore::MAX_RESTORE_CHARS);
        }
        c.restore_on_startup = std::env::var("MEMCTL_RESTORE_ON_STARTUP").is_ok_and(|v| v == "1");
        c.autopilot = crate::autopilot::AutopilotConfig::from_env();
        c.restore.memory = crate::memory::MemoryConfig::from_env();
        c.auto_prune = crate::prune::AutoPruneConfig::from_env();
        c.swap = crate::swap::SwapConfig::from_env();
        c
    }
}

/// What the hook did besides its output (the binary acts on it).
#[derive(Debug, Clone, Default)]
pub struct HookEffects {
    /// Chunks stored without a model vector (the binary may start a background embedder).
    pub pending_embeds: u64,
    /// Ingest report, when the event archived.
    pub ingest: Option<IngestReport>,
    /// Transcripts whose unarchived backlog is too big for the hook's budget: the binary
    /// archives them in a detached `memctl ingest` process.
    pub background_ingest: Vec<std::path::PathBuf>,
}

/// Unarchived bytes above which UserPromptSubmit hands the work to a background process
/// (`MEMCTL_HOOK_INLINE_BYTES`, default 4 MiB ≈ 250 turns): a first prompt after installing
/// memctl into a long session must not stall the agent. PreCompact always archives inline.
fn inline_limit() -> u64 {
    std::env::var("MEMCTL_HOOK_INLINE_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4 << 20)
}

/// Bytes of `path` not yet archived (whole file when it has no cursor).
fn backlog(engine: &Engine, path: &Path) -> Result<u64, EngineError> {
    let len = std::fs::metadata(path).map_or(0, |m| m.len());
    let key = std::fs::canonicalize(path).map_or_else(
        |_| path.display().to_string(),
        |p| p.to_string_lossy().into_owned(),
    );
    let done = engine.store().read()?.cursor(&key)?.map_or(0, |c| c.offset);
    Ok(len.saturating_sub(done))
}

/// A recent marker says a background ingest of this transcript is already running.
fn claim_background(engine: &Engine, path: &Path) -> bool {
    let name = crate::paths::sanitize_component(&path.display().to_string());
    let dir = engine.data_dir().join("backlog");
    if crate::paths::ensure_private_dir(&dir).is_err() {
        return false;
    }
    let marker = dir.join(name);
    let fresh = std::fs::metadata(&marker)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age.as_secs() < 300);
    if fresh {
        return false;
    }
    std::fs::write(&marker, std::process::id().to_string()).is_ok()
}

/// Archive the payload's transcript incrementally; spool it when the store is busy.
fn archive(engine: &Engine, p: &HookPayload, effects: &mut HookEffects) -> Result<(), EngineError> {
    let Some(t) = p
        .common
        .transcript_path
        .as_deref()
        .filter(|t| !t.is_empty())
    else {
        return Ok(());
    };
    let path = Path::new(t);
    if !path.is_file() {
        // Written lazily by Claude Code: nothing to archive yet.
        return Ok(());
    }
    match engine.ingest_transcript(path, &super::spool::hook_ingest_options()) {
        Ok(r) => {
            effects.pending_embeds += r.pending;
            effects.ingest = Some(r);
            Ok(())
        }
        Err(EngineError::Store(StoreError::Busy { waited_ms })) => {
            tracing::warn!(waited_ms, transcript = t, "store busy; transcript spooled");
            super::spool::spool_transcript(engine.data_dir(), path)
        }
        Err(e) => Err(e),
    }
}

/// True when we know the resumed session was never compacted: its transcript exists (and was
/// just archived) and neither a compaction summary turn nor a PostCompact summary is stored.
/// Unknown (no transcript, no record) counts as "maybe compacted": restore.
fn resumed_without_compaction(engine: &Engine, p: &HookPayload) -> Result<bool, EngineError> {
    let exists = p
        .common
        .transcript_path
        .as_deref()
        .is_some_and(|t| Path::new(t).is_file());
    if !exists {
        return Ok(false);
    }
    Ok(engine
        .store()
        .read()?
        .session(&p.common.session_id)?
        .is_some_and(|s| s.compactions == 0 && s.compact_summary.is_none()))
}

/// PostToolUse: store a big output in the swap (prints nothing; failures are logged only).
fn swap_output(engine: &Engine, call: &crate::swap::ToolCall<'_>, cfg: &crate::swap::SwapConfig) {
    match engine.swap_tool_output(call, cfg, crate::swap::unix_now()) {
        Ok(crate::swap::SwapOutcome::Stored(r)) => tracing::debug!(
            tool = call.tool_name,
            id = %r.id,
            bytes = r.bytes,
            stored = r.stored_bytes,
            "tool output swapped"
        ),
        Ok(crate::swap::SwapOutcome::Skipped(_)) => {}
        // Busy: the output is kept in the spool and stored by the next hook that gets the store
        // (it used to be dropped: 1 of 77 outputs lost under concurrency, issue 10).
        Err(EngineError::Store(StoreError::Busy { waited_ms })) => {
            match super::spool::spool_tool(engine.data_dir(), call) {
                Ok(()) => tracing::warn!(
                    tool = call.tool_name,
                    waited_ms,
                    "store busy; tool output spooled"
                ),
                Err(e) => {
                    tracing::error!(tool = call.tool_name, error = %e, "store busy and spooling failed; tool output lost")
                }
            }
        }
        Err(e) => tracing::warn!(tool = call.tool_name, error = %e, "tool output not swapped"),
    }
}

/// Handle one event.
pub fn handle(
    engine: &Engine,
    p: &HookPayload,
    deadline: Instant,
    cfg: &HookConfig,
) -> Result<(HookOutput, HookEffects), EngineError> {
    let mut fx = HookEffects::default();
    let out = match &p.event {
        HookEvent::UserPromptSubmit { .. } => {
            let big = p
                .common
                .transcript_path
                .as_deref()
                .map(Path::new)
                .filter(|t| t.is_file())
                .map(|t| backlog(engine, t).map(|b| (t, b)))
                .transpose()?
                .filter(|(_, b)| *b > inline_limit());
            match big {
                Some((t, bytes)) => {
                    if claim_background(engine, t) {
                        tracing::info!(transcript = %t.display(), bytes, "large backlog: archiving in the background");
                        fx.background_ingest.push(t.to_path_buf());
                    }
                }
                None => archive(engine, p, &mut fx)?,
            }
            super::spool::drain(engine, deadline);
            match crate::autopilot::on_prompt_hook(
                engine.data_dir(),
                &p.common.session_id,
                p.common.transcript_path.as_deref(),
                &cfg.autopilot,
            ) {
                Some(text) => HookOutput::Context {
                    event: "UserPromptSubmit".into(),
                    text,
                },
                None => HookOutput::None,
            }
        }
        HookEvent::PreCompact {
            custom_instructions,
            ..
        } => {
            archive(engine, p, &mut fx)?;
            crate::summary::on_hook(engine.core(), &p.common.session_id, &cfg.summary, deadline);
            if Instant::now() >= deadline {
                HookOutput::None
            } else {
                let text = engine.compaction_instructions(
                    &p.common.session_id,
                    custom_instructions.as_deref(),
                    &cfg.restore,
                )?;
                if text.is_empty() {
                    HookOutput::None
                } else {
                    HookOutput::Plain(text)
                }
            }
        }
        HookEvent::SessionStart { source } => {
            let kind = match source.as_str() {
                "compact" => Some(RestoreKind::Compact),
                "resume" => Some(RestoreKind::Resume),
                "clear" => Some(RestoreKind::Clear),
                "startup" if cfg.restore_on_startup => Some(RestoreKind::Startup),
                _ => None,
            };
            match kind {
                None => HookOutput::None,
                Some(kind) => {
                    if kind == RestoreKind::Resume {
                        // The resumed transcript may hold turns we never saw.
                        archive(engine, p, &mut fx)?;
                        if resumed_without_compaction(engine, p)? {
                            // Claude Code reloads the whole uncompacted conversation: restoring
                            // would duplicate it (and stack one more block per resume).
                            return Ok((HookOutput::None, fx));
                        }
                    }
                    let project = p.project();
                    let restored =
                        engine.restore(&p.common.session_id, &project, kind, &cfg.restore)?;
                    if !restored.chunk_ids.is_empty()
                        && let Err(e) = engine.record_access(&restored.chunk_ids)
                    {
                        tracing::warn!(error = %e, "access boost not recorded");
                    }
                    if restored.text.is_empty() {
                        HookOutput::None
                    } else {
                        HookOutput::Context {
                            event: "SessionStart".into(),
                            text: restored.text,
                        }
                    }
                }
            }
        }
        HookEvent::PostCompact { compact_summary } => {
            if let Some(summary) = compact_summary.as_deref().filter(|s| !s.is_empty()) {
                let summary = crate::redact::redact(summary).into_owned();
                let project = p.project();
                engine.store().write(|w| {
                    w.update_session(&p.common.session_id, &project, |s| {
                        s.compact_summary = Some(summary.clone());
                    })
                })?;
            }
            HookOutput::None
        }
        HookEvent::SessionEnd { .. } => {
            archive(engine, p, &mut fx)?;
            crate::summary::on_hook(engine.core(), &p.common.session_id, &cfg.summary, deadline);
            crate::prune::on_hook(engine.core(), &cfg.auto_prune, deadline);
            HookOutput::None
        }
        HookEvent::PostToolUse { .. } => {
            let project = p.project();
            if let Some(call) = p.tool_call(&project) {
                swap_output(engine, &call, &cfg.swap);
            }
            HookOutput::None
        }
        HookEvent::Other(_) => HookOutput::None,
    };
    Ok((out, fx))
}
