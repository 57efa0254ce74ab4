//! `memctl search`: one query, or a batch of JSONL queries with the model loaded once.

use super::short;
use anyhow::{Context, Result, bail};
use clap::Args;
use memctl_engine::{Engine, SearchMode, SearchRequest};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// `memctl search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// What to look for (omit with --queries).
    #[arg(required_unless_present = "queries")]
    pub query: Option<String>,
    /// Batch mode: a JSONL file of `{"qid": .., "query": .., "project": ..}` (project optional);
    /// prints one JSON line per query (`{"qid", "results"}`), loading the model once.
    #[arg(long, conflicts_with = "query")]
    pub queries: Option<PathBuf>,
    /// Fusion parameters `lexical_max,lexical_min,dense_floor[,coverage_floor,dense_margin_lo,
    /// dense_margin_hi,dense_trust]` (tuning; default 0.9,0.15,0.2,0.15,0.05,0.25,0.5).
    #[arg(long, hide = true)]
    pub fusion: Option<String>,
    /// Project (the directory Claude Code ran in); default: the current directory.
    #[arg(long, conflicts_with = "all_projects")]
    pub project: Option<String>,
    /// Search every project.
    #[arg(long)]
    pub all_projects: bool,
    /// Only this session (its id or a unique prefix, e.g. the 8 characters search prints).
    #[arg(long)]
    pub session: Option<String>,
    /// Only turns that used this tool (e.g. Bash, Edit; any case).
    #[arg(long)]
    pub tool: Option<String>,
    /// Only turns that touched a file path containing this text.
    #[arg(long)]
    pub file: Option<String>,
    /// Only turns at or after this time: RFC 3339, a date (2025-10-24), an age (30m, 12h, 7d,
    /// 2w) or today / yesterday.
    #[arg(long)]
    pub since: Option<String>,
    /// Only turns before this time (same forms as --since).
    #[arg(long)]
    pub until: Option<String>,
    /// Only sessions of this agent: claude, codex or gemini.
    #[arg(long, value_parser = memctl_hooks::agent::parse_agent)]
    pub agent: Option<memctl_engine::Agent>,
    /// Number of results (at least 1).
    #[arg(short = 'k', long, default_value_t = 10,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub k: usize,
    /// Retrieval mode: hybrid, dense or lexical.
    #[arg(long, default_value = "hybrid")]
    pub mode: SearchMode,
    /// JSON output (one object with `results`).
    #[arg(long)]
    pub json: bool,
    /// List near-identical turns (the same test run with other timings, the same question
    /// asked again) each in its own slot instead of one with a count (×N).
    #[arg(long)]
    pub no_fold: bool,
    /// Search a time phrase ("last week", "before the migration") as plain words instead of
    /// reading it as a time.
    #[arg(long)]
    pub no_time: bool,
    /// Search the team store (PostgreSQL; projects shared with you) instead of the local
    /// archive: each hit names the teammate, project and session. Takes --project and -k.
    #[arg(long, conflicts_with_all = ["queries", "session", "tool", "file", "since", "until", "agent", "all_projects"])]
    pub team: bool,
}

/// `memctl search --team`.
pub(super) fn team(
    engine: Engine,
    s: &memctl_engine::Settings,
    a: SearchArgs,
    out: &mut dyn Write,
) -> Result<()> {
    let q = a.query.as_deref().unwrap_or_default();
    crate::team::search_cmd(&engine, s, q, a.k, a.project.as_deref(), a.json, out)
}

pub(super) fn search(
    engine: Engine,
    settings: &memctl_engine::Settings,
    a: SearchArgs,
    out: &mut dyn Write,
) -> Result<()> {
    let mut req = request(&engine, &a)?;
    // Chunks archived by hooks wait for the resident service. A search never embeds them
    // itself (the first search after a 5,000-turn backlog took 91 s): it answers
    // at once, pending chunks found by their words and hash vectors, says how many wait, and
    // has the resident service embed them.
    let pending = engine.pending_count()?;
    if pending > 0 && req.mode != SearchMode::Lexical && settings.embed.background {
        wake_resident_service(&engine);
    }
    if let Some(file) = &a.queries {
        return search_batch(&engine, &req, file, a.all_projects, out);
    }
    req.query = a.query.clone().unwrap_or_default();
    if req.query.trim().is_empty() {
        bail!("empty query");
    }
    let found = engine.search(&req)?;
    // Cold: no vector index answered and the archive is too big to scan whole; the resident
    // service keeps one, so the next search covers everything.
    if found.cold.is_some() && settings.embed.background && settings.index.enabled {
        wake_resident_service(&engine);
    }
    if a.json {
        let doc = serde_json::json!({
            "query": req.query,
            "embedder": found.embedder,
            "degraded": found.degraded,
            "cold": found.cold,
            "indexed": found.indexed,
            "excluded_by": found.excluded_by,
            "pending": pending,
            "time": found.time,
            "results": json_results(&found, &req.query),
        });
        serde_json::to_writer(&mut *out, &doc)?;
        writeln!(out)?;
        return Ok(());
    }
    print_found(&found, &req, pending, settings.index.enabled, out)
}

/// The request of `memctl search` without its query: mode, filters, fusion parameters and the
/// project scope (the current directory unless `--project` or `--all-projects`).
fn request(engine: &Engine, a: &SearchArgs) -> Result<SearchRequest> {
    let mut req = SearchRequest::new(String::new(), a.k);
    req.mode = a.mode;
    req.agent = a.agent;
    req.fold = !a.no_fold;
    req.read_time = !a.no_time;
    crate::filters::apply(
        engine,
        &crate::filters::FilterArgs {
            session: a.session.as_deref(),
            tool: a.tool.as_deref(),
            file: a.file.as_deref(),
            since: a.since.as_deref(),
            until: a.until.as_deref(),
        },
        &mut req,
    )?;
    if let Some(f) = &a.fusion {
        req.fusion = fusion_params(f)?;
    }
    if !a.all_projects {
        let project = match &a.project {
            Some(p) => crate::filters::project(engine, p)?,
            None => std::env::current_dir()
                .context("current directory")?
                .display()
                .to_string(),
        };
        req.projects = vec![project];
    }
    Ok(req)
}

/// `--fusion a,b,c[,d,e,f,g]`: omitted trailing parameters keep their defaults.
fn fusion_params(f: &str) -> Result<memctl_engine::FusionParams> {
    const USAGE: &str = "--fusion takes 3 or 7 numbers: lexical_max,lexical_min,dense_floor\
                         [,coverage_floor,dense_margin_lo,dense_margin_hi,dense_trust]";
    let v: Vec<f32> = f
        .split(',')
        .map(|x| x.trim().parse::<f32>())
        .collect::<Result<_, _>>()
        .context(USAGE)?;
    if v.len() != 3 && v.len() != 7 {
        bail!(USAGE);
    }
    let d = memctl_engine::FusionParams::default();
    let mut p = [
        d.lexical_max,
        d.lexical_min,
        d.dense_floor,
        d.coverage_floor,
        d.dense_margin_lo,
        d.dense_margin_hi,
        d.dense_trust,
    ];
    p[..v.len()].copy_from_slice(&v);
    Ok(memctl_engine::FusionParams {
        lexical_max: p[0],
        lexical_min: p[1],
        dense_floor: p[2],
        coverage_floor: p[3],
        dense_margin_lo: p[4],
        dense_margin_hi: p[5],
        dense_trust: p[6],
    })
}

/// The human-readable answer: notes (degraded, pending), then the hits, or why there are none.
fn print_found(
    found: &memctl_engine::SearchOutcome,
    req: &SearchRequest,
    pending: u64,
    index_on: bool,
    out: &mut dyn Write,
) -> Result<()> {
    if let Some(d) = &found.degraded {
        writeln!(out, "note: {d}")?;
    }
    if let Some(c) = &found.cold {
        let next = if index_on {
            "the vector index is starting in the resident service"
        } else {
            "MEMCTL_ANN=1 keeps a vector index of all of them in the resident service"
        };
        writeln!(
            out,
            "note: meaning-based search covered the newest {} of {} vectors (word search \
             covered all); {next}",
            c.scanned, c.total
        )?;
    }
    if let Some(t) = &found.time {
        writeln!(out, "note: {}", time_note(t))?;
    }
    if pending > 0 {
        writeln!(
            out,
            "note: {pending} chunks wait for the background embedder; until then they are found \
             by their words only"
        )?;
    }
    if found.results.is_empty() {
        let scope = if req.projects.is_empty() {
            "any project".to_string()
        } else {
            format!("project {} (try --all-projects)", req.projects.join(", "))
        };
        writeln!(out, "no results in {scope}")?;
        if !found.excluded_by.is_empty() {
            writeln!(
                out,
                "the query matched, but the filters excluded every match: {}",
                found.excluded_by.join(", ")
            )?;
        }
        return Ok(());
    }
    let bold = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    if !found.results.iter().any(|r| r.confident) {
        writeln!(
            out,
            "no confident match (no hit reaches confidence {:.2}); the closest hits, marked weak:",
            memctl_engine::RECALL_CONFIDENT
        )?;
    }
    for (i, r) in found.results.iter().enumerate() {
        write_hit(out, i, r, &req.query, bold)?;
    }
    Ok(())
}

/// One hit: its confidence (marked weak below the threshold), where it is, its summary, the
/// lines that matched with the query's words marked, its files and tools.
fn write_hit(
    out: &mut dyn Write,
    i: usize,
    r: &memctl_engine::SearchResult,
    query: &str,
    bold: bool,
) -> Result<()> {
    let c = &r.record.chunk;
    writeln!(
        out,
        "{:>2}. [{:.2}{}] chunk {} · session {} · turn {}{} · {}{} · {}",
        i + 1,
        r.confidence,
        if r.confident { "" } else { " weak" },
        r.id,
        short(&c.session_id),
        c.turn_index,
        if c.parts > 1 {
            format!(" part {}/{}", c.part + 1, c.parts)
        } else {
            String::new()
        },
        c.started_at.as_deref().unwrap_or("-"),
        age_of(c.started_at.as_deref()).map_or(String::new(), |a| format!(" ({a})")),
        r.agent,
    )?;
    if let Some(label) = r.copies.label() {
        writeln!(out, "    {label} (memctl show {} lists them)", r.id)?;
    }
    writeln!(out, "    {}", c.summary)?;
    if let Some(by) = r.superseded_by {
        writeln!(out, "    superseded: chunk {by} decides this subject later")?;
    }
    for line in memctl_engine::matched_lines(&c.text, query, &c.summary) {
        writeln!(out, "    > {}", marked(&line, query, bold))?;
    }
    if !c.files.is_empty() {
        writeln!(out, "    files: {}", c.files.join(", "))?;
    }
    if !c.tools.is_empty() {
        writeln!(out, "    tools: {}", c.tools.join(", "))?;
    }
    Ok(())
}

/// What a query's time phrase was read as: `"last week": turns from 2026-11-16 to 2026-11-23
/// first`; for an event, which turn it was read as (or that none was found).
fn time_note(t: &memctl_engine::TimeScope) -> String {
    let day = |s: &Option<String>| s.as_deref().map(|s| s.get(..10).unwrap_or(s).to_string());
    if let Some(e) = &t.event {
        return event_note(t, e);
    }
    let what = match (day(&t.since), day(&t.until), t.order) {
        (_, _, Some(memctl_engine::TimeOrder::Earliest)) => "the oldest matching turns".into(),
        (_, _, Some(memctl_engine::TimeOrder::Latest)) => "the newest matching turns".into(),
        (Some(a), Some(b), _) => format!("matching turns from {a} to before {b}"),
        (Some(a), None, _) => format!("matching turns since {a}"),
        (None, Some(b), _) => format!("matching turns before {b}"),
        (None, None, _) => "matching turns".into(),
    };
    format!("{:?} read as a time: {what} first, then the rest", t.phrase)
}

/// What an event phrase was read as: the event's turn and the side asked for, or that no turn
/// matched and the query was searched whole.
fn event_note(t: &memctl_engine::TimeScope, e: &memctl_engine::TimeEvent) -> String {
    let Some(turn) = &e.turn else {
        return format!(
            "{:?} read as an event, but no archived turn matches {:?} well: searched the \
             whole query with no time effect",
            t.phrase, e.words
        );
    };
    let side = match e.relation {
        memctl_engine::EventRelation::Before => "before",
        memctl_engine::EventRelation::After => "after",
    };
    let order = match t.order {
        Some(memctl_engine::TimeOrder::Earliest) => ", oldest first",
        Some(memctl_engine::TimeOrder::Latest) => ", newest first",
        None => "",
    };
    format!(
        "{:?} read as a time: {:?} is chunk {} (session {} turn {}, {}); matching turns \
         {side} it{order} first, then the rest",
        t.phrase,
        e.words,
        turn.chunk,
        short(&turn.session_id),
        turn.turn_index,
        turn.started_at
            .get(..16)
            .unwrap_or(&turn.started_at)
            .replace('T', " "),
    )
}

/// How long ago a turn started ("3 days ago"), from this process's clock.
fn age_of(started_at: Option<&str>) -> Option<String> {
    memctl_engine::age(started_at?, jiff::Timestamp::now())
}

/// `line` with the query's words and identifiers in bold (ANSI) when `bold`, else as is.
fn marked(line: &str, query: &str, bold: bool) -> String {
    if !bold {
        return line.to_string();
    }
    let mut s = String::with_capacity(line.len() + 16);
    let mut at = 0;
    for (b, e) in memctl_engine::highlight_spans(line, query) {
        s.push_str(&line[at..b]);
        s.push_str("\x1b[1m");
        s.push_str(&line[b..e]);
        s.push_str("\x1b[0m");
        at = e;
    }
    s.push_str(&line[at..]);
    s
}

/// Have the resident service embed the pending chunks (see
/// [`crate::background::wake_service`]); not without a model (it would refuse to start).
fn wake_resident_service(engine: &memctl_engine::Engine) {
    if !engine.options().model_disabled {
        crate::background::wake_service(engine.data_dir());
    }
}

#[derive(serde::Deserialize)]
struct BatchQuery {
    qid: serde_json::Value,
    query: String,
    #[serde(default)]
    project: Option<String>,
}

fn search_batch(
    engine: &Engine,
    base: &SearchRequest,
    file: &Path,
    all_projects: bool,
    out: &mut dyn Write,
) -> Result<()> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let q: BatchQuery = serde_json::from_str(line)
            .with_context(|| format!("{}:{}: not a query object", file.display(), n + 1))?;
        let mut req = base.clone();
        req.query = q.query;
        if let Some(p) = q.project
            && !all_projects
        {
            req.projects = vec![p];
        }
        let found = engine.search(&req)?;
        let doc = serde_json::json!({
            "qid": q.qid,
            "embedder": found.embedder,
            "degraded": found.degraded,
            "time": found.time,
            "results": json_results(&found, &req.query),
        });
        serde_json::to_writer(&mut *out, &doc)?;
        writeln!(out)?;
    }
    Ok(())
}

/// The results as JSON: `score` is the fused score that orders them (relative to the other
/// candidates), `confidence` the absolute one and `confident` whether it clears the threshold.
fn json_results(found: &memctl_engine::SearchOutcome, query: &str) -> Vec<serde_json::Value> {
    found
        .results
        .iter()
        .map(|r| {
            let c = &r.record.chunk;
            serde_json::json!({
                "id": r.id,
                "score": r.scores.score,
                "dense": r.scores.dense,
                "lexical": r.scores.lexical,
                "session_id": c.session_id,
                "agent": r.agent,
                "project": c.project,
                "turn_index": c.turn_index,
                "part": c.part,
                "turn_uuid": c.turn_uuid,
                "line_uuids": c.line_uuids,
                "started_at": c.started_at,
                "age": age_of(c.started_at.as_deref()),
                "superseded_by": r.superseded_by,
                "tools": c.tools,
                "files": c.files,
                "summary": c.summary,
                "text": c.text,
                "confidence": r.confidence,
                "confident": r.confident,
                "coverage": r.evidence.coverage,
                "cosine": r.evidence.dense,
                "lines": memctl_engine::matched_lines(&c.text, query, &c.summary),
                "copies": r.copies.count(),
                "copy_ids": r.copies.ids,
                "first": r.copies.first,
                "last": r.copies.last,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{marked, time_note};

    #[test]
    fn an_event_note_names_the_event_turn_or_says_it_was_not_found() {
        let q = "the cache before the migration";
        let now = jiff::Timestamp::from_second(1_800_000_000).expect("now");
        let scope = memctl_engine::time_scope(q, now).expect("scope");
        let turn = memctl_engine::EventTurn {
            chunk: 42,
            session_id: "0123456789abcdef".into(),
            turn_index: 3,
            started_at: "2026-09-24T14:00:00.000Z".into(),
        };
        let found = time_note(&scope.clone().at_event(Some(turn), q));
        assert_eq!(
            found,
            "\"before the migration\" read as a time: \"the migration\" is chunk 42 (session \
             01234567 turn 3, 2026-09-24 14:00); matching turns before it first, then the rest"
        );
        let lost = time_note(&scope.at_event(None, q));
        assert!(
            lost.contains("no archived turn matches \"the migration\" well"),
            "{lost}"
        );
        assert!(lost.contains("no time effect"), "{lost}");
    }

    #[test]
    fn query_words_are_bold_on_a_terminal_and_plain_otherwise() {
        let line = "FAIL src/billing.test.ts:52 while caching";
        assert_eq!(marked(line, "billing.test.ts:52 cache", false), line);
        assert_eq!(
            marked(line, "billing.test.ts:52 cache", true),
            "FAIL src/\x1b[1mbilling.test.ts:52\x1b[0m while \x1b[1mcaching\x1b[0m"
        );
    }
}
