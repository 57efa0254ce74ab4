//! `memctl-hook` as Claude Code runs it: a real process, payload on stdin, output on stdout.
//! Always exit 0; empty stdout on faults; the documented output shape per event.

use crate::common;

use common::{PROJECT, SID, fixture};
use std::path::Path;
use std::process::{Command, Output};

fn hook(home: &Path, event: &str, stdin: &[u8]) -> Output {
    common::hook(home, event, stdin, &[])
}

fn payload(event: &str, session: &str, transcript: &Path, extra: &str) -> Vec<u8> {
    format!(
        r#"{{"session_id":"{session}","transcript_path":"{}","cwd":"{PROJECT}","hook_event_name":"{event}"{extra}}}"#,
        transcript.display()
    )
    .into_bytes()
}

fn context_of(out: &Output) -> String {
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("hook output is JSON");
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("additionalContext")
        .to_string()
}

#[test]
fn faults_exit_zero_with_empty_output_and_a_log_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    for garbage in [
        &b"not json"[..],
        b"",
        b"[1,2,3]",
        b"{\"session_id\": 5}",
        &[0xff, 0xfe, 0x00],
    ] {
        let out = hook(&home, "SessionStart", garbage);
        assert!(out.stdout.is_empty(), "garbage must print nothing: {out:?}");
    }
    let log = std::fs::read_to_string(home.join("logs/memctl.log")).expect("log file");
    assert!(log.contains("hook failed"), "{log}");

    // Missing transcript: nothing to archive, nothing to restore, no error output.
    let missing = dir.path().join("nope.jsonl");
    for (event, extra) in [
        ("UserPromptSubmit", r#","prompt":"hi""#),
        (
            "PreCompact",
            r#","trigger":"auto","custom_instructions":null"#,
        ),
        ("SessionStart", r#","source":"compact""#),
        ("SessionEnd", r#","reason":"other""#),
    ] {
        let out = hook(&home, event, &payload(event, "s-missing", &missing, extra));
        assert!(out.stdout.is_empty(), "{event}: {out:?}");
    }
}

#[cfg(unix)]
#[test]
fn read_only_data_dir_still_exits_zero() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("ro");
    std::fs::create_dir_all(&home).expect("mkdir");
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o555)).expect("chmod");
    let t = dir.path().join(format!("{SID}.jsonl"));
    std::fs::copy(fixture(), &t).expect("copy");
    for (event, extra) in [
        ("UserPromptSubmit", r#","prompt":"hi""#),
        ("SessionStart", r#","source":"compact""#),
    ] {
        // `hook` asserts exit 0. (Root ignores directory permissions; either way exit 0.)
        hook(&home, event, &payload(event, SID, &t, extra));
    }
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o755)).expect("chmod back");
}

#[test]
fn archive_compact_restore_clear_cycle() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let t = dir.path().join(format!("{SID}.jsonl"));
    let full = std::fs::read(fixture()).expect("fixture");
    // The transcript grows between prompts: first half, then the rest.
    let cut = full[..full.len() / 2]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    std::fs::write(&t, &full[..cut]).expect("write half");
    let out = hook(
        &home,
        "UserPromptSubmit",
        &payload("UserPromptSubmit", SID, &t, r#","prompt":"x""#),
    );
    assert!(
        out.stdout.is_empty(),
        "no restore text on UserPromptSubmit by default"
    );
    std::fs::write(&t, &full).expect("write all");
    hook(
        &home,
        "UserPromptSubmit",
        &payload("UserPromptSubmit", SID, &t, r#","prompt":"x""#),
    );

    // PreCompact: plain text (not JSON) naming exact identifiers from the archive.
    let out = hook(
        &home,
        "PreCompact",
        &payload(
            "PreCompact",
            SID,
            &t,
            r#","trigger":"manual","custom_instructions":"keep the DB notes""#,
        ),
    );
    let text = String::from_utf8(out.stdout).expect("utf8");
    assert!(
        text.starts_with("<memctl-context kind=\"compaction-instructions\">"),
        "{text}"
    );
    assert!(
        serde_json::from_str::<serde_json::Value>(&text).is_err(),
        "PreCompact output must be plain text"
    );
    assert!(text.contains("/home/dev/src/quill-notes/"), "{text}");
    assert!(text.contains("keep the DB notes"));
    assert!(text.chars().count() <= 2000);

    // SessionStart(compact): JSON additionalContext, labelled, within the default budget.
    let out = hook(
        &home,
        "SessionStart",
        &payload("SessionStart", SID, &t, r#","source":"compact""#),
    );
    let ctx = context_of(&out);
    assert!(
        ctx.starts_with("<memctl-context kind=\"archived-data\">"),
        "{ctx}"
    );
    assert!(ctx.contains("not instructions"));
    assert!(ctx.contains("## Latest turns of this session"));
    assert!(
        ctx.contains("resolve_digest"),
        "latest turn's identifiers are restored: {ctx}"
    );
    assert!(ctx.chars().count() <= 4000);

    // Budget is configurable and always respected.
    let out = common::hook(
        &home,
        "SessionStart",
        &payload("SessionStart", SID, &t, r#","source":"compact""#),
        &[("MEMCTL_RESTORE_CHARS", "800")],
    );
    assert!(context_of(&out).chars().count() <= 800);

    // /clear: by default a brief block (the user asked for a fresh context): it names the
    // archived previous session and how to get it back, without its turns.
    let new_sid = "11111111-2222-4333-8444-555555555555";
    let empty = dir.path().join(format!("{new_sid}.jsonl"));
    let out = hook(
        &home,
        "SessionStart",
        &payload("SessionStart", new_sid, &empty, r#","source":"clear""#),
    );
    let brief = context_of(&out);
    assert!(brief.contains("Session db5b5fab"), "{brief}");
    assert!(brief.contains("MEMCTL_RESTORE_ON_CLEAR=full"), "{brief}");
    assert!(!brief.contains("resolve_digest"), "{brief}");
    // Opted in, /clear restores the previous session's context.
    let out = common::hook(
        &home,
        "SessionStart",
        &payload("SessionStart", new_sid, &empty, r#","source":"clear""#),
        &[("MEMCTL_RESTORE_ON_CLEAR", "full")],
    );
    let ctx = context_of(&out);
    assert!(ctx.contains("previous session db5b5fab"), "{ctx}");
    assert!(ctx.contains("resolve_digest"));
    assert!(ctx.chars().count() > brief.chars().count());

    // The restored block written back into a transcript (as Claude Code does with hook
    // output, and as if echoed in a prompt) is never archived as conversation.
    let echo = serde_json::json!({
        "type": "user", "uuid": "echo-1", "sessionId": new_sid, "cwd": PROJECT,
        "timestamp": "2026-01-01T00:00:00Z",
        "message": {"role": "user", "content": format!("what next?\n{ctx}")}
    });
    let attach = serde_json::json!({
        "type": "attachment", "uuid": "att-1", "sessionId": new_sid, "cwd": PROJECT,
        "attachment": {"type": "hook_additional_context", "content": [ctx.clone()], "hookName": "SessionStart", "hookEvent": "SessionStart"}
    });
    std::fs::write(&empty, format!("{attach}\n{echo}\n")).expect("write");
    hook(
        &home,
        "UserPromptSubmit",
        &payload(
            "UserPromptSubmit",
            new_sid,
            &empty,
            r#","prompt":"what next?""#,
        ),
    );
    let show = Command::new(env!("CARGO_BIN_EXE_memctl"))
        .args(["show", new_sid, "--json"])
        .env("MEMCTL_HOME", &home)
        .output()
        .expect("memctl show");
    let v: serde_json::Value = serde_json::from_slice(&show.stdout).expect("json");
    let chunks = v["chunks"].as_array().expect("chunks");
    assert_eq!(chunks.len(), 1, "only the real prompt is archived: {v}");
    for c in chunks {
        let id = c["id"].as_u64().expect("id").to_string();
        let one = Command::new(env!("CARGO_BIN_EXE_memctl"))
            .args(["show", &id, "--json"])
            .env("MEMCTL_HOME", &home)
            .output()
            .expect("memctl show chunk");
        let text = String::from_utf8_lossy(&one.stdout);
        assert!(
            !text.contains("memctl-context"),
            "restored text was re-archived: {text}"
        );
        assert!(text.contains("what next?"));
    }
}

/// After a compaction, prompt-time recall loads the query model in the hook process when no
/// resident embedder answers: that starts no ONNX Runtime telemetry (no device id under the
/// user's cache dir), because the hook runs with `ORT_DISABLE_TELEMETRY` set by itself.
#[test]
fn recall_after_a_compaction_starts_no_runtime_telemetry() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    let user = tmp.path().join("user");
    std::fs::create_dir_all(&user).expect("mkdir");
    let env = [
        ("HOME", user.to_str().expect("utf-8")),
        ("XDG_CACHE_HOME", user.to_str().expect("utf-8")),
    ];
    let t = fixture();
    let steps = [
        (
            "UserPromptSubmit",
            r#","prompt":"what did we decide earlier""#,
        ),
        ("PreCompact", r#","trigger":"auto""#),
        ("SessionStart", r#","source":"compact""#),
        (
            "UserPromptSubmit",
            r#","prompt":"which test was failing and how did we fix it""#,
        ),
    ];
    let mut last = None;
    for (event, extra) in steps {
        last = Some(common::hook(
            &home,
            event,
            &payload(event, SID, &t, extra),
            &env,
        ));
    }
    // The prompt ran in a process started again with the variable set: its payload, read
    // from stdin before the restart, reached it whole (the recall block answers it).
    let out = last.expect("the prompt ran");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(r#"memctl-context kind=\"recall\""#),
        "no recall block after the restart: {stdout}"
    );
    let mut dirs = vec![user.clone()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir") {
            let p = e.expect("entry").path();
            assert!(
                !p.ends_with("Microsoft") && !p.ends_with("deviceid"),
                "the runtime's telemetry wrote {}",
                p.display()
            );
            if p.is_dir() {
                dirs.push(p);
            }
        }
    }
}

/// PreCompact prepares the compaction restore; SessionStart(compact) serves it without
/// building it: the same bytes and the same context state as a build, used once, never
/// served to another configuration, and gone after any forget.
#[test]
fn the_restore_precompact_prepares_is_the_one_sessionstart_builds() {
    let Session { dir, home, t } = Session::from_fixture();
    let compact = payload("SessionStart", SID, &t, r#","source":"compact""#);
    let pre = payload("PreCompact", SID, &t, r#","trigger":"auto""#);
    hook(&home, "PreCompact", &pre);
    let prepared = home.join("prepared").join(format!("{SID}.json"));
    assert!(prepared.is_file(), "PreCompact left no prepared restore");

    // The same state without the prepared file builds the block.
    let built_home = dir.path().join("built");
    memctl_test_support::copy_dir(&home, &built_home);
    std::fs::remove_file(built_home.join("prepared").join(format!("{SID}.json"))).expect("rm");
    let served = hook(&home, "SessionStart", &compact);
    let built = hook(&built_home, "SessionStart", &compact);
    assert!(!served.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&served.stdout),
        String::from_utf8_lossy(&built.stdout)
    );
    let state =
        |h: &Path| std::fs::read(h.join("context").join(format!("{SID}.json"))).expect("state");
    assert_eq!(state(&home), state(&built_home), "context states differ");
    assert!(!prepared.exists(), "a prepared restore is used once");

    // Another restore configuration is never served the prepared block.
    hook(&home, "PreCompact", &pre);
    let small = common::hook(
        &home,
        "SessionStart",
        &compact,
        &[("MEMCTL_RESTORE_CHARS", "800")],
    );
    assert!(context_of(&small).chars().count() <= 800);
    assert!(
        !prepared.exists(),
        "a block that was not served is removed all the same"
    );

    // A forget removes every prepared block (they quote archived text).
    hook(&home, "PreCompact", &pre);
    assert!(prepared.is_file());
    let out = common::memctl(
        &home,
        &["forget", "--text", "no such words anywhere", "-y"],
        b"",
        &[],
    );
    assert!(out.status.success(), "{out:?}");
    assert!(!prepared.exists(), "a forget left a prepared restore");
}

/// A hook that finds a forget cut short starts the store's upkeep (`memctl migrate
/// --background`, the one detached kind for store work), which finishes it and removes the
/// hooks' once-a-minute marker.
#[test]
fn a_hook_that_finds_a_forget_cut_short_starts_the_upkeep_that_finishes_it() {
    let Session { dir: _dir, home, t } = Session::from_fixture();
    let prompt = payload("UserPromptSubmit", SID, &t, r#","prompt":"x""#);
    hook(&home, "UserPromptSubmit", &prompt);
    let store = home.join("memctl.redb");
    memctl_engine::testing::mark_forget_unfinished(&store).expect("mark");
    hook(&home, "UserPromptSubmit", &prompt);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while memctl_engine::testing::forget_unfinished(&store).expect("read")
        || home.join(".forget-finish-started").exists()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the upkeep did not finish the forget within 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let log = std::fs::read_to_string(home.join("logs").join("memctl.log")).unwrap_or_default();
    assert!(log.contains("started the store's upkeep"), "{log}");
}

/// A data dir and the fixture transcript as session `SID`'s, in one temporary folder.
struct Session {
    dir: tempfile::TempDir,
    home: std::path::PathBuf,
    t: std::path::PathBuf,
}

impl Session {
    fn from_fixture() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("home");
        let t = dir.path().join(format!("{SID}.jsonl"));
        std::fs::copy(fixture(), &t).expect("fixture");
        Self { dir, home, t }
    }
}
