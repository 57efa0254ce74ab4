//! Memory-lifecycle commands of the `memctl` CLI: `statusline`, `memory`, `restore`,
//! `summarize`, `prune`, `pin` / `unpin`, and the CLAUDE.md part of `install --claude-md`.
//! [`crate::cli`] parses and dispatches; the logic lives in the engine.

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use memctl_engine::{
    AutopilotConfig, Engine, EngineOptions, Estimate, MemoryConfig, RestoreConfig, RestoreKind,
    StatusInput, SummaryConfig, TokenSource,
};

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// `memctl statusline`.
#[derive(Debug, Args)]
pub struct StatuslineArgs {
    /// ANSI colours (green / yellow / red by level).
    #[arg(long)]
    pub color: bool,
    /// Context window in tokens (default: what Claude Code reports, else
    /// $MEMCTL_CONTEXT_WINDOW, else 200000).
    #[arg(long)]
    pub window: Option<u64>,
}

/// `memctl memory ...`.
#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// Create `.memctl/memory/` with templates (existing files are kept).
    Init {
        /// Project directory (default: the current directory).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Print the memory lines a restore would inject.
    Show {
        /// Project directory (default: the current directory).
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

/// `memctl restore`.
#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// Session to restore (as after its own compaction).
    pub session: String,
    /// Project whose memory files and related sessions to use (default: the session's).
    #[arg(long)]
    pub project: Option<String>,
    /// Budget in characters (default $MEMCTL_RESTORE_CHARS, else 4000).
    #[arg(long)]
    pub chars: Option<usize>,
    /// Give each near-identical turn its own line instead of one line with a count (×N).
    #[arg(long)]
    pub no_fold: bool,
}

/// `memctl summarize`.
#[derive(Debug, Args)]
pub struct SummarizeArgs {
    /// Session id.
    pub session: String,
    /// Print the structured summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `memctl prune`.
#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Only report what would be pruned.
    #[arg(long)]
    pub dry_run: bool,
    /// JSON report.
    #[arg(long)]
    pub json: bool,
}

/// `memctl pin` / `unpin`.
#[derive(Debug, Args)]
pub struct PinArgs {
    /// Chunk id (from `memctl search` or `memctl show`).
    pub id: u64,
}

/// `memctl statusline`: Claude Code's status line JSON on stdin → one line on stdout. Never
/// fails: unreadable input or store give a shorter line.
pub fn statusline(
    opts: EngineOptions,
    cfg: &AutopilotConfig,
    a: &StatuslineArgs,
    out: &mut dyn Write,
) -> Result<()> {
    let mut raw = Vec::new();
    if let Err(e) = std::io::stdin().take(1 << 20).read_to_end(&mut raw) {
        tracing::debug!(error = %e, "statusline: stdin unreadable");
    }
    let line = statusline_text(&opts, cfg, a, &raw);
    writeln!(out, "{line}")?;
    Ok(())
}

/// The status line for a given input (testable without stdin).
pub fn statusline_text(
    opts: &EngineOptions,
    cfg: &AutopilotConfig,
    a: &StatuslineArgs,
    raw: &[u8],
) -> String {
    let input: StatusInput = serde_json::from_slice(raw).unwrap_or_default();
    let window = a
        .window
        .or_else(|| input.window())
        .unwrap_or(cfg.window_tokens);
    let est = input
        .current_tokens()
        .map(|tokens| Estimate {
            tokens,
            source: TokenSource::Statusline,
        })
        .or_else(|| {
            let t = input.transcript_path.as_deref().filter(|t| !t.is_empty())?;
            memctl_engine::estimate_transcript(Path::new(t), cfg)
                .ok()
                .flatten()
        });
    let samples = if input.session_id.is_empty() {
        Vec::new()
    } else {
        memctl_engine::load_autopilot_state(&opts.data_dir, &input.session_id).samples
    };
    let report = est.map(|e| memctl_engine::autopilot_report(&e, window, &samples, cfg));
    let archived = (!input.session_id.is_empty() && opts.store_path().is_file())
        .then(|| Engine::open(opts.clone()).ok())
        .flatten()
        .and_then(|e| e.session(&input.session_id).ok()?)
        .map(|s| u64::from(s.turns));
    let mem = session_telemetry(&opts.data_dir, &input, cfg);
    memctl_engine::format_statusline(report.as_ref(), archived, mem, a.color)
}

/// The status line's telemetry step: record the context-window numbers Claude Code passed
/// (when they changed; `memctl status` prefers them to memctl's estimate) and return what
/// memctl injected into and swapped out of this session. Faults are logged: the status line
/// never fails.
fn session_telemetry(
    data_dir: &Path,
    input: &StatusInput,
    cfg: &AutopilotConfig,
) -> Option<memctl_engine::MemTokens> {
    let sid = input.session_id.as_str();
    if sid.is_empty() {
        return None;
    }
    let log = match memctl_engine::read_session_telemetry(data_dir, sid) {
        Ok(log) => log,
        Err(e) => {
            tracing::warn!(error = %e, "statusline: telemetry unreadable");
            None
        }
    };
    let sample = memctl_engine::ContextSample {
        session_id: sid.to_string(),
        at: memctl_engine::unix_now(),
        used_tokens: input.current_tokens(),
        window_tokens: input.window(),
    };
    if let Err(e) = memctl_engine::record_context(data_dir, log.as_ref(), &sample) {
        tracing::warn!(error = %e, "statusline: context numbers not recorded");
    }
    let r = memctl_engine::summarize_telemetry(log.as_ref()?, sid, cfg.chars_per_token);
    (r.total.calls > 0).then_some(memctl_engine::MemTokens {
        injected: r.total.injected_tokens,
        removed: r.total.removed_tokens,
    })
}

fn dir_or_cwd(dir: Option<PathBuf>) -> Result<PathBuf> {
    match dir {
        Some(d) => Ok(d),
        None => std::env::current_dir().context("current directory"),
    }
}

/// `memctl memory ...`.
pub fn memory_cmd(c: MemoryCommand, cfg: &MemoryConfig, out: &mut dyn Write) -> Result<()> {
    match c {
        MemoryCommand::Init { dir } => {
            let dir = dir_or_cwd(dir)?;
            let files = memctl_engine::init_memory(&dir).with_context(|| {
                format!("creating {}", dir.join(memctl_engine::MEMORY_DIR).display())
            })?;
            for f in files {
                writeln!(
                    out,
                    "{} {}",
                    if f.created { "created" } else { "kept   " },
                    f.path.display()
                )?;
            }
            writeln!(
                out,
                "protocol: docs/memory-protocol.md (add it to CLAUDE.md with `memctl install --claude-md`)"
            )?;
        }
        MemoryCommand::Show { dir } => {
            let dir = dir_or_cwd(dir)?;
            let Some(mdir) = memctl_engine::find_memory_dir(&dir.display().to_string(), cfg) else {
                writeln!(
                    out,
                    "no {} here (run `memctl memory init`)",
                    memctl_engine::MEMORY_DIR
                )?;
                return Ok(());
            };
            let lines = memctl_engine::collect_memory(&mdir, cfg);
            if lines.is_empty() {
                writeln!(
                    out,
                    "{}: nothing to inject yet (templates only)",
                    mdir.display()
                )?;
            }
            for l in lines {
                writeln!(out, "- {}", l.text)?;
            }
        }
    }
    Ok(())
}

/// `memctl restore <session>`: the restore block Claude would get after this session's
/// compaction (memory files of the project included).
pub fn restore(
    engine: Engine,
    a: RestoreArgs,
    cfg: &RestoreConfig,
    out: &mut dyn Write,
) -> Result<()> {
    let session = crate::filters::session_id(&engine, &a.session)?;
    let project = match a.project {
        Some(p) => p,
        None => {
            let Some(s) = engine.session(&session)? else {
                bail!("no session with id {session:?}");
            };
            s.project
        }
    };
    let mut cfg = cfg.clone();
    if let Some(n) = a.chars {
        cfg.budget.max_chars = n.min(memctl_engine::MAX_RESTORE_CHARS);
    }
    cfg.fold = !a.no_fold;
    let r = engine.restore(&session, &project, RestoreKind::Compact, &cfg)?;
    if r.text.is_empty() {
        writeln!(out, "nothing to restore for session {session}")?;
    } else {
        writeln!(out, "{}", r.text)?;
    }
    Ok(())
}

/// `memctl summarize <session>`: extractive summary, plus `MEMCTL_SUMMARIZER_CMD`'s when set.
pub fn summarize(
    engine: Engine,
    a: SummarizeArgs,
    ext: &memctl_engine::ExternalSummaryConfig,
    out: &mut dyn Write,
) -> Result<()> {
    let Some(s) = engine.summarize_with_external(&a.session, &SummaryConfig::default(), ext)?
    else {
        bail!("no archived turns for session {:?}", a.session);
    };
    if a.json {
        serde_json::to_writer(&mut *out, &s)?;
        writeln!(out)?;
    } else {
        write!(out, "{}", s.render())?;
    }
    Ok(())
}

/// Refresh the summaries of sessions just ingested (`memctl ingest`); failures are logged.
pub fn summarize_sessions(engine: &Engine, sessions: &[String]) {
    for s in sessions {
        if let Err(e) = engine.summarize(s, &SummaryConfig::default()) {
            tracing::warn!(session = s, error = %e, "session summary not made");
        }
    }
}

/// `memctl prune`.
pub fn prune(engine: Engine, a: PruneArgs, out: &mut dyn Write) -> Result<()> {
    let p = memctl_engine::RankParams::default();
    let r = engine.prune(&p, a.dry_run, None)?;
    if a.json {
        serde_json::to_writer(&mut *out, &r)?;
        writeln!(out)?;
        return Ok(());
    }
    let verb = if a.dry_run { "would prune" } else { "pruned" };
    writeln!(
        out,
        "{verb} {} of {} chunks ({} pinned kept)",
        r.pruned, r.examined, r.pinned_kept
    )?;
    if a.dry_run {
        writeln!(
            out,
            "{} dead vector ids await compaction (run without --dry-run)",
            r.vectors_dropped
        )?;
    } else {
        writeln!(
            out,
            "{} turn entries unlinked; vector blocks {} → {} ({} dead ids dropped)",
            r.turns_unlinked, r.blocks_before, r.blocks_after, r.vectors_dropped
        )?;
    }
    Ok(())
}

/// `memctl pin` / `unpin`.
pub fn pin(engine: Engine, a: PinArgs, pinned: bool, out: &mut dyn Write) -> Result<()> {
    if !engine.set_pinned(a.id, pinned)? {
        bail!("no chunk with id {}", a.id);
    }
    writeln!(
        out,
        "chunk {} {}",
        a.id,
        if pinned {
            "pinned (never pruned)"
        } else {
            "unpinned"
        }
    )?;
    Ok(())
}
