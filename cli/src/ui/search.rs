//! Search: the CLI's engine call and filters (`crate::filters`, `Engine::search`), each hit with
//! why it matched (the query's words found in it, highlighted; the dense cosine and BM25 score
//! behind the fused score) and one click to the turn in its session.
//!
//! Near-identical turns fold as in `memctl search` ([`memctl_engine::Copies`]): one hit shows
//! `×N` with the first and last dates, and a `<details>` lists the copies, each linked to its
//! turn; `Copies: list each` (`fold=no`) gives every copy its own slot.
//!
//! Read only: unlike `memctl search`, the page does not embed pending chunks first (a write);
//! those are found by their words until the background embedder catches up.

use super::page::{self, PAGE, clip, link, minute, short};
use super::{Q, Shared, UiError, blocking};
use axum::extract::State;
use maud::{Markup, html};
use memctl_engine::{ChunkRecord, SearchMode, SearchOutcome, SearchRequest, SearchResult};
use serde::Deserialize;

/// `/search?q=&project=&session=&tool=&file=&since=&until=&mode=&k=`.
#[derive(Debug, Default, Deserialize)]
pub(super) struct SearchQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    project: String,
    #[serde(default)]
    session: String,
    #[serde(default)]
    tool: String,
    #[serde(default)]
    file: String,
    #[serde(default)]
    since: String,
    #[serde(default)]
    until: String,
    #[serde(default)]
    mode: String,
    #[serde(default)]
    k: Option<usize>,
    /// `no`: near-identical turns are not folded.
    #[serde(default)]
    fold: String,
}

/// A search's hits, and the stored copies folded into each (rank order; a copy pruned since
/// the search is left out).
struct Found {
    outcome: SearchOutcome,
    copies: Vec<Vec<(u64, ChunkRecord)>>,
}

/// Most copies listed under one hit (the count says how many there are).
const MAX_COPIES: usize = 50;

/// Most results one page asks for.
const MAX_K: usize = 100;
/// Bytes of text around the first match shown in a hit.
const SNIPPET: usize = 360;

pub(super) async fn page(
    State(ctx): State<Shared>,
    Q(q): Q<SearchQuery>,
) -> Result<Markup, UiError> {
    for (name, v) in [
        ("q", &q.q),
        ("project", &q.project),
        ("session", &q.session),
        ("tool", &q.tool),
        ("file", &q.file),
        ("since", &q.since),
        ("until", &q.until),
        ("mode", &q.mode),
        ("fold", &q.fold),
    ] {
        page::bounded(name, v)?;
    }
    blocking(&ctx, move |c| {
        let projects = super::page::projects(&c.engine)?;
        let found = if q.q.trim().is_empty() {
            None
        } else {
            Some(run(c, &q)?)
        };
        Ok(page::layout(
            "Search",
            "search",
            html! {
                h1 { "Search" }
                (form(&q, &projects))
                @if let Some(f) = &found { (results(&q, f)) }
            },
        ))
    })
    .await
}

fn run(c: &super::Ctx, q: &SearchQuery) -> Result<Found, UiError> {
    let k = q.k.unwrap_or(20).clamp(1, MAX_K);
    let mut req = SearchRequest::new(q.q.trim(), k);
    req.fold = match q.fold.as_str() {
        "" | "yes" => true,
        "no" => false,
        other => {
            return Err(UiError::bad(format!(
                "fold: {other:?} is neither yes nor no"
            )));
        }
    };
    if !q.mode.is_empty() {
        req.mode = q.mode.parse::<SearchMode>().map_err(UiError::bad)?;
    }
    let opt = |s: &str| (!s.trim().is_empty()).then(|| s.trim().to_string());
    let (session, tool, file, since, until) = (
        opt(&q.session),
        opt(&q.tool),
        opt(&q.file),
        opt(&q.since),
        opt(&q.until),
    );
    crate::filters::apply(
        &c.engine,
        &crate::filters::FilterArgs {
            session: session.as_deref(),
            tool: tool.as_deref(),
            file: file.as_deref(),
            since: since.as_deref(),
            until: until.as_deref(),
        },
        &mut req,
    )?;
    if let Some(p) = opt(&q.project) {
        req.projects = vec![crate::filters::project(&c.engine, &p)?];
    }
    let outcome = c.engine.search(&req)?;
    let mut copies = Vec::with_capacity(outcome.results.len());
    for r in &outcome.results {
        let mut recs = Vec::new();
        for &id in r.copies.ids.iter().take(MAX_COPIES) {
            if let Some(rec) = c.engine.chunk(id)? {
                recs.push((id, rec));
            }
        }
        copies.push(recs);
    }
    Ok(Found { outcome, copies })
}

fn form(q: &SearchQuery, projects: &[String]) -> Markup {
    let mode = if q.mode.is_empty() { "hybrid" } else { &q.mode };
    html! {
        form.filters #search action=(link("/search", &[])) method="get" {
            label { "Query" input #q type="search" name="q" value=(q.q) size="40" maxlength=(page::MAX_INPUT) autofocus; }
            label { "Project" select name="project" {
                option value="" { "all projects" }
                @for p in projects { option value=(p) selected[*p == q.project] { (p) } }
            } }
            label { "Session" input type="text" name="session" value=(q.session) size="10" placeholder="id or prefix"; }
            label { "Tool" input type="text" name="tool" value=(q.tool) size="8" placeholder="Bash"; }
            label { "File" input type="text" name="file" value=(q.file) size="14" placeholder="path contains"; }
            label { "Since" input type="text" name="since" value=(q.since) size="10" placeholder="7d, 2026-11-01"; }
            label { "Until" input type="text" name="until" value=(q.until) size="10"; }
            label { "Mode" select name="mode" {
                @for m in ["hybrid", "dense", "lexical"] { option value=(m) selected[m == mode] { (m) } }
            } }
            label { "Copies" select name="fold" {
                option value="" { "fold" }
                option value="no" selected[q.fold == "no"] { "list each" }
            } }
            button type="submit" { "Search" }
        }
    }
}

/// The query's index terms: what a hit can have matched on.
fn terms(query: &str) -> Vec<String> {
    memctl_engine::index_terms(query)
}

/// Byte ranges of the words of `text` that match `terms` ([`memctl_engine::term_spans`]).
fn matches(text: &str, terms: &[String]) -> Vec<(usize, usize)> {
    memctl_engine::term_spans(text, terms)
}

/// The distinct words of `text` that matched (lowercased, in order of appearance, at most 12).
fn matched_words(text: &str, terms: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (s, e) in matches(text, terms) {
        let w = text[s..e].to_lowercase();
        if !out.contains(&w) {
            out.push(w);
            if out.len() == 12 {
                break;
            }
        }
    }
    out
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The text around the first match, as (marked?, piece) segments.
fn snippet<'a>(text: &'a str, terms: &[String]) -> Vec<(bool, &'a str)> {
    let all = matches(text, terms);
    let first = all.first().map_or(0, |m| m.0);
    let start = floor_char(text, first.saturating_sub(SNIPPET / 3));
    let end = floor_char(text, (start + SNIPPET).min(text.len()));
    let mut out = Vec::new();
    let mut at = start;
    for (s, e) in all.into_iter().filter(|(s, e)| *s >= start && *e <= end) {
        if s > at {
            out.push((false, &text[at..s]));
        }
        out.push((true, &text[s..e]));
        at = e;
    }
    if end > at {
        out.push((false, &text[at..end]));
    }
    out
}

/// The turn of chunk `c` in its session page.
fn turn_href(c: &memctl_engine::Chunk) -> String {
    let from = (c.turn_index - c.turn_index % PAGE as u32).to_string();
    format!(
        "{}#t{}",
        link("/session", &[("id", &c.session_id), ("from", &from)]),
        c.turn_index
    )
}

/// `×N · first … · last …` and the copies, each linked to its turn (none without copies).
fn copies(r: &SearchResult, recs: &[(u64, ChunkRecord)]) -> Markup {
    let n = r.copies.count();
    html! {
        @if n > 1 {
            details.copies {
                summary {
                    span.badge.fold { "×" (n) }
                    " first " (minute(r.copies.first.as_deref()))
                    " · last " (minute(r.copies.last.as_deref()))
                    " · " (n - 1) " near-identical " @if n == 2 { "turn" } @else { "turns" }
                    " folded into this one"
                }
                ul {
                    @for (id, rec) in recs {
                        @let c = &rec.chunk;
                        li.copy {
                            a href=(turn_href(c)) { "session " (short(&c.session_id)) " · turn " (c.turn_index) }
                            " · " (minute(c.started_at.as_deref())) " · chunk " (id) " · "
                            span.muted { (clip(&c.summary, 120)) }
                        }
                    }
                    @if recs.len() < n - 1 { li.muted { "… " (n - 1 - recs.len()) " more (memctl show " (r.id) ")" } }
                }
            }
        }
    }
}

fn results(q: &SearchQuery, hits: &Found) -> Markup {
    let terms = terms(&q.q);
    let f = &hits.outcome;
    html! {
        @if let Some(d) = &f.degraded { p.warn { "Note: " (d) } }
        @if !f.results.is_empty() && !f.results.iter().any(|r| r.confident) {
            p.warn #no-confident { "No confident match: the closest hits are listed, all weak." }
        }
        @if f.results.is_empty() {
            p #no-results { "No results." }
            @if !f.excluded_by.is_empty() { p { "The query matched, but the filters excluded every match: " (f.excluded_by.join(", ")) } }
        }
        p.muted { (f.results.len()) " results" @if let Some(e) = &f.embedder { " · dense space " (e) } }
        @for (n, r) in f.results.iter().enumerate() {
            @let c = &r.record.chunk;
            @let found = matched_words(&c.text, &terms);
            @let href = turn_href(c);
            div.hit {
                div {
                    strong { (n + 1) ". " }
                    a.hit-link href=(href) { (clip(&c.summary, 140)) }
                }
                div.scores {
                    "confidence " (format!("{:.2}", r.confidence))
                    @if !r.confident { " (weak)" }
                    " · score " (format!("{:.3}", r.scores.score))
                    " · dense cosine " (r.scores.dense.map_or("–".to_string(), |d| format!("{d:.3}")))
                    " · BM25 " (r.scores.lexical.map_or("–".to_string(), |l| format!("{l:.2}")))
                    " · matched words: "
                    @if found.is_empty() { em { "none (meaning only)" } }
                    @else { (found.join(", ")) }
                }
                div.meta.muted {
                    "chunk " (r.id) " · session " (short(&c.session_id)) " · turn " (c.turn_index)
                    " · " (minute(c.started_at.as_deref())) " · " (c.project)
                    @if !c.tools.is_empty() { " · tools: " (c.tools.join(", ")) }
                }
                (copies(r, hits.copies.get(n).map_or(&[][..], Vec::as_slice)))
                pre { @for (marked, piece) in snippet(&c.text, &terms) {
                    @if marked { mark { (piece) } } @else { (piece) }
                } }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_are_the_index_terms() {
        assert_eq!(
            terms("Fixing the OAuth-token bug"),
            ["auth", "bug", "fix", "o", "oauth", "oauth-token", "token"]
        );
    }

    #[test]
    fn snippets_mark_every_occurrence_and_keep_char_boundaries() {
        let t = terms("token on cache");
        let segs = snippet("é Tokens then token seconds caching.", &t);
        let marked: Vec<&str> = segs.iter().filter(|s| s.0).map(|s| s.1).collect();
        assert_eq!(
            marked,
            ["Tokens", "token", "caching"],
            "whole words, as stems; `on` is a stop word and not inside `seconds`"
        );
        let joined: String = segs.iter().map(|s| s.1).collect();
        assert_eq!(joined, "é Tokens then token seconds caching.");
    }

    #[test]
    fn a_long_text_is_cut_around_the_first_match() {
        let text = format!("{}needle {}", "é ".repeat(450), "x".repeat(900));
        let segs = snippet(&text, &terms("needle"));
        let joined: String = segs.iter().map(|s| s.1).collect();
        assert!(joined.contains("needle") && joined.len() <= SNIPPET + 1);
    }
}
