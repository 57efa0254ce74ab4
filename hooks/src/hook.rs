//! `memctl-hook [--agent claude|codex|gemini] <Event>`: the hook of every coding agent memctl
//! has an adapter for (Claude Code by default). What differs by agent (the payload in, the
//! output out) goes through [`Agent`]; the watchdog, deadline, spool and exit policy are one.
//!
//! One exit policy: **always exit 0**. Exit 2 would block the user's prompt (UserPromptSubmit)
//! or skip compaction (PreCompact), exit 1 marks the hook failed; neither helps the user when
//! *we* fail. On any fault (bad payload, store busy, panic, deadline) we print nothing or a
//! valid degraded output and append a line to `<data dir>/logs/memctl.log`.
//!
//! Output formats (observed with the real CLIs): see each adapter's `output.rs`. Claude Code's
//! SessionStart / UserPromptSubmit / PostToolUse take
//! `{"hookSpecificOutput":{"hookEventName":..,"additionalContext":..}}`; PreCompact /
//! PostCompact / SessionEnd take plain text (JSON fails validation there).

use crate::agent::{Adapter, Agent, Parsed};
use memctl_engine::{
    AgentEvent, Engine, EngineOptions, HookAnswer, HookConfig, HookEffects, Injection, Settings,
};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Largest payload we read from stdin (tool responses can be big; beyond this we stop reading).
const MAX_PAYLOAD: u64 = 64 << 20;

/// Store waits end this long before the deadline, so that a hook that could not get the store
/// still spools its work and prints its output before the watchdog gives up.
const STORE_RESERVE: Duration = Duration::from_millis(400);

/// The watchdog gives up this long before the deadline: spooling, printing and exiting take
/// up to ~130 ms on a loaded 2-core machine (measured with `scripts/bench_concurrency.py`).
const EXIT_MARGIN: Duration = Duration::from_millis(150);

/// What the worker thread reports.
type Outcome = std::thread::Result<anyhow::Result<HookAnswer>>;

/// Log what the hook goes on without. A hook never fails because of its configuration: a bad
/// value keeps its default, an unknown variable or argument is ignored.
fn log_ignored(
    errors: &[memctl_engine::SettingsError],
    unknown: &[String],
    problems: &[impl std::fmt::Display],
) {
    for e in errors {
        tracing::warn!(error = %e, "bad setting ignored; using its default");
    }
    for v in unknown {
        tracing::warn!(variable = v, "unknown MEMCTL_ variable ignored");
    }
    for p in problems {
        tracing::warn!(problem = %p, "bad memctl-hook argument ignored");
    }
}

/// Entry point of the `memctl-hook` binary.
///
/// The engine runs on a worker thread; this thread is a watchdog. Why: some waits cannot be
/// bounded from inside (redb's `open` waits for another process's commit with no timeout; a
/// slow disk stalls any write), and Claude Code SIGTERMs a hook past its timeout — losing the
/// work *and* the output. Past the event's deadline the watchdog spools what the hook was for
/// (its transcript, or its tool output) for the next hook, prints nothing and exits 0; exiting
/// ends the worker wherever it is, which redb survives like a kill (tested).
pub fn main() -> ExitCode {
    let started = Instant::now();
    // The same instant on a clock another process can read (`CLOCK_MONOTONIC`), for the debug
    // line at the end: a bench puts the hook's phases on its own timeline with it
    // (`scripts/bench_embedder_contention.py --phases`).
    let started_mono = monotonic_ns();
    let args = HookArgs::parse(std::env::args_os().skip(1));
    let HookSettings { settings, logging } = load_settings(&args);
    let opts = EngineOptions::from_settings(&settings);
    let opts_model_disabled = opts.model_disabled;
    let opts_store_path = opts.store_path();
    let cfg = HookConfig::from_settings(&settings);
    let event_arg = args.event;
    let home = args.data_dir.as_deref();
    let mut raw = Vec::new();
    if let Err(e) = std::io::stdin().take(MAX_PAYLOAD).read_to_end(&mut raw) {
        tracing::error!(error = %e, "reading the hook payload from stdin failed");
        return ExitCode::SUCCESS;
    }
    // From here on the engine's agent-neutral event; the agent's event name labels the output.
    let Some((
        agent,
        Parsed {
            event: agent_event,
            label: event,
            deadline,
        },
    )) = parse_payload(args.agent.as_deref(), &raw, event_arg.as_deref(), &settings)
    else {
        return ExitCode::SUCCESS;
    };
    let may_recall = may_recall_restarting(&raw, &agent_event, &opts, &cfg);
    drop(raw);
    let deadline = started + deadline;
    let data_dir = opts.data_dir.clone();
    let (tx, rx) = std::sync::mpsc::channel::<Outcome>();
    let worker = {
        let (agent_event, opts, cfg) = (agent_event.clone(), opts.clone(), cfg.clone());
        move || run(&agent_event, opts, &cfg, deadline, may_recall)
    };
    let spawned = std::thread::Builder::new()
        .name("memctl-hook".into())
        .spawn(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(worker));
            // The watchdog may have given up already; nobody to tell then.
            let _ = tx.send(r);
        });
    let outcome = match spawned {
        Ok(_) => rx.recv_timeout(
            deadline
                .checked_sub(EXIT_MARGIN)
                .unwrap_or(deadline)
                .saturating_duration_since(Instant::now()),
        ),
        Err(e) => {
            tracing::warn!(error = %e, "no worker thread; running without a watchdog");
            Ok(std::panic::catch_unwind(std::panic::AssertUnwindSafe(
                || run(&agent_event, opts, &cfg, deadline, may_recall),
            )))
        }
    };
    let output = match outcome {
        Ok(Ok(Ok(answer))) => {
            start_detached(
                &answer.effects,
                &settings,
                opts_model_disabled,
                &data_dir,
                home,
            );
            agent.render(&event, answer.reply)
        }
        Ok(Ok(Err(e)))
            if e.downcast_ref::<memctl_engine::EngineError>()
                .is_some_and(needs_migration) =>
        {
            // Never on the prompt path (seconds on a big store): a detached `memctl migrate`
            // does it; the transcript stays on disk and the next hook archives this turn.
            if job_needed(&data_dir, memctl_engine::JOB_MIGRATE, &opts_store_path) {
                tracing::warn!(event, error = %format!("{e:#}"), "store needs a migration; started `memctl migrate` in the background");
                spawn_background(&["migrate", "--background"], None, home);
            }
            nothing()
        }
        Ok(Ok(Err(e))) => {
            tracing::error!(event, error = %format!("{e:#}"), "hook failed; printing nothing");
            nothing()
        }
        Ok(Err(panic)) => {
            let msg = panic_message(panic.as_ref());
            tracing::error!(event, panic = %msg, "hook panicked; printing nothing");
            nothing()
        }
        Err(_) => {
            tracing::warn!(
                event,
                ms = started.elapsed().as_millis() as u64,
                "deadline passed (store busy or slow); giving up"
            );
            memctl_engine::rescue_event(&data_dir, &agent_event);
            nothing()
        }
    };
    print_output(output, &data_dir, &agent_event.session_id, &event);
    if logging && tracing::enabled!(tracing::Level::DEBUG) {
        // The main thread's time on a CPU and waiting for one, since the fork that made this
        // process (the kernel's schedstat): whether a slow call ran slowly or waited for a core.
        let (run_ms, wait_ms) = schedstat_ms().unzip();
        tracing::debug!(
            event,
            ms = started.elapsed().as_secs_f64() * 1e3,
            started_mono_ns = started_mono,
            run_ms,
            wait_ms,
            "hook done"
        );
    }
    ExitCode::SUCCESS
}

/// The agent `--agent` names (Claude Code when none) and its parse of the payload; `None`, and
/// logged, for an unknown agent (its payloads and outputs would be guessed) or a payload that
/// cannot be used: the hook then prints nothing.
fn parse_payload(
    agent: Option<&str>,
    raw: &[u8],
    event_arg: Option<&str>,
    settings: &Settings,
) -> Option<(Agent, Parsed)> {
    let agent = match agent.map(|a| (a, Agent::from_name(a))) {
        None => Agent::ClaudeCode,
        Some((_, Some(agent))) => agent,
        Some((name, None)) => {
            tracing::error!(agent = name, "unknown --agent; printing nothing");
            return None;
        }
    };
    let project_dir = settings.project_dir.as_deref();
    match agent.parse(raw, event_arg, project_dir, settings.hook.deadline_ms) {
        Ok(p) => Some((agent, p)),
        Err(e) => {
            tracing::error!(%agent, event = ?event_arg, error = %e, "hook failed; printing nothing");
            None
        }
    }
}

/// The text a panic was raised with (`panic!` with a literal or a formatted message).
fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("unknown panic")
}

/// [`memctl_engine::event_may_recall`] for this event, read once: it also decides whether `run`
/// needs the store. A prompt that may recall may load ONNX Runtime (the query model), so first
/// this process runs again with the runtime's usage telemetry off ([`crate::no_telemetry`]),
/// which returns only when that did not happen.
fn may_recall_restarting(
    raw: &[u8],
    event: &AgentEvent,
    opts: &EngineOptions,
    cfg: &HookConfig,
) -> bool {
    let may_recall = memctl_engine::event_may_recall(event, &opts.data_dir, cfg);
    if may_recall
        && !opts.model_disabled
        && let Some(e) = crate::no_telemetry::reexec_hook_with_payload(raw)
    {
        tracing::warn!(error = %e, "could not restart with ORT_DISABLE_TELEMETRY=1; ONNX Runtime may start its usage telemetry");
    }
    may_recall
}

/// The settings a hook runs with, and whether its log goes to the data dir's file.
#[derive(Debug)]
struct HookSettings {
    settings: Settings,
    logging: bool,
}

/// Load the settings as the CLI does (config files, then the environment over them; `--data-dir`
/// is this hook's `MEMCTL_HOME`), start logging, and log what was ignored.
fn load_settings(args: &HookArgs) -> HookSettings {
    let mut vars: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    if let Some(d) = &args.data_dir {
        // `--data-dir` is this hook's `MEMCTL_HOME` (the last value of a variable wins).
        vars.push(("MEMCTL_HOME".into(), d.clone().into_os_string()));
    }
    // The same loader as the CLI: config files (user, project), then the environment over
    // them. Two small files, read before the watchdog starts (bounded: regular files of at
    // most 64 KiB, see `memctl_engine::Settings::load`).
    let mut problems: Vec<String> = args.problems.clone();
    let cwd = match std::env::current_dir() {
        Ok(d) => Some(d),
        Err(e) => {
            problems.push(format!(
                "no working directory ({e}): no project config file read"
            ));
            None
        }
    };
    let loaded = Settings::load_layered(vars, cwd.as_deref());
    let logging =
        crate::logging::init_file(&loaded.settings.data_dir, loaded.settings.log.as_deref());
    if !logging {
        // No writable log file (read-only data dir): stderr reaches Claude Code's debug log,
        // never the model.
        crate::logging::init_stderr_warn();
    }
    log_ignored(&loaded.errors, &loaded.unknown, &problems);
    HookSettings {
        settings: loaded.settings,
        logging,
    }
}

/// Start what the hook's work left for detached processes: archives, the resident service's
/// embedding, a team sync. Never waits for any of them.
fn start_detached(
    fx: &HookEffects,
    settings: &Settings,
    model_disabled: bool,
    data_dir: &Path,
    home: Option<&Path>,
) {
    // `--background`: logs to the data dir and keeps going past a bad setting, like a
    // hook; a plain `--quiet` ingest would exit 1 on one and archive nothing, unseen.
    for t in &fx.background_ingest {
        spawn_background(&["ingest", "--background", "--no-embed"], Some(t), home);
    }
    for t in &fx.deferred_archive {
        if !job_needed(data_dir, memctl_engine::JOB_INGEST, t) {
            continue;
        }
        let args: &[&str] = if settings.embed.background && !model_disabled {
            &["ingest", "--background"]
        } else {
            &["ingest", "--background", "--no-embed"]
        };
        spawn_background(args, Some(t), home);
    }
    // Chunks stored with hash vectors: the resident service embeds them (told if it
    // runs, started if not). Never a process of its own: the service holds the model.
    let wake = fx.pending_embeds > 0 && settings.embed.background && !model_disabled;
    if wake {
        match memctl_binary() {
            Some(memctl) => crate::background::wake_service(&memctl, data_dir),
            None => {
                tracing::warn!("memctl binary not found next to memctl-hook; chunks stay pending")
            }
        }
    } else if fx.start_resident {
        // Exits at once when one already runs for this data dir.
        spawn_background(&["embedder", "--background"], None, home);
    }
    // Team memory: new chunks archived here go to the team store from a detached
    // `memctl sync` (the deferred archivers sync when they are done). No network here.
    let archived = fx
        .ingest
        .as_ref()
        .is_some_and(|r| r.inserted + r.replaced > 0);
    if archived
        && fx.deferred_archive.is_empty()
        && fx.background_ingest.is_empty()
        && crate::background::team_configured(settings, &settings.data_dir)
        && !crate::background::team_sync_running(&settings.data_dir)
    {
        spawn_background(&["sync", "--background"], None, home);
    }
}

/// What a hook prints on a fault: nothing, and nothing injected.
fn nothing() -> (String, Injection) {
    (String::new(), Injection::default())
}

/// Print the hook's output (its stdout bytes and what they put where, from
/// [`Agent::render`]); what reached the model is recorded as injection telemetry.
fn print_output(output: (String, Injection), data_dir: &Path, session_id: &str, event: &str) {
    let (text, injection) = output;
    if !text.is_empty() {
        let mut stdout = std::io::stdout().lock();
        match stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
        {
            // Injection telemetry (`memctl status`, the status line): what this hook put into
            // the model's context, measured on the text just printed (not recorded when the
            // print failed: nothing reached the model). An append to a small per-session
            // file, never the store; a fault is a warning, never the hook's failure.
            Ok(()) => memctl_engine::record_hook(data_dir, session_id, event, injection),
            Err(e) => tracing::warn!(error = %e, "writing hook output failed"),
        }
    }
}

/// Open the engine with every store wait bounded by `deadline`, and handle the event
/// (`may_recall`: [`memctl_engine::event_may_recall`] for it, read once by `main`).
pub fn run(
    event: &AgentEvent,
    opts: EngineOptions,
    cfg: &HookConfig,
    deadline: Instant,
    may_recall: bool,
) -> anyhow::Result<HookAnswer> {
    if let Some(light) = memctl_engine::handle_event_without_store(event, &opts, cfg, may_recall) {
        return Ok(light);
    }
    let data_dir = opts.data_dir.clone();
    let mut engine = open_engine(event, opts)?;
    engine.set_deadline(deadline.checked_sub(STORE_RESERVE).unwrap_or(deadline));
    // A forget killed before its store file was rewritten left forgotten bytes on disk: the
    // store's detached upkeep (`memctl migrate --background`) finishes it (seconds on a big
    // store: never here).
    // At most one start a minute (one waits for the write lock while another rewrites).
    let pending = engine.forget_pending().unwrap_or_else(|e| {
        tracing::warn!(error = %e, "could not read whether a forget is unfinished");
        false
    });
    if pending {
        let marker = data_dir.join(crate::background::FORGET_FINISH_MARKER);
        let recent = std::fs::metadata(&marker)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age < Duration::from_secs(60));
        if !recent {
            if let Err(e) = std::fs::write(&marker, b"") {
                // Without the marker the next hook starts another finish: harmless (one
                // waits for the other's write lock), so said and not fatal.
                tracing::warn!(path = %marker.display(), error = %e, "finish marker not written");
            }
            if job_needed(&data_dir, memctl_engine::JOB_MIGRATE, &engine.store_path()) {
                tracing::warn!("an interrupted forget is not finished; started the store's upkeep");
                spawn_background(&["migrate", "--background"], None, Some(data_dir.as_path()));
            }
        }
    }
    Ok(memctl_engine::handle_event(&engine, event, deadline, cfg)?)
}

/// The engine for `event`: read-only when handling it only reads the store
/// ([`memctl_engine::event_reads_only`]: no durable header writes on open and close), else, or
/// when a read-only open cannot serve (no store yet, one to migrate or to repair), read-write.
fn open_engine(event: &AgentEvent, opts: EngineOptions) -> anyhow::Result<Engine> {
    if memctl_engine::event_reads_only(event) {
        match Engine::open_read_only(opts.clone()) {
            Ok(engine) => return Ok(engine),
            Err(e) => tracing::debug!(error = %e, "no read-only open; opening read-write"),
        }
    }
    Ok(Engine::open(opts)?)
}

/// Whether to start background job `kind` for `file` (a transcript, or the store for a
/// migration): not when one runs, which serves the request left here (a burst of prompts
/// starts one process, not one per prompt). A request that cannot be recorded starts one all
/// the same (it logs what fails).
fn job_needed(data_dir: &Path, kind: &str, file: &Path) -> bool {
    match memctl_engine::request_job(data_dir, kind, file) {
        Ok(true) => true,
        Ok(false) => {
            tracing::debug!(kind, file = %file.display(), "a job for this file runs; left the request to it");
            false
        }
        Err(e) => {
            tracing::warn!(kind, error = %e, "no job request recorded; starting the job");
            true
        }
    }
}

/// Start `memctl <args> [path]` (the binary next to `memctl-hook`) detached, see
/// [`crate::background::spawn_detached`]. (`embedder --background` exits at once when
/// another service holds the data dir's lock.)
fn spawn_background(args: &[&str], path: Option<&Path>, data_dir: Option<&Path>) {
    let Some(memctl) = memctl_binary() else {
        tracing::warn!(
            ?args,
            "memctl binary not found next to memctl-hook; not started"
        );
        return;
    };
    crate::background::spawn_detached(&memctl, args, path, data_dir);
}

/// The `memctl` binary next to this `memctl-hook`.
fn memctl_binary() -> Option<PathBuf> {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("memctl")))
        .filter(|p| p.is_file())
}

/// `memctl-hook [--data-dir DIR] [--agent NAME] <Event>`: what `memctl install` writes.
/// Parsing never fails (a hook exits 0 whatever it is given): problems are logged and the rest
/// is used. The agent's name is checked by `main`, once logging runs: an unknown one prints
/// nothing, since its payloads and outputs would be guessed.
#[derive(Debug, Default, PartialEq, Eq)]
struct HookArgs {
    data_dir: Option<PathBuf>,
    agent: Option<String>,
    event: Option<String>,
    problems: Vec<String>,
}

impl HookArgs {
    fn parse(args: impl IntoIterator<Item = OsString>) -> Self {
        let mut out = Self::default();
        let mut args = args.into_iter();
        while let Some(a) = args.next() {
            let text = a.to_string_lossy();
            if text == "--data-dir" {
                match args.next().filter(|d| !d.is_empty()) {
                    Some(d) => out.data_dir = Some(PathBuf::from(d)),
                    None => out.problems.push("--data-dir without a directory".into()),
                }
            } else if let Some(d) = text.strip_prefix("--data-dir=") {
                out.data_dir = Some(PathBuf::from(d));
            } else if text == "--agent" {
                match args.next() {
                    Some(a) => out.agent = Some(a.to_string_lossy().into_owned()),
                    None => out.problems.push("--agent without a name".into()),
                }
            } else if let Some(a) = text.strip_prefix("--agent=") {
                out.agent = Some(a.to_string());
            } else if text.starts_with('-') || out.event.is_some() {
                out.problems.push(format!("unexpected argument {text:?}"));
            } else {
                out.event = Some(text.into_owned());
            }
        }
        out
    }
}

/// Now on `CLOCK_MONOTONIC`, in nanoseconds (0 where there is no such clock).
fn monotonic_ns() -> u64 {
    #[cfg(target_os = "linux")]
    {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
        (t.tv_sec as u64)
            .saturating_mul(1_000_000_000)
            .saturating_add(t.tv_nsec as u64)
    }
    #[cfg(not(target_os = "linux"))]
    {
        0
    }
}

/// This thread's CPU time and run-queue wait in ms (`/proc/thread-self/schedstat`), if known:
/// as of its last switch off a CPU or scheduler tick (the kernel adds a running thread's time
/// then), so the hook's main thread reads them after its wait for the worker.
fn schedstat_ms() -> Option<(f64, f64)> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let mut it = text.split_ascii_whitespace().map(|f| f.parse::<u64>().ok());
    let (run, wait) = (it.next()??, it.next()??);
    Some((run as f64 / 1e6, wait as f64 / 1e6))
}

/// True when `e` says the store must be migrated first.
fn needs_migration(e: &memctl_engine::EngineError) -> bool {
    use memctl_engine::{EngineError, StoreError};
    matches!(e, EngineError::Store(StoreError::NeedsMigration { .. }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn the_debug_clocks_read_this_threads_schedstat_and_a_rising_monotonic_clock() {
        let a = monotonic_ns();
        // Some CPU time to see in the thread's own counter.
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        // The kernel adds a running thread's time at its next switch (or tick): sleep once.
        std::thread::sleep(Duration::from_millis(2));
        let (run, wait) = schedstat_ms().expect("/proc/thread-self/schedstat");
        assert!(run > 0.0, "this thread ran: {run} ms");
        assert!(wait >= 0.0);
        let b = monotonic_ns();
        assert!(b > a && a > 0, "CLOCK_MONOTONIC {a} then {b}");
    }

    fn parse(args: &[&str]) -> HookArgs {
        HookArgs::parse(args.iter().map(OsString::from))
    }

    #[test]
    fn the_data_dir_and_the_event_are_read_and_bad_arguments_only_noted() {
        let a = parse(&["--data-dir", "/d/x y", "Stop"]);
        assert_eq!(a.data_dir, Some(PathBuf::from("/d/x y")));
        assert_eq!(a.event.as_deref(), Some("Stop"));
        assert!(a.problems.is_empty());
        assert_eq!(parse(&["PreCompact"]).event.as_deref(), Some("PreCompact"));
        let eq = parse(&["--data-dir=/d", "Stop"]);
        assert_eq!(eq.data_dir, Some(PathBuf::from("/d")));
        let bad = parse(&["Stop", "--data-dir"]);
        assert_eq!(bad.event.as_deref(), Some("Stop"));
        assert_eq!(bad.data_dir, None);
        assert_eq!(bad.problems.len(), 1);
        assert_eq!(parse(&["--verbose", "Stop", "extra"]).problems.len(), 2);
    }

    #[test]
    fn the_agent_is_read_in_both_spellings() {
        let a = parse(&["--data-dir", "/d", "--agent", "codex", "Stop"]);
        assert_eq!(
            (a.agent.as_deref(), a.event.as_deref()),
            (Some("codex"), Some("Stop"))
        );
        assert!(a.problems.is_empty());
        let eq = parse(&["--agent=gemini", "AfterAgent"]);
        assert_eq!(eq.agent.as_deref(), Some("gemini"));
        assert_eq!(parse(&["PreCompact"]).agent, None);
        let bad = parse(&["Stop", "--agent"]);
        assert_eq!((bad.agent, bad.problems.len()), (None, 1));
    }
}
