//! One handler per agent event. An adapter's binary (`memctl-hook`) parses its agent's payload
//! into an [`AgentEvent`], calls [`handle`], and prints the [`Reply`] in its agent's format.
//!
//! Critical-path rules: no model load (new chunks get hash vectors and are marked pending for a
//! background `memctl embed-pending`), work proportional to new transcript lines, and a
//! deadline checked between steps. When the store is busy the transcript path is spooled and
//! archived by the next hook call that gets the store.

use super::event::{AgentEvent, EventKind, Reply, StartKind};
use super::policy::{backlog, claim_background};
use crate::engine::Engine;
use crate::error::{EngineError, StoreError};
use crate::ingest::IngestReport;
use crate::restore::{RestoreConfig, RestoreKind};
use std::path::Path;
use std::time::Instant;

/// Hook settings (built from [`crate::Settings`]; defaults are the product's).
#[derive(Debug, Clone)]
pub struct HookConfig {
    /// Restore settings (`restore.sources`: what each session start restores).
    pub restore: RestoreConfig,
    /// Context autopilot (samples at each prompt and the optional note).
    pub autopilot: crate::autopilot::AutopilotConfig,
    /// Session summaries (before a compaction, at the session's end).
    pub summary: crate::summary::SummaryConfig,
    /// Automatic bounded prune pass (at the session's end; off unless `MEMCTL_AUTO_PRUNE` is on).
    pub auto_prune: crate::prune::AutoPruneConfig,
    /// Tool-output swap settings (tool outputs, spooled tool calls).
    pub swap: crate::swap::SwapConfig,
    /// Prompt-time recall (a prompt after a context loss).
    pub recall: crate::recall::RecallConfig,
    /// Unarchived bytes above which a prompt archives in the background
    /// ([`crate::settings::HookSettings::inline_bytes`]).
    pub inline_bytes: u64,
    /// A prompt archives inline even when it needs no store otherwise
    /// ([`crate::settings::HookSettings::inline_prompt_archive`]).
    pub inline_prompt_archive: bool,
}

impl Default for HookConfig {
    fn default() -> Self {
        Self::from_settings(&crate::Settings::default())
    }
}

impl HookConfig {
    /// The hook's part of the settings.
    pub fn from_settings(s: &crate::Settings) -> Self {
        Self {
            restore: s.restore.clone(),
            autopilot: s.autopilot.clone(),
            summary: crate::summary::SummaryConfig::default(),
            auto_prune: s.auto_prune.clone(),
            swap: s.swap.clone(),
            recall: s.recall.clone(),
            inline_bytes: s.hook.inline_bytes,
            inline_prompt_archive: s.hook.inline_prompt_archive,
        }
    }
}

/// The answer to one event: what to reply to the agent, and what the binary should do next.
#[derive(Debug, Clone)]
pub struct HookAnswer {
    /// What the adapter renders for its agent.
    pub reply: Reply,
    /// What it did besides (detached work the binary starts).
    pub effects: HookEffects,
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
    /// Transcripts whose new turns the binary hands to a detached `memctl ingest --background`
    /// (a prompt without a store: [`handle_without_store`]).
    pub deferred_archive: Vec<std::path::PathBuf>,
    /// Start the resident query embedder ([`crate::resident`]): the session lost context, so
    /// prompt-time recall will want prompt vectors, and none answered (or none was asked yet).
    pub start_resident: bool,
}

/// The live-context state after a session start of `kind` (see [`crate::recall::ContextState`]):
/// compaction and `/clear` start a new context window (nothing injected yet); a resume keeps
/// what earlier blocks injected (they are in the reloaded transcript), so blocks do not stack.
fn boundary_state(
    engine: &Engine,
    session: &str,
    kind: RestoreKind,
) -> Result<crate::recall::ContextState, EngineError> {
    let next_turn = engine.last_turn(session)?.map_or(0, |t| t + 1);
    let st = crate::recall::load_state(engine.data_dir(), session);
    // Chunks waiting for a usage verdict keep waiting across the boundary.
    let pending = st.pending.clone();
    Ok(match kind {
        RestoreKind::Compact => new_window(next_turn, pending),
        RestoreKind::Clear | RestoreKind::Startup => new_window(0, pending),
        RestoreKind::Resume => {
            let latest = engine.latest_compact_turn(session)?;
            if !st.lost || latest.is_some_and(|t| t > st.boundary_turn) {
                // A compaction this state never saw (its hook could not write, or it ran
                // before memctl was installed): what earlier blocks injected is gone from the
                // context, and every turn before the newest summary may be out of it.
                new_window(latest.unwrap_or(next_turn), pending)
            } else {
                st
            }
        }
    })
}

/// A prompt after a context loss: the recall block for `prompt`, or None (no loss, no
/// confident match, past the deadline, or a fault, which is logged).
fn prompt_recall(
    engine: &Engine,
    p: &AgentEvent,
    prompt: &str,
    cfg: &HookConfig,
    deadline: Instant,
    fx: &mut HookEffects,
) -> Option<String> {
    let session = p.session_id.as_str();
    if !cfg.recall.enabled || session.is_empty() || Instant::now() >= deadline {
        return None;
    }
    let mut state = crate::recall::load_state(engine.data_dir(), session);
    if !state.lost {
        return None;
    }
    let project = p.project();
    let found = match engine.recall(session, &project, prompt, &state, &cfg.recall) {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(error = %e, "prompt-time recall failed");
            return None;
        }
    };
    if found.embedded_by == crate::recall::QuerySource::InProcess {
        // No resident embedder answered: start one for the next prompt.
        fx.start_resident = wants_resident(engine.options());
    }
    if found.text.is_empty() {
        tracing::info!(best = ?found.best, embedded_by = ?found.embedded_by, "recall: no confident match");
        return None;
    }
    let ids: Vec<_> = found.turns.iter().map(|t| t.id).collect();
    // A folded copy was shown as its twin's count: recalling it later would repeat the line.
    let copies: Vec<_> = found
        .turns
        .iter()
        .flat_map(|t| t.copies.ids.iter().copied())
        .collect();
    state.add_recalled(&ids);
    state.add_recalled(&copies);
    // Not boosted for being injected: boosted if the agent's answer uses them.
    match engine.next_agent_turn(session) {
        Ok(from) => state.await_use(&ids, from),
        Err(e) => tracing::warn!(error = %e, "recalled chunks not awaiting use"),
    }
    if let Err(e) = crate::recall::save_state(engine.data_dir(), session, &state) {
        tracing::warn!(error = %e, "context state not saved");
    }
    tracing::info!(
        turns = ids.len(),
        chars = found.text.chars().count(),
        embedded_by = ?found.embedded_by,
        "recall injected"
    );
    Some(found.text)
}

/// A context window that lost what came before `boundary_turn` and holds nothing injected
/// yet; `pending` (chunks waiting for a usage verdict) keeps waiting across the boundary.
pub(super) fn new_window(
    boundary_turn: u32,
    pending: Vec<crate::recall::PendingUse>,
) -> crate::recall::ContextState {
    crate::recall::ContextState {
        lost: true,
        boundary_turn,
        injected: Vec::new(),
        recalled: Vec::new(),
        pending,
    }
}

/// Record a restore in the session's context state and save it: its chunks are injected, and
/// wait for a usage verdict from `next_agent_turn` on (not boosted for being restored:
/// boosted if the agent uses them).
pub(super) fn remember_restored(
    data_dir: &Path,
    session: &str,
    state: &mut crate::recall::ContextState,
    chunk_ids: &[crate::store::ChunkId],
    next_agent_turn: u32,
) {
    state.add_injected(chunk_ids);
    state.await_use(chunk_ids, next_agent_turn);
    if let Err(e) = crate::recall::save_state(data_dir, session, state) {
        tracing::warn!(error = %e, "context state not saved");
    }
}

/// True when these options would use a resident embedder (the model is on and so is the
/// resident setting).
pub(super) fn wants_resident(o: &crate::engine::EngineOptions) -> bool {
    o.resident.enabled && !o.model_disabled
}

/// Archive the event's transcript incrementally; spool it when the store is busy.
fn archive(engine: &Engine, p: &AgentEvent, effects: &mut HookEffects) -> Result<(), EngineError> {
    let Some(path) = p.transcript() else {
        return Ok(());
    };
    if !path.is_file() {
        // Agents write it lazily (Claude Code does): nothing to archive yet.
        return Ok(());
    }
    match engine.ingest_transcript(path, &super::spool::hook_ingest_options()) {
        Ok(r) => {
            effects.pending_embeds += r.pending;
            note_compactions(engine, &r);
            effects.ingest = Some(r);
            judge_usage(engine, &p.session_id);
            Ok(())
        }
        Err(EngineError::Store(StoreError::Busy { waited_ms })) => {
            tracing::warn!(waited_ms, transcript = %path.display(), "store busy; transcript spooled");
            crate::spool::spool_transcript(engine.data_dir(), path)
        }
        Err(e) => Err(e),
    }
}

/// After an archive (a hook's, or the deferred one a prompt starts): a compaction summary
/// stored for the first time that no session start announced (Gemini CLI compresses without
/// one; or a hook could not save its state) means the live context lost what came before it:
/// the session's state becomes a new window at the summary, so the next prompt recalls and a
/// resume restores. A compaction a session start announced (Claude Code, Codex) already left
/// a window starting at or after the summary's turn, and keeps it.
pub fn note_compactions(engine: &Engine, r: &crate::ingest::IngestReport) {
    for (session, turn) in r.compacted.iter().filter(|(s, _)| !s.is_empty()) {
        let st = crate::recall::load_state(engine.data_dir(), session);
        if st.lost && st.boundary_turn >= *turn {
            continue;
        }
        tracing::info!(
            turn,
            "a compaction no session start announced: recall is on"
        );
        let state = new_window(*turn, st.pending);
        if let Err(e) = crate::recall::save_state(engine.data_dir(), session, &state) {
            tracing::warn!(error = %e, "context state not saved");
        }
    }
}

/// After an archive: judge the session's injected chunks that wait for a usage verdict against
/// the turns just archived ([`crate::recall::judge`]). Failures are logged: a verdict is an
/// optimisation of ranking, and the chunks keep waiting for the next archive.
fn judge_usage(engine: &Engine, session: &str) {
    if session.is_empty() {
        return;
    }
    let mut state = crate::recall::load_state(engine.data_dir(), session);
    if state.pending.is_empty() {
        return;
    }
    match engine.judge_usage(session, &mut state) {
        Ok(r) => {
            if r.used.is_empty() && r.unused.is_empty() && r.gone == 0 {
                return;
            }
            tracing::info!(
                used = r.used.len(),
                unused = r.unused.len(),
                waiting = r.waiting,
                "usage verdicts"
            );
            if let Err(e) = crate::recall::save_state(engine.data_dir(), session, &state) {
                tracing::warn!(error = %e, "context state not saved");
            }
        }
        Err(e) => tracing::warn!(error = %e, "usage verdicts not recorded"),
    }
}

/// True when we know the resumed session was never compacted: its transcript exists (and was
/// just archived) and neither a compaction summary turn nor an after-compaction summary is stored.
/// Unknown (no transcript, no record) counts as "maybe compacted": restore.
fn resumed_without_compaction(engine: &Engine, p: &AgentEvent) -> Result<bool, EngineError> {
    let exists = p.transcript_path.as_deref().is_some_and(Path::is_file);
    if !exists {
        return Ok(false);
    }
    Ok(engine
        .store()
        .read()?
        .session(&p.session_id)?
        .is_some_and(|s| s.compactions == 0 && s.compact_summary.is_none()))
}

/// A tool output: swap a big output in place (the model gets a digest instead,
/// [`crate::swap::inplace`]) when it qualifies, else store it in the swap when it is big
/// enough (replies nothing then; failures are logged only).
fn post_tool(
    engine: &Engine,
    p: &AgentEvent,
    call: &crate::swap::ToolCall<'_>,
    cfg: &crate::swap::SwapConfig,
) -> Reply {
    use crate::swap::inplace::NotInPlace;
    let transcript = p.transcript();
    match engine.swap_in_place(call, transcript, cfg, crate::clock::unix_now()) {
        Ok(Ok(ip)) => {
            tracing::debug!(
                tool = call.tool_name,
                id = %crate::swap::short_id(&ip.report.id),
                bytes = ip.report.bytes,
                digest_chars = ip.digest_chars,
                removed_chars = ip.removed_chars(),
                "tool output swapped in place"
            );
            return Reply::ReplaceToolOutput {
                response: ip.replacement.get().to_string(),
                removed_chars: ip.removed_chars(),
            };
        }
        Ok(Err(NotInPlace::PersistedUnreadable(why))) => {
            tracing::warn!(
                tool = call.tool_name,
                why,
                "client's saved output not read; storing its head"
            );
        }
        Ok(Err(_)) => {}
        Err(e) => {
            swap_failed(engine, call, e);
            return Reply::None;
        }
    }
    swap_output(engine, call, cfg);
    Reply::None
}

/// A tool output: store a big one in the swap (replies nothing; failures are logged only).
fn swap_output(engine: &Engine, call: &crate::swap::ToolCall<'_>, cfg: &crate::swap::SwapConfig) {
    match engine.swap_tool_output(call, cfg, crate::clock::unix_now()) {
        Ok(crate::swap::SwapOutcome::Stored(r)) => tracing::debug!(
            tool = call.tool_name,
            id = %r.id,
            bytes = r.bytes,
            stored = r.stored_bytes,
            "tool output swapped"
        ),
        Ok(crate::swap::SwapOutcome::Skipped(_)) => {}
        Err(e) => swap_failed(engine, call, e),
    }
}

/// A swap write failed. Busy: the output is kept in the spool and stored by the next hook that
/// gets the store (dropping it lost outputs under concurrency);
/// the model then keeps the output as the client made it.
fn swap_failed(engine: &Engine, call: &crate::swap::ToolCall<'_>, e: EngineError) {
    match e {
        EngineError::Store(StoreError::Busy { waited_ms }) => {
            match crate::spool::spool_tool(engine.data_dir(), call) {
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
        e => tracing::warn!(tool = call.tool_name, error = %e, "tool output not swapped"),
    }
}

/// Whether this event may run prompt-time recall: a worthwhile prompt in a session that lost
/// context. Only then may a hook embed the prompt in process (when no resident service answers),
/// so only then does it load ONNX Runtime. One small file read (the session's context state).
pub fn may_recall(p: &AgentEvent, data_dir: &Path, cfg: &HookConfig) -> bool {
    let EventKind::Prompt { prompt } = &p.kind else {
        return false;
    };
    let session = p.session_id.as_str();
    cfg.recall.enabled
        && !session.is_empty()
        && crate::recall::worth_searching(prompt, &cfg.recall)
        && crate::recall::load_state(data_dir, session).lost
}

/// Whether handling this event only reads the store: the restore after a compaction, a
/// `/clear` or a start (a resume archives the resumed transcript first). Such an event can
/// open the store read-only, which sets and clears no recovery flag and so costs none of a
/// read-write open's and close's durable header writes.
pub fn reads_only(p: &AgentEvent) -> bool {
    matches!(
        p.kind,
        EventKind::SessionStart(StartKind::Compact | StartKind::Clear | StartKind::Startup)
    )
}

/// A prompt that needs nothing from the store: no recall can happen (the
/// live context lost nothing, recall is off, or the prompt is not worth a search). Then the hook
/// opens no store at all: the new turns are archived by a detached `memctl ingest --background`
/// (started by the binary from [`HookEffects::deferred_archive`]) and the output is the
/// autopilot's note alone. Returns None when the event needs the store ([`handle`]).
/// `may_recall` is [`may_recall`]'s answer for this event, read once by the caller.
///
/// Why: opening redb, committing one turn durably and closing cost ~16 ms of CPU per prompt,
/// on every prompt; nothing in the model's answer depends on it, and the turns are in the
/// transcript (the source of truth) until the detached ingest stores them a moment later.
/// Compaction and session end still archive inline, so nothing waits on it at a boundary.
pub fn handle_without_store(
    p: &AgentEvent,
    opts: &crate::engine::EngineOptions,
    cfg: &HookConfig,
    may_recall: bool,
) -> Option<HookAnswer> {
    if let EventKind::SessionStart(StartKind::Compact) = p.kind {
        return super::prepared::serve(p, opts, cfg);
    }
    let data_dir = opts.data_dir.as_path();
    if !matches!(p.kind, EventKind::Prompt { .. }) || cfg.inline_prompt_archive || may_recall {
        return None;
    }
    let session = p.session_id.as_str();
    let mut fx = HookEffects::default();
    if let Some(t) = p.transcript().filter(|t| t.is_file()) {
        fx.deferred_archive.push(t.to_path_buf());
    }
    let note = crate::autopilot::on_prompt_hook(data_dir, session, p.transcript(), &cfg.autopilot);
    Some(HookAnswer {
        reply: prompt_reply(note.into_iter().collect()),
        effects: fx,
    })
}

/// A prompt's reply: its parts (recall block, autopilot note) joined, or nothing.
fn prompt_reply(parts: Vec<String>) -> Reply {
    if parts.is_empty() {
        Reply::None
    } else {
        Reply::Context(parts.join("\n"))
    }
}

/// Handle one event.
pub fn handle(
    engine: &Engine,
    p: &AgentEvent,
    deadline: Instant,
    cfg: &HookConfig,
) -> Result<HookAnswer, EngineError> {
    let mut fx = HookEffects::default();
    let reply = match &p.kind {
        EventKind::Prompt { prompt } => on_prompt(engine, p, prompt, deadline, cfg, &mut fx)?,
        EventKind::BeforeCompact { instructions } => {
            on_pre_compact(engine, p, instructions.as_deref(), deadline, cfg, &mut fx)?
        }
        EventKind::SessionStart(start) => on_session_start(engine, p, *start, cfg, &mut fx)?,
        EventKind::AfterCompact { summary } => {
            if let Some(summary) = summary.as_deref().filter(|s| !s.is_empty()) {
                let summary = crate::redact::redact(summary).into_owned();
                let project = p.project();
                engine.store().write(|w| {
                    w.update_session(&p.session_id, &project, |s| {
                        s.compact_summary = Some(summary.clone());
                    })
                })?;
            }
            Reply::None
        }
        EventKind::TurnEnd => {
            archive(engine, p, &mut fx)?;
            Reply::None
        }
        EventKind::SessionEnd => {
            archive(engine, p, &mut fx)?;
            crate::summary::on_hook(engine.core(), &p.session_id, &cfg.summary, deadline);
            crate::prune::on_hook(engine.core(), &cfg.auto_prune, deadline);
            Reply::None
        }
        EventKind::ToolOutput(_) => {
            let project = p.project();
            match p.tool_call(&project) {
                Some(call) => post_tool(engine, p, &call, &cfg.swap),
                None => Reply::None,
            }
        }
        EventKind::Other => Reply::None,
    };
    Ok(HookAnswer { reply, effects: fx })
}

/// A prompt: archive (in the background when the backlog is large), drain the spool, then
/// recall and autopilot lines.
fn on_prompt(
    engine: &Engine,
    p: &AgentEvent,
    prompt: &str,
    deadline: Instant,
    cfg: &HookConfig,
    fx: &mut HookEffects,
) -> Result<Reply, EngineError> {
    let big = p
        .transcript_path
        .as_deref()
        .filter(|t| t.is_file())
        .map(|t| backlog(engine, t).map(|b| (t, b)))
        .transpose()?
        .filter(|(_, b)| *b > cfg.inline_bytes);
    match big {
        Some((t, bytes)) => {
            if claim_background(engine, t) {
                tracing::info!(transcript = %t.display(), bytes, "large backlog: archiving in the background");
                fx.background_ingest.push(t.to_path_buf());
            }
        }
        None => archive(engine, p, fx)?,
    }
    super::spool::drain(engine, deadline, &cfg.swap);
    let mut parts: Vec<String> = Vec::new();
    parts.extend(prompt_recall(engine, p, prompt, cfg, deadline, fx));
    parts.extend(crate::autopilot::on_prompt_hook(
        engine.data_dir(),
        &p.session_id,
        p.transcript(),
        &cfg.autopilot,
    ));
    Ok(prompt_reply(parts))
}

/// Before a compaction: archive, summarize, and give the agent the compaction instructions.
fn on_pre_compact(
    engine: &Engine,
    p: &AgentEvent,
    custom_instructions: Option<&str>,
    deadline: Instant,
    cfg: &HookConfig,
    fx: &mut HookEffects,
) -> Result<Reply, EngineError> {
    archive(engine, p, fx)?;
    crate::summary::on_hook(engine.core(), &p.session_id, &cfg.summary, deadline);
    if Instant::now() >= deadline {
        return Ok(Reply::None);
    }
    let text = engine.compaction_instructions(&p.session_id, custom_instructions, &cfg.restore)?;
    if Instant::now() < deadline {
        // The compaction restore follows in seconds and serves this instead of building it.
        super::prepared::prepare(engine, p, &cfg.restore);
    }
    Ok(if text.is_empty() {
        Reply::None
    } else {
        Reply::CompactInstructions(text)
    })
}

/// The restore a session start of `start` asks for (None: a fork or an unknown reason).
fn restore_kind(start: StartKind) -> Option<RestoreKind> {
    match start {
        StartKind::Compact => Some(RestoreKind::Compact),
        StartKind::Resume => Some(RestoreKind::Resume),
        StartKind::Clear => Some(RestoreKind::Clear),
        StartKind::Startup => Some(RestoreKind::Startup),
        StartKind::Fork | StartKind::Other => None,
    }
}

/// A session start: the restore block of its kind (none on a resume that kept the whole
/// conversation), remembered in the session's context state.
fn on_session_start(
    engine: &Engine,
    p: &AgentEvent,
    start: StartKind,
    cfg: &HookConfig,
    fx: &mut HookEffects,
) -> Result<Reply, EngineError> {
    let kind = restore_kind(start)
        .filter(|k| cfg.restore.sources.mode(*k) != crate::restore::RestoreMode::Off);
    let Some(kind) = kind else {
        return Ok(Reply::None);
    };
    if kind == RestoreKind::Resume {
        // The resumed transcript may hold turns we never saw.
        archive(engine, p, fx)?;
        if resumed_without_compaction(engine, p)? {
            // The agent reloads the whole uncompacted conversation: restoring would
            // duplicate it (and stack one more block per resume).
            return Ok(Reply::None);
        }
    }
    let project = p.project();
    let session = p.session_id.as_str();
    let mut state = boundary_state(engine, session, kind)?;
    // Recall can happen from the next prompt on: have its embedder ready.
    fx.start_resident = cfg.recall.enabled && state.lost && wants_resident(engine.options());
    let exclude = state.injected.iter().copied().collect();
    let restored = engine.restore_excluding(session, &project, kind, &cfg.restore, &exclude)?;
    let next_agent_turn = engine.next_agent_turn(session)?;
    remember_restored(
        engine.data_dir(),
        session,
        &mut state,
        &restored.chunk_ids,
        next_agent_turn,
    );
    Ok(if restored.text.is_empty() {
        Reply::None
    } else {
        Reply::Context(restored.text)
    })
}
