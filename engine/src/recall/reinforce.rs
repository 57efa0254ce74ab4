//! Usage-aware reinforcement on the hook path: chunks a restore block or prompt-time recall
//! injected wait in [`ContextState::pending`] for a verdict ([`crate::rank::usage`]); each
//! archive of the session compares the agent's turns since the injection with each waiting
//! chunk's identifiers. Used → one access (the ordinary boost, through the access log); not used
//! within the window → the unused decay once (also through the access log). Either way the
//! chunk stops waiting.
//!
//! What counts as the agent's turns: its text (`Assistant:` lines) and its tool calls' inputs
//! (`[tool: X] {...}`: a Bash command, a file_path it edits). Not the user's prompts (the user
//! may quote or answer the block: that is not the agent acting on it), not tool results (a
//! directory listing or a grep over the tree would "use" every path it prints), not memctl's
//! own blocks (never archived as conversation).
//!
//! What counts as a chunk's identifiers: those of its prompt, answer and tool inputs, not of
//! its tool results (a long output's hundred names would make any later turn a match).
//!
//! Cost: nothing without waiting chunks (one small file read); else one read transaction, the
//! waiting chunks (at most [`MAX_PENDING`]) and at most [`SCAN_TURNS`] turns after each
//! injection. No model, no write transaction.

use super::ContextState;
use crate::core::Core;
use crate::error::EngineError;
use crate::rank::RankParams;
use crate::rank::usage::{Verdict, identifiers, used, verdict};
use crate::store::{ChunkId, StoreReader};
use crate::summary::{Block, blocks};
use std::collections::{BTreeMap, BTreeSet};

/// Chunks waiting for a verdict at most (the oldest are dropped, unjudged, beyond it).
pub const MAX_PENDING: usize = 64;

/// Turns after an injection looked at, at most: a chunk still unjudged after that many turns
/// (turns without agent text do not fill the window) is unused.
pub const SCAN_TURNS: u32 = 12;

/// An injected chunk waiting for a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PendingUse {
    /// The chunk.
    pub id: ChunkId,
    /// The first turn of the session that counts as later than the injection.
    pub from_turn: u32,
}

/// What one judging pass decided.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UsageReport {
    /// Chunks the agent used (boosted).
    pub used: Vec<ChunkId>,
    /// Chunks the agent did not use within the window (decayed).
    pub unused: Vec<ChunkId>,
    /// Chunks gone from the store (pruned, forgotten): dropped without a verdict.
    pub gone: usize,
    /// Chunks still waiting.
    pub waiting: usize,
}

impl ContextState {
    /// Chunks just injected wait for a verdict on the turns from `from_turn` on. A chunk
    /// already waiting keeps its earlier turn (its window started at its first injection).
    pub fn await_use(&mut self, ids: &[ChunkId], from_turn: u32) {
        for &id in ids {
            if !self.pending.iter().any(|p| p.id == id) {
                self.pending.push(PendingUse { id, from_turn });
            }
        }
        let over = self.pending.len().saturating_sub(MAX_PENDING);
        self.pending.drain(..over);
    }
}

/// The agent's own text of a chunk text: `Assistant:` text and tool inputs.
fn agent_text(text: &str, out: &mut String) {
    for b in blocks(text) {
        match b {
            Block::Assistant(t) => out.push_str(&t),
            Block::Tool { name, input } => {
                out.push_str(name);
                out.push(' ');
                out.push_str(input);
            }
            Block::User { .. } | Block::Other => continue,
        }
        out.push('\n');
    }
}

/// The identifiers a chunk text shows: of its prompt, answer and tool inputs.
pub fn chunk_identifiers(text: &str) -> BTreeSet<String> {
    let mut own = String::new();
    for b in blocks(text) {
        match b {
            Block::User { text, .. } | Block::Assistant(text) => own.push_str(&text),
            Block::Tool { input, .. } => own.push_str(input),
            Block::Other => continue,
        }
        own.push('\n');
    }
    identifiers(&own)
}

/// The first turn of `session` whose agent text comes after now: the last archived turn when
/// it has no agent text yet (the prompt being answered), else the one after it.
pub(crate) fn next_agent_turn(core: &Core, session: &str) -> Result<u32, EngineError> {
    let r = core.store().read()?;
    let Some(last) = last_turn(&r, session)? else {
        return Ok(0);
    };
    let (text, _) = turn_agent_text(&r, session, last)?;
    Ok(if text.is_empty() { last } else { last + 1 })
}

/// The last archived turn of `session`, if any.
fn last_turn(r: &StoreReader, session: &str) -> Result<Option<u32>, EngineError> {
    Ok(r.session_turns_rev(session, 1)?
        .first()
        .map(|((t, _), _)| *t))
}

/// The agent text of one turn (every part) and whether the turn has any.
fn turn_agent_text(
    r: &StoreReader,
    session: &str,
    turn: u32,
) -> Result<(String, bool), EngineError> {
    let mut text = String::new();
    for (_, id) in r.session_turn_range(session, turn, turn)? {
        if let Some(rec) = r.chunk(id)? {
            agent_text(&rec.chunk.text, &mut text);
        }
    }
    let any = !text.is_empty();
    Ok((text, any))
}

/// Judge the chunks waiting in `state` against the archived turns of `session`, record the
/// verdicts in the access log, and leave only the undecided ones waiting. The caller saves
/// the state.
pub(crate) fn judge(
    core: &Core,
    session: &str,
    state: &mut ContextState,
    p: &RankParams,
) -> Result<UsageReport, EngineError> {
    let mut report = UsageReport::default();
    if state.pending.is_empty() {
        return Ok(report);
    }
    let r = core.store().read()?;
    let Some(last) = last_turn(&r, session)? else {
        report.waiting = state.pending.len();
        return Ok(report);
    };
    // Agent text per turn, read once for every chunk whose window holds the turn.
    let mut turns: BTreeMap<u32, (String, bool)> = BTreeMap::new();
    let mut keep = Vec::with_capacity(state.pending.len());
    for w in std::mem::take(&mut state.pending) {
        if w.from_turn > last {
            keep.push(w);
            continue;
        }
        let Some(rec) = r.chunk(w.id)? else {
            report.gone += 1;
            continue;
        };
        let to = last.min(w.from_turn.saturating_add(SCAN_TURNS - 1));
        let mut later = String::new();
        let mut agent_turns = 0u32;
        for t in w.from_turn..=to {
            if let std::collections::btree_map::Entry::Vacant(v) = turns.entry(t) {
                v.insert(turn_agent_text(&r, session, t)?);
            }
            let (text, any) = &turns[&t];
            later.push_str(text);
            // The last archived turn may still be growing: it fills the window once closed.
            if *any && t < last {
                agent_turns += 1;
            }
        }
        let usage = used(&chunk_identifiers(&rec.chunk.text), &later, p);
        let scanned_all = to < last && to - w.from_turn + 1 >= SCAN_TURNS;
        let v = match verdict(&usage, agent_turns, p) {
            Verdict::Pending if scanned_all => Verdict::Unused,
            v => v,
        };
        tracing::debug!(chunk = w.id, ?v, score = usage.score, found = ?usage.found, "usage verdict");
        match v {
            Verdict::Used => report.used.push(w.id),
            Verdict::Unused => report.unused.push(w.id),
            Verdict::Pending => keep.push(w),
        }
    }
    drop(r);
    state.pending = keep;
    report.waiting = state.pending.len();
    if !report.used.is_empty() {
        core.record_access(&report.used)?;
    }
    if !report.unused.is_empty() {
        core.record_unused(&report.unused)?;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_text_is_answers_and_tool_inputs_only() {
        let text = "User: fix src/a.rs please\nAssistant: Looking at `flush_wal`.\n\
            [tool: Edit] {\"file_path\":\"/p/src/journal.rs\"}\n[result: Edit] /p/src/other.rs updated\n\
            more result lines src/b.rs";
        let mut out = String::new();
        agent_text(text, &mut out);
        assert_eq!(
            out,
            "Looking at `flush_wal`.\nEdit {\"file_path\":\"/p/src/journal.rs\"}\n"
        );
        let ids = chunk_identifiers(text);
        let want: BTreeSet<String> = [
            "src/a.rs",
            "a.rs",
            "flush_wal",
            "/p/src/journal.rs",
            "journal.rs",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(ids, want);
    }

    #[test]
    fn await_use_keeps_the_first_injection_and_stays_bounded() {
        let mut st = ContextState::default();
        st.await_use(&[1, 2], 5);
        st.await_use(&[2, 3], 9);
        assert_eq!(
            st.pending,
            vec![
                PendingUse {
                    id: 1,
                    from_turn: 5
                },
                PendingUse {
                    id: 2,
                    from_turn: 5
                },
                PendingUse {
                    id: 3,
                    from_turn: 9
                },
            ]
        );
        let many: Vec<ChunkId> = (100..100 + MAX_PENDING as ChunkId).collect();
        st.await_use(&many, 10);
        assert_eq!(st.pending.len(), MAX_PENDING);
        assert_eq!(st.pending[0].id, 100, "the oldest were dropped");
    }

    #[test]
    fn old_state_files_still_load() {
        let old = r#"{"lost":true,"boundary_turn":7,"injected":[1,2],"recalled":[2]}"#;
        let st: ContextState = serde_json::from_str(old).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((st.boundary_turn, st.pending.len()), (7, 0));
    }
}
