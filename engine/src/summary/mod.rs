//! Extractive session summaries (no LLM): topics, files changed, commands, decisions, outcomes,
//! open items — built from the session's stored chunks, bounded to the last
//! [`SummaryConfig::max_turns`] turns so it is cheap enough for PreCompact and SessionEnd.
//!
//! Stored twice: the rendered text in [`SessionRecord::summary`](crate::store::SessionRecord)
//! (its first line is the one-line summary `memctl sessions` prints) and the structured
//! [`SessionSummary`] as JSON in the `session_summaries` table (which also keeps an optional
//! summary written by an external command, see [`external`]).

pub mod external;
mod extract;

pub use extract::{Block, blocks};
pub(crate) use extract::{edited_files, sentences};

use crate::core::Core;
use crate::error::{EngineError, StoreError};
use crate::store::{ChunkId, ChunkRecord, StoreReader, StoreWriter};
use crate::transcript::clip_line as clip;
use serde::{Deserialize, Serialize};

pub(crate) use crate::store::SUMMARIES;

/// Limits of the extractive summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SummaryConfig {
    /// Latest turns read (default 200).
    pub max_turns: usize,
    /// Topics kept (default 8).
    pub topics: usize,
    /// Files kept (default 20).
    pub files: usize,
    /// Commands kept, most recent (default 10).
    pub commands: usize,
    /// Decisions kept, most recent (default 8).
    pub decisions: usize,
    /// Outcomes kept, most recent turns (default 6).
    pub outcomes: usize,
    /// Open items kept (default 5).
    pub open_items: usize,
}

impl Default for SummaryConfig {
    fn default() -> Self {
        Self {
            max_turns: 200,
            topics: 8,
            files: 20,
            commands: 10,
            decisions: 8,
            outcomes: 6,
            open_items: 5,
        }
    }
}

/// Stored as JSON after the version byte: the summary is built, not searched, and JSON keeps
/// it readable in `memctl check` dumps; its fields evolve with `#[serde(default)]`.
impl crate::codec::Record for SessionSummary {
    const WHAT: &'static str = "session summary";
    const VERSION: u8 = 1;

    fn encode_body(&self) -> Result<Vec<u8>, crate::codec::CodecError> {
        serde_json::to_vec(self).map_err(|e| crate::codec::CodecError::Encode(e.to_string()))
    }

    fn decode_body(version: u8, body: &[u8]) -> Result<Self, crate::codec::CodecError> {
        if version != Self::VERSION {
            return Err(crate::codec::CodecError::Decode(format!(
                "session summary: unknown format version {version}"
            )));
        }
        serde_json::from_slice(body)
            .map_err(|e| crate::codec::CodecError::Decode(format!("session summary: {e}")))
    }
}

/// A structured session summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionSummary {
    /// Session id.
    pub session_id: String,
    /// Project (cwd).
    pub project: String,
    /// Turns in the session.
    pub turns: u32,
    /// Turns the summary was built from (the latest ones).
    pub turns_covered: u32,
    /// First timestamp.
    pub first_ts: Option<String>,
    /// Last timestamp.
    pub last_ts: Option<String>,
    /// Frequent informative words and identifiers, most frequent first.
    pub topics: Vec<String>,
    /// Files written by Edit / Write / MultiEdit / NotebookEdit (project-relative when inside).
    pub files_changed: Vec<String>,
    /// Bash commands, oldest first (the most recent ones).
    pub commands: Vec<String>,
    /// Assistant sentences with decision markers.
    pub decisions: Vec<String>,
    /// The last assistant line of the latest turns.
    pub outcomes: Vec<String>,
    /// Unanswered last prompt, TODO markers.
    pub open_items: Vec<String>,
    /// Summary written by `MEMCTL_SUMMARIZER_CMD` (`memctl summarize`), when one was made.
    #[serde(default)]
    pub abstractive: Option<String>,
}

impl SessionSummary {
    /// One line: topics, counts, latest outcome.
    pub fn one_line(&self) -> String {
        let mut parts = Vec::new();
        if !self.topics.is_empty() {
            parts.push(
                self.topics
                    .iter()
                    .take(4)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
            );
        }
        if !self.files_changed.is_empty() {
            let n = self.files_changed.len();
            parts.push(format!("{n} file{} changed", if n == 1 { "" } else { "s" }));
        }
        if let Some(o) = self.outcomes.last() {
            parts.push(format!("last: {}", clip(o, 90)));
        } else if let Some(o) = self.open_items.first() {
            parts.push(clip(o, 90));
        }
        if parts.is_empty() {
            "(nothing to summarize)".to_string()
        } else {
            parts.join(" · ")
        }
    }

    /// The full text (first line = [`Self::one_line`]).
    pub fn render(&self) -> String {
        let mut s = format!("Summary: {}\n", self.one_line());
        if let Some(a) = &self.abstractive {
            s.push_str("\nAbstract (external summariser):\n");
            s.push_str(a.trim());
            s.push('\n');
        }
        s.push_str(&format!(
            "\nExtractive summary of the latest {} of {} turns ({} → {})\n",
            self.turns_covered,
            self.turns,
            self.first_ts.as_deref().unwrap_or("-"),
            self.last_ts.as_deref().unwrap_or("-"),
        ));
        if !self.topics.is_empty() {
            s.push_str(&format!("Topics: {}\n", self.topics.join(", ")));
        }
        if !self.files_changed.is_empty() {
            s.push_str(&format!(
                "Files changed: {}\n",
                self.files_changed.join(", ")
            ));
        }
        if !self.commands.is_empty() {
            let c: Vec<String> = self.commands.iter().map(|c| format!("`{c}`")).collect();
            s.push_str(&format!("Commands: {}\n", c.join(", ")));
        }
        for (title, list) in [
            ("Decisions", &self.decisions),
            ("Outcomes", &self.outcomes),
            ("Open items", &self.open_items),
        ] {
            if list.is_empty() {
                continue;
            }
            s.push_str(&format!("{title}:\n"));
            for item in list {
                s.push_str(&format!("- {item}\n"));
            }
        }
        s
    }
}

/// The latest turns of a session (all parts of each turn), oldest first.
fn latest_turn_records(
    r: &StoreReader,
    session: &str,
    max_turns: usize,
) -> Result<Vec<(ChunkId, ChunkRecord)>, StoreError> {
    // Parts per turn are few; over-fetch keys and stop at `max_turns` distinct turns.
    let refs = r.session_turns_rev(session, max_turns.saturating_mul(4).max(8))?;
    let mut out = Vec::new();
    let mut turns = 0usize;
    let mut last_turn = None;
    for ((turn, _), id) in refs {
        if last_turn != Some(turn) {
            if turns == max_turns {
                break;
            }
            turns += 1;
            last_turn = Some(turn);
        }
        if let Some(rec) = r.chunk(id)? {
            out.push((id, rec));
        }
    }
    out.reverse();
    Ok(out)
}

/// Build the extractive summary of a session from the store (None when it has no turns).
pub(crate) fn build(
    r: &StoreReader,
    session: &str,
    cfg: &SummaryConfig,
) -> Result<Option<SessionSummary>, StoreError> {
    let Some(rec) = r.session(session)? else {
        return Ok(None);
    };
    let chunks = latest_turn_records(r, session, cfg.max_turns)?;
    if chunks.is_empty() {
        return Ok(None);
    }
    let recs: Vec<&ChunkRecord> = chunks.iter().map(|(_, c)| c).collect();
    let mut s = extract::extract(&recs, &rec.project, cfg);
    s.session_id = session.to_string();
    s.project = rec.project.clone();
    s.turns = rec.turns;
    s.first_ts = rec.first_ts.clone();
    s.last_ts = rec.last_ts.clone();
    s.abstractive = stored(r, session)?.and_then(|old| old.abstractive);
    Ok(Some(s))
}

/// The summary of `session` for a restore that wants `cfg`'s decisions and open items: the
/// stored one when it is current, else built from the latest `cfg.max_turns` turns.
///
/// Current: built at the session's present turn count and last timestamp (PreCompact leaves
/// it a moment before SessionStart(compact)), over at least the turns `cfg` reads, with the
/// default limits (hooks build with them), which hold at least as many items as `cfg` asks.
/// Its lists are cut to `cfg`'s: the newest decisions; the unanswered prompt, then the newest
/// open items. Why: building decodes every chunk of those turns, most of a restore's CPU.
pub(crate) fn current_or_build(
    r: &StoreReader,
    session: &str,
    cfg: &SummaryConfig,
) -> Result<Option<SessionSummary>, StoreError> {
    let Some(rec) = r.session(session)? else {
        return Ok(None);
    };
    let limits = SummaryConfig::default();
    let fits = cfg.decisions <= limits.decisions && cfg.open_items <= limits.open_items;
    let window = cfg
        .max_turns
        .min(rec.turns.saturating_sub(rec.compactions) as usize);
    if fits
        && let Some(mut s) = stored(r, session)?
        && s.turns == rec.turns
        && s.last_ts == rec.last_ts
        && s.turns_covered as usize >= window
    {
        keep_newest(&mut s, cfg);
        return Ok(Some(s));
    }
    build(r, session, cfg)
}

/// Cut a summary built with larger limits to `cfg`'s decisions and open items.
fn keep_newest(s: &mut SessionSummary, cfg: &SummaryConfig) {
    let cut = s.decisions.len().saturating_sub(cfg.decisions);
    s.decisions.drain(..cut);
    // The unanswered prompt leads the open items (see `extract`); TODO-like ones follow, oldest
    // first.
    let lead = usize::from(
        s.open_items
            .first()
            .is_some_and(|o| o.starts_with(extract::UNANSWERED)),
    );
    let keep = cfg.open_items.saturating_sub(lead);
    let todo = s.open_items.len() - lead;
    let cut = todo.saturating_sub(keep);
    s.open_items.drain(lead..lead + cut);
    s.open_items.truncate(cfg.open_items);
}

/// The stored structured summary of a session.
pub(crate) fn stored(r: &StoreReader, session: &str) -> Result<Option<SessionSummary>, StoreError> {
    let t = match r.raw_tx().open_table(SUMMARIES) {
        Ok(t) => t,
        Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
        Err(e) => return Err(redb::Error::from(e).into()),
    };
    let out = match t.get(session).map_err(redb::Error::from)? {
        Some(v) => Some(crate::codec::decode_record(v.value())?),
        None => None,
    };
    Ok(out)
}

/// Write a summary: the structured form and the rendered text in the session record.
pub(crate) fn put(w: &mut StoreWriter, s: &SessionSummary) -> Result<(), StoreError> {
    let bytes = crate::codec::encode_record(s)?;
    w.raw_tx()
        .open_table(SUMMARIES)
        .map_err(redb::Error::from)?
        .insert(s.session_id.as_str(), bytes.as_slice())
        .map_err(redb::Error::from)?;
    let text = s.render();
    w.update_session(&s.session_id, &s.project, |rec| rec.summary = Some(text))
}

/// Drop a session's stored structured summary (forget: it may quote what was forgotten).
/// Returns whether there was one.
pub(crate) fn drop_stored(w: &StoreWriter, session: &str) -> Result<bool, StoreError> {
    let mut t = w
        .raw_tx()
        .open_table(SUMMARIES)
        .map_err(redb::Error::from)?;
    let removed = t.remove(session).map_err(redb::Error::from)?.is_some();
    Ok(removed)
}

/// [`put`], unless a forget ran since `epoch` was read: the summary was built from chunks that
/// may be forgotten now, and writing it would store their text again. Returns whether it was
/// written.
pub(crate) fn put_unless_forgotten(
    w: &mut StoreWriter,
    s: &SessionSummary,
    epoch: u64,
) -> Result<bool, StoreError> {
    if w.forget_epoch()? != epoch {
        tracing::info!(session = %s.session_id, "summary not stored: a forget ran while it was built");
        return Ok(false);
    }
    put(w, s)?;
    Ok(true)
}

/// Build and store the summary of a session (hooks: PreCompact, SessionEnd). Returns it.
pub(crate) fn summarize_session(
    engine: &Core,
    session: &str,
    cfg: &SummaryConfig,
) -> Result<Option<SessionSummary>, EngineError> {
    let (built, epoch) = {
        let r = engine.store().read()?;
        (build(&r, session, cfg)?, r.forget_epoch()?)
    };
    if let Some(s) = &built {
        engine
            .store()
            .write(|w| put_unless_forgotten(w, s, epoch))?;
    }
    Ok(built)
}

/// `memctl summarize`: the extractive summary, plus an abstract from the external summariser
/// when `ext` has a command. Stores and returns the result. Never called from hooks.
pub(crate) fn summarize_with_external(
    engine: &Core,
    session: &str,
    cfg: &SummaryConfig,
    ext: &external::ExternalConfig,
) -> Result<Option<SessionSummary>, EngineError> {
    let (built, recent, epoch) = {
        let r = engine.store().read()?;
        let Some(s) = build(&r, session, cfg)? else {
            return Ok(None);
        };
        let texts: Vec<String> = latest_turn_records(&r, session, 20)?
            .into_iter()
            .map(|(_, c)| c.chunk.text)
            .collect();
        (s, texts, r.forget_epoch()?)
    };
    let mut s = built;
    if ext.command.is_some() {
        let mut extractive = s.clone();
        extractive.abstractive = None;
        let input = external::prompt(&extractive.render(), &recent);
        s.abstractive = Some(
            external::run(ext, &input)
                .map_err(|e| EngineError::Invalid(format!("external summariser: {e}")))?,
        );
    }
    if !engine
        .store()
        .write(|w| put_unless_forgotten(w, &s, epoch))?
    {
        return Err(EngineError::Invalid(format!(
            "session {session}: a forget ran while the summary was made; run `memctl summarize` again"
        )));
    }
    Ok(Some(s))
}

/// Hook step (PreCompact, SessionEnd, after the archive step): refresh the session's summary
/// unless the deadline has passed. Failures are logged, never returned: a summary is not worth
/// failing a hook for.
pub(crate) fn on_hook(
    engine: &Core,
    session: &str,
    cfg: &SummaryConfig,
    deadline: std::time::Instant,
) {
    if session.is_empty() || std::time::Instant::now() >= deadline {
        return;
    }
    if let Err(e) = summarize_session(engine, session, cfg) {
        tracing::warn!(session, error = %e, "session summary not updated");
    }
}

#[cfg(test)]
mod tests;
