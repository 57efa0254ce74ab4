//! When an event a query names happened ("before the migration"): a small lexical search of
//! the event's words over the searched projects, read as the earliest turn that matches them
//! strongly.
//!
//! Why the earliest strong match and not the best one: an event is talked about again after it
//! happened ("since the migration the tests are slow"), and each later mention would move the
//! window past turns that came after the event. Why strong: a turn that only shares a word
//! with the event ("write the migration for the users table" for "the postgres migration") or
//! mentions it once in a long turn is not where it happened; a strong match holds most of the
//! event's words ([`EVENT_COVERAGE`]) and scores close to the best match ([`EVENT_SCORE_SHARE`]),
//! which favours the turn that is about the event. Known limit: a turn that planned the event
//! in the same words ("let's plan the postgres migration") is earlier and reads as the event.

use super::Retriever;
use super::when::EventTurn;
use crate::error::StoreError;

/// BM25 hits of the event's words read.
const EVENT_CANDIDATES: usize = 50;
/// A strong match holds at least this share of the event words' idf mass.
const EVENT_COVERAGE: f32 = 0.75;
/// A strong match's BM25 score is at least this share of the best match's. At 0.5, generated
/// turns that wrote a schema migration (the word once, in a long turn: 0.51 and 0.57 of the
/// best) read as "the migration" in the labelled set (`time_aware.rs`); the turns about the
/// event score 0.95 and more.
const EVENT_SCORE_SHARE: f32 = 0.75;

impl Retriever<'_> {
    /// The turn read as the event `words` in `project_ids`: the earliest strong match that
    /// started before `now` (stored form; a turn after the question cannot be its event), not a
    /// compaction summary. `None` when no turn matches strongly.
    pub(crate) fn event_turn(
        &self,
        project_ids: &[u32],
        words: &str,
        now: &str,
    ) -> Result<Option<EventTurn>, StoreError> {
        if project_ids.is_empty() || words.trim().is_empty() {
            return Ok(None);
        }
        let lex = self.lexical(project_ids, words, EVENT_CANDIDATES)?;
        let Some(best) = lex.hits.first().map(|h| h.score) else {
            return Ok(None);
        };
        let mut found: Option<EventTurn> = None;
        for (h, coverage) in lex.hits.iter().zip(&lex.hit_coverage) {
            if *coverage < EVENT_COVERAGE || h.score < EVENT_SCORE_SHARE * best {
                continue;
            }
            let Some(rec) = self.reader.chunk(h.id)? else {
                continue;
            };
            let c = rec.chunk;
            tracing::debug!(chunk = h.id, score = h.score, best, coverage, at = ?c.started_at, "event candidate");
            let Some(started) = c.started_at.filter(|t| t.as_str() < now) else {
                continue;
            };
            if c.is_compact_summary || found.as_ref().is_some_and(|f| f.started_at <= started) {
                continue;
            }
            found = Some(EventTurn {
                chunk: h.id,
                session_id: c.session_id,
                turn_index: c.turn_index,
                started_at: started,
            });
        }
        Ok(found)
    }
}
