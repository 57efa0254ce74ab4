//! `memctl-hook --agent codex|gemini` as those CLIs run it: every payload the real binaries
//! sent a hook (`tests/fixtures/payloads/`, recorded by `scripts/record_agent_hooks.py`), fed
//! to the real process. Always exit 0, nothing logged as a failure, and stdout either empty
//! or the one output shape verified with that agent.

use crate::common;

use std::path::Path;

const CODEX: &str = include_str!("../../../tests/fixtures/payloads/codex-0.171.0.jsonl");
const GEMINI: &str = include_str!("../../../tests/fixtures/payloads/gemini-0.61.0.jsonl");

/// Run every payload of `fixture` through `memctl-hook <agent_arg...> <Event>` and check the
/// output; `context_events`: the events whose `additionalContext` the agent was seen to read.
fn replay(home: &Path, agent_args: &[&str], fixture: &str, context_events: &[&str]) -> usize {
    let mut n = 0;
    for line in fixture.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).expect("fixture json");
        let event = v["hook_event_name"].as_str().expect("event");
        let mut args = agent_args.to_vec();
        args.push(event);
        let out = common::run(common::hook_bin(), home, &args, line.as_bytes(), &[]);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
        if !out.stdout.is_empty() {
            let o: serde_json::Value =
                serde_json::from_slice(&out.stdout).expect("hook output is JSON");
            assert!(context_events.contains(&event), "{event} printed {o}");
            assert_eq!(o["hookSpecificOutput"]["hookEventName"], event);
            assert!(
                o["hookSpecificOutput"]["additionalContext"].is_string(),
                "{o}"
            );
            assert_eq!(o.as_object().map(|m| m.len()), Some(1), "{o}");
        }
        n += 1;
    }
    n
}

#[test]
fn recorded_codex_and_gemini_payloads_run_through_the_real_hook() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let codex = replay(
        &home,
        &["--agent", "codex"],
        CODEX,
        &["SessionStart", "UserPromptSubmit"],
    );
    let gemini = replay(
        &home,
        &["--agent=gemini"],
        GEMINI,
        &["SessionStart", "BeforeAgent"],
    );
    assert_eq!((codex, gemini), (16, 36), "every recorded payload ran");
    let log = std::fs::read_to_string(home.join("logs/memctl.log")).unwrap_or_default();
    for fault in ["hook failed", "panicked", "unknown --agent"] {
        assert!(!log.contains(fault), "{fault}: {log}");
    }
}

#[test]
fn an_unknown_agent_prints_nothing_and_logs_why() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let line = CODEX.lines().next().expect("a payload");
    let out = common::run(
        common::hook_bin(),
        &home,
        &["--agent", "cursor", "SessionStart"],
        line.as_bytes(),
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let log = std::fs::read_to_string(home.join("logs/memctl.log")).expect("log file");
    assert!(log.contains("unknown --agent"), "{log}");
}

/// A recorded Codex payload of `event` (from the compacting session), with its transcript and
/// project replaced.
fn codex_payload(event: &str, source: Option<&str>, transcript: &Path) -> Vec<u8> {
    let mut v: serde_json::Value = CODEX
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("fixture json"))
        .find(|v| {
            v["hook_event_name"] == event && source.is_none_or(|s| v["source"].as_str() == Some(s))
        })
        .expect("a recorded payload of the event");
    v["transcript_path"] = transcript.display().to_string().into();
    v["cwd"] = common::PROJECT.into();
    serde_json::to_vec(&v).expect("json")
}

/// The Codex compaction sequence (prompt, PreCompact, SessionStart `compact`) restores through
/// the verified output, and prints nothing at PreCompact, whose output shape is unverified.
/// The sample Claude Code transcript stands in for the rollout (the engine reads that format).
#[test]
fn a_codex_compaction_is_restored_through_additional_context() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let t = dir.path().join(format!("{}.jsonl", common::SID));
    std::fs::copy(common::fixture(), &t).expect("copy transcript");
    let run = |event: &str, source: Option<&str>| {
        let out = common::run(
            common::hook_bin(),
            &home,
            &["--agent", "codex", event],
            &codex_payload(event, source, &t),
            &[],
        );
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        String::from_utf8(out.stdout).expect("utf8")
    };
    run("UserPromptSubmit", None);
    assert_eq!(run("PreCompact", None), "", "no unverified output");
    assert_eq!(run("PostCompact", None), "");
    let out = run("SessionStart", Some("compact"));
    let v: serde_json::Value = serde_json::from_str(&out).expect("restore JSON");
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("context");
    assert!(ctx.contains("<memctl-context"), "{ctx}");
    assert_eq!(run("Stop", None), "");
}

/// An 800-line build log with its error near the end.
fn big_log() -> String {
    (1..=800)
        .map(|i| match i {
            790 => "error: migration E-7731 failed (lock timeout)\n".to_string(),
            _ => format!("step {i}: compiled module m{i} ok\n"),
        })
        .collect()
}

/// Codex's PostToolUse with a big shell output: the hook answers with the one replacing
/// output verified with Codex (`decision: block`, the digest as the reason), and the whole
/// output is stored.
#[test]
fn a_big_codex_shell_output_is_replaced_by_its_digest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let t = dir.path().join(format!("{}.jsonl", common::SID));
    std::fs::copy(common::fixture(), &t).expect("copy transcript");
    let mut v: serde_json::Value =
        serde_json::from_slice(&codex_payload("PostToolUse", None, &t)).expect("json");
    v["tool_response"] = big_log().into();
    let out = common::run(
        common::hook_bin(),
        &home,
        &["--agent", "codex", "PostToolUse"],
        &serde_json::to_vec(&v).expect("json"),
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let o: serde_json::Value = serde_json::from_slice(&out.stdout).expect("hook output JSON");
    assert_eq!(o["decision"], "block", "{o}");
    let digest = o["reason"].as_str().expect("reason");
    assert!(digest.contains("790│ error: migration E-7731"), "{digest}");
    assert!(digest.contains("memctl swap show"), "{digest}");
    assert!(!digest.contains("step 400:"), "{digest}");
    let list = common::memctl(&home, &["swap", "list", "--json"], b"", &[]);
    assert!(list.status.success(), "{list:?}");
    assert!(
        String::from_utf8_lossy(&list.stdout).contains("Bash"),
        "{list:?}"
    );
}

/// Gemini's AfterTool with a big shell output: stored whole in the swap, the output left as
/// Gemini made it (no clean replacement exists there), nothing printed.
#[test]
fn a_big_gemini_shell_output_is_stored_and_left_in_place() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let mut v: serde_json::Value = GEMINI
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("fixture json"))
        .find(|v| v["hook_event_name"] == "AfterTool")
        .expect("a recorded AfterTool payload");
    v["cwd"] = common::PROJECT.into();
    v["tool_response"]["llmContent"] = big_log().into();
    let out = common::run(
        common::hook_bin(),
        &home,
        &["--agent", "gemini", "AfterTool"],
        &serde_json::to_vec(&v).expect("json"),
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let list = common::memctl(&home, &["swap", "list", "--json"], b"", &[]);
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(text.contains("run_shell_command"), "{text}");
    let id = serde_json::from_str::<serde_json::Value>(&text).expect("json")[0]["id"]
        .as_str()
        .expect("an entry id")
        .to_string();
    let shown = common::memctl(&home, &["swap", "show", &id, "--lines", "790"], b"", &[]);
    assert_eq!(
        String::from_utf8_lossy(&shown.stdout).trim(),
        "error: migration E-7731 failed (lock timeout)"
    );
}
