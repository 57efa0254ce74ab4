//! ONNX Runtime's own usage telemetry, off before the runtime loads.
//!
//! Microsoft's builds of ONNX Runtime (the ones `memctl setup` installs) start a telemetry
//! client when the runtime's environment is created: a device id and an event queue under
//! `~/.cache/Microsoft/DeveloperTools/.onnxruntime`, and uploads to Microsoft's collector.
//! `DisableTelemetryEvents` (ort's `with_telemetry(false)`) comes too late to stop that; only
//! `ORT_DISABLE_TELEMETRY` in the process environment before the runtime loads does. Setting a
//! variable in a running process is `unsafe` (another thread may read the environment), so
//! each binary executes itself again once, with the variable set, before anything else runs
//! (the hook too: after a compaction, prompt-time recall may load the query model in process).

use std::ffi::OsString;

/// The variable ONNX Runtime reads.
const VAR: &str = "ORT_DISABLE_TELEMETRY";

/// Replace this process by itself with `ORT_DISABLE_TELEMETRY=1`, unless the variable is set
/// already or the command never loads the runtime (`may_load_runtime` false: an exec costs
/// 1–2 ms of CPU, paid on every hook event otherwise). Returns only when it did not:
/// `Some(error)` when the exec failed (the caller logs it; the command still runs).
pub fn reexec_without_runtime_telemetry(may_load_runtime: bool) -> Option<String> {
    let set = std::env::var_os(VAR).is_some_and(|v| !v.is_empty());
    if set || !may_load_runtime {
        return None;
    }
    use std::os::unix::process::CommandExt;
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return Some(format!("finding this executable: {e}")),
    };
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_else(|| OsString::from("memctl"));
    let err = std::process::Command::new(&exe)
        .arg0(arg0)
        .args(args)
        .env(VAR, "1")
        .exec();
    Some(format!("executing {}: {err}", exe.display()))
}

/// [`reexec_without_runtime_telemetry`] for `memctl-hook <event>`: of the events, only a prompt
/// loads the runtime (recall's query model, after a compaction with no resident embedder); an
/// event not named on the command line may be one.
pub fn reexec_for_hook(event: Option<&str>) -> Option<String> {
    reexec_without_runtime_telemetry(event.is_none_or(|e| e == "UserPromptSubmit"))
}
