//! `<private>…</private>` spans are never stored: not from prompts, not from replies, not from
//! tool outputs (the swap). Real binaries, a real redb file, and a byte scan of it.

mod common;

use common::{PROJECT, SID, fixture};
use std::path::Path;

const SECRET_PROMPT: &str = "Kq7violetHarbor";
const SECRET_REPLY: &str = "Zt4amberLantern";
const SECRET_TOOL: &str = "Wp2copperFinch";

fn line(kind: &str, uuid: &str, content: serde_json::Value) -> String {
    let msg = if kind == "user" {
        serde_json::json!({"role": "user", "content": content})
    } else {
        serde_json::json!({"id": format!("msg_{uuid}"), "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5-20250929", "content": content,
            "stop_reason": "end_turn", "usage": {"input_tokens": 1, "output_tokens": 1}})
    };
    serde_json::json!({
        "parentUuid": null, "isSidechain": false, "userType": "external", "cwd": PROJECT,
        "sessionId": SID, "version": "2.0.37", "type": kind, "message": msg, "uuid": uuid,
        "timestamp": "2025-10-24T12:59:00.000Z"
    })
    .to_string()
}

fn scan(path: &Path, needle: &str) -> bool {
    let bytes = std::fs::read(path).expect("read store file");
    bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn private_spans_never_reach_the_store_or_the_swap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let t = dir.path().join(format!("{SID}.jsonl"));
    let mut text = std::fs::read_to_string(fixture()).expect("fixture");
    text.push_str(&line(
        "user",
        "priv-user-1",
        serde_json::json!(format!(
            "Deploy the hotfix. <private>The staging root password is {SECRET_PROMPT}.</private> Then tail the log."
        )),
    ));
    text.push('\n');
    text.push_str(&line(
        "assistant",
        "priv-asst-1",
        serde_json::json!([{"type": "text", "text": format!(
            "Deployed. <PRIVATE>I used {SECRET_REPLY} for the login</PRIVATE> and the log is clean."
        )}]),
    ));
    text.push('\n');
    std::fs::write(&t, text).expect("write transcript");

    let env = [("MEMCTL_EMBEDDER", "hash")];
    let out = common::memctl(
        &home,
        &["ingest", "--quiet", &t.display().to_string()],
        b"",
        &env,
    );
    assert!(out.status.success(), "{out:?}");

    // A big Bash output with a private span in the middle: swapped whole, minus the span.
    let mut stdout = "build step ok\n".repeat(3000);
    stdout.insert_str(
        stdout.len() / 2,
        &format!("<private>token {SECRET_TOOL}</private>\n"),
    );
    let payload = serde_json::json!({
        "session_id": SID, "transcript_path": t.display().to_string(), "cwd": PROJECT,
        "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "make deploy"},
        "tool_response": {"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false},
        "tool_use_id": "toolu_private_1",
    });
    common::hook(
        &home,
        "PostToolUse",
        &serde_json::to_vec(&payload).expect("json"),
        &env,
    );
    let swapped = common::memctl(&home, &["swap", "list", "--json"], b"", &env);
    assert!(swapped.status.success(), "{swapped:?}");
    let listed = String::from_utf8_lossy(&swapped.stdout).into_owned();
    assert!(
        listed.contains("make deploy"),
        "the output was swapped: {listed}"
    );

    let store = home.join("memctl.redb");
    for secret in [SECRET_PROMPT, SECRET_REPLY, SECRET_TOOL] {
        assert!(!scan(&store, secret), "{secret} is in the store file");
        let found = common::memctl(
            &home,
            &["search", secret, "--mode", "lexical", "--all-projects"],
            b"",
            &env,
        );
        assert!(
            !String::from_utf8_lossy(&found.stdout).contains(secret),
            "{found:?}"
        );
        let swap = common::memctl(&home, &["swap", "search", secret], b"", &env);
        assert!(
            !String::from_utf8_lossy(&swap.stdout).contains(secret),
            "{swap:?}"
        );
    }
    // What was around the spans is kept, with a marker where they were.
    let around = common::memctl(
        &home,
        &[
            "search",
            "tail the log",
            "--mode",
            "lexical",
            "--all-projects",
            "--json",
        ],
        b"",
        &env,
    );
    let around = String::from_utf8_lossy(&around.stdout).into_owned();
    assert!(around.contains("Then tail the log"), "{around}");
    assert!(around.contains("[REDACTED:private]"), "{around}");
}
