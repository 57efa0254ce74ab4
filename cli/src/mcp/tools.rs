//! What each tool of `memctl mcp` does, as plain functions over the [`Engine`]: synchronous
//! (the server runs them on tokio's blocking pool) and testable without a transport.
//!
//! Index first: `search`, `timeline`, `sessions` and `session_summary` answer with one line per
//! turn (≈ 50–100 tokens each); the agent pays for full text only when it asks (`get`,
//! `tool_output`).

use super::types::*;
use anyhow::{Context, Result, bail};
use memctl_engine::{
    ChunkRecord, Engine, MemoryConfig, NoteKind as EngineNoteKind, SearchRequest, SessionRecord,
    SwapContent,
};
use std::path::PathBuf;

/// Longest gist (one line of a hit, a turn or a session).
const GIST_CHARS: usize = 200;
/// Most hits of one search.
const MAX_K: usize = 20;
/// Most chunks of one `get`.
const MAX_GET: usize = 10;
/// Most turns on either side of a `timeline`.
const MAX_SIDE: u32 = 20;
/// Most text one `tool_output` returns (≈ 5k tokens; Claude Code warns above 10k tokens).
pub const MAX_OUTPUT_CHARS: usize = 20_000;
/// Longest compaction summary returned by `session_summary`.
const COMPACT_SUMMARY_CHARS: usize = 2_000;
/// Most chunk ids of one `forget`.
const MAX_FORGET: usize = 20;

// Every string argument is bounded, in bytes, and one over its bound fails the call at once
// naming the bound: the model never needs more, and an unbounded query cost seconds of
// tokenizing and scoring per megabyte (8 MB: 22 s) with the server busy all along. The
// schema carries the same bounds (`maxLength` in types.rs). Numbers are clamped instead
// (`k`, `before`, `after`, `limit`, `turns`), as their descriptions say; id lists are
// bounded by MAX_GET and MAX_FORGET. The size of a whole message is bounded by the transport
// ([`super::MAX_MESSAGE_BYTES`]).

/// Longest `search` query: a question or a handful of rare words fit many times over.
pub const MAX_QUERY_BYTES: usize = 4 << 10;
/// Longest `file` filter (a path: Linux's PATH_MAX).
pub const MAX_PATH_BYTES: usize = 4 << 10;
/// Longest short argument: a session id or prefix, a tool name, a time, a tool output's id.
pub const MAX_NAME_BYTES: usize = 256;
/// Longest `remember` text as given. The note kept is at most 500 characters once whitespace
/// is folded and secrets are replaced by markers (a pasted key block shrinks), which the
/// memory module checks; this bound only spares it the redaction of megabytes.
pub const MAX_NOTE_INPUT_BYTES: usize = 64 << 10;

/// Fail when `value` of argument `field` is longer than `max` bytes.
fn bounded(field: &str, value: &str, max: usize) -> Result<()> {
    if value.len() > max {
        bail!(
            "argument `{field}` is too long: {} bytes, the limit is {max} bytes",
            value.len()
        );
    }
    Ok(())
}

/// [`bounded`] for an optional argument.
fn bounded_opt(field: &str, value: Option<&str>, max: usize) -> Result<()> {
    value.map_or(Ok(()), |v| bounded(field, v, max))
}

/// What every tool call knows besides its input.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// The project: `CLAUDE_PROJECT_DIR`, else the server's working directory.
    pub project: String,
    /// Where `remember` writes (the user's `MEMCTL_MEMORY_DIR`, else the project's).
    pub memory: MemoryConfig,
    /// Keep the int8 vector blocks in memory between searches (`MEMCTL_MCP_RESIDENT_VECTORS`).
    pub resident_vectors: bool,
    /// The settings (scope=team reads the team store's connection from them).
    pub settings: memctl_engine::Settings,
}

/// scope=team: the team store's hybrid search ([`crate::team::team_search`]); the hits carry
/// the teammate and project, and no local id (0).
fn team_search(engine: &Engine, ctx: &Ctx, query: &str, k: usize) -> Result<SearchOutput> {
    let found = crate::team::team_search(engine, &ctx.settings, query, k, None)?;
    let note = found
        .is_empty()
        .then(|| "nothing matched in the projects teammates share with you".to_string());
    let hits = found
        .into_iter()
        .map(|h| Hit {
            id: 0,
            session: short(&h.session),
            turn: u32::try_from(h.turn).unwrap_or(0),
            time: minute(h.started_at.as_deref()),
            age: age(h.started_at.as_deref()),
            gist: gist(if h.summary.is_empty() {
                &h.text
            } else {
                &h.summary
            }),
            tools: Vec::new(),
            agent: None,
            score: (h.score * 1000.0).round() / 1000.0,
            confidence: None,
            confident: None,
            lines: Vec::new(),
            superseded_by: None,
            copies: None,
            teammate: Some(h.author),
            project: Some(h.project),
        })
        .collect();
    Ok(SearchOutput { hits, note })
}

/// A session id cut to 8 characters.
fn short(id: &str) -> String {
    id.get(..8).unwrap_or(id).to_string()
}

/// How long before now a stored time was ("3 days ago").
fn age(ts: Option<&str>) -> Option<String> {
    memctl_engine::age(ts?, jiff::Timestamp::now())
}

/// RFC 3339 cut to the minute (`2025-01-31T10:22`): seconds cost tokens and say nothing here.
fn minute(ts: Option<&str>) -> Option<String> {
    ts.map(|t| t.get(..16).unwrap_or(t).to_string())
}

fn gist(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    memctl_engine::ellipsize(line.trim(), GIST_CHARS).into_owned()
}

fn turn_line(id: u64, rec: &ChunkRecord, hit: bool) -> TurnLine {
    let c = &rec.chunk;
    TurnLine {
        id,
        turn: c.turn_index,
        time: minute(c.started_at.as_deref()),
        gist: gist(&c.summary),
        hit,
    }
}

/// The one session `prefix` names (a full id or a unique prefix), optionally in one project.
fn resolve_session(
    engine: &Engine,
    prefix: &str,
    project: Option<&str>,
) -> Result<(String, SessionRecord)> {
    let prefix = prefix.trim();
    if prefix.is_empty() {
        bail!("empty session id");
    }
    if let Some(s) = engine.session(prefix)? {
        return Ok((prefix.to_string(), s));
    }
    let mut found: Vec<(String, SessionRecord)> = engine
        .sessions()?
        .into_iter()
        .filter(|(id, s)| id.starts_with(prefix) && project.is_none_or(|p| s.project == p))
        .collect();
    match found.len() {
        0 => bail!("no archived session starts with {prefix:?} (list them with `sessions`)"),
        1 => Ok(found.remove(0)),
        n => bail!("{n} sessions start with {prefix:?}: give more characters"),
    }
}

/// The project's sessions, newest first.
fn project_sessions(
    engine: &Engine,
    project: Option<&str>,
) -> Result<Vec<(String, SessionRecord)>> {
    let mut list = engine.sessions()?;
    if let Some(p) = project {
        list.retain(|(_, s)| s.project == p);
    }
    list.sort_by(|a, b| b.1.last_ts.cmp(&a.1.last_ts).then(a.0.cmp(&b.0)));
    Ok(list)
}

/// `search`.
pub fn search(engine: &Engine, ctx: &Ctx, input: SearchInput) -> Result<SearchOutput> {
    bounded("query", &input.query, MAX_QUERY_BYTES)?;
    bounded_opt("session", input.session.as_deref(), MAX_NAME_BYTES)?;
    bounded_opt("tool", input.tool.as_deref(), MAX_NAME_BYTES)?;
    bounded_opt("file", input.file.as_deref(), MAX_PATH_BYTES)?;
    bounded_opt("since", input.since.as_deref(), MAX_NAME_BYTES)?;
    bounded_opt("agent", input.agent.as_deref(), MAX_NAME_BYTES)?;
    if input.query.trim().is_empty() {
        bail!("empty query: give words or a question");
    }
    let k = input.k.unwrap_or(5).clamp(1, MAX_K);
    if input.scope == Scope::Team {
        return team_search(engine, ctx, &input.query, k);
    }
    let mut req = SearchRequest::new(input.query.clone(), k);
    req.agent = input
        .agent
        .as_deref()
        .map(|a| memctl_hooks::agent::parse_agent(a).map_err(anyhow::Error::msg))
        .transpose()?;
    req.tool = input.tool;
    req.file = input.file;
    req.since = input
        .since
        .as_deref()
        .map(|v| memctl_engine::parse_time("since", v, jiff::Timestamp::now()))
        .transpose()?;
    match input.scope {
        Scope::All | Scope::Team => {}
        Scope::Project => req.projects = vec![ctx.project.clone()],
        Scope::Session => {
            req.projects = vec![ctx.project.clone()];
            let id = match input.session.as_deref() {
                Some(p) => resolve_session(engine, p, Some(&ctx.project))?.0,
                None => project_sessions(engine, Some(&ctx.project))?
                    .into_iter()
                    .next()
                    .map(|(id, _)| id)
                    .with_context(|| format!("no session archived for {}", ctx.project))?,
            };
            req.session = Some(id);
        }
    }
    let found = engine.search(&req)?;
    let hits: Vec<Hit> = found
        .results
        .iter()
        .map(|r| {
            let c = &r.record.chunk;
            let mut hit = Hit {
                id: r.id,
                session: short(&c.session_id),
                turn: c.turn_index,
                time: minute(c.started_at.as_deref()),
                age: age(c.started_at.as_deref()),
                gist: gist(&c.summary),
                tools: c.tools.clone(),
                agent: (r.agent != memctl_engine::Agent::ClaudeCode).then(|| r.agent.to_string()),
                // f64: an f32 widened by the client's JSON would print 0.8999999761581421.
                score: (f64::from(r.scores.score) * 1000.0).round() / 1000.0,
                confidence: Some((f64::from(r.confidence) * 1000.0).round() / 1000.0),
                confident: Some(r.confident),
                lines: Vec::new(),
                superseded_by: r.superseded_by,
                copies: r.copies.label(),
                teammate: None,
                project: None,
            };
            hit.lines = best_line(&hit, &c.text, &input.query, &c.summary);
            hit
        })
        .collect();
    let note = match (&found.degraded, hits.is_empty(), input.scope) {
        (_, true, _) if !found.excluded_by.is_empty() => Some(format!(
            "the query matched, but the filters excluded every match: {}",
            found.excluded_by.join(", ")
        )),
        (Some(d), _, _) => Some(d.clone()),
        (None, true, Scope::All) => Some("nothing matched: try other words".into()),
        (None, true, _) => Some("nothing matched here: try scope=all or other words".into()),
        (None, false, _) if !found.results.iter().any(|r| r.confident) => Some(format!(
            "no confident match: every hit is weak (confidence below {:.2}); try other words",
            memctl_engine::RECALL_CONFIDENT
        )),
        (None, false, _) => None,
    };
    Ok(SearchOutput { hits, note })
}

/// Characters one hit may take (about 100 tokens: the agent reads every hit it asks for).
const HIT_CHARS: usize = 400;
/// A matched line shorter than this is not worth showing.
const LINE_MIN_CHARS: usize = 40;

/// The best matched line of a hit, clipped to what `hit` leaves of [`HIT_CHARS`]; none when
/// less than [`LINE_MIN_CHARS`] is left.
fn best_line(hit: &Hit, text: &str, query: &str, summary: &str) -> Vec<String> {
    let used = serde_json::to_string(hit).map_or(HIT_CHARS, |s| s.chars().count());
    // `,"lines":[""]`
    let room = HIT_CHARS.saturating_sub(used + 14);
    let Some(best) = memctl_engine::matched_lines(text, query, summary)
        .into_iter()
        .next()
    else {
        return Vec::new();
    };
    // JSON escapes (quotes, backslashes, control characters) lengthen the line: clip until the
    // escaped line fits.
    let mut max = room;
    while max >= LINE_MIN_CHARS {
        let line = memctl_engine::ellipsize(&best, max);
        let escaped = serde_json::to_string(&line).map_or(usize::MAX, |j| j.chars().count() - 2);
        if escaped <= room {
            return vec![line.into_owned()];
        }
        max = max.saturating_sub(escaped.saturating_sub(room).max(1));
    }
    Vec::new()
}

/// `get`.
pub fn get(engine: &Engine, input: GetInput) -> Result<GetOutput> {
    if input.ids.is_empty() {
        bail!("no ids: pass chunk ids from `search` or `timeline`");
    }
    if input.ids.len() > MAX_GET {
        bail!(
            "{} ids asked; at most {MAX_GET} per call (open the best hits first)",
            input.ids.len()
        );
    }
    let mut out = GetOutput {
        chunks: Vec::new(),
        missing: Vec::new(),
    };
    for &id in &input.ids {
        let Some(rec) = engine.chunk(id)? else {
            out.missing.push(id);
            continue;
        };
        let c = rec.chunk;
        out.chunks.push(FullChunk {
            id,
            session: c.session_id,
            turn: c.turn_index,
            part: (c.parts > 1).then(|| format!("{}/{}", c.part + 1, c.parts)),
            time: minute(c.started_at.as_deref()),
            tools: c.tools,
            files: c.files,
            text: c.text,
        });
    }
    // Opened chunks are "used": they decay slower and are pruned last.
    let opened: Vec<u64> = out.chunks.iter().map(|c| c.id).collect();
    if let Err(e) = engine.record_access(&opened) {
        tracing::warn!(error = %e, "recording the access of opened chunks failed");
    }
    Ok(out)
}

/// `timeline`.
pub fn timeline(engine: &Engine, input: TimelineInput) -> Result<TimelineOutput> {
    let Some(rec) = engine.chunk(input.id)? else {
        bail!(
            "no chunk with id {} (pruned, or not an id from `search`)",
            input.id
        );
    };
    let (before, after) = (
        input.before.unwrap_or(3).min(MAX_SIDE),
        input.after.unwrap_or(3).min(MAX_SIDE),
    );
    let session = rec.chunk.session_id.clone();
    let turn = rec.chunk.turn_index;
    let window = engine.session_window(
        &session,
        turn.saturating_sub(before),
        turn.saturating_add(after),
    )?;
    let mut turns: Vec<TurnLine> = Vec::new();
    for (((t, _), id), r) in &window {
        if turns.last().is_some_and(|l| l.turn == *t) {
            continue; // one line per turn: its first part
        }
        turns.push(turn_line(*id, r, *t == turn));
    }
    Ok(TimelineOutput { session, turns })
}

/// `tool_output`.
pub fn tool_output(engine: &Engine, input: ToolOutputInput) -> Result<ToolOutputOutput> {
    bounded("id", &input.id, MAX_NAME_BYTES)?;
    let id = input.id.trim();
    if id.len() < 4 {
        bail!("give at least 4 characters of the output's id");
    }
    let SwapContent { entries, text } = engine.swap_show(id, memctl_engine::unix_now())?;
    let entry = entries
        .first()
        .with_context(|| format!("no stored tool output {id:?}"))?;
    let total_lines = text.lines().count() as u64;
    let (start, end, range) = if input.line_start.is_some() || input.line_end.is_some() {
        let first = input.line_start.unwrap_or(1).max(1);
        let last = input.line_end.unwrap_or(total_lines).min(total_lines);
        if first > last {
            bail!("lines {first}-{last}: the output has {total_lines} lines");
        }
        let (s, e) = memctl_engine::line_span(&text, first, last);
        (s, e, format!("lines {first}-{last}"))
    } else {
        let len = text.len() as u64;
        let s = input.byte_start.unwrap_or(0).min(len) as usize;
        let e = input.byte_end.unwrap_or(len).min(len) as usize;
        if s > e {
            bail!("bytes {s}-{e}: start after end");
        }
        (floor_char(&text, s), floor_char(&text, e), String::new())
    };
    let slice = &text[start..end];
    let (text_out, next, range) = if slice.len() > MAX_OUTPUT_CHARS {
        let cut = floor_char(slice, MAX_OUTPUT_CHARS);
        let cut = slice[..cut].rfind('\n').map_or(cut, |i| i + 1);
        let stop = start + cut;
        (
            slice[..cut].to_string(),
            Some(format!("byte_start={stop}, byte_end={end}")),
            format!("bytes {start}-{stop} (cut at {MAX_OUTPUT_CHARS} chars)"),
        )
    } else if range.is_empty() {
        (slice.to_string(), None, format!("bytes {start}-{end}"))
    } else {
        (slice.to_string(), None, range)
    };
    Ok(ToolOutputOutput {
        id: entry.short_id().to_string(),
        tool: entry.tool.clone(),
        input: entry.input_summary.clone(),
        total_bytes: text.len() as u64,
        total_lines,
        range,
        text: text_out,
        next,
    })
}

/// The largest char boundary of `s` at or below `i`.
fn floor_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// `sessions`.
pub fn sessions(engine: &Engine, ctx: &Ctx, input: SessionsInput) -> Result<SessionsOutput> {
    let all = input.scope == Some(Scope::All);
    if input.scope == Some(Scope::Session) {
        bail!("scope for `sessions` is project or all");
    }
    let limit = input.limit.unwrap_or(20).clamp(1, 100);
    let list = project_sessions(engine, (!all).then_some(ctx.project.as_str()))?;
    let more = list.len().saturating_sub(limit);
    let sessions = list
        .into_iter()
        .take(limit)
        .map(|(id, s)| SessionLine {
            id,
            project: all.then(|| s.project.clone()),
            turns: s.turns,
            first: minute(s.first_ts.as_deref()),
            last: minute(s.last_ts.as_deref()),
            gist: s
                .summary
                .as_deref()
                .map(|t| gist(t.trim_start_matches("Summary: "))),
        })
        .collect();
    Ok(SessionsOutput { sessions, more })
}

/// `session_summary`.
pub fn session_summary(
    engine: &Engine,
    input: SessionSummaryInput,
) -> Result<SessionSummaryOutput> {
    bounded("session", &input.session, MAX_NAME_BYTES)?;
    let (id, s) = resolve_session(engine, &input.session, None)?;
    let n = input.turns.unwrap_or(30).clamp(1, 200);
    let mut recent_turns: Vec<TurnLine> = Vec::new();
    if let Some(last) = engine.last_turn(&id)? {
        for (((t, _), cid), r) in engine.session_window(&id, last.saturating_sub(n - 1), last)? {
            if recent_turns.last().is_none_or(|l| l.turn != t) {
                recent_turns.push(turn_line(cid, &r, false));
            }
        }
    }
    Ok(SessionSummaryOutput {
        project: s.project,
        turns: s.turns,
        first: minute(s.first_ts.as_deref()),
        last: minute(s.last_ts.as_deref()),
        compactions: s.compactions,
        summary: s.summary,
        compact_summary: s
            .compact_summary
            .map(|c| memctl_engine::ellipsize(&c, COMPACT_SUMMARY_CHARS).into_owned()),
        recent_turns,
        id,
    })
}

/// `remember`.
pub fn remember(ctx: &Ctx, input: RememberInput) -> Result<RememberOutput> {
    bounded("text", &input.text, MAX_NOTE_INPUT_BYTES)?;
    let kind = match input.kind {
        NoteKind::Decision => EngineNoteKind::Decision,
        NoteKind::Gotcha => EngineNoteKind::Gotcha,
        NoteKind::Feedback => EngineNoteKind::Feedback,
        NoteKind::State => EngineNoteKind::State,
    };
    let project = PathBuf::from(&ctx.project);
    let noted = memctl_engine::append_note(
        &project,
        kind,
        &input.text,
        &ctx.memory,
        memctl_engine::unix_now(),
    )?;
    let file = noted
        .path
        .strip_prefix(&project)
        .unwrap_or(&noted.path)
        .display()
        .to_string();
    Ok(RememberOutput {
        file,
        line: noted.line,
        redacted: noted.redactions,
    })
}

/// `forget`: the turns of `ids`, removed for good through the same path as `memctl forget`
/// (tombstones, stored outputs of those turns, the store file rewritten). An id that names no
/// chunk fails the whole call: nothing is removed on a guess.
pub fn forget(engine: &Engine, input: ForgetInput) -> Result<ForgetOutput> {
    if input.ids.is_empty() {
        bail!("no ids: pass the chunk ids of the turns to forget (from `search` or `timeline`)");
    }
    if input.ids.len() > MAX_FORGET {
        bail!(
            "{} ids given; at most {MAX_FORGET} per call",
            input.ids.len()
        );
    }
    let req = memctl_engine::ForgetRequest {
        chunk_ids: input.ids,
        ..Default::default()
    };
    let rep = engine.forget(&req, false)?;
    let deleted = rep.backups.deleted().count();
    let mut note = "Removed from memctl's archive for good (re-archiving the transcript will not \
                    bring them back). Claude Code's own transcript files still hold these turns; \
                    memctl does not delete them."
        .to_string();
    if deleted > 0 {
        note.push_str(&format!(
            " {deleted} backup(s) in memctl's data dir held them and were deleted."
        ));
    }
    Ok(ForgetOutput {
        turns: rep
            .turn_lines
            .iter()
            .map(|l| ForgottenTurn {
                id: l.id,
                session: short(&l.session),
                turn: l.turn,
                time: l.time.clone(),
                gist: gist(&l.gist),
            })
            .collect(),
        chunks: rep.chunks,
        removed_ids: rep.removed_ids,
        tool_outputs: rep.tool_outputs,
        sessions_removed: rep.sessions_removed,
        note,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use memctl_engine::line_span;

    #[test]
    fn line_spans_cover_whole_lines() {
        let t = "a\nbb\nccc\n";
        assert_eq!(
            &t[{
                let (s, e) = line_span(t, 2, 3);
                s..e
            }],
            "bb\nccc\n"
        );
        assert_eq!(
            &t[{
                let (s, e) = line_span(t, 1, 1);
                s..e
            }],
            "a\n"
        );
        let u = "x\ny";
        assert_eq!(
            &u[{
                let (s, e) = line_span(u, 2, 2);
                s..e
            }],
            "y"
        );
    }

    #[test]
    fn char_floor_stays_on_boundaries() {
        let s = "aé";
        assert_eq!(floor_char(s, 2), 1);
        assert_eq!(floor_char(s, 3), 3);
        assert_eq!(floor_char(s, 9), 3);
    }

    #[test]
    fn minutes_and_short_ids() {
        assert_eq!(
            minute(Some("2025-01-31T10:22:03.123Z")).as_deref(),
            Some("2025-01-31T10:22")
        );
        assert_eq!(short("db5b5fab-8f4d"), "db5b5fab");
        assert_eq!(short("abc"), "abc");
    }
}
