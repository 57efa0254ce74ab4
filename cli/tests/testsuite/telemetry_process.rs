//! Injection telemetry end to end with the real binaries: what `memctl-hook` printed is what
//! `memctl status --json` reports, to the character; the status line shows the session's
//! tokens and records Claude Code's context-window numbers, which `status` then prefers.

use crate::common;

use common::{PROJECT, SID, fixture};
use serde_json::Value;
use std::path::Path;

fn payload(event: &str, session: &str, transcript: &Path, extra: &str) -> Vec<u8> {
    format!(
        r#"{{"session_id":"{session}","transcript_path":"{}","cwd":"{PROJECT}","hook_event_name":"{event}"{extra}}}"#,
        transcript.display()
    )
    .into_bytes()
}

fn status_json(home: &Path, args: &[&str]) -> Value {
    let mut a = vec!["status", "--json"];
    a.extend_from_slice(args);
    let out = common::memctl(home, &a, b"", &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    serde_json::from_slice(&out.stdout).expect("status --json is JSON")
}

fn additional_context(stdout: &[u8]) -> String {
    let v: Value = serde_json::from_slice(stdout).expect("hook output is JSON");
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("additionalContext")
        .to_string()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn status_reports_exactly_what_the_hooks_printed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let t = dir.path().join(format!("{SID}.jsonl"));
    std::fs::copy(fixture(), &t).expect("copy fixture");

    // Archive the session (UserPromptSubmit prints nothing by default: nothing recorded).
    let out = common::hook(
        &home,
        "UserPromptSubmit",
        &payload("UserPromptSubmit", SID, &t, r#","prompt":"x""#),
        &[],
    );
    assert!(out.stdout.is_empty(), "{out:?}");
    let before = status_json(&home, &[]);
    assert_eq!(u(&before["telemetry"]["sessions"]), 0, "{before}");
    assert!(u(&before["chunks"]) > 0, "existing fields stay: {before}");
    assert!(before["embedder"].is_string() && before["vectors"].is_array());

    // SessionStart(compact) restores: its additionalContext is what reached the model.
    let out = common::hook(
        &home,
        "SessionStart",
        &payload("SessionStart", SID, &t, r#","source":"compact""#),
        &[],
    );
    let ctx = additional_context(&out.stdout);
    let ctx_chars = ctx.chars().count() as u64;
    assert!(ctx_chars > 100, "a real restore block: {ctx}");

    // PreCompact: plain text for the summariser, counted apart.
    let out = common::hook(
        &home,
        "PreCompact",
        &payload(
            "PreCompact",
            SID,
            &t,
            r#","trigger":"manual","custom_instructions":"keep the DB notes""#,
        ),
        &[],
    );
    let instructions = String::from_utf8(out.stdout).expect("utf8");
    let instr_chars = instructions.chars().count() as u64;
    assert!(instr_chars > 0);

    let st = status_json(&home, &[]);
    let tel = &st["telemetry"];
    assert_eq!(u(&tel["sessions"]), 1, "{st}");
    assert_eq!(u(&tel["total"]["calls"]), 2, "{st}");
    assert_eq!(u(&tel["total"]["injected_chars"]), ctx_chars, "{st}");
    assert_eq!(u(&tel["total"]["summarizer_chars"]), instr_chars, "{st}");
    assert_eq!(u(&tel["total"]["removed_chars"]), 0);
    // Tokens: the autopilot's estimator (3.5 characters per token by default).
    assert_eq!(
        u(&tel["total"]["injected_tokens"]),
        (ctx_chars as f64 / 3.5).round() as u64
    );
    let hooks = tel["hooks"].as_array().expect("hooks");
    let names: Vec<&str> = hooks.iter().filter_map(|h| h["hook"].as_str()).collect();
    assert_eq!(names, ["PreCompact", "SessionStart"]);
    assert_eq!(u(&hooks[1]["injected_chars"]), ctx_chars);
    assert_eq!(u(&hooks[1]["calls"]), 1);
    assert_eq!(u(&hooks[0]["summarizer_chars"]), instr_chars);
    let recent = tel["recent"].as_array().expect("recent");
    assert_eq!(recent.len(), 1);
    assert_eq!(recent[0]["session_id"], SID);
    assert_eq!(u(&recent[0]["total"]["injected_chars"]), ctx_chars);
    assert_eq!(u(&tel["skipped_lines"]), 0);

    // The file is the documented one: the session id as its name, one line per printing hook.
    let file = home.join("telemetry").join(format!("{SID}.jsonl"));
    let text = std::fs::read_to_string(&file).expect("telemetry file");
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(
        text.starts_with(r#"{"type":"hook","session_id":""#),
        "{text}"
    );

    // The status line: this session's tokens, and Claude Code's context numbers recorded.
    let line_in = format!(
        r#"{{"session_id":"{SID}","context_window":{{"context_window_size":200000,"current_usage":{{"input_tokens":1000,"cache_read_input_tokens":80000,"cache_creation_input_tokens":5000,"output_tokens":10}}}}}}"#
    );
    let out = common::memctl(&home, &["statusline"], line_in.as_bytes(), &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let line = String::from_utf8(out.stdout).expect("utf8");
    let want = format!(
        "mem +{}/\u{2212}0 tok",
        memctl_engine::format_tokens((ctx_chars as f64 / 3.5).round() as u64)
    );
    assert!(line.contains(&want), "{line:?} lacks {want:?}");
    assert!(line.contains("43% ctx (86k/200k)"), "{line}");

    // `--session`: that session only, the context from Claude Code preferred.
    let one = status_json(&home, &["--session", SID]);
    assert!(one.get("telemetry").is_none(), "{one}");
    let s = &one["session"];
    assert_eq!(u(&s["total"]["injected_chars"]), ctx_chars, "{one}");
    assert_eq!(u(&s["context"]["used_tokens"]), 86_000);
    assert_eq!(s["fill"]["source"], "claude_code");
    assert_eq!(u(&s["fill"]["window_tokens"]), 200_000);
    assert_eq!(s["fill"]["percent"].as_f64(), Some(43.0));
    let none = status_json(&home, &["--session", "no-such-session"]);
    assert!(none["session"].is_null(), "{none}");

    // The text form says the same.
    let out = common::memctl(&home, &["status", "--session", SID], b"", &[]);
    let text = String::from_utf8(out.stdout).expect("utf8");
    assert!(
        text.contains("context: 43% of 200k (from Claude Code)"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "injected {} chars",
            memctl_engine::format_count(ctx_chars)
        )),
        "{text}"
    );
}

#[test]
fn a_broken_telemetry_file_never_fails_the_hook() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let t = dir.path().join(format!("{SID}.jsonl"));
    std::fs::copy(fixture(), &t).expect("copy fixture");
    common::hook(
        &home,
        "UserPromptSubmit",
        &payload("UserPromptSubmit", SID, &t, r#","prompt":"x""#),
        &[],
    );
    // A directory where the session's file should be: the append fails.
    std::fs::create_dir_all(home.join("telemetry").join(format!("{SID}.jsonl"))).expect("mkdir");
    let out = common::hook(
        &home,
        "SessionStart",
        &payload("SessionStart", SID, &t, r#","source":"compact""#),
        &[],
    );
    assert!(
        additional_context(&out.stdout).contains("memctl-context"),
        "the hook still prints its output: {out:?}"
    );
    let log = std::fs::read_to_string(home.join("logs/memctl.log")).expect("log");
    assert!(log.contains("injection telemetry not recorded"), "{log}");
    let st = status_json(&home, &[]);
    assert_eq!(
        st["telemetry"]["unreadable"].as_array().map(Vec::len),
        Some(1),
        "{st}"
    );
}
