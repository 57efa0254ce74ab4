//! `memctl ingest`: archive transcripts of Claude Code, Codex CLI and Gemini CLI (each file's
//! format is recognised by its first line; `--agent` finds the folder an agent writes to).

use anyhow::{Context, Result, bail};
use clap::Args;
use memctl_engine::Engine;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `memctl ingest`.
#[derive(Debug, Args)]
pub struct IngestArgs {
    /// Transcript files or directories (searched recursively for *.jsonl).
    #[arg(required_unless_present = "agent")]
    pub paths: Vec<PathBuf>,
    /// Archive what this agent already wrote (claude: ~/.claude/projects, codex:
    /// $CODEX_HOME/sessions, gemini: ~/.gemini/tmp) when no path is given; with paths, only
    /// that agent's transcript files under them.
    #[arg(long, value_parser = memctl_hooks::agent::parse_agent)]
    pub agent: Option<memctl_engine::Agent>,
    /// Store hash vectors only and leave model embedding for later (`memctl embed-pending`).
    #[arg(long)]
    pub no_embed: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// No progress bar and no report (background use by hooks).
    #[arg(long)]
    pub quiet: bool,
    /// Run as a hook's deferred archive: quiet, log to the data dir, one archiver per
    /// transcript at a time (later ones wait and find little left), then embed what is pending.
    #[arg(long)]
    pub background: bool,
}

/// The human report: every count the README defines, the optional ones only when nonzero (a
/// first ingest reports new chunks only), and the space of the vectors this run wrote.
fn report_line(transcripts: usize, t: &memctl_engine::IngestReport) -> String {
    let mut s = format!(
        "ingested {transcripts} transcript{}: {} lines read, {} turns, {} chunks new",
        if transcripts == 1 { "" } else { "s" },
        t.lines,
        t.turns,
        t.inserted
    );
    for (n, what) in [
        (t.replaced, "replaced"),
        (t.unchanged, "unchanged"),
        (t.duplicates, "duplicates (text already stored, linked)"),
        (t.forgotten, "forgotten (not stored)"),
        (t.malformed, "malformed lines skipped"),
    ] {
        if n > 0 {
            s.push_str(&format!(", {n} {what}"));
        }
    }
    match &t.embedder {
        Some(e) if t.pending > 0 => s.push_str(&format!(
            "; vectors: {e}, {} chunks pending a model vector (memctl embed-pending)",
            t.pending
        )),
        Some(e) => s.push_str(&format!("; vectors: {e}")),
        None => s.push_str("; no new vectors"),
    }
    s
}

/// New transcript bytes per commit of `memctl ingest` (≈ 60 turns, tens of ms of write lock).
const INGEST_COMMIT_BYTES: u64 = 1 << 20;

fn collect_transcripts(
    s: &memctl_engine::Settings,
    paths: &[PathBuf],
    agent: Option<memctl_engine::Agent>,
) -> Result<Vec<PathBuf>> {
    let defaults;
    let paths = match agent {
        Some(a) if paths.is_empty() => {
            defaults = [history_dir(s, a).with_context(|| {
                format!("no home directory: give the folder {a} writes its transcripts to")
            })?];
            &defaults[..]
        }
        _ => paths,
    };
    let mut files = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).with_context(|| format!("cannot read {}", p.display()))?;
        if meta.is_dir() {
            walk(p, &mut files)?;
        } else {
            files.push(p.clone());
        }
    }
    if let Some(a) = agent {
        files.retain(|f| is_transcript_of(a, f));
    }
    files.sort();
    Ok(files)
}

/// Where an agent writes its session transcripts, under its config dir
/// ([`memctl_hooks::install::command::agent_dir`], the one `memctl install` writes to).
fn history_dir(s: &memctl_engine::Settings, agent: memctl_engine::Agent) -> Option<PathBuf> {
    use memctl_engine::Agent;
    let dir = memctl_hooks::install::command::agent_dir(s, agent)?;
    Some(dir.join(match agent {
        Agent::ClaudeCode => "projects",
        Agent::Codex => "sessions",
        Agent::Gemini => "tmp",
    }))
}

/// Whether a `.jsonl` file is named as `agent` names its transcripts (Codex
/// `rollout-*.jsonl`, Gemini `chats/session-*.jsonl`; Claude Code `<session>.jsonl`, which
/// the other two patterns exclude).
fn is_transcript_of(agent: memctl_engine::Agent, f: &Path) -> bool {
    use memctl_engine::Agent;
    let name = f
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let in_chats = f
        .parent()
        .and_then(|p| p.file_name())
        .is_some_and(|p| p == "chats");
    match agent {
        Agent::Codex => name.starts_with("rollout-"),
        Agent::Gemini => name.starts_with("session-") && in_chats,
        Agent::ClaudeCode => {
            let other = name.starts_with("rollout-") || (name.starts_with("session-") && in_chats);
            !other
        }
    }
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let entry = entry?;
        let path = entry.path();
        let ft = entry.file_type()?;
        if ft.is_dir() {
            walk(&path, files)?;
        } else if ft.is_file() && path.extension().is_some_and(|e| e == "jsonl") {
            // Only regular files: a FIFO named `*.jsonl` would block the whole ingest.
            files.push(path);
        }
    }
    Ok(())
}

pub(super) fn ingest(
    engine: Engine,
    s: &memctl_engine::Settings,
    a: IngestArgs,
    out: &mut dyn Write,
) -> Result<()> {
    let files = collect_transcripts(s, &a.paths, a.agent)?;
    if files.is_empty() {
        bail!("no .jsonl transcripts found in the given paths");
    }
    let total_bytes: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    // In bytes, advanced after every committed pass (1 MiB): a single big transcript moves
    // the bar too, not only the count of files.
    let bar = if !a.quiet && (files.len() > 3 || total_bytes > 4 << 20) {
        let b = indicatif::ProgressBar::new(total_bytes);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {bytes}/{total_bytes} {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(b)
    } else {
        None
    };
    let opts = memctl_engine::IngestOptions {
        embed_with_model: !a.no_embed,
        // Bounded commits: hooks of running sessions get the store between passes.
        commit_bytes: Some(INGEST_COMMIT_BYTES),
        progress: bar
            .clone()
            .map(|b| memctl_engine::IngestProgress(std::sync::Arc::new(move |n| b.inc(n)))),
        ..Default::default()
    };
    let mut total = memctl_engine::IngestReport::default();
    let mut failures = Vec::new();
    let mut done_bytes = 0u64;
    for (i, f) in files.iter().enumerate() {
        if let Some(b) = &bar {
            b.set_message(format!("transcript {}/{}", i + 1, files.len()));
        }
        match engine.ingest_transcript(f, &opts) {
            Ok(r) => total.merge(&r),
            Err(e) => failures.push(format!("{}: {e}", f.display())),
        }
        // Bytes archived before (not read again) and failed files count as done.
        done_bytes += std::fs::metadata(f).map_or(0, |m| m.len());
        if let Some(b) = &bar {
            b.set_position(done_bytes.min(total_bytes));
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    crate::lifecycle::summarize_sessions(&engine, &total.sessions);
    // Stale index entries of turns stored again across passes go now, when the model embedded
    // everything (a no-op while chunks are pending: the background embedder does it then).
    if total.pending == 0 && total.inserted + total.replaced > 0 {
        engine.reclaim().context("compacting the vector index")?;
    }
    if a.quiet {
        // nothing to print
    } else if a.json {
        serde_json::to_writer(&mut *out, &total)?;
        writeln!(out)?;
    } else {
        writeln!(out, "{}", report_line(files.len() - failures.len(), &total))?;
    }
    if !failures.is_empty() {
        bail!(
            "{} transcript(s) failed:\n  {}",
            failures.len(),
            failures.join("\n  ")
        );
    }
    Ok(())
}
