//! Unit tests: every line type, every turn rule, splitting, summaries, incremental resume.

use super::line::{Block, Content, LineKind, ParsedLine, parse_line};
use super::turns::{ToolResult, TurnKind, TurnStatus};
use super::*;
use crate::redact::RedactionKind;
use serde_json::{Value, json};

const SID: &str = "11111111-2222-3333-4444-555555555555";
const CWD: &str = "/home/dev/proj";

/// A transcript under construction: lines as the CLI writes them, with sequential uuids.
#[derive(Default)]
struct T {
    lines: Vec<String>,
    n: u32,
}

impl T {
    fn push(&mut self, mut v: Value) -> String {
        self.n += 1;
        let uuid = format!("uuid-{:03}", self.n);
        if let Some(obj) = v.as_object_mut() {
            obj.entry("uuid").or_insert(json!(uuid));
            obj.entry("sessionId").or_insert(json!(SID));
            obj.entry("cwd").or_insert(json!(CWD));
            obj.entry("timestamp")
                .or_insert(json!(format!("2026-01-01T00:00:{:02}.000Z", self.n % 60)));
        }
        self.lines.push(v.to_string());
        uuid
    }
    fn user(&mut self, content: Value) -> String {
        self.push(json!({"type": "user", "message": {"role": "user", "content": content}}))
    }
    fn meta(&mut self, text: &str) -> String {
        self.push(
            json!({"type": "user", "isMeta": true, "message": {"role": "user", "content": text}}),
        )
    }
    fn assistant(&mut self, id: &str, content: Value) -> String {
        self.push(json!({"type": "assistant", "message": {"id": id, "role": "assistant", "content": content}}))
    }
    fn tool_use(&mut self, msg: &str, id: &str, name: &str, input: Value) -> String {
        self.assistant(
            msg,
            json!([{"type": "tool_use", "id": id, "name": name, "input": input}]),
        )
    }
    fn result(&mut self, id: &str, content: Value, is_error: bool) -> String {
        self.push(json!({"type": "user",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": content, "is_error": is_error}]},
            "toolUseResult": {"stdout": "IGNORED_TOP_LEVEL_COPY"}}))
    }
    fn raw(&mut self, line: &str) {
        self.lines.push(line.to_owned());
    }
    fn bytes(&self) -> Vec<u8> {
        let mut s = self.lines.join("\n");
        s.push('\n');
        s.into_bytes()
    }
    fn chunk(&self) -> Batch {
        chunk_transcript(&self.bytes(), "stem", &ChunkerConfig::default())
    }
}

fn texts(b: &Batch) -> Vec<String> {
    b.chunks.iter().map(|c| c.chunk.text.clone()).collect()
}

fn parse(v: Value) -> ParsedLine {
    match parse_line(v.to_string().as_bytes()) {
        Ok(p) => p,
        Err(e) => panic!("{v}: {e}"),
    }
}

// ---------------------------------------------------------------- line types

#[test]
fn bookkeeping_types_are_skipped_with_their_name() {
    for (t, kind) in [
        ("summary", LineKind::Summary),
        ("file-history-snapshot", LineKind::FileHistorySnapshot),
        ("queue-operation", LineKind::QueueOperation),
        ("last-prompt", LineKind::LastPrompt),
        ("mode", LineKind::Mode),
        ("cost-state", LineKind::CostState),
        ("api-request", LineKind::ApiRequest),
        ("api-request-shape", LineKind::ApiRequestShape),
        ("api-request-blob", LineKind::ApiRequestBlob),
        ("tools-used", LineKind::ToolsUsed),
        ("atis-latch", LineKind::AtisLatch),
        ("brand-new-type-2027", LineKind::Unknown),
    ] {
        let p = parse(json!({"type": t, "whatever": {"nested": [1, 2, {"x": null}]}}));
        assert_eq!(
            p,
            ParsedLine::Skipped {
                kind,
                type_name: t.to_owned()
            },
            "{t}"
        );
    }
    let p = parse(json!({"no_type": 1}));
    assert!(
        matches!(p, ParsedLine::Skipped { kind: LineKind::Unknown, ref type_name } if type_name == "(none)")
    );
}

#[test]
fn user_string_and_block_content() {
    let ParsedLine::User(l) =
        parse(json!({"type": "user", "uuid": "u", "message": {"role": "user", "content": "hi"}}))
    else {
        panic!("not a user line")
    };
    assert_eq!(l.content(), &Content::Text("hi".into()));
    assert_eq!(l.uuid.as_deref(), Some("u"));
    let ParsedLine::User(l) = parse(json!({"type": "user", "message": {"content": [
        {"type": "text", "text": "a"}, {"type": "image", "source": {"data": "AAAA"}},
        {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "out"}], "is_error": null},
        {"type": "some_future_block", "x": 1}
    ]}})) else {
        panic!("not a user line")
    };
    let Content::Blocks(b) = l.content() else {
        panic!("blocks")
    };
    assert_eq!(b.len(), 4);
    assert!(
        matches!(&b[2], Block::ToolResult { tool_use_id, is_error: false, .. } if tool_use_id == "t1")
    );
    assert_eq!(b[3], Block::Unknown);
}

#[test]
fn assistant_blocks_and_odd_content() {
    let ParsedLine::Assistant(l) = parse(
        json!({"type": "assistant", "message": {"id": "m1", "content": [
            {"type": "thinking", "thinking": "", "signature": "Eq..."},
            {"type": "redacted_thinking", "data": "zz"},
            {"type": "text", "text": "ok"},
            {"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ls"}}
        ]}}),
    ) else {
        panic!("not assistant")
    };
    assert_eq!(l.message_id(), Some("m1"));
    let Content::Blocks(b) = l.content() else {
        panic!("blocks")
    };
    assert!(matches!(b[0], Block::Thinking {}));
    assert!(matches!(b[1], Block::RedactedThinking {}));
    // null / number / object content and null flags do not fail the line
    for content in [json!(null), json!(5), json!({"a": 1})] {
        let p = parse(json!({"type": "user", "isMeta": null, "message": {"content": content}}));
        assert!(
            matches!(p, ParsedLine::User(ref l) if l.content() == &Content::Empty && !l.is_meta)
        );
    }
    assert!(
        matches!(parse(json!({"type": "user"})), ParsedLine::User(ref l) if l.message.is_none())
    );
}

#[test]
fn system_and_attachment_lines() {
    let p = parse(
        json!({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted", "compactMetadata": {}}),
    );
    assert!(
        matches!(p, ParsedLine::System(ref s) if s.subtype.as_deref() == Some("compact_boundary"))
    );
    let p = parse(
        json!({"type": "attachment", "attachment": {"type": "hook_additional_context", "content": ["x"]}}),
    );
    assert!(
        matches!(p, ParsedLine::Attachment(ref a) if a.attachment.as_ref().and_then(|h| h.kind.as_deref()) == Some("hook_additional_context"))
    );
}

#[test]
fn malformed_lines_are_counted_not_fatal() {
    let mut t = T::default();
    t.raw("{not json");
    t.raw("[1,2,3]");
    t.raw("\"just a string\"");
    t.raw(r#"{"type":"user","message":{"content":[{"type":"text","text":5}]}}"#);
    t.raw("");
    t.raw("   ");
    t.user(json!("a real prompt"));
    t.raw(r#"{"type":"mode","mode":"normal"}"#);
    let b = t.chunk();
    assert_eq!(b.stats.malformed, 4);
    assert_eq!(b.stats.blank, 2);
    assert_eq!(b.stats.lines, 6);
    assert_eq!(b.stats.skipped_by_type.get("mode"), Some(&1));
    assert_eq!(texts(&b), vec!["User: a real prompt"]);
}

#[test]
fn crlf_line_endings() {
    let mut t = T::default();
    t.user(json!("hello"));
    let bytes = format!("{}\r\n", t.lines[0]).into_bytes();
    let b = chunk_transcript(&bytes, "stem", &ChunkerConfig::default());
    assert_eq!(b.stats.malformed, 0);
    assert_eq!(texts(&b), vec!["User: hello"]);
}

// ---------------------------------------------------------------- turns

#[test]
fn a_turn_is_the_prompt_and_its_assistant_loop() {
    let mut t = T::default();
    t.raw(r#"{"type":"file-history-snapshot","messageId":"x","snapshot":{}}"#);
    let p1 = t.user(json!("Fix the bug in src/lib.rs. Then run tests."));
    t.assistant("m1", json!([{"type": "thinking", "thinking": "SECRET_THOUGHT"}, {"type": "text", "text": "Looking."}]));
    t.tool_use("m1", "t1", "Read", json!({"file_path": "/p/src/lib.rs"}));
    t.result("t1", json!("fn main() {}"), false);
    t.tool_use("m2", "t2", "Bash", json!({"command": "cargo test"}));
    t.result("t2", json!("error: boom"), true);
    t.tool_use("m3", "t3", "Read", json!({"file_path": "/p/src/lib.rs"}));
    t.result("t3", json!([{"type": "text", "text": "again"}]), false);
    t.assistant(
        "m4",
        json!([{"type": "text", "text": "Fixed it. All green."}]),
    );
    let p2 = t.user(json!([{"type": "text", "text": "thanks"}]));
    let b = t.chunk();
    assert_eq!(b.chunks.len(), 2);
    let c = &b.chunks[0].chunk;
    assert_eq!(
        c.text,
        "User: Fix the bug in src/lib.rs. Then run tests.\nAssistant: Looking.\n\
         [tool: Read] {\"file_path\":\"/p/src/lib.rs\"}\n[result: Read] fn main() {}\n\
         [tool: Bash] {\"command\":\"cargo test\"}\n[error: Bash] error: boom\n\
         [tool: Read] {\"file_path\":\"/p/src/lib.rs\"}\n[result: Read] again\n\
         Assistant: Fixed it. All green."
    );
    assert!(!c.text.contains("SECRET_THOUGHT") && !c.text.contains("IGNORED_TOP_LEVEL_COPY"));
    assert_eq!(c.turn_uuid, p1);
    assert_eq!(c.turn_index, 0);
    assert_eq!((c.part, c.parts), (0, 1));
    assert_eq!(c.tools, vec!["Read", "Bash"]);
    assert_eq!(c.files, vec!["/p/src/lib.rs"]);
    assert_eq!(c.line_uuids.len(), 9);
    assert_eq!(c.line_uuids[0], p1);
    assert_eq!(c.summary, "Fix the bug in src/lib.rs. → Fixed it.");
    assert_eq!(c.sha256, crate::Chunk::hash_text(&c.text));
    assert_eq!(c.session_id, SID);
    assert_eq!(c.project, CWD);
    assert_eq!(c.started_at.as_deref(), Some("2026-01-01T00:00:01.000Z"));
    assert_eq!(c.ended_at.as_deref(), Some("2026-01-01T00:00:09.000Z"));
    assert_eq!(b.chunks[0].status, TurnStatus::Closed);
    assert_eq!(b.chunks[1].chunk.turn_uuid, p2);
    assert_eq!(b.chunks[1].chunk.turn_index, 1);
    assert_eq!(b.chunks[1].status, TurnStatus::Open);
    assert_eq!(b.chunks[1].chunk.summary, "thanks");
}

#[test]
fn memctl_mcp_results_are_not_archived_again() {
    let mut t = T::default();
    t.user(json!("What did we decide about the bucket?"));
    t.tool_use(
        "m1",
        "t1",
        "mcp__memctl__search",
        json!({"query": "bucket"}),
    );
    t.result(
        "t1",
        json!("{\"hits\":[{\"gist\":\"OLD-FACT-77\"}]}"),
        false,
    );
    t.tool_use(
        "m2",
        "t2",
        "mcp__plugin_memctl_memctl__get",
        json!({"ids": [1]}),
    );
    t.result(
        "t2",
        json!([{"type": "text", "text": "OLD-FACT-77 in full"}]),
        false,
    );
    t.assistant(
        "m3",
        json!([{"type": "text", "text": "We chose bucket B."}]),
    );
    let b = t.chunk();
    let text = &b.chunks[0].chunk.text;
    assert!(!text.contains("OLD-FACT-77"), "{text}");
    assert!(
        text.contains("[tool: mcp__memctl__search] {\"query\":\"bucket\"}"),
        "{text}"
    );
    assert!(
        text.contains("[result: mcp__plugin_memctl_memctl__get] [memctl archive lookup: 19 chars"),
        "{text}"
    );
    assert!(text.contains("We chose bucket B."), "{text}");
}

#[test]
fn split_assistant_lines_sharing_a_message_id_are_merged_once() {
    let mut t = T::default();
    t.user(json!("go"));
    t.assistant("m1", json!([{"type": "text", "text": "Part A."}]));
    t.tool_use("m1", "t1", "Glob", json!({"pattern": "**/*.rs"}));
    t.tool_use("m1", "t2", "Grep", json!({"pattern": "x", "path": "/p"}));
    // a writer that repeats earlier blocks of the same message must not duplicate them
    t.assistant("m1", json!([{"type": "text", "text": "Part A."}, {"type": "tool_use", "id": "t1", "name": "Glob", "input": {"pattern": "**/*.rs"}}]));
    t.result("t2", json!("grep out"), false);
    t.result("t1", json!("glob out"), false);
    let b = t.chunk();
    let text = &b.chunks[0].chunk.text;
    assert_eq!(text.matches("Part A.").count(), 1, "{text}");
    assert_eq!(text.matches("[tool: Glob]").count(), 1, "{text}");
    assert!(
        text.contains("[result: Grep] grep out\n[result: Glob] glob out"),
        "{text}"
    );
    assert_eq!(b.chunks[0].chunk.tools, vec!["Glob", "Grep"]);
    assert_eq!(b.chunks[0].chunk.files, vec!["/p"]);
}

#[test]
fn meta_lines_are_not_prompts() {
    let mut t = T::default();
    t.user(json!("real"));
    t.meta("<local-command-caveat>Caveat: ...</local-command-caveat>");
    t.meta("Expanded command prompt text");
    t.assistant("m", json!([{"type": "text", "text": "answer"}]));
    let b = t.chunk();
    assert_eq!(texts(&b), vec!["User: real\nAssistant: answer"]);
}

#[test]
fn slash_commands_open_a_turn_and_local_output_is_a_note() {
    let mut t = T::default();
    t.user(json!("first"));
    t.meta("<local-command-caveat>The command below was run directly</local-command-caveat>");
    let cmd = t.user(json!("<command-name>/compact</command-name>\n            <command-message>compact</command-message>\n            <command-args>keep the notes</command-args>"));
    t.user(json!(
        "<local-command-stdout>Compacted</local-command-stdout>"
    ));
    t.push(json!({"type": "system", "subtype": "local_command", "content": "<local-command-stdout>Total cost: $1</local-command-stdout>"}));
    t.push(json!({"type": "system", "subtype": "local_command", "content": "<local-command-stdout></local-command-stdout>"}));
    t.user(json!(
        "<bash-stdout>ls out</bash-stdout><bash-stderr></bash-stderr>"
    ));
    let b = t.chunk();
    assert_eq!(b.chunks.len(), 2);
    let c = &b.chunks[1].chunk;
    assert_eq!(c.turn_uuid, cmd);
    assert_eq!(
        c.text,
        "User: /compact keep the notes\n[command output] Compacted\n[command output] Total cost: $1\n[shell output] ls out"
    );
}

#[test]
fn interruptions_and_text_beside_tool_results_stay_in_the_turn() {
    let mut t = T::default();
    t.user(json!("do it"));
    t.tool_use("m1", "t1", "Bash", json!({"command": "sleep 100"}));
    t.push(json!({"type": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "The user doesn't want to proceed", "is_error": true},
        {"type": "text", "text": "use a shorter sleep"}]}}));
    t.user(json!([{"type": "text", "text": "[Request interrupted by user for tool use]"}]));
    let b = t.chunk();
    assert_eq!(b.chunks.len(), 1);
    assert_eq!(
        b.chunks[0].chunk.text,
        "User: do it\n[tool: Bash] {\"command\":\"sleep 100\"}\n[error: Bash] The user doesn't want to proceed\n\
         User: use a shorter sleep\n[Request interrupted by user for tool use]"
    );
}

#[test]
fn compact_summary_is_its_own_chunk_and_does_not_cut_the_open_turn() {
    let mut t = T::default();
    t.user(json!("turn zero"));
    t.assistant("m0", json!([{"type": "text", "text": "zero."}]));
    let p1 = t.user(json!("Turn five after a big context."));
    t.push(json!({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"}));
    let cs = t.push(json!({"type": "user", "isCompactSummary": true, "isVisibleInTranscriptOnly": true,
        "message": {"content": "This session is being continued from a previous conversation.\n\nSummary:\n1. Primary Request and Intent:\n   Add pagination to the API.\n"}}));
    t.assistant(
        "m1",
        json!([{"type": "text", "text": "Reply after auto-compact."}]),
    );
    let b = t.chunk();
    let by_uuid = |u: &str| b.chunks.iter().find(|c| c.chunk.turn_uuid == u).cloned();
    let turn = by_uuid(&p1).expect("prompt chunk");
    assert_eq!(turn.chunk.turn_index, 1);
    assert!(
        turn.chunk
            .text
            .ends_with("Assistant: Reply after auto-compact.")
    );
    assert!(!turn.chunk.is_compact_summary);
    let summary = by_uuid(&cs).expect("summary chunk");
    assert!(summary.chunk.is_compact_summary);
    assert_eq!(summary.chunk.turn_index, 2);
    assert_eq!(summary.status, TurnStatus::Closed);
    assert!(
        summary
            .chunk
            .text
            .starts_with("Compaction summary: This session is being continued")
    );
    assert_eq!(
        summary.chunk.summary,
        "Compaction summary: Add pagination to the API."
    );
    let mut idx: Vec<u32> = b.chunks.iter().map(|c| c.chunk.turn_index).collect();
    idx.sort_unstable();
    assert_eq!(idx, vec![0, 1, 2]);
}

#[test]
fn attachments_and_memctl_context_never_reach_chunk_text() {
    let mut t = T::default();
    t.push(json!({"type": "attachment", "attachment": {"type": "hook_additional_context",
        "content": ["<memctl-context source=\"archive\">RESTORED_MEMORY_1</memctl-context>"], "hookEvent": "SessionStart"}}));
    t.push(json!({"type": "attachment", "attachment": {"type": "hook_success", "stdout": "RESTORED_MEMORY_2"}}));
    t.user(json!(
        "<memctl-context kind=\"restore\">\nRESTORED_MEMORY_3\n</memctl-context>\nWhat next?"
    ));
    t.push(json!({"type": "attachment", "attachment": {"type": "hook_additional_context", "content": ["RESTORED_MEMORY_4"]}}));
    t.tool_use("m", "t1", "Bash", json!({"command": "cat restore.txt"}));
    t.result(
        "t1",
        json!("before <memctl-context>RESTORED_MEMORY_5</memctl-context> after"),
        false,
    );
    // a prompt that is only our context is no prompt at all
    t.user(json!("<memctl-context>RESTORED_MEMORY_6</memctl-context>"));
    let b = t.chunk();
    assert_eq!(b.chunks.len(), 1);
    let text = &b.chunks[0].chunk.text;
    assert!(!text.contains("RESTORED_MEMORY"), "{text}");
    assert!(!text.contains("memctl-context"), "{text}");
    assert!(text.starts_with("User: What next?"), "{text}");
    assert!(text.contains("[result: Bash] before  after"), "{text}");
    assert_eq!(b.stats.skipped_by_type.get("attachment"), Some(&3));
}

#[test]
fn content_before_the_first_prompt_is_kept_in_a_preamble() {
    let mut t = T::default();
    let a = t.assistant("m0", json!([{"type": "text", "text": "Orphan answer."}]));
    t.user(json!("first prompt"));
    let b = t.chunk();
    assert_eq!(b.chunks.len(), 2);
    assert_eq!(b.chunks[0].chunk.text, "Assistant: Orphan answer.");
    assert_eq!(b.chunks[0].chunk.turn_uuid, a);
    assert_eq!(
        b.chunks[0].chunk.summary,
        "(before the first prompt) → Orphan answer."
    );
    assert_eq!(b.turns[0].kind, TurnKind::Preamble);
    assert_eq!(b.chunks[1].chunk.turn_index, 1);
}

#[test]
fn image_only_prompt_and_sidechain_lines() {
    let mut t = T::default();
    t.user(json!([{"type": "image", "source": {"type": "base64", "data": "iVBOR"}}]));
    t.push(json!({"type": "user", "isSidechain": true, "message": {"content": "Search the repo for X"}}));
    t.push(json!({"type": "assistant", "isSidechain": true, "message": {"id": "s1", "content": [{"type": "text", "text": "Found X."}]}}));
    t.assistant("m1", json!([{"type": "text", "text": "Done."}]));
    let b = t.chunk();
    assert_eq!(b.chunks.len(), 1);
    assert_eq!(
        b.chunks[0].chunk.text,
        "User: [image]\n[subagent task] Search the repo for X\nSubagent: Found X.\nAssistant: Done."
    );
    assert_eq!(b.chunks[0].chunk.summary, "[image] → Done.");
}

#[test]
fn summary_falls_back_to_tools_and_bounds_sentences() {
    let mut t = T::default();
    t.user(json!(format!("{} tail", "word ".repeat(80))));
    t.tool_use("m", "t1", "Bash", json!({"command": "ls"}));
    t.tool_use("m", "t2", "Read", json!({"file_path": "/a"}));
    let b = t.chunk();
    let s = &b.chunks[0].chunk.summary;
    assert!(s.ends_with(" → tools: Bash, Read"), "{s}");
    let head = s.split(" → ").next().unwrap_or_default();
    assert!(head.chars().count() <= 160, "{head}");
}

#[test]
fn tool_inputs_and_results_are_bounded_but_whole_in_the_turn() {
    let mut t = T::default();
    t.user(json!("write it"));
    let big = "x".repeat(10_000);
    t.tool_use(
        "m",
        "t1",
        "Write",
        json!({"file_path": "/p/big.txt", "content": big}),
    );
    let out = format!("{}\nFINAL VERDICT", "line\n".repeat(3000));
    t.result("t1", json!(out), false);
    let b = t.chunk();
    let text = b
        .chunks
        .iter()
        .map(|c| c.chunk.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    // the path comes first, so bounding the input never cuts it away
    assert!(
        text.contains("[tool: Write] {\"file_path\":\"/p/big.txt\",\"content\":\"xxx"),
        "{text}"
    );
    assert!(text.contains("bytes omitted]"), "{text}");
    assert!(text.contains("FINAL VERDICT"), "tail of a result is kept");
    assert!(text.len() < 6000, "bounded: {}", text.len());
    let r: Vec<&ToolResult> = b.turns[0].tool_results().collect();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].text, out);
    assert_eq!(r[0].tool_name.as_deref(), Some("Write"));
    assert_eq!(r[0].tool_use_id, "t1");
}

#[test]
fn long_turns_split_on_line_boundaries_with_a_header() {
    let mut t = T::default();
    let p = t.user(json!("Refactor the store.\nDetails follow."));
    for i in 0..40 {
        t.assistant(
            &format!("m{i}"),
            json!([{"type": "text", "text": format!("step {i}: {}", "lorem ipsum ".repeat(20))}]),
        );
    }
    t.assistant("mx", json!([{"type": "text", "text": "y".repeat(2500)}]));
    let config = ChunkerConfig {
        max_chunk_chars: 1000,
        ..ChunkerConfig::default()
    };
    let b = chunk_transcript(&t.bytes(), "stem", &config);
    let n = b.chunks.len();
    assert!(n > 5, "{n} parts");
    for (i, c) in b.chunks.iter().enumerate() {
        let c = &c.chunk;
        assert!(
            c.text.chars().count() <= 1000,
            "part {i} has {} chars",
            c.text.chars().count()
        );
        assert_eq!(c.turn_uuid, p);
        assert_eq!(c.turn_index, 0);
        assert_eq!(usize::from(c.part), i);
        assert_eq!(usize::from(c.parts), n);
        assert!(!c.line_uuids.is_empty());
        if i > 0 {
            assert!(
                c.text
                    .starts_with("User: Refactor the store. (continued)\n"),
                "{}",
                c.text
            );
            assert_eq!(c.line_uuids[0], p);
        }
    }
    // nothing lost: every step is somewhere, and the long line is cut, not dropped
    let all: String = b.chunks.iter().map(|c| c.chunk.text.as_str()).collect();
    for i in 0..40 {
        assert!(all.contains(&format!("step {i}: ")), "step {i}");
    }
    assert_eq!(all.matches('y').count(), 2500);
}

#[test]
fn secrets_are_redacted_in_text_inputs_summary_and_results() {
    let key = format!("ghp_{}", "A1b2C3d4E5".repeat(4));
    let mut t = T::default();
    t.user(json!(format!("Use token {key} please. Thanks")));
    t.tool_use("m", "t1", "Bash", json!({"command": format!("GITHUB_TOKEN={key} gh pr list"), "env": ["DB_PASSWORD=hunter2"]}));
    t.result(
        "t1",
        json!(format!(
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----\n{key}"
        )),
        false,
    );
    t.assistant(
        "m2",
        json!([{"type": "text", "text": format!("Done with {key}.")}]),
    );
    let b = t.chunk();
    let c = &b.chunks[0].chunk;
    for hay in [&c.text, &c.summary] {
        assert!(
            !hay.contains(&key) && !hay.contains("hunter2") && !hay.contains("MIIEabc"),
            "{hay}"
        );
    }
    assert!(c.text.contains("[REDACTED:github_token]"));
    assert!(c.text.contains("DB_PASSWORD=[REDACTED:env_secret]"));
    assert!(c.text.contains("[REDACTED:private_key]"));
    let whole = &b.turns[0]
        .tool_results()
        .next()
        .map(|r| r.text.clone())
        .unwrap_or_default();
    assert!(!whole.contains("MIIEabc") && !whole.contains(&key));
    assert!(b.redactions.get(RedactionKind::GithubToken) >= 4);
    assert!(b.redactions.get(RedactionKind::PrivateKey) >= 1);
}

// ---------------------------------------------------------------- incremental

#[test]
fn trailing_partial_line_is_not_consumed() {
    let mut t = T::default();
    t.user(json!("one"));
    let full = t.bytes();
    let cut = full.len() - 10;
    let mut chunker = Chunker::new(ChunkerConfig::default(), "stem");
    let b = chunker.feed(&full[..cut]);
    assert_eq!(b.consumed, 0);
    assert!(b.chunks.is_empty());
    assert_eq!(chunker.state().resume_offset, 0);
    let b = chunker.feed(&full);
    assert_eq!(b.consumed, full.len());
    assert_eq!(b.chunks.len(), 1);
}

#[test]
fn resume_state_carries_turn_index_and_reemits_the_open_turn() {
    let mut t = T::default();
    t.raw(r#"{"type":"queue-operation","operation":"enqueue"}"#);
    let p0 = t.user(json!("zero"));
    t.assistant("m0", json!([{"type": "text", "text": "a0"}]));
    let first = t.bytes();
    let p1 = t.user(json!("one"));
    t.assistant("m1", json!([{"type": "text", "text": "a1"}]));
    let all = t.bytes();

    let mut chunker = Chunker::new(ChunkerConfig::default(), "stem");
    let b1 = chunker.feed(&first);
    assert_eq!(b1.chunks.len(), 1);
    assert_eq!(b1.chunks[0].status, TurnStatus::Open);
    let state = chunker.state().clone();
    let offset_of_p0 = t.lines[0].len() as u64 + 1;
    assert_eq!(state.resume_offset, offset_of_p0);
    assert_eq!(state.next_turn_index, 0);
    assert_eq!(state.session_id.as_deref(), Some(SID));

    // round-trip the state through JSON, as the ingest layer will
    let json = serde_json::to_string(&state).unwrap_or_default();
    let restored: ChunkerState = serde_json::from_str(&json).unwrap_or_default();
    assert_eq!(restored, state);
    let mut chunker = Chunker::new(ChunkerConfig::default(), "stem").with_state(restored);
    let b2 = chunker.feed(&all[state.resume_offset as usize..]);
    let got: Vec<(String, u32, TurnStatus)> = b2
        .chunks
        .iter()
        .map(|c| (c.chunk.turn_uuid.clone(), c.chunk.turn_index, c.status))
        .collect();
    assert_eq!(
        got,
        vec![(p0, 0, TurnStatus::Closed), (p1, 1, TurnStatus::Open)]
    );
    assert_eq!(chunker.state().next_turn_index, 1);
}

#[test]
fn no_open_turn_means_resume_after_everything() {
    let mut t = T::default();
    t.raw(r#"{"type":"mode","mode":"normal"}"#);
    t.raw(r#"{"type":"attachment","attachment":{"type":"date"}}"#);
    let bytes = t.bytes();
    let mut chunker = Chunker::new(ChunkerConfig::default(), "fallback-stem");
    let b = chunker.feed(&bytes);
    assert!(b.chunks.is_empty());
    assert_eq!(chunker.state().resume_offset, bytes.len() as u64);
    assert_eq!(chunker.state().next_turn_index, 0);
}

#[test]
fn fallback_session_id_when_lines_have_none() {
    let line = r#"{"type":"user","uuid":"u1","message":{"content":"hello"}}"#;
    let b = chunk_transcript(
        format!("{line}\n").as_bytes(),
        "file-stem",
        &ChunkerConfig::default(),
    );
    assert_eq!(b.chunks[0].chunk.session_id, "file-stem");
    assert_eq!(b.chunks[0].chunk.project, "");
}

#[test]
fn lines_without_uuid_get_offset_ids_stable_across_calls() {
    let l1 = r#"{"type":"user","message":{"content":"a"}}"#;
    let l2 = r#"{"type":"user","message":{"content":"b"}}"#;
    let all = format!("{l1}\n{l2}\n");
    let b = chunk_transcript(all.as_bytes(), "s", &ChunkerConfig::default());
    assert_eq!(
        b.chunks[1].chunk.turn_uuid,
        format!("noid-{}", l1.len() + 1)
    );
    let mut chunker = Chunker::new(ChunkerConfig::default(), "s");
    chunker.feed(format!("{l1}\n").as_bytes());
    let again = chunker.feed(&all.as_bytes()[chunker.state().resume_offset as usize..]);
    assert_eq!(again.chunks[1].chunk.turn_uuid, b.chunks[1].chunk.turn_uuid);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 256, ..Default::default() })]

    /// Arbitrary bytes never panic and never consume past the last newline.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600)) {
        let mut chunker = Chunker::new(ChunkerConfig::default(), "s");
        let b = chunker.feed(&bytes);
        let last_nl = bytes.iter().rposition(|c| *c == b'\n').map_or(0, |i| i + 1);
        proptest::prop_assert_eq!(b.consumed, last_nl);
    }

    /// JSON-ish lines built from transcript fragments never panic either.
    #[test]
    fn jsonish_lines_never_panic(parts in proptest::collection::vec(proptest::prop_oneof![
        proptest::strategy::Just(r#"{"type":"user","message":{"content":"#.to_owned()),
        proptest::strategy::Just(r#"{"type":"assistant","message":{"id":"m","content":["#.to_owned()),
        proptest::strategy::Just(r#"{"type":"tool_use","id":"t","name":"Bash","input":{"path":1}}"#.to_owned()),
        proptest::strategy::Just(r#"{"type":"tool_result","tool_use_id":"t","content":"x"}"#.to_owned()),
        proptest::strategy::Just(r#"{"type":"text","text":"<memctl-context>"}"#.to_owned()),
        proptest::strategy::Just("]}}\n".to_owned()), proptest::strategy::Just("\"é\"}}\n".to_owned()),
        proptest::strategy::Just(",".to_owned()), proptest::strategy::Just("\n".to_owned()),
    ], 0..30)) {
        let bytes = parts.concat().into_bytes();
        let b = chunk_transcript(&bytes, "s", &ChunkerConfig { max_chunk_chars: 10, ..Default::default() });
        for c in &b.chunks {
            proptest::prop_assert_eq!(&c.chunk.sha256, &crate::Chunk::hash_text(&c.chunk.text));
        }
    }
}

/// Every line of a file counts once as read, blank ones too, though each call re-reads the
/// open turn; a line without `\n` counts once it ends; a chunker resumed from a saved state
/// leaves out the lines its earlier run counted.
#[test]
fn new_lines_count_each_line_of_the_file_once() {
    let mut t = T::default();
    for i in 0..5 {
        t.user(json!(format!("question {i}")));
        if i == 0 {
            t.raw("");
        }
    }
    let lines = t.lines.clone();
    let a = format!("{}\n", lines[..4].join("\n"));
    let file = format!("{a}{}\n{}", lines[4], lines[5]);
    let mut c = Chunker::new(ChunkerConfig::default(), "s");
    let first = c.feed(a.as_bytes());
    assert_eq!(first.stats.new_lines, 4, "three records and a blank line");
    let from = c.state().resume_offset as usize;
    assert!(from < a.len(), "the open turn is fed again");
    let saved = c.state().clone();
    let second = c.feed(&file.as_bytes()[from..]);
    assert_eq!(
        second.stats.new_lines, 1,
        "the last line has no newline yet"
    );
    assert!(
        second.stats.lines > 1,
        "the open turn's line was parsed again"
    );

    let mut resumed = Chunker::new(ChunkerConfig::default(), "s")
        .count_lines_from(a.len() as u64)
        .with_state(saved);
    let again = resumed.feed(format!("{file}\n").as_bytes().get(from..).expect("range"));
    assert_eq!(again.stats.new_lines, 2);
}

/// The module documentation's example.
#[test]
fn an_incremental_chunker_resumes_from_its_saved_state() {
    use crate::transcript::{Chunker, ChunkerConfig, ChunkerState};

    let mut file = Vec::new();
    let mut chunker = Chunker::new(ChunkerConfig::default(), "session-from-file-stem");
    file.extend_from_slice(
        br#"{"type":"user","uuid":"u1","sessionId":"s","message":{"role":"user","content":"hi"}}"#,
    );
    file.push(b'\n');
    let batch = chunker.feed(&file[chunker.state().resume_offset as usize..]);
    assert_eq!(batch.chunks.len(), 1);
    // Persist the state (serde) with the transcript path; next time, read from its offset:
    let saved: ChunkerState = chunker.state().clone();
    let mut chunker =
        Chunker::new(ChunkerConfig::default(), "session-from-file-stem").with_state(saved);
    let again = chunker.feed(&file[chunker.state().resume_offset as usize..]);
    assert_eq!(again.chunks[0].chunk.turn_uuid, "u1"); // the open turn is re-emitted
}
