//! Restore quality over a realistic session: 500 generated turns (fixed seed,
//! printed) plus four hand-written last turns, archived into a real redb store, restored at
//! 150 / 1000 / 4000 / 8000 chars. The block must carry substance: a pasted failure log keeps
//! its failure line, answers keep what they concluded (no "Here's a summary of the changes:"),
//! `error:` labels only real failures (never Read output or a passing run), trivial turns stay
//! out, paths are project-relative, the session's decisions and open TODOs are listed, what
//! Claude Code re-injects itself (CLAUDE.md, its auto-memory MEMORY.md) is not repeated, a larger
//! budget gives more lines, and a budget too small for anything says so.
//!
//! Hash embedder (no model): restore never loads the model on the hook path either, it seeds
//! retrieval with stored vectors.

use memctl_engine::{
    Engine, EngineOptions, IngestOptions, OnnxConfig, RestoreConfig, RestoreKind, RestoreMode,
};
use memctl_tests::transcript_gen::{GenConfig, generate_string};
use serde_json::{Value, json};

/// The generator's seed: change it to see another session (the properties must hold for any).
const SEED: u64 = 4242;
const TURNS: u64 = 500;

/// A line of CLAUDE.md, also pasted into a project memory file: restored by neither.
const CLAUDE_RULE: &str = "Always run cargo fmt and clippy before committing.";
/// A line of Claude Code's auto-memory MEMORY.md, recited by the assistant in a turn.
const AUTO_MEMORY: &str = "The staging database is reset every Monday at 06:00 UTC.";
/// A project memory line Claude Code does not re-inject: restored.
const OWN_MEMORY: &str = "Journal writes go through WalExt, never through File directly.";

struct Session {
    _dirs: [tempfile::TempDir; 3],
    engine: Engine,
    session: String,
    project: String,
    claude_dir: std::path::PathBuf,
    /// Output of every command and every failed tool call in the transcript: where a real
    /// error line comes from.
    failure_outputs: Vec<String>,
}

/// One hand-written JSONL line of the session.
fn line(session: &str, cwd: &str, n: u32, kind: &str, content: Value) -> String {
    let role = if kind == "assistant" {
        "assistant"
    } else {
        "user"
    };
    json!({
        "type": kind, "uuid": format!("hand-{n}"), "parentUuid": format!("hand-{}", n.saturating_sub(1)),
        "sessionId": session, "cwd": cwd, "timestamp": format!("2099-01-01T10:{:02}:00Z", n % 60),
        "message": {"role": role, "content": content}
    })
    .to_string()
}

/// The four last turns: one that only reads CLAUDE.md, a trivial one, a failure log with its
/// fix and decision, and a last request answered with an open TODO.
fn hand_turns(session: &str, p: &str) -> Vec<String> {
    let mut n = 0;
    let mut l = |kind: &str, content: Value| {
        n += 1;
        line(session, p, n, kind, content)
    };
    let tool = |id: &str, name: &str, input: Value| json!([{"type": "tool_use", "id": id, "name": name, "input": input}]);
    let result = |id: &str, text: &str, is_error: bool| json!([{"type": "tool_result", "tool_use_id": id, "content": text, "is_error": is_error}]);
    vec![
        l(
            "user",
            json!("Read CLAUDE.md and the auto memory and remind me of the rules"),
        ),
        l(
            "assistant",
            tool("h1", "Read", json!({"file_path": format!("{p}/CLAUDE.md")})),
        ),
        l("user", result("h1", CLAUDE_RULE, false)),
        l(
            "assistant",
            json!([{"type": "text", "text": format!("{CLAUDE_RULE} {AUTO_MEMORY}")}]),
        ),
        l("user", json!("yes, do that")),
        l(
            "assistant",
            tool("h2", "Bash", json!({"command": "cargo test"})),
        ),
        l(
            "user",
            result(
                "h2",
                "test journal::tests::roundtrip ... ok\n\ntest result: ok. 12 passed; 0 failed; 0 ignored",
                false,
            ),
        ),
        l(
            "assistant",
            json!([{"type": "text", "text": "All 12 tests pass now."}]),
        ),
        l(
            "user",
            json!(format!(
                "The build is failing with this:\n```\nerror[E0599]: no method named `flush_wal` found for struct `Journal` in the current scope\n  --> {p}/src/journal.rs:88:14\n```\nCan you fix it? Keep the public API."
            )),
        ),
        l(
            "assistant",
            tool(
                "h3",
                "Edit",
                json!({"file_path": format!("{p}/src/journal.rs"), "old_string": "use std::fs::File;", "new_string": "use crate::wal::WalExt;"}),
            ),
        ),
        l("user", result("h3", "The file has been updated.", false)),
        l(
            "assistant",
            json!([{"type": "text", "text": "The root cause was a missing trait import. I decided to use `WalExt` rather than an inherent method on `Journal`.\n\nHere's a summary of the changes:\n\n- `src/journal.rs`: imported `WalExt`\n\nWant me to commit this?"}]),
        ),
        l(
            "user",
            json!("Add a test for `flush_wal` in src/journal.rs that covers a torn write."),
        ),
        l(
            "assistant",
            tool(
                "h4",
                "Write",
                json!({"file_path": format!("{p}/tests/journal_torn.rs"), "content": "#[test]\nfn torn_write() {}\n"}),
            ),
        ),
        l("user", result("h4", "File created successfully", false)),
        l(
            "assistant",
            json!([{"type": "text", "text": "Added `torn_write` in tests/journal_torn.rs. Note: `src/journal.rs` still has a TODO for the retry path after a torn write."}]),
        ),
    ]
}

/// What an independent reading of the transcript says failed: command outputs and failed
/// tool results.
fn failure_outputs(jsonl: &str) -> Vec<String> {
    let mut bash_ids = std::collections::HashSet::new();
    let mut out = Vec::new();
    for l in jsonl.lines() {
        let Ok(v) = serde_json::from_str::<Value>(l) else {
            continue;
        };
        for b in v["message"]["content"].as_array().into_iter().flatten() {
            if b["type"] == "tool_use" && b["name"] == "Bash" {
                bash_ids.insert(b["id"].as_str().unwrap_or_default().to_string());
            }
            if b["type"] == "tool_result"
                && (b["is_error"] == true
                    || bash_ids.contains(b["tool_use_id"].as_str().unwrap_or_default()))
            {
                out.push(match &b["content"] {
                    Value::String(s) => s.clone(),
                    c => c.to_string(),
                });
            }
        }
    }
    out
}

fn setup() -> Session {
    println!("restore_quality: generator seed {SEED}, {TURNS} turns");
    let [data, proj, home] = [(); 3].map(|_| tempfile::tempdir().expect("tempdir"));
    let project = proj.path().to_str().expect("utf-8 temp path").to_string();
    let generated = generate_string(&GenConfig {
        turns: TURNS,
        seed: SEED,
        ..GenConfig::default()
    });
    let first: Value = generated
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["cwd"].is_string())
        .expect("a line with cwd");
    let old_cwd = first["cwd"].as_str().unwrap_or_default().to_string();
    let session = first["sessionId"].as_str().unwrap_or_default().to_string();
    // The generated project lives in a temp folder: its CLAUDE.md and memory files are real.
    let mut jsonl = generated.replace(&old_cwd, &project);
    for l in hand_turns(&session, &project) {
        jsonl.push_str(&l);
        jsonl.push('\n');
    }
    let transcript = data.path().join(format!("{session}.jsonl"));
    std::fs::write(&transcript, &jsonl).expect("write transcript");
    std::fs::write(
        proj.path().join("CLAUDE.md"),
        format!("# Rules\n\n- {CLAUDE_RULE}\n"),
    )
    .expect("CLAUDE.md");
    let mem = proj.path().join(".memctl/memory");
    std::fs::create_dir_all(&mem).expect("memory dir");
    std::fs::write(
        mem.join("decisions.md"),
        format!("# Decisions\n- {CLAUDE_RULE}\n- {OWN_MEMORY}\n"),
    )
    .expect("decisions.md");
    let claude_dir = home.path().join(".claude");
    let key: String = project
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let auto = claude_dir.join("projects").join(key).join("memory");
    std::fs::create_dir_all(&auto).expect("auto memory dir");
    std::fs::write(auto.join("MEMORY.md"), format!("- {AUTO_MEMORY}\n")).expect("MEMORY.md");

    let none = data.path().join("no-model");
    let engine = Engine::open(EngineOptions {
        data_dir: data.path().join("store"),
        onnx: OnnxConfig::new(none.join("lib.so"), &none),
        model_disabled: true,
        resident: Default::default(),
    })
    .expect("open engine");
    engine
        .ingest_transcript(
            &transcript,
            &IngestOptions {
                embed_with_model: false,
                ..IngestOptions::default()
            },
        )
        .expect("ingest");
    Session {
        failure_outputs: failure_outputs(&jsonl),
        _dirs: [data, proj, home],
        engine,
        session,
        project,
        claude_dir,
    }
}

impl Session {
    fn config(&self, chars: usize) -> RestoreConfig {
        let mut cfg = RestoreConfig::default();
        cfg.budget.max_chars = chars;
        cfg.claude_dir = Some(self.claude_dir.clone());
        cfg
    }

    fn restore(&self, kind: RestoreKind, session: &str, cfg: &RestoreConfig) -> String {
        self.engine
            .restore(session, &self.project, kind, cfg)
            .expect("restore")
            .text
    }
}

/// The `- ` lines of a block.
fn items(block: &str) -> Vec<&str> {
    block.lines().filter(|l| l.starts_with("- ")).collect()
}

const ACKS: [&str; 7] = [
    "continue",
    "yes, do that",
    "ok",
    "go ahead",
    "try again",
    "lgtm, next",
    "run the tests again",
];

#[test]
fn restore_blocks_carry_substance_within_budget() {
    let s = setup();
    let mut counts = Vec::new();
    for chars in [1000, 4000, 8000] {
        let block = s.restore(RestoreKind::Compact, &s.session, &s.config(chars));
        println!("--- restore block at {chars} chars ---\n{block}");
        let n = block.chars().count();
        assert!(n <= chars, "{n} > {chars}");
        counts.push(items(&block).len());

        // Answers keep conclusions, not announcements or questions back.
        for filler in [
            "Here's a summary",
            "Want me to commit",
            "Let me ",
            "I'll start by",
        ] {
            assert!(
                !block.contains(filler),
                "filler {filler:?} at {chars}:\n{block}"
            );
        }
        // Paths under the project are relative.
        assert!(
            !block.contains(&format!("{}/", s.project)),
            "absolute path at {chars}"
        );
        // `error:` only on lines that came out of a command or a failed tool.
        for item in items(&block) {
            if let Some((_, err)) = item.split_once(" · error: ") {
                let err = err.trim_end_matches('…');
                assert!(
                    s.failure_outputs
                        .iter()
                        .any(|o| o.replace(&format!("{}/", s.project), "").contains(err)),
                    "error label on a line no command printed: {err:?}"
                );
                assert!(!err.contains("test result: ok"), "{item}");
            }
        }
        // No trivial turns: an acknowledgement answered by a bare outcome.
        for item in items(&block) {
            let Some((head, rest)) = item.split_once("] ") else {
                continue;
            };
            if !head.contains("turn ") {
                continue;
            }
            let (prompt, reply) = rest.split_once(" → ").unwrap_or((rest, ""));
            let reply = reply.split(" · ").next().unwrap_or_default();
            let bare = reply.is_empty()
                || (reply.starts_with("All ") && reply.ends_with(" tests pass now."));
            let trivial = ACKS.contains(&prompt)
                && bare
                && !rest.contains("· changed:")
                && !rest.contains("· error:");
            assert!(!trivial, "trivial turn restored: {item}");
        }
        // A pasted failure log keeps its failure (every generated one that is shown).
        for item in items(&block) {
            if item.contains("The build is failing with this:") {
                assert!(
                    item.contains(": `") || item.contains("this: `"),
                    "failure log dropped: {item}"
                );
            }
        }
        // Claude Code re-injects CLAUDE.md and MEMORY.md itself: not repeated.
        assert!(
            !block.contains(CLAUDE_RULE),
            "CLAUDE.md line repeated at {chars}"
        );
        assert!(
            !block.contains(AUTO_MEMORY),
            "MEMORY.md line repeated at {chars}"
        );
        assert!(
            !block.contains("remind me of the rules"),
            "CLAUDE.md-only turn at {chars}"
        );
        assert!(
            block.contains(OWN_MEMORY),
            "own project memory kept at {chars}"
        );
        assert!(
            !block.contains("yes, do that → All 12 tests pass"),
            "{block}"
        );
    }
    let block = s.restore(RestoreKind::Compact, &s.session, &s.config(4000));
    // The hand-written failure turn: failure line, location (relative), request, conclusion.
    let fail = items(&block)
        .into_iter()
        .find(|l| l.contains("flush_wal` found"))
        .unwrap_or_else(|| panic!("failure turn missing:\n{block}"));
    assert!(
        fail.contains("error[E0599]: no method named `flush_wal`"),
        "{fail}"
    );
    assert!(fail.contains("--> src/journal.rs:88:14"), "{fail}");
    assert!(fail.contains("Can you fix it?"), "{fail}");
    assert!(
        fail.contains("`src/journal.rs`: imported `WalExt`"),
        "{fail}"
    );
    // Said once: the decision is in its section, not again in the turn's line.
    assert!(!fail.contains("root cause"), "{fail}");
    assert!(
        block.contains("- Decision: The root cause was a missing trait import."),
        "{block}"
    );
    assert!(fail.contains("changed: src/journal.rs"), "{fail}");
    // Decisions and open TODOs of the session have their section.
    assert!(
        block.contains("## Decisions and open items of this session"),
        "{block}"
    );
    assert!(
        block.contains("- Decision: I decided to use `WalExt` rather than an inherent method"),
        "{block}"
    );
    assert!(
        block.contains("- Open: Note: `src/journal.rs` still has a TODO for the retry path"),
        "{block}"
    );
    // A larger budget gives more lines.
    assert!(
        counts[0] < counts[1] && counts[1] < counts[2],
        "lines per budget: {counts:?}"
    );
    println!("lines at 1000/4000/8000 chars: {counts:?}");
}

#[test]
fn too_small_a_budget_says_so() {
    let s = setup();
    let block = s.restore(RestoreKind::Compact, &s.session, &s.config(150));
    assert!(block.chars().count() <= 150);
    assert!(
        block.contains("did not fit the 150-char budget (MEMCTL_RESTORE_CHARS)"),
        "{block}"
    );
    assert!(items(&block).is_empty(), "{block}");
}

#[test]
fn clear_is_brief_by_default_and_full_on_request() {
    let s = setup();
    let fresh = "00000000-0000-4000-8000-000000000001";
    let mut cfg = s.config(4000);
    let brief = s.restore(RestoreKind::Clear, fresh, &cfg);
    assert!(brief.contains(OWN_MEMORY), "{brief}");
    assert!(
        brief.contains(&format!("Session {} (", &s.session[..8])),
        "{brief}"
    );
    assert!(brief.contains("MEMCTL_RESTORE_ON_CLEAR=full"), "{brief}");
    assert!(
        !brief.contains("[turn "),
        "no archived turn after /clear: {brief}"
    );
    cfg.sources.clear = RestoreMode::Full;
    let full = s.restore(RestoreKind::Clear, fresh, &cfg);
    assert!(
        full.contains(&format!(
            "## Latest turns of previous session {}",
            &s.session[..8]
        )),
        "{full}"
    );
    assert!(full.contains("flush_wal"), "{full}");
    cfg.sources.clear = RestoreMode::Off;
    assert_eq!(s.restore(RestoreKind::Clear, fresh, &cfg), "");
}
