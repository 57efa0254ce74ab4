//! Forgetting (`memctl forget`, the MCP tool `forget`): remove what the user asks memctl to
//! forget from everywhere memctl keeps it, and leave no byte of it in the store file.
//!
//! **What is named.** A [`ForgetRequest`]: chunk ids, a session (a unique id prefix), a project
//! (its path, normalized like the search filter), a time range (`since`/`until`, the search
//! filter's strict forms) and a text (a literal, case-insensitive substring of a chunk's
//! text). The criteria given AND together; none at all is an error (there is no "forget
//! everything" by accident), and so is any criterion that cannot be understood. A request that
//! is understood but matches nothing is not an error: the report says so.
//!
//! **The unit is the turn.** Every selected chunk takes the rest of its turn with it (see
//! [`crate::store::remove`] for why), and identical copies in other sessions go too.
//!
//! **Where it is removed**, in one write transaction: chunks, turn entries, session links,
//! postings and the lexical stats, re-scoring vectors and int8 block entries (blocks re-packed),
//! dedup hashes, pending-embedding marks, session records (removed when nothing is left, else
//! their counts fixed), stored summaries of affected sessions (they may quote what went; the
//! extractive one is rebuilt afterwards from what is left), and stored tool outputs (matched
//! by their own session, project, time and content; all outputs of a session that is gone).
//! Then outside the store: spooled tool calls not stored yet, and the context-state files of
//! sessions that are gone (ids of forgotten chunks are dropped from the others).
//!
//! **It stays forgotten.** Claude Code's own transcripts (`~/.claude/projects/…`) still hold the
//! conversation: memctl does not delete files it does not own. So a forget writes tombstones
//! (the turn's uuid and the chunk text's sha256, never text), and ingest skips what they name:
//! re-archiving a transcript, from scratch or after it moved, does not bring a forgotten turn
//! back. New turns that mention the same thing later are archived as usual.
//!
//! **No bytes left.** Deleted rows leave their bytes in redb's free pages, and redb's own
//! compaction leaves some behind too; the store is rewritten into a fresh file
//! ([`crate::store::rewrite`]) under its write lock, so concurrent hooks lose nothing. Backups
//! in the data dir that hold what was removed are deleted first; a forget killed before its
//! rewrite is finished by whoever opens the store next ([`finish`]).
//!
//! **Synced copies.** memctl keeps everything in the local data dir today. Team sync, when it
//! comes, must remove its copies of the forgotten turns here, next to the local removal: the
//! [`ForgetReport::removed_ids`] and the tombstones written are what it has to propagate.

use crate::clock::unix_now;
use crate::core::Core;
// Defined in the leaf `error`, beside `EngineError` that wraps it: error names no module above.
pub use crate::error::ForgetError;
use crate::error::{EngineError, StoreError};
use crate::filter::{self, FilterError};
use crate::store::remove::{Plan, Selector};
use crate::store::rewrite::{META_REWRITE_PENDING, RewriteReport};
use crate::store::{ChunkId, ChunkRecord};
use crate::swap::forget::SwapSelector;
pub use finish::{BackupsReport, Interrupted};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Turn lines kept in a report (the CLI shows a few, the MCP tool all of them).
const TURN_LINES: usize = 50;
/// Characters of a turn line's gist.
const GIST_CHARS: usize = 120;

/// What to forget: every criterion given must hold. At least one is needed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForgetRequest {
    /// These chunks (ids from `search`, `show`, the MCP tools), with the rest of their turns.
    pub chunk_ids: Vec<ChunkId>,
    /// A session id or a unique prefix of one.
    pub session: Option<String>,
    /// A project path (the directory Claude Code ran in).
    pub project: Option<String>,
    /// Turns started at or after: RFC 3339, a date, an age (`7d`), today / yesterday.
    pub since: Option<String>,
    /// Turns started before (same forms).
    pub until: Option<String>,
    /// Turns whose text contains this, ignoring case.
    pub text: Option<String>,
}

/// One forgotten turn, as reports list them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnLine {
    /// Its first chunk's id.
    pub id: ChunkId,
    /// Session id.
    pub session: String,
    /// Turn index.
    pub turn: u32,
    /// When it started (UTC, to the minute).
    pub time: Option<String>,
    /// Its one-line summary, clipped.
    pub gist: String,
}

/// What a forget removed (or, dry run, would remove).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ForgetReport {
    /// Nothing was removed.
    pub dry_run: bool,
    /// The criteria as understood (full session id, normalized project, parsed times).
    pub criteria: Vec<String>,
    /// Chunks.
    pub chunks: u64,
    /// Turns (a long turn has several chunks).
    pub turns: u64,
    /// Sessions that lose a turn (owners, and sessions holding an identical copy).
    pub sessions: u64,
    /// Of those, sessions of which nothing is left: removed entirely.
    pub sessions_removed: Vec<String>,
    /// Stored tool outputs (swap entries).
    pub tool_outputs: u64,
    /// Tool calls spooled by a hook and not stored yet.
    pub spooled_calls: u64,
    /// Session summaries rebuilt from what is left.
    pub summaries_rebuilt: u64,
    /// Context-state files removed or cleaned.
    pub context_files: u64,
    /// Tombstones written (turn uuids and text hashes ingest will skip, removed tool outputs
    /// import will skip).
    pub tombstones: u64,
    /// Every chunk id removed.
    pub removed_ids: Vec<ChunkId>,
    /// The turns, in session and turn order (at most 50).
    pub turn_lines: Vec<TurnLine>,
    /// The store file rewrite that left no forgotten byte in it (not in a dry run, nor when
    /// nothing was removed).
    pub rewrite: Option<RewriteReport>,
    /// The backups in `<data dir>/backups`: those that held what was removed are deleted
    /// (backups written elsewhere are not known to memctl, and not touched).
    pub backups: BackupsReport,
}

impl ForgetReport {
    /// Nothing matched.
    pub fn is_empty(&self) -> bool {
        self.chunks == 0 && self.tool_outputs == 0 && self.spooled_calls == 0
    }
}

/// The request checked and resolved against the store.
struct Resolved {
    sel: Selector,
    swap: SwapSelector,
    criteria: Vec<String>,
}

fn unix_of(stored: &str, flag: &'static str) -> Result<i64, ForgetError> {
    stored
        .parse::<jiff::Timestamp>()
        .map(|t| t.as_second())
        .map_err(|_| {
            ForgetError::Filter(FilterError::Time {
                flag,
                value: stored.to_string(),
            })
        })
}

fn resolve(
    core: &Core,
    req: &ForgetRequest,
    now: jiff::Timestamp,
) -> Result<Resolved, EngineError> {
    let mut sel = Selector::default();
    let mut swap = SwapSelector::default();
    let mut criteria = Vec::new();
    let r = core.store().read()?;
    let entries = core.swap_list(None)?;
    if !req.chunk_ids.is_empty() {
        let mut missing = Vec::new();
        for &id in &req.chunk_ids {
            if r.chunk(id)?.is_none() {
                missing.push(id);
            }
        }
        if !missing.is_empty() {
            return Err(ForgetError::UnknownChunks { ids: missing }.into());
        }
        let ids: BTreeSet<ChunkId> = req.chunk_ids.iter().copied().collect();
        let mut shown: Vec<String> = ids.iter().take(10).map(u64::to_string).collect();
        if ids.len() > shown.len() {
            shown.push(format!("… ({} ids)", ids.len()));
        }
        criteria.push(format!("chunk {}", shown.join(", ")));
        sel.ids = Some(ids);
        swap.windows = Some(Vec::new()); // filled from the plan: the turns' time windows
    }
    if let Some(prefix) = &req.session {
        let archived = r.sessions()?;
        let known: BTreeSet<&str> = archived
            .iter()
            .map(|(id, _)| id.as_str())
            .chain(entries.iter().map(|e| e.session_id.as_str()))
            .collect();
        let id = filter::resolve_session(prefix, known).map_err(ForgetError::from)?;
        criteria.push(format!("session {id}"));
        swap.session = Some(id.clone());
        sel.session = Some(id);
    }
    if let Some(p) = &req.project {
        let projects = r.projects()?;
        let known: BTreeSet<String> = projects
            .iter()
            .map(|(name, _)| name.clone())
            .chain(
                entries
                    .iter()
                    .map(|e| filter::normalize_project(&e.project)),
            )
            .collect();
        let name = filter::resolve_project(p, known.iter().map(String::as_str))
            .map_err(ForgetError::from)?;
        // Project ids start at 1: a project known only from stored outputs matches no chunk.
        sel.project_id = Some(r.project_id(&name)?.unwrap_or(0));
        criteria.push(format!("project {name}"));
        swap.project = Some(name);
    }
    for (flag, value) in [("since", &req.since), ("until", &req.until)] {
        let Some(v) = value else { continue };
        let stored = filter::parse_time(flag, v, now).map_err(ForgetError::from)?;
        let secs = unix_of(&stored, flag)?;
        criteria.push(format!("{flag} {stored}"));
        if flag == "since" {
            sel.since = Some(stored);
            swap.since = Some(secs);
        } else {
            sel.until = Some(stored);
            swap.until = Some(secs);
        }
    }
    if let (Some(since), Some(until)) = (&sel.since, &sel.until)
        && since >= until
    {
        return Err(ForgetError::EmptyRange {
            since: since.clone(),
            until: until.clone(),
        }
        .into());
    }
    if let Some(t) = &req.text {
        if t.trim().is_empty() {
            return Err(ForgetError::EmptyText.into());
        }
        criteria.push(format!("text {t:?}"));
        sel.text = Some(t.to_lowercase());
        swap.text = Some(t.to_lowercase());
    }
    if sel.is_empty() {
        return Err(ForgetError::NoCriterion.into());
    }
    Ok(Resolved {
        sel,
        swap,
        criteria,
    })
}

/// The swap selector completed by the plan: the forgotten turns' windows (chunk ids), the
/// sessions that are gone.
fn swap_for(base: &SwapSelector, plan: &Plan) -> SwapSelector {
    let mut s = base.clone();
    if s.windows.is_some() {
        let secs = |t: &Option<String>| {
            t.as_deref()
                .and_then(|t| t.parse::<jiff::Timestamp>().ok())
                .map(|t| t.as_second())
        };
        s.windows = Some(
            plan.chunks
                .iter()
                .filter_map(|(_, r)| {
                    let start = secs(&r.chunk.started_at)?;
                    let end = secs(&r.chunk.ended_at).unwrap_or(start);
                    // The hook runs within the turn; a second on each side for rounding.
                    Some((r.chunk.session_id.clone(), start - 1, end + 1))
                })
                .collect(),
        );
    }
    s.gone_sessions = plan.gone().map(str::to_string).collect();
    s
}

fn turn_lines(chunks: &[(ChunkId, ChunkRecord)]) -> (u64, Vec<TurnLine>) {
    let mut seen: BTreeSet<(&str, u32)> = BTreeSet::new();
    let mut lines = Vec::new();
    for (id, r) in chunks {
        let c = &r.chunk;
        if !seen.insert((c.session_id.as_str(), c.turn_index)) || lines.len() >= TURN_LINES {
            continue;
        }
        lines.push(TurnLine {
            id: *id,
            session: c.session_id.clone(),
            turn: c.turn_index,
            time: c
                .started_at
                .as_deref()
                .map(|t| t.get(..16).unwrap_or(t).to_string()),
            gist: crate::transcript::clip_line(&c.summary, GIST_CHARS),
        });
    }
    (seen.len() as u64, lines)
}

fn report_of(
    criteria: Vec<String>,
    plan: &Plan,
    tool_outputs: u64,
    spooled_calls: u64,
    dry_run: bool,
) -> ForgetReport {
    let (turns, lines) = turn_lines(&plan.chunks);
    ForgetReport {
        dry_run,
        criteria,
        chunks: plan.chunks.len() as u64,
        turns,
        sessions: plan.sessions.len() as u64,
        sessions_removed: plan.gone().map(str::to_string).collect(),
        tool_outputs,
        spooled_calls,
        removed_ids: plan.chunks.iter().map(|(id, _)| *id).collect(),
        turn_lines: lines,
        ..ForgetReport::default()
    }
}

/// Forget what `req` names (see the module doc); `dry_run`: only report it.
pub(crate) fn forget(
    core: &Core,
    req: &ForgetRequest,
    dry_run: bool,
) -> Result<ForgetReport, EngineError> {
    let Resolved {
        sel,
        swap,
        criteria,
    } = resolve(core, req, jiff::Timestamp::now())?;
    if dry_run {
        let r = core.store().read()?;
        let plan = r.forget_plan(&sel)?;
        let swap_sel = swap_for(&swap, &plan);
        let outputs = crate::swap::forget::plan(&r, &swap_sel)?;
        let spooled = crate::spool::forget_tools(core.data_dir(), &swap_sel, false)?;
        return Ok(report_of(
            criteria,
            &plan,
            outputs.len() as u64,
            spooled,
            true,
        ));
    }
    let now = unix_now();
    let (plan, applied, outputs, swap_sel) = core.store().write(|w| {
        let plan = w.forget_plan(&sel)?;
        let swap_sel = swap_for(&swap, &plan);
        let applied = if plan.chunks.is_empty() {
            crate::store::remove::Applied::default()
        } else {
            w.forget_apply(&plan, now)?
        };
        for s in applied
            .sessions_removed
            .iter()
            .chain(&applied.sessions_fixed)
        {
            crate::summary::drop_stored(w, s)?;
        }
        let outputs = crate::swap::forget::apply(w, &swap_sel)?;
        w.note_forgotten_outputs(outputs.iter().map(|e| e.id.as_str()))?;
        if applied.chunks > 0 || !outputs.is_empty() {
            w.set_meta_value(META_REWRITE_PENDING, &[1])?;
        }
        Ok((plan, applied, outputs, swap_sel))
    })?;
    // Synced copies: none exist yet (see the module doc); team sync removes them here.
    let spooled = crate::spool::forget_tools(core.data_dir(), &swap_sel, true)?;
    let mut rep = report_of(criteria, &plan, outputs.len() as u64, spooled, false);
    // Each removed tool output leaves a tombstone of its own (swap::forget::tombstone_key).
    rep.tombstones = applied.tombstones + outputs.len() as u64;
    rep.context_files = forget_context_files(core, &applied, &rep.removed_ids)?
        + crate::restore::prepared_files::remove_all(core.data_dir())?
        // The service index's files hold int8 copies of vectors.
        + crate::paths::remove_files_in(&crate::ann::ann_dir(core.data_dir()))?;
    for s in &applied.sessions_fixed {
        match crate::summary::summarize_session(core, s, &crate::summary::SummaryConfig::default())
        {
            Ok(Some(_)) => rep.summaries_rebuilt += 1,
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(session = %s, error = %e, "summary not rebuilt after a forget");
            }
        }
    }
    // Backups, then the rewrite; also after a forget killed or failed earlier (the flag is
    // still set, see `finish`).
    if let Some(done) = finish::finish(core)? {
        rep.backups = done.backups;
        rep.rewrite = Some(done.rewrite);
    }
    Ok(rep)
}

/// Context-state files: removed for sessions that are gone; the others forget the removed ids
/// (ids only, no text, but a restore must not count them as shown). Returns files touched.
fn forget_context_files(
    core: &Core,
    applied: &crate::store::remove::Applied,
    removed: &[ChunkId],
) -> Result<u64, EngineError> {
    use crate::recall::{load_state, save_state, state_path};
    let dir = core.data_dir();
    let mut touched = 0;
    for s in &applied.sessions_removed {
        let path = state_path(dir, s);
        match std::fs::remove_file(&path) {
            Ok(()) => touched += 1,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(StoreError::Io { path, source }.into()),
        }
    }
    let removed: BTreeSet<ChunkId> = removed.iter().copied().collect();
    for s in &applied.sessions_fixed {
        if !state_path(dir, s).is_file() {
            continue;
        }
        let mut st = load_state(dir, s);
        let before = (st.injected.len(), st.recalled.len());
        st.injected.retain(|id| !removed.contains(id));
        st.recalled.retain(|id| !removed.contains(id));
        if before != (st.injected.len(), st.recalled.len()) {
            save_state(dir, s, &st)?;
            touched += 1;
        }
    }
    Ok(touched)
}

pub(crate) mod finish;
#[cfg(test)]
pub(crate) mod fixture;
#[cfg(test)]
mod tests;
