//! `memctl status`: counts, sizes, embedder and index state, and injection telemetry (cheap:
//! never loads the model; telemetry is read from its small per-session files, not the store).

use anyhow::Result;
use clap::Args;
use memctl_engine::{
    AutopilotConfig, ContextFill, Engine, EngineOptions, FillSource, HookCounts, SessionReport,
    TelemetryCounts, format_count, format_tokens,
};
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
    /// The background embedder: whether one runs, and its last progress record.
    pub background: Background,
    /// The configured embedder (not loaded).
    pub embedder: String,
    /// How search uses the index.
    pub index: String,
    /// Injection telemetry over every session (absent with `--session`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<memctl_engine::TelemetryReport>,
    /// With `--session`: that session's telemetry (null when it has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<Option<SessionReport>>,
}

/// The embedding of pending chunks (the resident service's bulk thread, or a foreground
/// `memctl embed-pending`).
#[derive(Debug, Serialize)]
pub struct Background {
    /// Whether an embedder holds the data dir's embed lock now.
    pub running: bool,
    /// Its process id (from its progress record; absent when none was recorded).
    pub pid: Option<u32>,
    /// When it started (Unix seconds).
    pub since: Option<i64>,
    /// When it last recorded progress (Unix seconds).
    pub updated_at: Option<i64>,
    /// Chunks it embedded so far (the last run's total when none runs).
    pub embedded: Option<u64>,
    /// Chunks per second while embedding.
    pub rate: Option<f64>,
    /// Seconds left for the pending chunks at that rate (only while one runs).
    pub eta_seconds: Option<f64>,
    /// Intra-op threads of its model.
    pub threads: Option<usize>,
}

fn background(data_dir: &std::path::Path, pending: u64) -> Background {
    let running = memctl_hooks::background::embedder_running(data_dir);
    let p = memctl_hooks::progress::read(data_dir);
    Background {
        running,
        pid: p.as_ref().map(|p| p.pid),
        since: p.as_ref().map(|p| p.started_at),
        updated_at: p.as_ref().map(|p| p.updated_at),
        embedded: p.as_ref().map(|p| p.embedded),
        rate: p.as_ref().and_then(memctl_hooks::progress::Progress::rate),
        eta_seconds: p
            .as_ref()
            .filter(|_| running)
            .and_then(|p| p.eta_seconds(pending)),
        threads: p.as_ref().map(|p| p.threads),
    }
}

/// `embedder running (pid 42, since …, 2 threads): 640 embedded, 12.3 chunks/s, ~1m 10s left`.
fn background_line(b: &Background) -> String {
    let mut s = if b.running {
        let mut s = "embedder running".to_string();
        if let (Some(pid), Some(since)) = (b.pid, b.since) {
            s.push_str(&format!(" (pid {pid}, since {}", when(since)));
            if let Some(t) = b.threads {
                s.push_str(&format!(", {t} thread{}", if t == 1 { "" } else { "s" }));
            }
            s.push(')');
        }
        s
    } else if let Some(at) = b.updated_at {
        format!("no embedder running (last run until {})", when(at))
    } else {
        "no embedder running".to_string()
    };
    if let Some(n) = b.embedded {
        s.push_str(&format!(": {} embedded", format_count(n)));
    }
    if let Some(r) = b.rate {
        s.push_str(&format!(", {r:.1} chunks/s"));
    }
    if let Some(eta) = b.eta_seconds {
        s.push_str(&format!(", ~{:.0} s left", eta.ceil()));
    }
    s
}

/// Vectors of one embedding space.
#[derive(Debug, Serialize)]
pub struct VectorCount {
    /// Embedder key (`name@variant/dims`).
    pub embedder: String,
    /// Chunks with a vector in this space (a chunk embedded by the model keeps no hash one).
    pub count: u64,
    /// Index entries of replaced or re-embedded chunks, dropped at the next compaction.
    pub stale_index_entries: u64,
}

const INDEX: &str = "exact int8 scan + f16 re-score (per query); BM25 postings in redb";

/// Gather the report (cheap: store counts, configuration, telemetry files).
pub fn gather(engine: &Engine, a: &StatusArgs, cfg: &AutopilotConfig) -> Result<StatusReport> {
    let st = engine.status()?;
    let o = engine.options();
    let (telemetry, session) = match &a.session {
        Some(id) => (
            None,
            Some(memctl_engine::session_telemetry_report(
                &o.data_dir,
                id,
                cfg,
            )?),
        ),
        None => (
            Some(memctl_engine::telemetry_report(&o.data_dir, a.recent, cfg)?),
            None,
        ),
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
            .zip(st.stale_index_entries)
            .map(|((embedder, count), (_, stale))| VectorCount {
                embedder,
                count,
                stale_index_entries: stale,
            })
            .collect(),
        background: background(&o.data_dir, st.pending),
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
        "hash-ngram@v1/384 (fallback: model or runtime missing; run `memctl setup`)".to_string()
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
    writeln!(out, "background: {}", background_line(&r.background))?;
    for v in &r.vectors {
        let stale = if v.stale_index_entries > 0 {
            format!(
                "; {} stale index entries, dropped at the next compaction",
                v.stale_index_entries
            )
        } else {
            String::new()
        };
        writeln!(
            out,
            "vectors:    {} × {} (int8 blocks + f16){stale}",
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
fn counts_line(c: &TelemetryCounts) -> String {
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
