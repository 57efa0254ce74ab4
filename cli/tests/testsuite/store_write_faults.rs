//! A hook whose store writes fail mid-session: it exits 0, logs one line saying the
//! hook failed, leaves a store that `memctl check` finds whole, and the next hook archives
//! what it could not. The failure is real, for root too: the file size limit (`ulimit -f`,
//! RLIMIT_FSIZE) is set below the store's size, so every write redb makes past it fails with
//! EFBIG (SIGXFSZ ignored), while the small log file can still be written.

use crate::common;

use common::{PROJECT, SID, fixture};
use std::process::{Command, Stdio};

fn payload(t: &std::path::Path) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({"session_id": SID, "transcript_path": t,
        "cwd": PROJECT, "hook_event_name": "PreCompact", "trigger": "auto",
        "custom_instructions": null}))
    .expect("payload")
}

fn stored_parts(home: &std::path::Path) -> usize {
    let out = common::memctl(
        home,
        &["show", SID, "--json"],
        b"",
        &[("MEMCTL_EMBEDDER", "hash")],
    );
    assert!(out.status.success(), "show: {out:?}");
    #[derive(serde::Deserialize)]
    struct Shown {
        chunks: Vec<serde_json::Value>,
    }
    let s: Shown = serde_json::from_slice(&out.stdout).expect("show --json");
    s.chunks.len()
}

#[test]
fn hook_whose_store_writes_fail_exits_0_logs_and_the_next_hook_archives() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let t = dir.path().join(format!("{SID}.jsonl"));
    let full = std::fs::read_to_string(fixture()).expect("fixture");
    let lines: Vec<&str> = full.lines().collect();
    std::fs::write(&t, lines[..lines.len() / 2].join("\n") + "\n").expect("half");
    let env = [("MEMCTL_EMBEDDER", "hash")];
    common::hook(&home, "PreCompact", &payload(&t), &env);
    let before = stored_parts(&home);
    let store_len = std::fs::metadata(home.join("memctl.redb"))
        .expect("store")
        .len();
    assert!(
        store_len > 256 * 1024,
        "a store bigger than the limit below: {store_len}"
    );

    // The rest of the session arrives; this hook may not write past 64 KiB of any file (128 blocks of 512 bytes).
    std::fs::write(&t, &full).expect("whole");
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(r#"trap "" XFSZ; ulimit -f 128; exec "$0" PreCompact"#)
        .arg(common::hook_bin());
    let hook_out = {
        use std::io::Write;
        cmd.env("MEMCTL_HOME", &home)
            .env("MEMCTL_EMBEDDER", "hash")
            .env("MEMCTL_BACKGROUND_EMBED", "0")
            .env("MEMCTL_RESIDENT", "0")
            .env("XDG_CONFIG_HOME", home.join("no-config"))
            .env_remove("MEMCTL_CONFIG")
            .env_remove("CLAUDE_PROJECT_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn sh");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(&payload(&t))
            .expect("payload");
        child.wait_with_output().expect("wait")
    };
    assert_eq!(
        hook_out.status.code(),
        Some(0),
        "hooks always exit 0: {hook_out:?}"
    );
    let log = std::fs::read_to_string(home.join("logs/memctl.log")).unwrap_or_default();
    let failed: Vec<&str> = log.lines().filter(|l| l.contains("hook failed")).collect();
    assert_eq!(failed.len(), 1, "one log line says the hook failed:\n{log}");
    println!("the hook's log line: {}", failed[0]);
    assert!(
        failed[0].contains("File too large") || failed[0].contains("os error 27"),
        "the line names the write that failed: {}",
        failed[0]
    );
    assert_eq!(
        stored_parts(&home),
        before,
        "nothing of the failed write is visible"
    );

    // The store is whole, and the next hook (no limit) archives the rest of the session.
    let out = common::memctl(&home, &["check"], b"", &env);
    assert!(
        out.status.success(),
        "memctl check after the failed write: {out:?}"
    );
    common::hook(&home, "PreCompact", &payload(&t), &env);
    let after = stored_parts(&home);
    assert!(
        after > before,
        "the next hook archives the rest: {before} → {after}"
    );
    let out = common::memctl(&home, &["check"], b"", &env);
    assert!(out.status.success(), "memctl check at the end: {out:?}");
}
