//! Tool-output swap end to end, through the real binaries: a 100 kB Read output goes through
//! `memctl-hook PostToolUse`, compaction happens (PreCompact + SessionStart(compact)), the
//! restore inventory names its id, and the exact bytes come back by id (`memctl swap show`)
//! and by a query (`memctl swap search`).

use crate::common;

use common::{PROJECT, SID, fixture};
use std::path::Path;
use std::process::{Command, Output};

fn hook(home: &Path, event: &str, stdin: &[u8]) -> Output {
    common::hook(home, event, stdin, &[("MEMCTL_EMBEDDER", "hash")])
}

fn memctl(home: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_memctl"))
        .args(args)
        .env("MEMCTL_HOME", home)
        .env("MEMCTL_EMBEDDER", "hash")
        .output()
        .expect("run memctl");
    assert!(out.status.success(), "memctl {args:?}: {out:?}");
    out
}

fn common(event: &str, transcript: &Path) -> serde_json::Value {
    serde_json::json!({
        "session_id": SID,
        "transcript_path": transcript.display().to_string(),
        "cwd": PROJECT,
        "hook_event_name": event,
    })
}

fn with(mut base: serde_json::Value, extra: serde_json::Value) -> Vec<u8> {
    if let (Some(b), Some(e)) = (base.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            b.insert(k.clone(), v.clone());
        }
    }
    serde_json::to_vec(&base).expect("json")
}

/// ~100 kB of Rust source with a distinctive topic (tokenizer truncation and padding).
fn big_source() -> String {
    let mut s = String::from(
        "//! Tokenizer configuration loader: truncation and padding for the embedding model.\n\n",
    );
    let mut i = 0;
    while s.len() < 100_000 {
        s.push_str(&format!(
            "/// Truncation window {i} for the tokenizer.\npub fn truncation_window_{i}(cfg: &TokenizerConfig) -> usize {{\n    cfg.max_len.saturating_sub({i}) // padding to the longest sequence\n}}\n\n"
        ));
        i += 1;
    }
    s.push_str("pub struct TokenizerConfig {\n    pub max_len: usize,\n}\n");
    s
}

fn post_tool_use(
    tool: &str,
    input: serde_json::Value,
    response: serde_json::Value,
    t: &Path,
) -> Vec<u8> {
    with(
        common("PostToolUse", t),
        serde_json::json!({
            "tool_name": tool,
            "tool_input": input,
            "tool_response": response,
            "tool_use_id": format!("toolu_{tool}"),
        }),
    )
}

#[test]
fn big_read_is_swapped_listed_after_compaction_and_comes_back_exactly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let t = dir.path().join(format!("{SID}.jsonl"));
    std::fs::copy(fixture(), &t).expect("copy transcript");
    hook(
        &home,
        "UserPromptSubmit",
        &with(
            common("UserPromptSubmit", &t),
            serde_json::json!({"prompt": "go"}),
        ),
    );

    // A 100 kB Read, shaped as Claude Code sends it.
    let content = big_source();
    let path = format!("{PROJECT}/src/tokenizer_config.rs");
    let lines = content.lines().count();
    let out = hook(
        &home,
        "PostToolUse",
        &post_tool_use(
            "Read",
            serde_json::json!({"file_path": path}),
            serde_json::json!({"type": "text", "file": {"filePath": path, "content": content,
                "numLines": lines, "startLine": 1, "totalLines": lines}}),
            &t,
        ),
    );
    assert!(out.stdout.is_empty(), "PostToolUse prints nothing: {out:?}");

    // Distractors: a big Bash log (swapped), a small Read and an Edit (not swapped).
    let log = "INFO postgres connection pool started\nWARN slow query on table users\n".repeat(150);
    hook(
        &home,
        "PostToolUse",
        &post_tool_use(
            "Bash",
            serde_json::json!({"command": "docker logs db"}),
            serde_json::json!({"stdout": log, "stderr": "", "interrupted": false, "isImage": false}),
            &t,
        ),
    );
    hook(
        &home,
        "PostToolUse",
        &post_tool_use(
            "Read",
            serde_json::json!({"file_path": "/x/small.rs"}),
            serde_json::json!({"type": "text", "file": {"filePath": "/x/small.rs", "content": "fn small() {}\n"}}),
            &t,
        ),
    );
    hook(
        &home,
        "PostToolUse",
        &post_tool_use(
            "Edit",
            serde_json::json!({"file_path": "/x/e.rs"}),
            serde_json::json!({"filePath": "/x/e.rs", "originalFile": "y".repeat(50_000)}),
            &t,
        ),
    );
    let list: serde_json::Value =
        serde_json::from_slice(&memctl(&home, &["swap", "list", "--json"]).stdout).expect("json");
    let list = list.as_array().expect("array");
    assert_eq!(
        list.len(),
        2,
        "only the two big outputs are swapped: {list:?}"
    );
    let read = list
        .iter()
        .find(|e| e["tool"] == "Read")
        .expect("the Read entry");
    let id = read["id"].as_str().expect("id")[..12].to_string();
    assert_eq!(read["bytes"].as_u64(), Some(content.len() as u64));
    assert_eq!(read["session_id"], SID);
    assert_eq!(read["input_summary"], path.as_str());
    assert!(read["stored_bytes"].as_u64().expect("stored") < content.len() as u64 / 3);

    // Compaction: PreCompact archives, SessionStart(compact) restores with the inventory.
    hook(
        &home,
        "PreCompact",
        &with(
            common("PreCompact", &t),
            serde_json::json!({"trigger": "auto", "custom_instructions": null}),
        ),
    );
    let out = hook(
        &home,
        "SessionStart",
        &with(
            common("SessionStart", &t),
            serde_json::json!({"source": "compact"}),
        ),
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("restore JSON");
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .expect("additionalContext");
    assert!(
        ctx.contains("## Stored tool outputs (retrieve exactly with `memctl swap show <id>`)"),
        "{ctx}"
    );
    let line = ctx
        .lines()
        .find(|l| l.contains(&id))
        .unwrap_or_else(|| panic!("inventory lists {id}: {ctx}"));
    assert!(
        line.contains(" · Read · ") && line.contains("tokenizer_config.rs"),
        "{line}"
    );
    assert!(
        ctx.contains("## Latest turns of this session"),
        "turns still restored: {ctx}"
    );
    assert!(ctx.chars().count() <= 4000);

    // Exact bytes back by id.
    let shown = memctl(&home, &["swap", "show", &id]);
    assert!(
        shown.stdout == content.as_bytes(),
        "swap show must return the exact bytes"
    );

    // And by meaning: the query shares few exact words with the file's text.
    let found: serde_json::Value = serde_json::from_slice(
        &memctl(
            &home,
            &[
                "swap",
                "search",
                "tokenizer truncation config loader",
                "-k",
                "2",
                "--json",
            ],
        )
        .stdout,
    )
    .expect("search json");
    let top = &found[0]["entry"];
    assert_eq!(&top["id"].as_str().expect("id")[..12], id, "{found}");
    let again = memctl(
        &home,
        &["swap", "show", &top["id"].as_str().expect("id")[..12]],
    );
    assert!(again.stdout == content.as_bytes());

    // `show` counted as accesses; prune keeps fresh entries.
    let list: serde_json::Value =
        serde_json::from_slice(&memctl(&home, &["swap", "list", "--json"]).stdout).expect("json");
    let read = list
        .as_array()
        .expect("array")
        .iter()
        .find(|e| e["tool"] == "Read")
        .expect("read");
    assert_eq!(read["access_count"], 2);
    let pruned = memctl(&home, &["swap", "prune", "--dry-run"]);
    assert!(
        String::from_utf8_lossy(&pruned.stdout).contains("would remove 0 expired entries"),
        "{pruned:?}"
    );
    // Unknown ids fail clearly (exit 1), never print content.
    let bad = Command::new(env!("CARGO_BIN_EXE_memctl"))
        .args(["swap", "show", "ffffffffffff"])
        .env("MEMCTL_HOME", &home)
        .output()
        .expect("run");
    assert_eq!(bad.status.code(), Some(1));
    assert!(bad.stdout.is_empty());
}
