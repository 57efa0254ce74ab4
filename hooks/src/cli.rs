//! `memctl`, the command-line interface.
//!
//! Exit codes: 0 success, 1 runtime failure (store, I/O), 2 usage error (clap's convention).
//! Every failure prints one clear `memctl: error: ...` line (with causes) on stderr.

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use memctl_engine::search::SearchMode;
use memctl_engine::{Engine, EngineOptions, SearchRequest, Settings};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// memctl: memory for coding agents that survives context compaction.
#[derive(Debug, Parser)]
#[command(name = "memctl", version, about = "memctl: memory for coding agents that survives context compaction", long_about = None)]
pub struct Cli {
    /// Data directory (default: $MEMCTL_HOME, else $XDG_DATA_HOME/memctl).
    #[arg(long, global = true)]
    pub data_dir: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check the installation: runtime, model, embedder, store, hooks, the agent's PATH
    /// (exits 1 when something is broken).
    Doctor(crate::doctor::DoctorArgs),
    /// Install ONNX Runtime and the model into the data dir (pinned sha256; no checkout needed).
    Setup(crate::setup::SetupArgs),
    /// Install memctl's hooks into Claude Code's settings (this project by default).
    Install(crate::install::InstallArgs),
    /// Remove memctl's hooks from Claude Code's settings.
    Uninstall(crate::install::InstallArgs),
    /// Archive Claude Code transcripts (a .jsonl file or a directory of them).
    Ingest(IngestArgs),
    /// Search archived turns.
    Search(SearchArgs),
    /// List archived sessions.
    Sessions(SessionsArgs),
    /// Show a chunk (by id) or a session (by id).
    Show(ShowArgs),
    /// Counts, sizes, embedder and index state.
    Status,
    /// Embed chunks stored without a model vector (run in the background by hooks).
    EmbedPending(EmbedPendingArgs),
    /// Keep the model loaded and embed prompts for hooks over a Unix socket (started by hooks
    /// when a session lost context; exits when idle).
    Embedder(EmbedderArgs),
    /// Tool outputs stored whole by the PostToolUse hook: list, show, search, prune.
    #[command(subcommand)]
    Swap(SwapCommand),
    /// One status line for Claude Code's `statusLine` (its JSON on stdin): context fill, trend.
    Statusline(crate::lifecycle::StatuslineArgs),
    /// Project memory files (`.memctl/memory/`): init, show.
    #[command(subcommand)]
    Memory(crate::lifecycle::MemoryCommand),
    /// Print the restore block of a session (what Claude gets after its compaction).
    Restore(crate::lifecycle::RestoreArgs),
    /// (Re)build a session's summary; with MEMCTL_SUMMARIZER_CMD also an external one.
    Summarize(crate::lifecycle::SummarizeArgs),
    /// Delete decayed, never-used chunks (pinned ones are kept) and compact the vector blocks.
    Prune(crate::lifecycle::PruneArgs),
    /// Pin a chunk: never pruned.
    Pin(crate::lifecycle::PinArgs),
    /// Unpin a chunk.
    Unpin(crate::lifecycle::PinArgs),
    /// Serve the archive to the agent as MCP tools over stdio (search, get, timeline,
    /// tool_output, sessions, session_summary, remember); started by Claude Code.
    Mcp,
}

/// `memctl swap ...`.
#[derive(Debug, Subcommand)]
pub enum SwapCommand {
    /// List swapped outputs, newest first.
    List {
        /// Only this session.
        #[arg(long)]
        session: Option<String>,
        /// JSON output (an array of entries).
        #[arg(long)]
        json: bool,
    },
    /// Print the exact stored output (byte for byte) of an id (counts as an access).
    Show {
        /// The id from `memctl swap list` or a restore inventory (a unique prefix works).
        id: String,
    },
    /// Find swapped outputs by meaning and words (no model needed).
    Search {
        /// What to look for.
        query: String,
        /// Number of results.
        #[arg(short = 'k', long, default_value_t = 5)]
        k: usize,
        /// Only this session.
        #[arg(long)]
        session: Option<String>,
        /// Only this project (default: all projects).
        #[arg(long)]
        project: Option<String>,
        /// JSON output.
        #[arg(long)]
        json: bool,
    },
    /// Remove outputs past their retention (never accessed: 6 h after the session went idle,
    /// at most 24 h; accessed: 48 h after the last access).
    Prune {
        /// Only report what would be removed.
        #[arg(long)]
        dry_run: bool,
    },
}

/// `memctl ingest`.
#[derive(Debug, Args)]
pub struct IngestArgs {
    /// Transcript files or directories (searched recursively for *.jsonl).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
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
    /// Number of results.
    #[arg(short = 'k', long, default_value_t = 10)]
    pub k: usize,
    /// Retrieval mode: hybrid, dense or lexical.
    #[arg(long, default_value = "hybrid")]
    pub mode: SearchMode,
    /// JSON output (one object with `results`).
    #[arg(long)]
    pub json: bool,
}

/// `memctl sessions`.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// Only this project (default: all).
    #[arg(long)]
    pub project: Option<String>,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// `memctl show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A chunk id (number) or a session id.
    pub id: String,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
}

/// `memctl embed-pending`.
#[derive(Debug, Args)]
pub struct EmbedPendingArgs {
    /// Stop after this many chunks.
    #[arg(long, default_value_t = 100_000)]
    pub limit: usize,
    /// Run as the hooks' background embedder: exit at once when another one holds the lock,
    /// log to the data dir's log file instead of stderr.
    #[arg(long)]
    pub background: bool,
}

/// `memctl embedder`.
#[derive(Debug, Args)]
pub struct EmbedderArgs {
    /// Run as started by a hook: log to the data dir's log file instead of stderr.
    #[arg(long)]
    pub background: bool,
}

/// Entry point of the `memctl` binary.
pub fn main() -> ExitCode {
    let loaded = Settings::load(std::env::vars_os());
    // Started by a hook (`embed-pending --background`) or by Claude Code (`statusline`):
    // these behave like hooks, a bad setting is logged and keeps its default.
    let background = std::env::args().any(|a| a == "--background");
    // The MCP server's stdout is the protocol and its stderr goes to Claude Code's debug log:
    // it logs to the data dir's file, like the hooks.
    // A detached background command whose data dir is gone (deleted after the hook started
    // it) must not re-create it just to log there: it logs to stderr (/dev/null) and fails.
    if background && !loaded.settings.data_dir.is_dir() {
        crate::logging::init_cli(loaded.settings.log.as_deref());
    } else if background || is_mcp_invocation(std::env::args().skip(1)) {
        crate::logging::init_file(&loaded.settings.data_dir, loaded.settings.log.as_deref());
    } else {
        crate::logging::init_cli(loaded.settings.log.as_deref());
    }
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // clap prints help/version to stdout (exit 0) and usage errors to stderr (exit 2).
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let lenient = background || matches!(cli.command, Command::Statusline(_) | Command::Mcp);
    for v in &loaded.unknown {
        if background {
            tracing::warn!(variable = v, "unknown MEMCTL_ variable ignored");
        } else {
            eprintln!("memctl: warning: unknown variable {v} ignored");
        }
    }
    if lenient {
        for e in &loaded.errors {
            tracing::warn!(error = %e, "bad setting ignored; using its default");
        }
    } else if !loaded.errors.is_empty() {
        for e in &loaded.errors {
            eprintln!("memctl: error: {e}");
        }
        return ExitCode::from(1);
    }
    let result = if matches!(cli.command, Command::Mcp) {
        // The MCP server writes the protocol to stdout from the runtime's threads: a lock held
        // here for the whole run would deadlock its first answer.
        run(cli, &loaded.settings, &mut std::io::sink())
    } else {
        run(cli, &loaded.settings, &mut std::io::stdout().lock())
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            eprintln!("memctl: error: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// Whether the arguments run `memctl mcp` (its first positional argument, after global flags).
fn is_mcp_invocation(mut args: impl Iterator<Item = String>) -> bool {
    while let Some(a) = args.next() {
        if a == "--data-dir" {
            args.next();
        } else if !a.starts_with('-') {
            return a == "mcp";
        }
    }
    false
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Run a parsed command with `settings`, writing to `out`.
pub fn run(cli: Cli, settings: &Settings, out: &mut dyn Write) -> Result<()> {
    // `--data-dir` replaces the data dir everywhere, the search for the runtime and model
    // (`<data dir>/runtime`, `<data dir>/models`, where `memctl setup` puts them) included.
    let with_dir;
    let s = match &cli.data_dir {
        Some(d) => {
            let mut c = settings.clone();
            c.data_dir.clone_from(d);
            with_dir = c;
            &with_dir
        }
        None => settings,
    };
    let opts = EngineOptions::from_settings(s);
    let install_env = || crate::install::InstallEnv::current(s, cli.data_dir.as_deref());
    match cli.command {
        Command::Doctor(ref a) => crate::doctor::run(a, opts, &install_env()?, out),
        Command::Setup(ref a) => crate::setup::run(a, &opts.data_dir, cli.data_dir.is_some(), out),
        Command::Install(ref a) => crate::install::command::run(a, true, &install_env()?, out),
        Command::Uninstall(ref a) => crate::install::command::run(a, false, &install_env()?, out),
        Command::Ingest(a) => ingest(open(opts)?, a, out),
        Command::Search(a) => search(open(opts)?, a, out),
        Command::Sessions(a) => sessions(open(opts)?, a, out),
        Command::Show(a) => show(open(opts)?, a, out),
        Command::Status => status(open(opts)?, out),
        Command::EmbedPending(a) => embed_pending(opts, a, out),
        Command::Embedder(_) => embedder(&opts, s, out),
        Command::Swap(c) => swap(open(opts)?, c, &s.swap, out),
        Command::Statusline(a) => crate::lifecycle::statusline(opts, &s.autopilot, &a, out),
        Command::Memory(c) => crate::lifecycle::memory_cmd(c, &s.restore.memory, out),
        Command::Restore(a) => crate::lifecycle::restore(open(opts)?, a, &s.restore, out),
        Command::Summarize(a) => crate::lifecycle::summarize(open(opts)?, a, &s.summarizer, out),
        Command::Prune(a) => crate::lifecycle::prune(open(opts)?, a, out),
        Command::Pin(a) => crate::lifecycle::pin(open(opts)?, a, true, out),
        Command::Unpin(a) => crate::lifecycle::pin(open(opts)?, a, false, out),
        Command::Mcp => crate::mcp::serve(opts, s),
    }
}

fn embed_pending(opts: EngineOptions, a: EmbedPendingArgs, out: &mut dyn Write) -> Result<()> {
    memctl_engine::paths::ensure_private_dir(&opts.data_dir)?;
    let Some(_lock) = crate::background::embed_lock(&opts.data_dir)? else {
        writeln!(out, "another embedder is running")?;
        return Ok(());
    };
    let engine = open(opts)?;
    let n = engine.embed_pending(a.limit)?;
    tracing::info!(chunks = n, "embedded pending chunks");
    writeln!(out, "embedded {n} chunks")?;
    Ok(())
}

/// `memctl embedder`: serve until idle (the process exits from the server's watchdog).
fn embedder(opts: &EngineOptions, s: &Settings, out: &mut dyn Write) -> Result<()> {
    if opts.model_disabled {
        bail!("the resident embedder needs the model (MEMCTL_EMBEDDER=hash is set)");
    }
    match memctl_engine::resident::serve(&opts.data_dir, &opts.onnx, &s.resident)
        .context("resident embedder")?
    {
        memctl_engine::resident::ServeEnd::AlreadyRunning => {
            writeln!(out, "a resident embedder already runs for this data dir")?;
        }
        other => writeln!(out, "resident embedder ended: {other:?}")?,
    }
    Ok(())
}

/// New transcript bytes per commit of `memctl ingest` (≈ 60 turns, tens of ms of write lock).
const INGEST_COMMIT_BYTES: u64 = 1 << 20;

/// How long a CLI command waits for the store's write lock: a person (or a background ingest)
/// can wait for hooks and other ingests to commit; a hook's 2 s would fail `memctl ingest`
/// whenever sessions are busy (seen: 3 of 4 concurrent ingests failed).
const CLI_WRITE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

fn open(opts: EngineOptions) -> Result<Engine> {
    let path = opts.store_path();
    let mut engine =
        Engine::open(opts).with_context(|| format!("opening the store at {}", path.display()))?;
    engine.set_write_timeout(CLI_WRITE_TIMEOUT);
    Ok(engine)
}

fn collect_transcripts(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).with_context(|| format!("cannot read {}", p.display()))?;
        if meta.is_dir() {
            walk(p, &mut files)?;
        } else {
            files.push(p.clone());
        }
    }
    files.sort();
    Ok(files)
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

fn ingest(engine: Engine, a: IngestArgs, out: &mut dyn Write) -> Result<()> {
    if a.background {
        return crate::background::archive(&engine, &a.paths, a.no_embed);
    }
    let files = collect_transcripts(&a.paths)?;
    if files.is_empty() {
        bail!("no .jsonl transcripts found in the given paths");
    }
    let total_bytes: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    let bar = if !a.quiet && (files.len() > 3 || total_bytes > 4 << 20) {
        let b = indicatif::ProgressBar::new(files.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} transcripts {msg}",
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
        ..Default::default()
    };
    let mut total = memctl_engine::IngestReport::default();
    let mut failures = Vec::new();
    for f in &files {
        match engine.ingest_transcript(f, &opts) {
            Ok(r) => total.merge(&r),
            Err(e) => failures.push(format!("{}: {e}", f.display())),
        }
        if let Some(b) = &bar {
            b.inc(1);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    crate::lifecycle::summarize_sessions(&engine, &total.sessions);
    if a.quiet {
        // nothing to print
    } else if a.json {
        serde_json::to_writer(&mut *out, &total)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "ingested {} transcripts: {} lines read, {} turns, {} chunks new, {} replaced, {} unchanged, {} duplicates, {} malformed lines skipped; embedder {}",
            files.len() - failures.len(),
            total.lines,
            total.turns,
            total.inserted,
            total.replaced,
            total.unchanged,
            total.duplicates,
            total.malformed,
            total.embedder.as_deref().unwrap_or("none"),
        )?;
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

fn search(engine: Engine, a: SearchArgs, out: &mut dyn Write) -> Result<()> {
    let mut req = SearchRequest::new(String::new(), a.k);
    req.mode = a.mode;
    crate::filters::apply(
        &engine,
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
        // Omitted trailing parameters keep their defaults.
        let d = memctl_engine::search::FusionParams::default();
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
        req.fusion = memctl_engine::search::FusionParams {
            lexical_max: p[0],
            lexical_min: p[1],
            dense_floor: p[2],
            coverage_floor: p[3],
            dense_margin_lo: p[4],
            dense_margin_hi: p[5],
            dense_trust: p[6],
        };
    }
    if !a.all_projects {
        let project = match &a.project {
            Some(p) => crate::filters::project(&engine, p)?,
            None => std::env::current_dir()
                .context("current directory")?
                .display()
                .to_string(),
        };
        req.projects = vec![project];
    }
    // Chunks archived by hooks wait for the background embedder; a dense query would miss them.
    // Embed a bounded number now when the model is at hand (the query needs it anyway).
    if req.mode != SearchMode::Lexical
        && engine.status()?.pending > 0
        && engine.model().is_ok()
        && let Err(e) = engine.embed_pending(1024)
    {
        tracing::warn!(error = %e, "embedding pending chunks before search failed");
    }
    if let Some(file) = &a.queries {
        return search_batch(&engine, &req, file, a.all_projects, out);
    }
    req.query = a.query.clone().unwrap_or_default();
    if req.query.trim().is_empty() {
        bail!("empty query");
    }
    let found = engine.search(&req)?;
    if a.json {
        let doc = serde_json::json!({
            "query": req.query,
            "embedder": found.embedder,
            "degraded": found.degraded,
            "excluded_by": found.excluded_by,
            "results": json_results(&found),
        });
        serde_json::to_writer(&mut *out, &doc)?;
        writeln!(out)?;
        return Ok(());
    }
    if let Some(d) = &found.degraded {
        writeln!(out, "note: {d}")?;
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
    for (i, r) in found.results.iter().enumerate() {
        let c = &r.record.chunk;
        writeln!(
            out,
            "{:>2}. [{:.3}] chunk {} · session {} · turn {}{} · {}",
            i + 1,
            r.scores.score,
            r.id,
            short(&c.session_id),
            c.turn_index,
            if c.parts > 1 {
                format!(" part {}/{}", c.part + 1, c.parts)
            } else {
                String::new()
            },
            c.started_at.as_deref().unwrap_or("-"),
        )?;
        writeln!(out, "    {}", c.summary)?;
        if !c.files.is_empty() {
            writeln!(out, "    files: {}", c.files.join(", "))?;
        }
        if !c.tools.is_empty() {
            writeln!(out, "    tools: {}", c.tools.join(", "))?;
        }
    }
    Ok(())
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
            "results": json_results(&found),
        });
        serde_json::to_writer(&mut *out, &doc)?;
        writeln!(out)?;
    }
    Ok(())
}

fn json_results(found: &memctl_engine::SearchOutcome) -> Vec<serde_json::Value> {
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
                "project": c.project,
                "turn_index": c.turn_index,
                "part": c.part,
                "turn_uuid": c.turn_uuid,
                "line_uuids": c.line_uuids,
                "started_at": c.started_at,
                "tools": c.tools,
                "files": c.files,
                "summary": c.summary,
                "text": c.text,
            })
        })
        .collect()
}

fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

fn sessions(engine: Engine, a: SessionsArgs, out: &mut dyn Write) -> Result<()> {
    let mut list = engine.sessions()?;
    if let Some(p) = &a.project {
        let p = crate::filters::project(&engine, p)?;
        list.retain(|(_, s)| s.project == p);
    }
    list.sort_by(|a, b| b.1.last_ts.cmp(&a.1.last_ts).then(a.0.cmp(&b.0)));
    if a.json {
        let v: Vec<serde_json::Value> = list
            .iter()
            .map(|(id, s)| {
                serde_json::json!({"session_id": id, "project": s.project, "turns": s.turns,
                    "first_ts": s.first_ts, "last_ts": s.last_ts, "summary": s.summary})
            })
            .collect();
        serde_json::to_writer(&mut *out, &v)?;
        writeln!(out)?;
        return Ok(());
    }
    if list.is_empty() {
        writeln!(out, "no sessions archived yet")?;
    }
    for (id, s) in list {
        writeln!(
            out,
            "{id}  {:>5} turns  {} → {}  {}",
            s.turns,
            s.first_ts.as_deref().unwrap_or("-"),
            s.last_ts.as_deref().unwrap_or("-"),
            s.project
        )?;
        if let Some(line) = s.summary.as_deref().and_then(|t| t.lines().next()) {
            writeln!(out, "    {}", line.trim_start_matches("Summary: "))?;
        }
    }
    Ok(())
}

fn show(engine: Engine, a: ShowArgs, out: &mut dyn Write) -> Result<()> {
    if let Ok(id) = a.id.parse::<u64>() {
        let Some(rec) = engine.chunk(id)? else {
            bail!("no chunk with id {id}");
        };
        if a.json {
            serde_json::to_writer(&mut *out, &rec)?;
            writeln!(out)?;
        } else {
            let c = &rec.chunk;
            writeln!(
                out,
                "chunk {id} · session {} · turn {} part {}/{}",
                c.session_id,
                c.turn_index,
                c.part + 1,
                c.parts
            )?;
            writeln!(out, "project: {}", c.project)?;
            writeln!(
                out,
                "time:    {} → {}",
                c.started_at.as_deref().unwrap_or("-"),
                c.ended_at.as_deref().unwrap_or("-")
            )?;
            writeln!(out, "tools:   {}", c.tools.join(", "))?;
            writeln!(out, "files:   {}", c.files.join(", "))?;
            writeln!(out, "summary: {}", c.summary)?;
            writeln!(out, "---\n{}", c.text)?;
        }
        return Ok(());
    }
    let Some(s) = engine.session(&a.id)? else {
        bail!("no chunk or session with id {:?}", a.id);
    };
    let turns = engine.session_chunks(&a.id)?;
    if a.json {
        let chunks: Vec<serde_json::Value> = turns
            .iter()
            .map(|((_, cid), r)| serde_json::json!({"id": cid, "turn_index": r.chunk.turn_index, "part": r.chunk.part, "summary": r.chunk.summary, "text": r.chunk.text}))
            .collect();
        serde_json::to_writer(
            &mut *out,
            &serde_json::json!({"session_id": a.id, "session": s, "chunks": chunks}),
        )?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(
        out,
        "session {} · project {} · {} turns",
        a.id, s.project, s.turns
    )?;
    if let Some(sum) = &s.summary {
        writeln!(out, "{}", sum.trim_end())?;
    }
    for (((turn, part), cid), r) in turns {
        let p = if r.chunk.parts > 1 {
            format!(".{part}")
        } else {
            String::new()
        };
        writeln!(out, "  turn {turn}{p} (chunk {cid}): {}", r.chunk.summary)?;
    }
    Ok(())
}

fn status(engine: Engine, out: &mut dyn Write) -> Result<()> {
    let st = engine.status()?;
    writeln!(out, "store:      {}", engine.store_path().display())?;
    writeln!(out, "file size:  {} bytes", st.file_bytes)?;
    writeln!(out, "projects:   {}", st.projects)?;
    writeln!(out, "sessions:   {}", st.sessions)?;
    writeln!(out, "chunks:     {}", st.chunks)?;
    writeln!(
        out,
        "pending:    {} chunks without a model vector",
        st.pending
    )?;
    for (emb, n) in &st.vectors {
        writeln!(out, "vectors:    {n} × {emb} (int8 blocks + f32)")?;
    }
    // `status` must stay cheap (statuslines and scripts call it): report the configured
    // embedder without loading the model; `memctl doctor` loads it and reports for real.
    let o = engine.options();
    let embedder = if o.model_disabled {
        "hash-ngram@v1/384 (model disabled)".to_string()
    } else if o.onnx.dylib_path.is_file() && o.onnx.model_path().is_file() {
        format!(
            "all-MiniLM-L6-v2@{}/384 (ONNX, loaded on demand)",
            o.onnx.variant
        )
    } else {
        "hash-ngram@v1/384 (fallback: model or runtime missing; see memctl doctor)".to_string()
    };
    writeln!(out, "embedder:   {embedder}")?;
    writeln!(
        out,
        "index:      exact int8 scan + f32 re-score (per query); BM25 postings in redb"
    )?;
    Ok(())
}

fn swap(
    engine: Engine,
    c: SwapCommand,
    cfg: &memctl_engine::swap::SwapConfig,
    out: &mut dyn Write,
) -> Result<()> {
    use memctl_engine::clock::unix_now;
    use memctl_engine::swap::human_bytes;
    match c {
        SwapCommand::List { session, json } => {
            let list = engine.swap_list(session.as_deref())?;
            if json {
                serde_json::to_writer(&mut *out, &list)?;
                writeln!(out)?;
                return Ok(());
            }
            if list.is_empty() {
                writeln!(out, "no swapped tool outputs")?;
                return Ok(());
            }
            for e in &list {
                writeln!(
                    out,
                    "{}  {:<8} {:>9}  session {}  shown {}×  {}",
                    e.short_id(),
                    e.tool,
                    human_bytes(e.bytes),
                    short(&e.session_id),
                    e.access_count,
                    e.input_summary
                )?;
                writeln!(out, "    {}", e.summary)?;
            }
            let st = engine.swap_stats()?;
            writeln!(
                out,
                "{} entries, {} distinct outputs, {}",
                list.len(),
                st.blobs,
                human_bytes(st.bytes)
            )?;
        }
        SwapCommand::Show { id } => {
            let (_, text) = engine.swap_show(&id, unix_now())?;
            out.write_all(text.as_bytes())?;
            out.flush()?;
        }
        SwapCommand::Search {
            query,
            k,
            session,
            project,
            json,
        } => {
            if query.trim().is_empty() {
                bail!("empty query");
            }
            let hits = engine.swap_search(&query, k, session.as_deref(), project.as_deref())?;
            if json {
                serde_json::to_writer(&mut *out, &hits)?;
                writeln!(out)?;
                return Ok(());
            }
            if hits.is_empty() {
                writeln!(out, "no swapped tool outputs match")?;
            }
            for (i, h) in hits.iter().enumerate() {
                writeln!(
                    out,
                    "{:>2}. [{:.3}] {}",
                    i + 1,
                    h.score,
                    h.entry.inventory_line()
                )?;
            }
        }
        SwapCommand::Prune { dry_run } => {
            let r = engine.swap_prune(cfg, unix_now(), dry_run)?;
            let verb = if dry_run { "would remove" } else { "removed" };
            for e in &r.removed {
                writeln!(
                    out,
                    "{verb} {}  {}  session {}  {}",
                    memctl_engine::swap::short_id(&e.id),
                    e.tool,
                    short(&e.session_id),
                    human_bytes(e.bytes)
                )?;
            }
            writeln!(out, "{verb} {} expired entries", r.removed.len())?;
        }
    }
    Ok(())
}
