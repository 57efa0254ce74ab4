//! ONNX Runtime's own usage telemetry, off before the runtime loads.
//!
//! Microsoft's builds of ONNX Runtime (the ones `memctl setup` installs) start a telemetry
//! client when the runtime's environment is created: a device id and an event queue under
//! `~/.cache/Microsoft/DeveloperTools/.onnxruntime`, and uploads to Microsoft's collector.
//! `DisableTelemetryEvents` (ort's `with_telemetry(false)`) comes too late to stop that; only
//! `ORT_DISABLE_TELEMETRY` in the process environment before the runtime loads does. Setting a
//! variable in a running process is `unsafe` (another thread may read the environment), so a
//! command that may load the runtime executes itself again once, with the variable set, before
//! it does (the hook only for a prompt that may embed itself in process, after a compaction).

use std::ffi::OsString;

/// The variable ONNX Runtime reads.
const VAR: &str = "ORT_DISABLE_TELEMETRY";

/// Replace this process by itself with `ORT_DISABLE_TELEMETRY=1`, unless the variable is set
/// already or the command never loads the runtime (`may_load_runtime` false: an exec costs
/// a whole process start). Returns only when it did not: `Some(error)` when the exec failed
/// (the caller logs it; the command still runs).
pub fn reexec_without_runtime_telemetry(may_load_runtime: bool) -> Option<String> {
    if is_set() || !may_load_runtime {
        return None;
    }
    Some(exec_self())
}

/// [`reexec_without_runtime_telemetry`] for `memctl-hook`, which knows whether it may load the
/// runtime only from its payload (a prompt in a session that lost context may embed the prompt
/// in process: `memctl_engine::event_may_recall`). The payload, read from stdin already, is the
/// new process's stdin again: an in-memory file (never on disk), placed on fd 0.
pub fn reexec_hook_with_payload(payload: &[u8]) -> Option<String> {
    if is_set() {
        return None;
    }
    let file = match in_memory_copy(payload) {
        Ok(f) => f,
        Err(e) => return Some(format!("keeping the payload for the restart: {e}")),
    };
    if let Err(e) = rustix::stdio::dup2_stdin(&file) {
        return Some(format!("placing the payload on stdin: {e}"));
    }
    Some(exec_self())
}

fn is_set() -> bool {
    std::env::var_os(VAR).is_some_and(|v| !v.is_empty())
}

/// `payload` in a memfd, positioned at its start.
fn in_memory_copy(payload: &[u8]) -> std::io::Result<std::fs::File> {
    use std::io::{Seek, Write};
    let fd = rustix::fs::memfd_create("memctl-hook-payload", rustix::fs::MemfdFlags::CLOEXEC)?;
    let mut file = std::fs::File::from(fd);
    file.write_all(payload)?;
    file.rewind()?;
    Ok(file)
}

/// Execute this executable again with the same arguments and `VAR=1`; returns why it failed.
fn exec_self() -> String {
    use std::os::unix::process::CommandExt;
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return format!("finding this executable: {e}"),
    };
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_else(|| OsString::from("memctl"));
    let err = std::process::Command::new(&exe)
        .arg0(arg0)
        .args(args)
        .env(VAR, "1")
        .exec();
    format!("executing {}: {err}", exe.display())
}
