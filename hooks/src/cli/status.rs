//! `memctl status`: counts, sizes, embedder and index state, and injection telemetry (cheap:
//! never loads the model; telemetry is read from its small per-session files, not the store).

use anyhow::Result;
use clap::Args;
use memctl_engine::autopilot::{AutopilotConfig, format_count, format_tokens};
use memctl_engine::telemetry::{self, ContextFill, Counts, FillSource, HookCounts, SessionReport};
use memctl_engine::{Engine, EngineOptions};
use serde::Serialize;
use std::io::Write;

/// `memctl status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// One JSON object: every field of the text output, telemetry included.
    #[arg(long)]
    pub json: bool,
    /// Telemetry of this session only (instead of the totals and the recent sessions).
    #[arg(long)]
    pub session: Option<String>,
    /// How many of the most recent sessions to show in detail.
    #[arg(long, default_value_t = 5)]
    pub recent: usize,
}

/// `memctl status --json`.
#[derive(Debug, Serialize)]
pub struct StatusReport {
    /// Path of the store file.
    pub store: String,
    /// Size of the store file in bytes.
    pub file_bytes: u64,
    /// Projects.
    pub projects: u64,
    /// Sessions in the archive.
    pub sessions: u64,
    /// Stored chunks.
    pub chunks: u64,
    /// Chunks without a model vector.
    pub pending: u64,
    /// Vectors per embedding space.
    pub vectors: Vec<VectorCount>,
    /// The configured embedder (not loaded).
    pub embedder: String,
    /// How search uses the index.
    pub index: String,
    /// Injection telemetry over every session (absent with `--session`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<telemetry::TelemetryReport>,
    /// With `--session`: that session's telemetry (null when it has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<Option<SessionReport>>,
}

/// Vectors of one embedding space.
#[derive(Debug, Serialize)]
pub struct VectorCount {
    /// Embedder key (`name@variant/dims`).
    pub embedder: String,
    /// Vectors stored.
    pub count: u64,
}

const INDEX: &str = "exact int8 scan + f16 re-score (per query); BM25 postings in redb";

/// Gather the report (cheap: store counts, configuration, telemetry files).
pub fn gather(engine: &Engine, a: &StatusArgs, cfg: &AutopilotConfig) -> Result<StatusReport> {
    let st = engine.status()?;
    let o = engine.options();
    let (telemetry, session) = match &a.session {
        Some(id) => (None, Some(telemetry::session_report(&o.data_dir, id, cfg)?)),
        None => (Some(telemetry::report(&o.data_dir, a.recent, cfg)?), None),
    };
    Ok(StatusReport {
        store: engine.store_path().display().to_string(),
        file_bytes: st.file_bytes,
        projects: st.projects,
        sessions: st.sessions,
        chunks: st.chunks,
        pending: st.pending,
        vectors: st
            .vectors
            .into_iter()
            .map(|(embedder, count)| VectorCount { embedder, count })
            .collect(),
        embedder: embedder(o),
        index: INDEX.into(),
        telemetry,
        session,
    })
}

/// `status` must stay cheap (statuslines and scripts call it): report the configured
/// embedder without loading the model; `memctl doctor` loads it and reports for real.
fn embedder(o: &EngineOptions) -> String {
    if o.model_disabled {
        "hash-ngram@v1/384 (model disabled)".to_string()
    } else if o.onnx.dylib_path.is_file() && o.onnx.model_path().is_file() {
        format!(
            "all-MiniLM-L6-v2@{}/384 (ONNX, loaded on demand)",
            o.onnx.variant
        )
    } else {
        "hash-ngram@v1/384 (fallback: model or runtime missing; see memctl doctor)".to_string()
    }
}

pub(super) fn status(
    engine: Engine,
    a: &StatusArgs,
    cfg: &AutopilotConfig,
    out: &mut dyn Write,
) -> Result<()> {
    let r = gather(&engine, a, cfg)?;
    if a.json {
        serde_json::to_writer(&mut *out, &r)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(out, "store:      {}", r.store)?;
    writeln!(out, "file size:  {} bytes", r.file_bytes)?;
    writeln!(out, "projects:   {}", r.projects)?;
    writeln!(out, "sessions:   {}", r.sessions)?;
    writeln!(out, "chunks:     {}", r.chunks)?;
    writeln!(
        out,
        "pending:    {} chunks without a model vector",
        r.pending
    )?;
    for v in &r.vectors {
        writeln!(
            out,
            "vectors:    {} × {} (int8 blocks + f32)",
            v.count, v.embedder
        )?;
    }
    writeln!(out, "embedder:   {}", r.embedder)?;
    writeln!(out, "index:      {}", r.index)?;
    if let Some(t) = &r.telemetry {
        writeln!(
            out,
            "telemetry:  {} session{} · {}",
            t.sessions,
            if t.sessions == 1 { "" } else { "s" },
            counts_line(&t.total)
        )?;
        hook_lines(&t.hooks, "  ", out)?;
        if !t.recent.is_empty() {
            writeln!(
                out,
                "recent sessions ({} of {}):",
                t.recent.len(),
                t.sessions
            )?;
            for s in &t.recent {
                session_lines(s, out)?;
            }
        }
        if t.skipped_lines > 0 {
            writeln!(
                out,
                "  ({} unreadable telemetry lines skipped)",
                t.skipped_lines
            )?;
        }
        for u in &t.unreadable {
            writeln!(out, "  unreadable telemetry file: {u}")?;
        }
    }
    match &r.session {
        Some(Some(s)) => session_lines(s, out)?,
        Some(None) => writeln!(
            out,
            "session {}: no telemetry (no hook injected anything yet)",
            a.session.as_deref().unwrap_or_default()
        )?,
        None => {}
    }
    Ok(())
}

/// `12 calls · injected 4,200 chars (~1.2k tok) · summariser 700 chars (~200 tok) · removed
/// by swapping ~2.0k tok`.
fn counts_line(c: &Counts) -> String {
    format!(
        "{} call{} · injected {} chars (~{} tok) · summariser {} chars (~{} tok) · removed by swapping {} chars (~{} tok)",
        format_count(c.calls),
        if c.calls == 1 { "" } else { "s" },
        format_count(c.injected_chars),
        format_tokens(c.injected_tokens),
        format_count(c.summarizer_chars),
        format_tokens(c.summarizer_tokens),
        format_count(c.removed_chars),
        format_tokens(c.removed_tokens),
    )
}

fn hook_lines(hooks: &[HookCounts], indent: &str, out: &mut dyn Write) -> Result<()> {
    for h in hooks {
        writeln!(out, "{indent}{:<20} {}", h.hook, counts_line(&h.counts))?;
    }
    Ok(())
}

/// `context: 43% of 200k (from Claude Code)`.
fn fill_text(f: &ContextFill) -> String {
    format!(
        "{:.0}% of {} ({})",
        f.percent,
        format_tokens(f.window_tokens),
        match f.source {
            FillSource::ClaudeCode => "from Claude Code",
            FillSource::Estimate => "memctl estimate",
        }
    )
}

fn when(at: i64) -> String {
    jiff::Timestamp::from_second(at).map_or_else(|_| at.to_string(), |t| t.to_string())
}

fn session_lines(s: &SessionReport, out: &mut dyn Write) -> Result<()> {
    writeln!(out, "session {} (last {})", s.session_id, when(s.last_at))?;
    if let Some(f) = &s.fill {
        writeln!(out, "  context: {}", fill_text(f))?;
    }
    writeln!(out, "  total:  {}", counts_line(&s.total))?;
    hook_lines(&s.hooks, "  ", out)?;
    if s.skipped_lines > 0 {
        writeln!(out, "  ({} unreadable lines skipped)", s.skipped_lines)?;
    }
    Ok(())
}
