//! `memctl statusline`, `sessions`, `prune`, `memory`, `install --claude-md` as real processes;
//! insta snapshots of the status line and the session list (fixed inputs, a store built from
//! tests/fixtures/sample with hash embeddings; temp paths redacted).

use crate::common;

use common::fixture;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::SID;
const SID2: &str = "0a1b2c3d-0000-4000-8000-000000000001";

fn memctl(home: &Path, args: &[&str], stdin: &[u8]) -> Output {
    common::memctl(home, args, stdin, &[("MEMCTL_EMBEDDER", "hash")])
}

fn ok(home: &Path, args: &[&str], stdin: &[u8]) -> String {
    let out = memctl(home, args, stdin);
    assert!(out.status.success(), "memctl {args:?} failed: {out:?}");
    String::from_utf8(out.stdout).expect("utf-8")
}

fn redact(text: &str, tmp: &Path) -> String {
    text.replace(&tmp.display().to_string(), "[TMP]")
}

/// A store with the sample session and a second, shorter session of another project (the first
/// 150 lines of the sample under another id and cwd).
fn store(tmp: &Path) -> PathBuf {
    let home = tmp.join("home");
    let text = std::fs::read_to_string(fixture()).expect("fixture");
    let second: String = text
        .lines()
        .take(150)
        .map(|l| {
            l.replace(SID, SID2)
                .replace("/home/dev/src/quill-notes", "/home/dev/src/ledger")
                + "\n"
        })
        .collect();
    let dir = tmp.join("transcripts");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join(format!("{SID2}.jsonl")), second).expect("write");
    std::fs::copy(fixture(), dir.join(format!("{SID}.jsonl"))).expect("copy");
    ok(
        &home,
        &["ingest", "--no-embed", dir.to_str().expect("utf-8")],
        b"",
    );
    home
}

#[test]
fn sessions_list_snapshot() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = store(tmp.path());
    let out = ok(&home, &["sessions"], b"");
    insta::assert_snapshot!("sessions", redact(&out, tmp.path()));
    let one = ok(
        &home,
        &["sessions", "--project", "/home/dev/src/ledger"],
        b"",
    );
    assert_eq!(one.lines().count(), 2, "{one}");
    assert!(one.starts_with(SID2));
}

fn statusline(home: &Path, args: &[&str], input: &str) -> String {
    let mut a = vec!["statusline"];
    a.extend_from_slice(args);
    let out = ok(home, &a, input.as_bytes());
    assert_eq!(out.lines().count(), 1, "one line: {out:?}");
    out
}

#[test]
fn statusline_snapshots() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = store(tmp.path());
    let fx = fixture();
    let mut all = String::new();
    let mut case = |name: &str, args: &[&str], input: String| {
        let line = statusline(&home, args, &input);
        all.push_str(&format!("{name}: {}", redact(&line, tmp.path())));
    };
    // Usage of the transcript's last assistant message, archived turns of the session.
    case(
        "transcript usage",
        &[],
        format!(
            r#"{{"session_id":"{SID}","transcript_path":"{}","model":{{"id":"claude-sonnet-4-5","display_name":"Sonnet 4.5"}},"workspace":{{"current_dir":"/home/dev/src/quill-notes","project_dir":"/home/dev/src/quill-notes"}},"version":"2.1.330"}}"#,
            fx.display()
        ),
    );
    // Claude Code's own current_usage, with a recorded trend: warn level.
    let state = home.join("autopilot").join(format!("{SID}.json"));
    std::fs::create_dir_all(state.parent().expect("dir")).expect("mkdir");
    std::fs::write(
        &state,
        r#"{"samples":[{"at":1,"tokens":120000},{"at":2,"tokens":140000},{"at":3,"tokens":146000},{"at":4,"tokens":152010}]}"#,
    )
    .expect("state");
    let usage = |read: u64| {
        format!(
            r#"{{"session_id":"{SID}","transcript_path":"{}","context_window":{{"context_window_size":200000,"total_input_tokens":999999,"current_usage":{{"input_tokens":10,"output_tokens":500,"cache_creation_input_tokens":2000,"cache_read_input_tokens":{read}}}}}}}"#,
            fx.display()
        )
    };
    case("warn with trend", &[], usage(150_000));
    case("critical", &[], usage(175_000));
    case("critical, colour", &["--color"], usage(175_000));
    case("explicit window", &["--window", "1000000"], usage(175_000));
    // No usage anywhere: chars / 3.5 estimate of a transcript, unknown session.
    let est = tmp.path().join("est.jsonl");
    std::fs::write(
        &est,
        format!(
            "{}\n",
            serde_json::json!({"type": "user", "message": {"role": "user", "content": "x".repeat(34_998)}})
        ),
    )
    .expect("write");
    case(
        "estimate",
        &[],
        format!(
            r#"{{"session_id":"new","transcript_path":"{}"}}"#,
            est.display()
        ),
    );
    case("empty input", &[], "{}".into());
    case("garbage input", &[], "not json".into());
    case(
        "missing transcript",
        &[],
        format!(r#"{{"session_id":"{SID}","transcript_path":"/nonexistent/t.jsonl"}}"#),
    );
    insta::assert_snapshot!("statusline", all);
}

#[test]
fn prune_pin_and_memory_commands() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = store(tmp.path());
    let dry = ok(&home, &["prune", "--dry-run"], b"");
    assert!(dry.starts_with("would prune 0 of "), "{dry}");
    let json = ok(&home, &["prune", "--json"], b"");
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    assert_eq!(v["pruned"], 0);
    assert_eq!(
        ok(&home, &["pin", "3"], b""),
        "chunk 3 pinned (never pruned)\n"
    );
    assert_eq!(ok(&home, &["unpin", "3"], b""), "chunk 3 unpinned\n");
    let missing = memctl(&home, &["pin", "999999"], b"");
    assert_eq!(missing.status.code(), Some(1));

    let proj = tmp.path().join("proj");
    std::fs::create_dir_all(&proj).expect("mkdir");
    let init = ok(
        &home,
        &["memory", "init", "--dir", proj.to_str().expect("utf-8")],
        b"",
    );
    assert_eq!(init.matches("created ").count(), 5, "{init}");
    let show = ok(
        &home,
        &["memory", "show", "--dir", proj.to_str().expect("utf-8")],
        b"",
    );
    assert!(show.contains("nothing to inject yet"), "{show}");
    std::fs::write(
        proj.join(".memctl/memory/gotchas.md"),
        "# Gotchas\n- run tests with -x\n",
    )
    .expect("write");
    let show = ok(
        &home,
        &["memory", "show", "--dir", proj.to_str().expect("utf-8")],
        b"",
    );
    assert_eq!(show, "- [gotchas] run tests with -x\n");
    // `memctl restore` with that project: the memory section comes first.
    let restored = ok(
        &home,
        &["restore", SID, "--project", proj.to_str().expect("utf-8")],
        b"",
    );
    let mem = restored.find("## Project memory").expect("memory section");
    assert!(mem < restored.find("## Latest turns").expect("turns"));
    let summary = ok(&home, &["summarize", SID, "--json"], b"");
    let s: serde_json::Value = serde_json::from_str(&summary).expect("json");
    assert_eq!(s["turns"], 41);
    let shown = ok(&home, &["show", SID], b"");
    assert!(
        shown.contains("\nSummary: ") && shown.contains("Files changed: "),
        "{shown}"
    );
}

#[test]
fn install_claude_md_is_idempotent() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    let proj = tmp.path().join("proj");
    std::fs::create_dir_all(&proj).expect("mkdir");
    std::fs::write(proj.join("CLAUDE.md"), "# Rules\n\nBe brief.\n").expect("write");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_memctl"))
            .args(args)
            .current_dir(&proj)
            .env("MEMCTL_HOME", &home)
            .env("HOME", tmp.path())
            .output()
            .expect("run");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).expect("utf-8")
    };
    // --dry-run prints the CLAUDE.md that would be written, and the settings.
    let dry = run(&["install", "--claude-md", "--dry-run"]);
    assert!(dry.contains("<!-- memctl:begin"), "{dry}");
    assert_eq!(
        std::fs::read_to_string(proj.join("CLAUDE.md")).expect("read"),
        "# Rules\n\nBe brief.\n"
    );
    run(&["install", "--claude-md"]);
    let once = std::fs::read_to_string(proj.join("CLAUDE.md")).expect("read");
    assert!(once.starts_with("# Rules\n\nBe brief.\n\n<!-- memctl:begin"));
    assert!(once.contains(".memctl/memory/"));
    run(&["install", "--claude-md"]);
    assert_eq!(
        std::fs::read_to_string(proj.join("CLAUDE.md")).expect("read"),
        once
    );
    run(&["uninstall", "--claude-md"]);
    assert_eq!(
        std::fs::read_to_string(proj.join("CLAUDE.md")).expect("read"),
        "# Rules\n\nBe brief.\n"
    );
}

fn hook(home: &Path, event: &str, payload: &str, env: &[(&str, &str)]) -> Output {
    common::hook(home, event, payload.as_bytes(), env)
}

#[test]
fn hooks_record_samples_note_above_warn_and_write_summaries() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    let t = tmp.path().join(format!("{SID}.jsonl"));
    let mut text = std::fs::read_to_string(fixture()).expect("fixture");
    let payload = |event: &str, extra: &str| {
        format!(
            r#"{{"session_id":"{SID}","transcript_path":"{}","cwd":"/home/dev/src/quill-notes","hook_event_name":"{event}"{extra}}}"#,
            t.display()
        )
    };
    let prompt = payload("UserPromptSubmit", r#","prompt":"next""#);
    // Below warn: samples recorded, nothing printed even with notes on.
    std::fs::write(&t, &text).expect("write");
    let out = hook(
        &home,
        "UserPromptSubmit",
        &prompt,
        &[("MEMCTL_AUTOPILOT_NOTE", "1")],
    );
    assert!(out.stdout.is_empty(), "{out:?}");
    // The context grows past 70 %: a one-line note, only when enabled.
    text.push_str(
        &serde_json::json!({"type": "assistant", "message": {"role": "assistant", "content": [],
            "usage": {"input_tokens": 5, "cache_read_input_tokens": 150_000, "cache_creation_input_tokens": 0}}})
        .to_string(),
    );
    text.push('\n');
    std::fs::write(&t, &text).expect("write");
    let quiet = hook(&home, "UserPromptSubmit", &prompt, &[]);
    assert!(
        quiet.stdout.is_empty(),
        "notes are off by default: {quiet:?}"
    );
    let out = hook(
        &home,
        "UserPromptSubmit",
        &prompt,
        &[("MEMCTL_AUTOPILOT_NOTE", "1")],
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json output");
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
    let note = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("text");
    assert!(
        note.starts_with("memctl autopilot: context is 75% full (150k/200k tokens"),
        "{note}"
    );
    assert_eq!(note.lines().count(), 1);
    let state: serde_json::Value = serde_json::from_slice(
        &std::fs::read(home.join("autopilot").join(format!("{SID}.json"))).expect("state"),
    )
    .expect("json");
    assert_eq!(state["samples"].as_array().map(Vec::len), Some(3));
    // The status line now shows the trend from those samples.
    let line = statusline(
        &home,
        &[],
        &format!(
            r#"{{"session_id":"{SID}","transcript_path":"{}"}}"#,
            t.display()
        ),
    );
    assert!(line.starts_with("memctl ▲ 75% ctx (150k/200k) ↑"), "{line}");

    // SessionEnd (and PreCompact) leave a session summary behind.
    hook(
        &home,
        "SessionEnd",
        &payload("SessionEnd", r#","reason":"other""#),
        &[],
    );
    let list = ok(&home, &["sessions"], b"");
    assert_eq!(list.lines().count(), 2, "{list}");
    assert!(
        list.lines()
            .nth(1)
            .is_some_and(|l| l.contains("files changed")),
        "{list}"
    );
}

/// A reading command never creates a data dir: a mistyped `--data-dir` is an error naming the path
/// (exit 1), and doctor only warns that nothing was archived yet. Writing commands still create
/// the data dir they are pointed at.
#[test]
fn reading_commands_do_not_create_a_data_dir() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    let missing = tmp.path().join("nonexistent/dir/deep");
    let m = missing.to_str().expect("utf-8");
    for args in [
        vec!["status"],
        vec!["sessions"],
        vec!["search", "anything"],
        vec!["show", "0a1b"],
        vec!["check"],
        vec!["export", "--all-projects", "--out", "-"],
        vec!["backup"],
        vec!["forget", "--text", "x", "--yes"],
    ] {
        let mut all = vec!["--data-dir", m];
        all.extend(&args);
        let out = memctl(&home, &all, b"");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
        assert!(
            err.contains("does not exist") && err.contains(m),
            "{args:?}: {err}"
        );
        assert!(!missing.exists(), "{args:?} created {m}");
    }
    let out = memctl(&home, &["--data-dir", m, "doctor", "--json"], b"");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("no store yet"), "{text}");
    assert!(
        !missing.join("memctl.redb").exists(),
        "doctor created a store"
    );

    // Writing commands create what they are pointed at.
    let fresh = tmp.path().join("fresh");
    let fixture = common::fixture();
    let f = fixture.to_str().expect("utf-8");
    let fr = fresh.to_str().expect("utf-8");
    ok(&home, &["--data-dir", fr, "ingest", "--no-embed", f], b"");
    assert!(ok(&home, &["--data-dir", fr, "status"], b"").contains("chunks"));
}

/// Every command that takes a session takes the 8-character ids `sessions` prints (any unique
/// prefix); one that names no session, or several, says so.
#[test]
fn session_prefixes_work_everywhere() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = store(tmp.path());
    let short = &SID[..8];
    assert!(ok(&home, &["sessions"], b"").contains(short));
    let shown = ok(&home, &["show", short], b"");
    assert!(shown.starts_with(&format!("session {SID} ")), "{shown}");
    let restored = ok(&home, &["restore", short], b"");
    assert!(restored.contains("## Latest turns"), "{restored}");
    let exported = ok(&home, &["export", "--session", short, "--out", "-"], b"");
    assert!(exported.contains(SID));
    // A third session so that a prefix names two of them.
    let other = "0a1b9999-0000-4000-8000-000000000002";
    let text = std::fs::read_to_string(fixture()).expect("fixture");
    let third: String = text
        .lines()
        .take(40)
        .map(|l| l.replace(SID, other) + "\n")
        .collect();
    let file = tmp.path().join(format!("{other}.jsonl"));
    std::fs::write(&file, third).expect("write");
    ok(
        &home,
        &["ingest", "--no-embed", file.to_str().expect("utf-8")],
        b"",
    );
    for args in [
        vec!["show", "0a1b"],
        vec!["restore", "0a1b"],
        vec!["search", "x", "--session", "0a1b"],
    ] {
        let out = memctl(&home, &args, b"");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
        assert!(
            err.contains("matches 2 sessions") && err.contains("0a1b2c3d"),
            "{args:?}: {err}"
        );
    }
    let out = memctl(&home, &["show", "ffff"], b"");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no archived session starts with it"));
}

/// Log lines written to a pipe or a file carry no colour escapes.
#[test]
fn logs_to_a_pipe_are_plain_text() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    let fixture = common::fixture();
    let out = common::memctl(
        &home,
        &["ingest", fixture.to_str().expect("utf-8")],
        b"",
        &[("MEMCTL_EMBEDDER", "hash"), ("MEMCTL_LOG", "debug")],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{out:?}");
    assert!(err.contains("DEBUG"), "no log line to look at: {err}");
    assert!(
        !err.contains('\u{1b}'),
        "colour escapes in piped logs: {err:?}"
    );
}

/// A mistyped flag gets a tip only when a flag is a typo away, and the usage line shown is the
/// subcommand's own, not one built around a far-fetched guess.
#[test]
fn usage_errors_suggest_only_near_flags() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = memctl(tmp.path(), &["search", "--foo", "x"], b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("unexpected argument '--foo'"), "{err}");
    assert!(!err.contains("--tool"), "far-fetched suggestion: {err}");
    assert!(err.contains("Usage: memctl search [OPTIONS]"), "{err}");

    let out = memctl(tmp.path(), &["search", "--all-project", "x"], b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("similar argument exists: '--all-projects'"),
        "{err}"
    );
}

/// `--data-dir`'s help says what the default is, and where it resolves here.
#[test]
fn data_dir_help_names_the_default() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    let out = memctl(&home, &["--help"], b"");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(text.contains("~/.local/share/memctl"), "{text}");
    assert!(
        text.contains(&format!("here: {}", home.display())),
        "{text}"
    );
}

/// What the demo runs: on a machine where `memctl` is on PATH and the checkout's model is set
/// up, but no hooks are installed, doctor reports no error (the hooks are a warning) and
/// exits 0.
#[test]
fn doctor_without_hooks_but_with_memctl_on_path_passes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    let user = tmp.path().join("user");
    std::fs::create_dir_all(&user).expect("mkdir");
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_memctl"))
        .parent()
        .expect("bin dir");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = common::memctl(
        &home,
        &["doctor"],
        b"",
        &[
            ("PATH", &path),
            ("HOME", user.to_str().expect("utf-8")),
            ("CLAUDE_PROJECT_DIR", user.to_str().expect("utf-8")),
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{text}\n{err}");
    assert!(
        !text.contains("ERROR") && !err.contains("ERROR"),
        "{text}\n{err}"
    );
}
