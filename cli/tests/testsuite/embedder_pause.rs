//! UserPromptSubmit pauses the background embedder while it runs
//! (`memctl_hooks::pause`): the real embedder (`memctl embed-pending --background`, the real
//! model), the real hook binary, and the kernel's view of the process (`/proc/<pid>/stat`).
//! Linux only, like the pause.
#![cfg(target_os = "linux")]

use crate::common;

use common::{SID, fixture, hook, memctl};
use memctl_hooks::pause::EmbedderPause;
use memctl_hooks::progress;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The process state letter of `/proc/<pid>/stat` ('T' = stopped), None once it is gone.
fn state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..].trim_start().chars().next()
}

/// Wait (bounded) until `pid`'s state is stopped (`want`) or not stopped (`!want`).
fn wait_stopped(pid: u32, want: bool) -> bool {
    let give_up = Instant::now() + Duration::from_secs(5);
    loop {
        if (state(pid) == Some('T')) == want {
            return true;
        }
        if Instant::now() > give_up {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn signal(pid: u32, sig: &str) {
    let st = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .expect("kill");
    assert!(st.success(), "kill {sig} {pid}");
}

/// A real background embedder on `home`, once it has recorded itself (and embedded, when
/// chunks are pending).
fn start_embedder(home: &Path) -> Child {
    let mut child = common::spawn_background_embedder(home);
    let give_up = Instant::now() + Duration::from_secs(120);
    loop {
        let p = progress::read(home);
        if p.as_ref()
            .is_some_and(|p| p.pid == child.id() && p.embedded > 0)
        {
            let p = p.expect("record");
            assert!(p.start_ticks.is_some(), "the record names its start: {p:?}");
            return child;
        }
        assert!(Instant::now() < give_up, "the embedder never embedded");
        common::assert_running(&mut child, "the embedder ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn log(home: &Path) -> String {
    std::fs::read_to_string(home.join("logs/memctl.log")).unwrap_or_default()
}

#[test]
fn a_prompt_pauses_the_embedder_and_every_path_lets_it_go_on() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = common::home_with_pending(tmp.path());
    let fx = fixture();
    let fx = fx.to_str().expect("utf-8 path");
    let mut child = start_embedder(&home);
    let pid = child.id();

    // The library: stopped while the pause lives, running again after.
    let pause = EmbedderPause::pause(&home);
    assert!(pause.is_paused());
    assert!(wait_stopped(pid, true), "stopped while paused");
    drop(pause);
    assert!(wait_stopped(pid, false), "resumed on drop");

    // Handed to its guardian (what a hook does on its way out): still stopped right after,
    // also once the pause is dropped; this process does not end, so the guardian resumes it
    // when the lease (1 s) is over.
    let pause = EmbedderPause::pause(&home);
    assert!(wait_stopped(pid, true), "stopped while paused");
    pause.resume_after_exit();
    assert!(!pause.is_paused(), "handed over to the guardian");
    drop(pause);
    assert_eq!(state(pid), Some('T'), "the drop does not resume it again");
    assert!(
        wait_stopped(pid, false),
        "the guardian resumed it at the end of the lease"
    );

    // The hook, on its no-store path (no transcript, no recall): paused, then resumed.
    // No transcript: nothing to archive, so no detached `memctl ingest` outlives the test.
    let light = format!(
        r#"{{"session_id":"{SID}","cwd":"/tmp","hook_event_name":"UserPromptSubmit","prompt":"go on"}}"#
    );
    let env = [
        ("MEMCTL_HOOK_INLINE_PROMPT_ARCHIVE", "0"),
        ("MEMCTL_LOG", "memctl_hooks=debug,memctl_cli=debug,info"),
    ];
    hook(&home, "UserPromptSubmit", light.as_bytes(), &env);
    let text = log(&home);
    let paused = text.find("paused the background embedder");
    let resumed = text.find("the background embedder resumes after this hook");
    assert!(
        paused.is_some() && resumed > paused,
        "paused, then handed to a resumer: {text}"
    );
    assert!(wait_stopped(pid, false), "running after the hook");

    // The store path (inline archive): resumed before the store is opened.
    let payload = format!(
        r#"{{"session_id":"{SID}","transcript_path":"{fx}","cwd":"/tmp","hook_event_name":"UserPromptSubmit","prompt":"go on"}}"#
    );
    let before = log(&home).len();
    let env = [
        ("MEMCTL_HOOK_INLINE_PROMPT_ARCHIVE", "1"),
        (
            "MEMCTL_LOG",
            "memctl_hooks=debug,memctl_cli=debug,memctl_engine=debug,info",
        ),
    ];
    hook(&home, "UserPromptSubmit", payload.as_bytes(), &env);
    let text = log(&home)[before..].to_string();
    assert!(text.contains("resumed the background embedder"), "{text}");
    assert!(
        !text.contains("hook failed"),
        "the store path worked: {text}"
    );
    assert!(
        !text.contains("deadline passed"),
        "the store path worked: {text}"
    );
    assert!(wait_stopped(pid, false), "running after the hook");

    // Off by setting: no pause.
    let before = log(&home).len();
    let env = [
        ("MEMCTL_HOOK_INLINE_PROMPT_ARCHIVE", "0"),
        ("MEMCTL_HOOK_PAUSE_EMBEDDER", "0"),
        ("MEMCTL_LOG", "memctl_hooks=debug,memctl_cli=debug,info"),
    ];
    hook(&home, "UserPromptSubmit", light.as_bytes(), &env);
    assert!(
        !log(&home)[before..].contains("paused the background embedder"),
        "{}",
        &log(&home)[before..]
    );

    // A hook killed while it paused the embedder left it stopped: the next hook that opens
    // the store resumes it first, even one that pauses nothing itself (setting off here).
    common::assert_running(&mut child, "the embedder ended before the test did");
    signal(pid, "-STOP");
    assert!(wait_stopped(pid, true), "stopped by hand");
    let env = [
        ("MEMCTL_HOOK_INLINE_PROMPT_ARCHIVE", "1"),
        ("MEMCTL_HOOK_PAUSE_EMBEDDER", "0"),
    ];
    hook(&home, "UserPromptSubmit", payload.as_bytes(), &env);
    assert!(wait_stopped(pid, false), "the store path resumed it");

    // And so does any command.
    common::assert_running(&mut child, "the embedder ended before the test did");
    signal(pid, "-STOP");
    assert!(wait_stopped(pid, true), "stopped by hand");
    let out = memctl(&home, &["status", "--json"], b"", &[]);
    assert!(out.status.success(), "status: {out:?}");
    assert!(wait_stopped(pid, false), "`memctl status` resumed it");

    // The run still ends normally and embeds everything.
    let st = child.wait().expect("wait for the embedder");
    assert!(st.success(), "embedder: {st:?}");
    let s: serde_json::Value =
        serde_json::from_slice(&memctl(&home, &["status", "--json"], b"", &[]).stdout)
            .expect("status JSON");
    assert_eq!(s["pending"].as_u64(), Some(0), "{s}");
}

/// `memctl-hook UserPromptSubmit` on `home` whose stdin stays open until the caller closes
/// it: the hook pauses once its settings are loaded, then waits for its payload.
fn hook_waiting_for_stdin(home: &Path) -> Child {
    common::quiet_command(common::hook_bin(), home)
        .arg("UserPromptSubmit")
        .env("MEMCTL_BACKGROUND_EMBED", "0")
        .stdin(Stdio::piped())
        .spawn()
        .expect("spawn the hook")
}

#[test]
fn a_killed_or_stuck_hook_never_leaves_the_embedder_stopped() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = common::home_with_pending(tmp.path());
    let mut child = start_embedder(&home);
    let pid = child.id();

    // Killed while it waits for its payload (the embedder stopped): the guardian sees the
    // hook's end and resumes it.
    let mut stuck = hook_waiting_for_stdin(&home);
    assert!(
        wait_stopped(pid, true),
        "paused once the settings are loaded"
    );
    stuck.kill().expect("kill the hook");
    stuck.wait().expect("reap the hook");
    let killed_at = Instant::now();
    assert!(wait_stopped(pid, false), "resumed after the killed hook");
    assert!(
        killed_at.elapsed() < Duration::from_millis(500),
        "by the hook's end (5 ms after it), not by the 1 s lease: {:?}",
        killed_at.elapsed()
    );

    // A client that never closes stdin: resumed when the lease (1 s) is over, while the hook
    // still waits; the hook then ends normally once its stdin closes.
    let mut stuck = hook_waiting_for_stdin(&home);
    assert!(
        wait_stopped(pid, true),
        "paused once the settings are loaded"
    );
    let paused_at = Instant::now();
    assert!(wait_stopped(pid, false), "resumed at the end of the lease");
    assert!(
        paused_at.elapsed() > Duration::from_millis(500),
        "by the lease (1 s), not at once: {:?}",
        paused_at.elapsed()
    );
    assert!(
        stuck.try_wait().expect("try_wait").is_none(),
        "the hook still waits for its payload"
    );
    drop(stuck.stdin.take());
    let st = stuck.wait().expect("wait for the hook");
    assert!(st.success(), "a hook exits 0: {st:?}");
    common::assert_running(&mut child, "the embedder ended before the test did");
    child.kill().expect("kill the embedder");
    child.wait().expect("reap the embedder");
}

#[test]
fn a_record_whose_start_time_does_not_match_its_pid_is_never_signalled() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path();
    // A process that merely has the recorded pid (pid reuse): a real process of ours.
    let mut other = Command::new("sleep")
        .arg("30")
        .spawn()
        .expect("spawn sleep");
    let pid = other.id();
    let ticks = memctl_hooks::pause::start_ticks(pid).expect("start ticks");
    let mut record = progress::Progress::start(1);
    record.pid = pid;
    record.start_ticks = Some(ticks + 1);
    progress::write(home, &record);
    let pause = EmbedderPause::pause(home);
    assert!(!pause.is_paused());
    std::thread::sleep(Duration::from_millis(50));
    assert_ne!(state(pid), Some('T'), "another process is left alone");

    // Its own start time: that one is paused (the check is what differed).
    record.start_ticks = Some(ticks);
    progress::write(home, &record);
    let pause = EmbedderPause::pause(home);
    assert!(pause.is_paused());
    assert!(wait_stopped(pid, true));
    drop(pause);
    assert!(wait_stopped(pid, false));

    // A record without a start time (an earlier release's embedder): never paused.
    record.start_ticks = None;
    progress::write(home, &record);
    assert!(!EmbedderPause::pause(home).is_paused());
    other.kill().expect("kill sleep");
    other.wait().expect("wait sleep");
}
