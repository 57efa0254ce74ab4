//! `memctl`, the command-line interface: the [`Cli`]/[`Command`] definitions, the exit-code
//! policy and the dispatch to one module per subcommand family (each owns its clap arguments),
//! so that new subcommands arrive as whole modules and this file stays a dispatcher.
//!
//! Exit codes: 0 success, 1 runtime failure (store, I/O), 2 usage error (clap's convention).
//! Every failure prints one clear `memctl: error: ...` line (with causes) on stderr.

mod check;
mod config;
mod embed;
mod export;
mod ingest;
mod search;
mod sessions;
mod status;
mod store_cmd;
mod swap;
mod usage;

pub(crate) use crate::open::{existing_data_dir, open, open_existing, open_for_reading};
pub use check::CheckArgs;
pub use config::{ConfigAction, ConfigArgs};
pub use embed::{EmbedPendingArgs, EmbedderArgs};
pub use ingest::IngestArgs;
pub use search::SearchArgs;
pub use sessions::{SessionsArgs, ShowArgs};
pub use status::{StatusArgs, StatusReport};
pub use store_cmd::{BackupArgs, MigrateArgs};
pub use swap::SwapCommand;

use anyhow::Result;
use clap::{Parser, Subcommand};
use memctl_engine::{EngineOptions, Loaded, Settings};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// memctl: memory for coding agents that survives context compaction.
#[derive(Debug, Parser)]
#[command(name = "memctl", version, about = "memctl: memory for coding agents that survives context compaction", long_about = None)]
pub struct Cli {
    /// Data directory (default: $MEMCTL_HOME, else $XDG_DATA_HOME/memctl, else
    /// ~/.local/share/memctl; the help names the one it resolves to).
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
    Install(memctl_hooks::install::InstallArgs),
    /// Remove memctl's hooks from Claude Code's settings.
    Uninstall(memctl_hooks::install::InstallArgs),
    /// Archive Claude Code transcripts (a .jsonl file or a directory of them).
    Ingest(IngestArgs),
    /// Search archived turns.
    Search(SearchArgs),
    /// List archived sessions.
    Sessions(SessionsArgs),
    /// Show a chunk (by id) or a session (by id).
    Show(ShowArgs),
    /// Counts, sizes, embedder and index state, and injection telemetry per session and
    /// hook (`--json`, `--session ID`).
    Status(StatusArgs),
    /// Check the store: redb's integrity check and every cross-table rule (exits 1 when one
    /// is broken).
    Check(CheckArgs),
    /// Embed chunks stored without a model vector now, in this process (the resident service
    /// does it in the background; when it is embedding, this tells it and returns).
    EmbedPending(EmbedPendingArgs),
    /// The resident service: keep the model loaded, embed prompts for hooks over a Unix
    /// socket and pending chunks at the lowest priority (started by hooks; exits when idle).
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
    /// Forget turns for good (chunk ids, --session, --project, --since/--until, --text): shows
    /// what matches; removes it with --yes.
    Forget(crate::forget::ForgetArgs),
    /// Pin a chunk: never pruned.
    Pin(crate::lifecycle::PinArgs),
    /// Unpin a chunk.
    Unpin(crate::lifecycle::PinArgs),
    /// Serve the archive to the agent as MCP tools over stdio (search, get, timeline,
    /// tool_output, sessions, session_summary, remember); started by Claude Code.
    Mcp,
    /// Write the archive to a portable JSON Lines file (`--out F.jsonl[.gz]`).
    Export(export::ExportArgs),
    /// Merge an export file into the archive (dedup by content; `--dry-run` first).
    Import(export::ImportArgs),
    /// Carry a store written by an earlier memctl forward to this one's schema (the old file
    /// is kept under `<data dir>/backups/`). Other commands do it on their own; hooks start it.
    Migrate(MigrateArgs),
    /// Write a consistent copy of the store while hooks keep writing (`--out FILE`).
    Backup(BackupArgs),
    /// A local web page to browse the archive: timeline, search, tool outputs, fixes (forget,
    /// pin, memory files) and health; 127.0.0.1 only, with a per-run token in the URL.
    Ui(crate::ui::UiArgs),
    /// Push this machine's chunks of shared projects to the team store (PostgreSQL +
    /// pgvector): idempotent, resumable; hooks run it in the background when one is configured.
    Sync(crate::team::SyncArgs),
    /// Team memory: init (admin), add-member (admin), share, unshare, status.
    #[command(subcommand)]
    Team(crate::team::TeamCommand),
    /// Show the configuration: every key, its effective value and where it came from
    /// (default, user file, project file, environment); `path`: the files read; `get KEY`.
    Config(ConfigArgs),
}

/// Entry point of the `memctl` binary.
pub fn main() -> ExitCode {
    // `statusline` (run by Claude Code at every prompt) never loads the runtime.
    let reexec_failed = memctl_hooks::no_telemetry::reexec_without_runtime_telemetry(
        subcommand_name(std::env::args().skip(1)).as_deref() != Some("statusline"),
    );
    let cwd = std::env::current_dir().ok();
    let loaded = Settings::load_layered(std::env::vars_os(), cwd.as_deref());
    // Started by a hook (`embedder --background`) or by Claude Code (`statusline`):
    // these behave like hooks, a bad setting is logged and keeps its default.
    let background = std::env::args().any(|a| a == "--background");
    // The MCP server's stdout is the protocol and its stderr goes to Claude Code's debug log:
    // it logs to the data dir's file, like the hooks.
    // A detached background command whose data dir is gone (deleted after the hook started
    // it) must not re-create it just to log there: it logs to stderr (/dev/null) and fails.
    if background && !loaded.settings.data_dir.is_dir() {
        memctl_hooks::logging::init_cli(loaded.settings.log.as_deref());
    } else if background || is_mcp_invocation(std::env::args().skip(1)) {
        memctl_hooks::logging::init_file(&loaded.settings.data_dir, loaded.settings.log.as_deref());
    } else {
        memctl_hooks::logging::init_cli(loaded.settings.log.as_deref());
    }
    if let Some(e) = reexec_failed {
        tracing::warn!(error = %e, "could not restart with ORT_DISABLE_TELEMETRY=1; ONNX Runtime may start its usage telemetry");
    }
    let cli = match parse(&loaded.settings.data_dir) {
        Ok(c) => c,
        Err(e) => {
            // clap prints help/version to stdout (exit 0) and usage errors to stderr (exit 2).
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    // Run beside hooks: `--background` ones (started by hooks) and `statusline` (Claude Code
    // runs it at each prompt).
    let beside_hooks = background || matches!(cli.command, Command::Statusline(_));
    let lenient = beside_hooks || matches!(cli.command, Command::Mcp);
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
    } else if !loaded.errors.is_empty() && !matches!(cli.command, Command::Config(_)) {
        for e in &loaded.errors {
            eprintln!("memctl: error: {e}");
        }
        return ExitCode::from(1);
    }
    // `memctl config` shows what it can, then the errors, and fails with them.
    // `config get` judges the errors itself (only its own key's fail it).
    let config_errors =
        matches!(&cli.command, Command::Config(c) if !c.is_get()) && !loaded.errors.is_empty();
    let result = if matches!(cli.command, Command::Mcp) {
        // The MCP server writes the protocol to stdout from the runtime's threads: a lock held
        // here for the whole run would deadlock its first answer.
        run(cli, &loaded, &mut std::io::sink())
    } else {
        run(cli, &loaded, &mut std::io::stdout().lock())
    };
    match result {
        Ok(()) if config_errors => {
            for e in &loaded.errors {
                eprintln!("memctl: error: {e}");
            }
            ExitCode::from(1)
        }
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            eprintln!("memctl: error: {}", error_text(&e));
            ExitCode::from(1)
        }
    }
}

/// Parse the command line; `default_data_dir`: what no `--data-dir` means here (for its help).
fn parse(default_data_dir: &std::path::Path) -> Result<Cli, clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    let mut cmd = Cli::command().mut_arg("data_dir", |a| {
        a.help(usage::data_dir_help(default_data_dir))
    });
    cmd.try_get_matches_from_mut(std::env::args_os())
        .and_then(|m| Cli::from_arg_matches(&m))
        .map_err(|e| {
            let sub = subcommand_name(std::env::args().skip(1));
            usage::without_far_suggestion(e, &mut cmd, sub.as_deref())
        })
}

/// The subcommand the arguments name (their first positional one, after global flags).
fn subcommand_name(mut args: impl Iterator<Item = String>) -> Option<String> {
    while let Some(a) = args.next() {
        if a == "--data-dir" {
            args.next();
        } else if !a.starts_with('-') {
            return Some(a);
        }
    }
    None
}

/// Whether the arguments run `memctl mcp` (its first positional argument, after global flags).
fn is_mcp_invocation(args: impl Iterator<Item = String>) -> bool {
    subcommand_name(args).as_deref() == Some("mcp")
}

/// An error and its causes on one line, each cause once: many engine errors already print
/// their source in their own message (`{path}: {source}`), and anyhow's `{:#}` would repeat it.
fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Run a parsed command with the `loaded` settings, writing to `out`.
pub fn run(cli: Cli, loaded: &Loaded, out: &mut dyn Write) -> Result<()> {
    // `--data-dir` replaces the data dir everywhere, the search for the runtime and model
    // (`<data dir>/runtime`, `<data dir>/models`, before the machine's install dir) included.
    let with_dir;
    let s = match &cli.data_dir {
        Some(d) => {
            let mut c = loaded.settings.clone();
            c.data_dir.clone_from(d);
            with_dir = c;
            &with_dir
        }
        None => &loaded.settings,
    };
    let opts = EngineOptions::from_settings(s);
    let install_env = || memctl_hooks::install::InstallEnv::current(s, cli.data_dir.as_deref());
    match cli.command {
        Command::Doctor(ref a) => crate::doctor::run(a, opts, &install_env()?, out),
        Command::Setup(ref a) => crate::setup::run(a, &s.install_dir, cli.data_dir.as_deref(), out),
        Command::Install(ref a) => {
            memctl_hooks::install::command::run(a, true, &install_env()?, out)
        }
        Command::Uninstall(ref a) => {
            memctl_hooks::install::command::run(a, false, &install_env()?, out)
        }
        Command::Ingest(a) if a.background => {
            crate::background::ingest(opts.for_background(s), s, &a.paths, a.no_embed)
        }
        Command::Ingest(a) => ingest::ingest(open(opts.for_bulk(s))?, s, a, out),
        Command::Search(a) if a.team => search::team(open(opts)?, s, a, out),
        Command::Search(a) => search::search(open_existing(opts)?, s, a, out),
        Command::Sessions(a) => sessions::sessions(open_existing(opts)?, a, out),
        Command::Show(a) => sessions::show(open_existing(opts)?, a, out),
        Command::Status(a) => status::status(open_for_reading(opts)?, &a, &s.autopilot, out),
        Command::Check(a) => {
            existing_data_dir(&opts)?;
            check::check(&opts, &a, out)
        }
        Command::EmbedPending(a) => embed::embed_pending(opts.for_bulk(s), a, out),
        Command::Embedder(_) => embed::embedder(&opts, s, out),
        Command::Swap(c) => swap::swap(open_existing(opts)?, c, &s.swap, out),
        Command::Statusline(a) => crate::lifecycle::statusline(opts, &s.autopilot, &a, out),
        Command::Memory(c) => crate::lifecycle::memory_cmd(c, &s.restore.memory, out),
        Command::Restore(a) => crate::lifecycle::restore(open_existing(opts)?, a, &s.restore, out),
        Command::Summarize(a) => {
            crate::lifecycle::summarize(open_existing(opts)?, a, &s.summarizer, out)
        }
        Command::Prune(a) => crate::lifecycle::prune(open_existing(opts)?, a, out),
        Command::Forget(a) => crate::forget::run(open_existing(opts)?, s, a, out),
        Command::Pin(a) => crate::lifecycle::pin(open_existing(opts)?, a, true, out),
        Command::Unpin(a) => crate::lifecycle::pin(open_existing(opts)?, a, false, out),
        Command::Mcp => crate::mcp::serve(opts, s),
        Command::Sync(a) => crate::team::sync_cmd(&open_existing(opts)?, s, &a, out),
        Command::Team(c) => crate::team::team_cmd(&opts.data_dir, s, c, out),
        Command::Config(a) => config::config(loaded, cli.data_dir.as_deref(), a, out),
        Command::Export(a) => export::export(open_existing(opts)?, a, &s.restore.memory, out),
        Command::Import(a) => export::import(open(opts)?, a, &s.restore.memory, out),
        Command::Migrate(a) => store_cmd::migrate(&opts, &a, out),
        Command::Backup(a) => store_cmd::backup(open_existing(opts)?, &a, out),
        Command::Ui(a) => crate::ui::run(open_existing(opts)?, &a, s, cli.data_dir.clone(), out),
    }
}

/// The first 8 characters of a session id, as search and swap lists print it.
fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

#[cfg(test)]
mod tests {
    use super::error_text;

    /// An error that prints its source in its own message, as many engine errors do.
    #[derive(Debug)]
    struct Wrapped(std::io::Error);

    impl std::fmt::Display for Wrapped {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "reading /x: {}", self.0)
        }
    }

    impl std::error::Error for Wrapped {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn each_cause_is_printed_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file (os error 2)");
        let e = anyhow::Error::new(Wrapped(io)).context("ingesting /x");
        assert_eq!(
            error_text(&e),
            "ingesting /x: reading /x: No such file (os error 2)"
        );
    }
}
