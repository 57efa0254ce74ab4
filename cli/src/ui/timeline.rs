//! The timeline: projects → sessions (paged) → one session's turns (paged by turn range, read
//! with one range scan: a 5,000-turn session is never loaded whole), with compaction boundaries
//! and what each hook injected at that point (the session's telemetry file).

use super::page::{self, PAGE, clip, link, minute, short, unix_minute};
use super::{Q, Shared, UiError, blocking};
use axum::extract::State;
use maud::{Markup, html};
use memctl_engine::{ChunkRecord, HookInjection, SessionRecord, TelemetryRecord, TurnRef};
use serde::Deserialize;
use std::collections::BTreeMap;

/// `/?project=&page=`.
#[derive(Debug, Deserialize)]
pub(super) struct IndexQuery {
    #[serde(default)]
    project: String,
    #[serde(default)]
    page: usize,
}

/// One row of the sessions list.
struct Row {
    id: String,
    rec: SessionRecord,
    title: String,
}

pub(super) async fn index(
    State(ctx): State<Shared>,
    Q(q): Q<IndexQuery>,
) -> Result<Markup, UiError> {
    page::bounded("project", &q.project)?;
    blocking(&ctx, move |c| {
        let mut all = c.engine.sessions()?;
        let mut projects: BTreeMap<String, (usize, u64)> = BTreeMap::new();
        for (_, s) in &all {
            let e = projects.entry(s.project.clone()).or_default();
            e.0 += 1;
            e.1 += u64::from(s.turns);
        }
        if !q.project.is_empty() {
            all.retain(|(_, s)| s.project == q.project);
        }
        all.sort_by(|a, b| b.1.last_ts.cmp(&a.1.last_ts).then(a.0.cmp(&b.0)));
        let total = all.len();
        let start = q.page.saturating_mul(PAGE).min(total);
        let more = start + PAGE < total;
        let mut rows = Vec::new();
        for (id, rec) in all.into_iter().skip(start).take(PAGE) {
            // The title: the session's first archived prompt (one short range read).
            let title = c
                .engine
                .session_window(&id, 0, 4)?
                .first()
                .map(|(_, r)| r.chunk.summary.clone())
                .unwrap_or_default();
            rows.push(Row { id, rec, title });
        }
        Ok(page::layout(
            "Timeline",
            "timeline",
            html! {
                h1 { "Timeline" }
                div.cols {
                    aside.side {
                        h2 { "Projects" }
                        ul {
                            li { a href=(link("/", &[])) { "All projects" } " " span.muted { "(" (projects.values().map(|p| p.0).sum::<usize>()) ")" } }
                            @for (p, (n, turns)) in &projects {
                                li {
                                    a href=(link("/", &[("project", p)])) { (p) }
                                    br; span.muted { (n) " sessions · " (turns) " turns · " }
                                    a.muted href=(link("/memory", &[("project", p)])) { "memory files" }
                                }
                            }
                        }
                    }
                    div.grow {
                        h2 {
                            @if q.project.is_empty() { "Sessions" } @else { "Sessions of " (q.project) }
                            " " span.muted { "(" (total) ")" }
                        }
                        @if rows.is_empty() { p.muted { "No session archived yet." } }
                        @else { (sessions_table(&rows)) }
                        (page::pager("/", &[("project", &q.project)], q.page, more))
                    }
                }
            },
        ))
    })
    .await
}

fn sessions_table(rows: &[Row]) -> Markup {
    html! {
        table #sessions {
            tr { th { "Session" } th { "Time span (UTC)" } th { "Turns" } th { "Compactions" } th { "Summary" } }
            @for r in rows {
                tr {
                    td {
                        a.session-link href=(link("/session", &[("id", &r.id)])) {
                            @if r.title.is_empty() { (short(&r.id)) } @else { (clip(&r.title, 90)) }
                        }
                        br; span.muted { (short(&r.id)) " · " (r.rec.agent.as_str()) " · " (r.rec.project) }
                    }
                    td { (minute(r.rec.first_ts.as_deref())) br; "→ " (minute(r.rec.last_ts.as_deref())) }
                    td { (r.rec.turns) }
                    td { (r.rec.compactions) }
                    td.muted {
                        (clip(r.rec.summary.as_deref().and_then(|s| s.lines().next()).unwrap_or("").trim_start_matches("Summary: "), 160))
                    }
                }
            }
        }
    }
}

/// `/session?id=&from=`.
#[derive(Debug, Deserialize)]
pub(super) struct SessionQuery {
    #[serde(default)]
    id: String,
    /// First turn index shown (pages are aligned to [`PAGE`]).
    #[serde(default)]
    from: u32,
}

/// A turn: its parts in order.
struct Turn {
    index: u32,
    parts: Vec<(u64, ChunkRecord)>,
}

fn group(window: Vec<(TurnRef, ChunkRecord)>) -> Vec<Turn> {
    let mut out: Vec<Turn> = Vec::new();
    for (((turn, _), id), rec) in window {
        match out.last_mut() {
            Some(t) if t.index == turn => t.parts.push((id, rec)),
            _ => out.push(Turn {
                index: turn,
                parts: vec![(id, rec)],
            }),
        }
    }
    out
}

fn unix(ts: Option<&str>) -> Option<i64> {
    ts?.parse::<jiff::Timestamp>().ok().map(|t| t.as_second())
}

pub(super) async fn session(
    State(ctx): State<Shared>,
    Q(q): Q<SessionQuery>,
) -> Result<Markup, UiError> {
    page::bounded("id", &q.id)?;
    if q.id.is_empty() {
        return Err(UiError::bad("which session? (`id` is missing)"));
    }
    blocking(&ctx, move |c| {
        let Some(rec) = c.engine.session(&q.id)? else {
            return Err(UiError::not_found(format!("no session with id {:?}", q.id)));
        };
        let from = q.from - q.from % PAGE as u32;
        let to = from.saturating_add(PAGE as u32);
        // One turn past the page: its start bounds the injections shown on this page.
        let mut turns = group(c.engine.session_window(&q.id, from, to)?);
        let next_start = match turns.last() {
            Some(t) if t.index >= to => {
                let s = unix(t.parts[0].1.chunk.started_at.as_deref());
                turns.pop();
                Some(s.unwrap_or(i64::MAX))
            }
            _ => None,
        };
        let log = memctl_engine::read_session_telemetry(&c.engine.options().data_dir, &q.id)
            .unwrap_or_else(|e| {
                tracing::warn!(error = %e, "telemetry unreadable");
                None
            });
        let hooks: Vec<HookInjection> = log
            .map(|l| l.records)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|r| match r {
                TelemetryRecord::Hook(h) if !h.injection.is_empty() => Some(h),
                _ => None,
            })
            .collect();
        let cpt = c.settings.autopilot.chars_per_token.max(0.1);
        Ok(page::layout(
            &format!("Session {}", short(&q.id)),
            "timeline",
            session_page(&q.id, &rec, from, &turns, &hooks, next_start, cpt),
        ))
    })
    .await
}

fn tokens(chars: u64, cpt: f32) -> u64 {
    (chars as f64 / f64::from(cpt)).round() as u64
}

fn injection(h: &HookInjection, cpt: f32) -> Markup {
    let i = &h.injection;
    html! {
        div.inject {
            strong { (h.hook) } " at " (unix_minute(h.at)) " UTC: "
            @if i.injected_chars > 0 { "injected ~" (tokens(i.injected_chars, cpt)) " tokens into the context " }
            @if i.summarizer_chars > 0 { "gave the summariser ~" (tokens(i.summarizer_chars, cpt)) " tokens of instructions " }
            @if i.removed_chars > 0 { "took ~" (tokens(i.removed_chars, cpt)) " tokens of tool output out of the context (swap)" }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn session_page(
    id: &str,
    rec: &SessionRecord,
    from: u32,
    turns: &[Turn],
    hooks: &[HookInjection],
    next_start: Option<i64>,
    cpt: f32,
) -> Markup {
    let injected: u64 = hooks.iter().map(|h| h.injection.injected_chars).sum();
    let page_hooks: Vec<&HookInjection> = hooks
        .iter()
        .filter(|h| next_start.is_none_or(|n| h.at < n))
        .collect();
    let first_start = turns
        .first()
        .and_then(|t| unix(t.parts[0].1.chunk.started_at.as_deref()));
    let prev = from.checked_sub(PAGE as u32);
    let more = next_start.is_some();
    html! {
        h1 { "Session " (short(id)) }
        div.card {
            p { strong { "Project: " } a href=(link("/", &[("project", &rec.project)])) { (rec.project) } }
            p { strong { "Time: " } (minute(rec.first_ts.as_deref())) " → " (minute(rec.last_ts.as_deref())) " UTC" }
            p { strong { "Agent: " } (rec.agent.as_str()) " · " strong { "Turns: " } (rec.turns) " · " strong { "Compactions: " } (rec.compactions)
                " · " strong { "Injected by hooks: " } "~" (tokens(injected, cpt)) " tokens in " (hooks.len()) " hook outputs" }
            @if !hooks.is_empty() {
                details.injections open[hooks.len() <= 6] {
                    summary { "What hooks injected (" (hooks.len()) "; each also shows between the turns)" }
                    table {
                        tr { th { "When (UTC)" } th { "Hook" } th { "Into the context" } th { "To the summariser" } th { "Swapped out" } }
                        @for h in hooks.iter().rev().take(20) {
                            tr { td { (unix_minute(h.at)) } td { (h.hook) }
                                td { "~" (tokens(h.injection.injected_chars, cpt)) " tok" }
                                td { "~" (tokens(h.injection.summarizer_chars, cpt)) " tok" }
                                td { "~" (tokens(h.injection.removed_chars, cpt)) " tok" } }
                        }
                    }
                }
            }
            p.muted { "Id: " code { (id) } }
            @if let Some(s) = &rec.summary { details { summary { "Summary" } pre { (s) } } }
            @if let Some(s) = &rec.compact_summary { details { summary { "The agent's compaction summary" } pre { (s) } } }
            p { a href=(link("/search", &[("session", id)])) { "Search this session" } " · "
                a href=(link("/swap", &[("session", id)])) { "Its tool outputs" } " · "
                a.forget-session href=(link("/forget", &[("session", id)])) { "Forget this session…" } }
        }
        h2 { "Turns " (from) "–" (turns.last().map_or(from, |t| t.index)) }
        @if turns.is_empty() { p.muted { "No archived turn in this range." } }
        // Injections before the first turn of the session belong to the first page.
        @for h in page_hooks.iter().filter(|h| from == 0 && first_start.is_some_and(|s| h.at < s)) {
            (injection(h, cpt))
        }
        @for (n, t) in turns.iter().enumerate() {
            @let start = unix(t.parts[0].1.chunk.started_at.as_deref());
            @let after = turns.get(n + 1).and_then(|u| unix(u.parts[0].1.chunk.started_at.as_deref())).or(next_start);
            (turn(t, id))
            @for h in page_hooks.iter().filter(|h| start.is_some_and(|s| h.at >= s) && after.is_none_or(|a| h.at < a)) {
                (injection(h, cpt))
            }
        }
        p.pager {
            @if let Some(p) = prev { a href=(link("/session", &[("id", id), ("from", &p.to_string())])) { "← earlier turns" } " " }
            @if more { a href=(link("/session", &[("id", id), ("from", &(from + PAGE as u32).to_string())])) { "later turns →" } }
        }
    }
}

fn errors(text: &str) -> usize {
    text.lines().filter(|l| l.starts_with("[error")).count()
}

fn turn(t: &Turn, session: &str) -> Markup {
    let first = &t.parts[0].1.chunk;
    let compact = t.parts.iter().any(|(_, r)| r.chunk.is_compact_summary);
    let errs: usize = t.parts.iter().map(|(_, r)| errors(&r.chunk.text)).sum();
    let back = link(
        "/session",
        &[("id", session), ("from", &t.index.to_string())],
    );
    html! {
        div.turn.compact[compact] id=(format!("t{}", t.index)) {
            div.meta {
                "turn " (t.index) " · " (minute(first.started_at.as_deref()))
                @if t.parts.len() > 1 { " · " (t.parts.len()) " parts" }
                " · chunk " (t.parts[0].0) " "
                @if compact { span.badge.cmp { "compaction boundary" } }
                @if errs > 0 { span.badge.err { (errs) " error" @if errs > 1 { "s" } } }
                @if t.parts.iter().any(|(_, r)| r.pinned) { span.badge.pin { "pinned" } }
            }
            p { (first.summary) }
            @if !first.tools.is_empty() { p.meta { "tools: " (first.tools.join(", ")) } }
            @if !first.files.is_empty() { p.meta { "files: " (first.files.join(", ")) } }
            @for (cid, r) in &t.parts {
                details {
                    summary { "text" @if t.parts.len() > 1 { " of part " (r.chunk.part + 1) } " (" (r.chunk.text.len()) " bytes)" }
                    pre { (r.chunk.text) }
                }
                @let (verb, val, q) = if r.pinned { ("Unpin", "0", "Unpin this chunk? It can be pruned again.") } else { ("Pin", "1", "Pin this chunk? It will never be pruned.") };
                (page::confirm_form("/pin", q, &[("chunk", &cid.to_string()), ("pinned", val), ("back", &format!("{back}#t{}", t.index))], verb))
            }
            " " a href=(link("/forget", &[("chunk", &t.parts[0].0.to_string())])) { "Forget this turn…" }
        }
    }
}
