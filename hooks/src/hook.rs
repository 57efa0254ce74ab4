//! `memctl-hook <Event>`: the Claude Code hook.
//!
//! One exit policy: **always exit 0**. Exit 2 would block the user's prompt (UserPromptSubmit)
//! or skip compaction (PreCompact), exit 1 marks the hook failed; neither helps the user when
//! *we* fail. On any fault (bad payload, store busy, panic, deadline) we print nothing or a
//! valid degraded output and append a line to `<data dir>/logs/memctl.log`.
//!
//! Output formats (DESIGN §2, observed with the real CLI): SessionStart / UserPromptSubmit /
//! PostToolUse take `{"hookSpecificOutput":{"hookEventName":..,"additionalContext":..}}`;
//! PreCompact / PostCompact / SessionEnd take plain text (JSON fails validation there).

use memctl_engine::hooks::{HookConfig, HookEffects, HookEvent, HookOutput, HookPayload};
use memctl_engine::{Engine, EngineOptions};
use std::io::{Read, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Largest payload we read from stdin (tool responses can be big; beyond this we stop reading).
const MAX_PAYLOAD: u64 = 64 << 20;

/// Entry point of the `memctl-hook` binary.
pub fn main() -> ExitCode {
    let started = Instant::now();
    let opts = EngineOptions::from_env();
    let logging = crate::logging::init_file(&opts.data_dir);
    if !logging {
        // No writable log file (read-only data dir): stderr reaches Claude Code's debug log,
        // never the model.
        crate::logging::init_stderr_warn();
    }
    let event_arg = std::env::args().nth(1);
    let mut raw = Vec::new();
    if let Err(e) = std::io::stdin().take(MAX_PAYLOAD).read_to_end(&mut raw) {
        tracing::error!(error = %e, "reading the hook payload from stdin failed");
        return ExitCode::SUCCESS;
    }
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run(event_arg.as_deref(), &raw, opts, started)
    }));
    let output = match result {
        Ok(Ok((out, fx))) => {
            for t in &fx.background_ingest {
                spawn_background(&["ingest", "--no-embed", "--quiet"], Some(t));
            }
            if fx.pending_embeds > 0 {
                spawn_background_embedder();
            }
            out
        }
        Ok(Err(e)) => {
            tracing::error!(event = ?event_arg, error = %format!("{e:#}"), "hook failed; printing nothing");
            HookOutput::None
        }
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            tracing::error!(event = ?event_arg, panic = %msg, "hook panicked; printing nothing");
            HookOutput::None
        }
    };
    let text = output.render();
    if !text.is_empty() {
        let mut stdout = std::io::stdout().lock();
        if let Err(e) = stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
        {
            tracing::warn!(error = %e, "writing hook output failed");
        }
    }
    if logging {
        tracing::debug!(event = ?event_arg, ms = started.elapsed().as_secs_f64() * 1e3, "hook done");
    }
    ExitCode::SUCCESS
}

/// Parse the payload and dispatch to the engine. Every error ends as "print nothing".
pub fn run(
    event_arg: Option<&str>,
    raw: &[u8],
    opts: EngineOptions,
    started: Instant,
) -> anyhow::Result<(HookOutput, HookEffects)> {
    let payload = HookPayload::parse(raw, event_arg)?;
    let deadline = started + deadline_for(&payload.event);
    let engine = Engine::open(opts)?;
    let cfg = HookConfig::from_env();
    Ok(memctl_engine::hooks::handle(
        &engine, &payload, deadline, &cfg,
    )?)
}

/// Start `memctl embed-pending` detached (its own process group, no stdio), unless disabled
/// with `MEMCTL_BACKGROUND_EMBED=0` or another embedder holds the lock. The hook never waits.
fn spawn_background_embedder() {
    if std::env::var("MEMCTL_BACKGROUND_EMBED").is_ok_and(|v| v == "0") {
        return;
    }
    spawn_background(&["embed-pending", "--background"], None);
}

/// Start `memctl <args> [path]` detached: own process group, no stdio; the hook never waits.
fn spawn_background(args: &[&str], path: Option<&std::path::Path>) {
    let Some(memctl) = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("memctl")))
        .filter(|p| p.is_file())
    else {
        tracing::warn!("memctl binary not found next to memctl-hook; chunks stay pending");
        return;
    };
    let mut cmd = std::process::Command::new(memctl);
    cmd.args(args);
    if let Some(p) = path {
        cmd.arg(p);
    }
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    if let Err(e) = cmd.spawn() {
        tracing::warn!(error = %e, ?args, "could not start a background memctl");
    }
}

/// Internal deadline per event, well below the timeouts `memctl install` writes.
fn deadline_for(e: &HookEvent) -> Duration {
    let ms = match e {
        HookEvent::SessionEnd { .. } => 900,
        HookEvent::PreCompact { .. } => 8_000,
        HookEvent::SessionStart { .. } => 3_000,
        _ => 2_000,
    };
    Duration::from_millis(
        std::env::var("MEMCTL_HOOK_DEADLINE_MS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(ms),
    )
}
