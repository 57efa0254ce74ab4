//! Codex CLI and Gemini CLI transcripts: the real recorded files through their decoders and the
//! turn assembler, hand-written lines for the edge cases, and the assembler's rule for a
//! message written again (`MessageLine::supersedes`).

use super::codex::parse_codex_line;
use super::gemini::parse_gemini_line;
use super::line::{
    Block, Content, LineError, LineKind, Message, MessageLine, ParseStats, ParsedLine,
};
use super::turns::{Turn, TurnAssembler, TurnEvent, TurnKind, TurnStatus};
use crate::redact::RedactionKind;
use serde_json::{Value, json};

type Decoder = fn(&[u8]) -> Result<ParsedLine, LineError>;

/// What the chunker does with a file, minus rendering: decode every line, remember the first
/// session id and cwd seen, assemble turns.
struct Assembled {
    turns: Vec<Turn>,
    stats: ParseStats,
    session_id: Option<String>,
    cwd: Option<String>,
}

fn assemble(bytes: &[u8], decode: Decoder) -> Assembled {
    let mut stats = ParseStats::default();
    let mut asm = TurnAssembler::new(0, 0);
    let (mut session_id, mut cwd) = (None, None);
    let mut offset = 0;
    for raw in bytes.split_inclusive(|b| *b == b'\n') {
        let line = raw.strip_suffix(b"\n").unwrap_or(raw);
        if !line.trim_ascii().is_empty() {
            let parsed = decode(line);
            stats.record(&parsed);
            if let Ok(p) = parsed {
                let (s, c) = match &p {
                    ParsedLine::User(l) | ParsedLine::Assistant(l) => (&l.session_id, &l.cwd),
                    ParsedLine::System(l) => (&l.session_id, &l.cwd),
                    _ => (&None, &None),
                };
                if session_id.is_none() {
                    session_id.clone_from(s);
                }
                if cwd.is_none() {
                    cwd.clone_from(c);
                }
                asm.push(&p, offset);
            }
        }
        offset += raw.len();
    }
    Assembled {
        turns: asm.finish().turns,
        stats,
        session_id,
        cwd,
    }
}

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../tests/fixtures/agents/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A turn's events in a compact, exact form.
fn events(t: &Turn) -> Vec<String> {
    t.events
        .iter()
        .map(|e| match e {
            TurnEvent::Text { text, .. } => format!("text: {text}"),
            TurnEvent::ToolCall { call, .. } => {
                format!("call {} {} {}", call.id, call.name, call.input_json)
            }
            TurnEvent::ToolResult(r) => format!(
                "result {} {}{}: {}",
                r.tool_use_id,
                r.tool_name.as_deref().unwrap_or("?"),
                if r.is_error { " (error)" } else { "" },
                r.text
            ),
            TurnEvent::Note { text, .. } => format!("note: {text}"),
        })
        .collect()
}

/// Every piece of text a turn holds (prompt, events, tool inputs), for "never archived" checks.
fn all_text(turns: &[Turn]) -> String {
    let mut out = String::new();
    for t in turns {
        out.push_str(&t.prompt);
        out.push('\n');
        for e in events(t) {
            out.push_str(&e);
            out.push('\n');
        }
    }
    out
}

fn assert_no_injected_context(turns: &[Turn]) {
    let text = all_text(turns);
    for needle in [
        "RESTORED_SECRET_CONTEXT",
        "memctl-context",
        "environment_context",
        "session_context",
        "hook_context",
        "skills_instructions",
        "permissions instructions",
        "AGENTS_MD_MARKER",
        "AGENTS.md",
        "INSTRUCTIONS",
        "Another language model",
    ] {
        assert!(!text.contains(needle), "{needle} archived:\n{text}");
    }
}

const CODEX_RESULT: &str = "Chunk ID: {id}\nWall time: {wall} seconds\nProcess exited with code 0\nOriginal token count: 3\nOutput:\ntool-output\n";

fn codex_result(id: &str, wall: &str) -> String {
    CODEX_RESULT.replace("{id}", id).replace("{wall}", wall)
}

// ---------------------------------------------------------------- Codex fixtures

#[test]
fn codex_fixture_one_prompt_tool_call_and_compaction() {
    let a = assemble(&fixture("codex-0.171.0.jsonl"), parse_codex_line);
    assert_eq!(a.stats.malformed, 0);
    assert_eq!(
        a.session_id.as_deref(),
        Some("01a220fe-0cc1-7570-acff-528aac4e591d")
    );
    assert_eq!(
        a.cwd.as_deref(),
        Some("/tmp/memctl-codex-rec.3ap1hsd1/project")
    );
    assert_eq!(a.turns.len(), 2, "{:#?}", a.turns);
    let t = &a.turns[0];
    assert_eq!(
        (t.index, t.kind, t.status),
        (0, TurnKind::Prompt, TurnStatus::Open)
    );
    assert_eq!(t.prompt, "please run echo for me, then compact");
    assert_eq!(t.uuid, "msg_01a220fe-0d7c-7093-97d5-aa33d54d2d41");
    assert_eq!(
        events(t),
        [
            r#"call call_4 exec_command {"cmd":"echo tool-output"}"#.to_owned(),
            format!(
                "result call_4 exec_command: {}",
                codex_result("29503e", "0.1677")
            ),
            // The compaction request's own output (msg_5) is not an answer: only msg_6 is.
            "text: Answer number 6.".to_owned(),
        ]
    );
    assert_eq!(t.tools, ["exec_command"]);
    assert_eq!(t.started_at.as_deref(), Some("2026-11-28T07:10:50.236Z"));
    assert_eq!(t.ended_at.as_deref(), Some("2026-11-28T07:10:51.034Z"));
    let s = &a.turns[1];
    assert_eq!(
        (s.index, s.kind, s.status),
        (1, TurnKind::CompactSummary, TurnStatus::Closed)
    );
    assert_eq!(s.prompt, "Answer number 5.");
    assert_eq!(s.uuid, "compacted@2026-11-28T07:10:50.874Z#18");
    assert_no_injected_context(&a.turns);
}

#[test]
fn codex_fixture_resumed_session_with_hook_context_agents_md_and_compaction() {
    let a = assemble(
        &fixture("codex-0.171.0-resume-hooks-agentsmd-compact.jsonl"),
        parse_codex_line,
    );
    assert_eq!(a.stats.malformed, 0);
    assert_eq!(
        a.session_id.as_deref(),
        Some("01a22162-e606-7e01-aabc-c7b7d4d28c0f")
    );
    assert_eq!(
        a.cwd.as_deref(),
        Some("/tmp/memctl-codex-rec.e3_p8y6m/project")
    );
    let shape: Vec<(u32, TurnKind, TurnStatus, &str)> = a
        .turns
        .iter()
        .map(|t| (t.index, t.kind, t.status, t.prompt.as_str()))
        .collect();
    assert_eq!(
        shape,
        [
            (
                0,
                TurnKind::Prompt,
                TurnStatus::Closed,
                "remember the flag FOO_BAR=42"
            ),
            (
                1,
                TurnKind::Prompt,
                TurnStatus::Closed,
                "please run echo for me"
            ),
            (
                2,
                TurnKind::Prompt,
                TurnStatus::Open,
                "please run echo for me, then compact"
            ),
            (
                3,
                TurnKind::CompactSummary,
                TurnStatus::Closed,
                "Answer number 5."
            ),
        ]
    );
    assert_eq!(events(&a.turns[0]), ["text: Answer number 1."]);
    assert_eq!(
        events(&a.turns[1]),
        [
            r#"call call_2 exec_command {"cmd":"echo tool-output"}"#.to_owned(),
            format!(
                "result call_2 exec_command: {}",
                codex_result("c40b35", "0.2769")
            ),
            "text: Answer number 3.".to_owned(),
        ]
    );
    assert_eq!(
        events(&a.turns[2]),
        [
            r#"call call_4 exec_command {"cmd":"echo tool-output"}"#.to_owned(),
            format!(
                "result call_4 exec_command: {}",
                codex_result("c7166a", "0.1374")
            ),
            "text: Answer number 6.".to_owned(),
        ]
    );
    assert_no_injected_context(&a.turns);
    // Every injected message was decoded as such (not silently dropped as malformed).
    let metas = fixture("codex-0.171.0-resume-hooks-agentsmd-compact.jsonl")
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .filter(|l| matches!(parse_codex_line(l), Ok(ParsedLine::User(ref m)) if m.is_meta))
        .count();
    // The skills/permissions developer message, the AGENTS.md + environment user message, and
    // 7 hook additionalContext developer messages (SessionStart ×4 with the post-compaction
    // one, UserPromptSubmit ×3).
    assert_eq!(metas, 9);
}

// ---------------------------------------------------------------- Gemini fixtures

#[test]
fn gemini_fixture_one_prompt_with_a_rewritten_message() {
    let a = assemble(&fixture("gemini-0.61.0.jsonl"), parse_gemini_line);
    assert_eq!(a.stats.malformed, 0);
    assert_eq!(a.stats.skipped_by_type.get("$set"), Some(&5));
    assert_eq!(
        a.session_id.as_deref(),
        Some("3bbf2a0b-31b8-42dc-ba11-d6cd79d44679")
    );
    assert_eq!(a.cwd, None);
    assert_eq!(a.turns.len(), 1, "{:#?}", a.turns);
    let t = &a.turns[0];
    assert_eq!(t.prompt, "please run echo for me, then compact");
    assert_eq!(t.uuid, "42b430ad-ca6f-4357-96e9-ae46fc794906");
    let id = "run_shell_command__run_shell_command_1795849862581_0";
    assert_eq!(
        events(t),
        [
            format!(r#"call {id} run_shell_command {{"command":"echo tool-output"}}"#),
            format!(
                "result {id} run_shell_command: <untrusted_context>\nOutput: tool-output\nProcess Group PGID: 26951\n</untrusted_context>"
            ),
            "text: Answer number 8.".to_owned(),
        ]
    );
    assert_eq!(t.tools, ["run_shell_command"]);
    assert_no_injected_context(&a.turns);
}

#[test]
fn gemini_fixture_resumed_session_with_hook_context_compression_and_a_failed_tool() {
    // Four runs of one session (`--resume latest`): a prompt; a tool call with a compression
    // between the call and the answer (a `$set` rewriting the history); an unknown tool; a
    // prompt after the compression, whose resume `$set` repeats the compressed history.
    // The compression summaries (the compression's and the two resumes' copies) are the
    // chunker's business: `a_gemini_compression_is_one_compaction_summary`.
    let a = assemble(
        &fixture("gemini-0.61.0-resume-hooks-compress-toolerror.jsonl"),
        gemini_without_summaries,
    );
    assert_eq!(a.stats.malformed, 0);
    assert_eq!(a.stats.skipped_by_type.get("$set"), Some(&24));
    assert_eq!(
        a.session_id.as_deref(),
        Some("f87f0262-7cf2-44a6-9be8-8928b1ff8715")
    );
    let prompts: Vec<(u32, TurnKind, TurnStatus, &str)> = a
        .turns
        .iter()
        .map(|t| (t.index, t.kind, t.status, t.prompt.as_str()))
        .collect();
    assert_eq!(
        prompts,
        [
            (
                0,
                TurnKind::Prompt,
                TurnStatus::Closed,
                "remember the flag FOO_BAR=42"
            ),
            (
                1,
                TurnKind::Prompt,
                TurnStatus::Closed,
                "please run echo for me, then compact"
            ),
            (
                2,
                TurnKind::Prompt,
                TurnStatus::Closed,
                "use the broken tool"
            ),
            (3, TurnKind::Prompt, TurnStatus::Open, "what was the flag?"),
        ]
    );
    assert_eq!(events(&a.turns[0]), ["text: Answer number 2."]);
    let id = "run_shell_command__run_shell_command_1795857680214_0";
    assert_eq!(
        events(&a.turns[1]),
        [
            "text: Running it now (4).".to_owned(),
            format!(r#"call {id} run_shell_command {{"command":"echo tool-output"}}"#),
            format!(
                "result {id} run_shell_command: <untrusted_context>\nOutput: tool-output\nProcess Group PGID: 1137\n</untrusted_context>"
            ),
            "text: Answer number 7.".to_owned(),
        ]
    );
    let id = "no_such_tool__no_such_tool_1795857683814_0";
    assert_eq!(
        events(&a.turns[2]),
        [
            format!(r#"call {id} no_such_tool {{"x":1}}"#),
            format!(
                r#"result {id} no_such_tool (error): Tool "no_such_tool" not found. Did you mean one of: "update_topic", "list_directory", "read_file"?"#
            ),
            "text: Answer number 10.".to_owned(),
        ]
    );
    assert_eq!(events(&a.turns[3]), ["text: Answer number 12."]);
    assert_no_injected_context(&a.turns);
    // The compression's summary exchange lives only in `$set` history rewrites.
    assert!(!all_text(&a.turns).contains("Got it. Thanks for the additional context!"));
}

/// Gemini's decoder with compaction summaries skipped (as `$set` lines, as before they were
/// decoded).
fn gemini_without_summaries(bytes: &[u8]) -> Result<ParsedLine, LineError> {
    match parse_gemini_line(bytes)? {
        ParsedLine::User(l) if l.is_compact_summary => Ok(ParsedLine::Skipped {
            kind: LineKind::Unknown,
            type_name: "$set".to_owned(),
        }),
        other => Ok(other),
    }
}

#[test]
fn a_gemini_compression_is_one_compaction_summary() {
    // The real compression (recorded from Gemini CLI 0.61.0): its `$set` rewrite holds the
    // summary (here the fake model's answer) and the fixed acknowledgement; the two later
    // resumes write the same history again after their header.
    let bytes = fixture("gemini-0.61.0-resume-hooks-compress-toolerror.jsonl");
    let summaries = |chunks: &[super::chunker::EmittedChunk]| -> Vec<(u32, String)> {
        chunks
            .iter()
            .filter(|c| c.chunk.is_compact_summary)
            .map(|c| (c.chunk.turn_index, c.chunk.text.clone()))
            .collect()
    };
    let cfg = crate::transcript::ChunkerConfig::default();
    let whole = crate::transcript::chunk_transcript(&bytes, "fallback", &cfg);
    let found = summaries(&whole.chunks);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].1.contains("complexity_reasoning"), "{found:?}");
    // Fed line by line with the state saved in between (as hooks archive): the same one.
    let mut state = None;
    let mut at = 0usize;
    let mut seen = Vec::new();
    for line in bytes.split_inclusive(|b| *b == b'\n') {
        let end = at + line.len();
        let mut ch = crate::transcript::Chunker::new(cfg.clone(), "fallback");
        if let Some(s) = state.take() {
            ch = ch.with_state(s);
        }
        let from = ch.state().resume_offset as usize;
        let batch = ch.feed(&bytes[from..end]);
        for (t, text) in summaries(&batch.chunks) {
            if !seen.iter().any(|(u, _): &(u32, String)| *u == t) {
                seen.push((t, text));
            }
        }
        state = Some(ch.state().clone());
        at = end;
    }
    assert_eq!(seen, found);
}

// ---------------------------------------------------------------- Codex lines

fn codex(v: Value) -> ParsedLine {
    parse_codex_line(v.to_string().as_bytes()).unwrap_or_else(|e| panic!("{v}: {e}"))
}

fn item(payload: Value) -> ParsedLine {
    codex(
        json!({"timestamp": "2026-01-01T00:00:00.000Z", "ordinal": 7, "type": "response_item", "payload": payload}),
    )
}

fn blocks(l: &MessageLine) -> &[Block] {
    match l.content() {
        Content::Blocks(b) => b,
        other => panic!("not blocks: {other:?}"),
    }
}

#[test]
fn codex_bookkeeping_unknown_and_malformed_lines() {
    for t in [
        "event_msg",
        "world_state",
        "token_usage_record",
        "brand_new_2027",
    ] {
        assert_eq!(
            codex(json!({"type": t, "payload": {"type": "x", "deep": [1, {"a": null}]}})),
            ParsedLine::Skipped {
                kind: LineKind::Unknown,
                type_name: t.to_owned()
            }
        );
    }
    assert!(
        matches!(codex(json!({"payload": {}})), ParsedLine::Skipped { ref type_name, .. } if type_name == "(none)")
    );
    for p in [
        json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "zz"}),
        json!({"type": "tool_search_call"}),
        json!({}),
    ] {
        assert!(
            matches!(item(p.clone()), ParsedLine::Skipped { ref type_name, .. } if type_name.starts_with("response_item.")),
            "{p}"
        );
    }
    // A response_item without a payload is not an error either.
    assert!(matches!(
        codex(json!({"type": "response_item"})),
        ParsedLine::Skipped { .. }
    ));
    for bad in [
        "{not json",
        "[1,2]",
        r#"{"type":"response_item","payload":{"type":"message","role":5}}"#,
    ] {
        assert!(parse_codex_line(bad.as_bytes()).is_err(), "{bad}");
    }
}

#[test]
fn codex_session_meta_and_turn_context_carry_session_and_cwd() {
    let ParsedLine::System(s) = codex(
        json!({"timestamp": "t0", "type": "session_meta", "payload": {"id": "sid", "cwd": "/p", "base_instructions": {"text": "long"}}}),
    ) else {
        panic!()
    };
    assert_eq!(
        (
            s.session_id.as_deref(),
            s.cwd.as_deref(),
            s.uuid.as_deref(),
            s.timestamp.as_deref()
        ),
        (
            Some("sid"),
            Some("/p"),
            Some("session_meta:sid"),
            Some("t0")
        )
    );
    assert_eq!(s.content, Content::Empty);
    let ParsedLine::System(s) =
        codex(json!({"timestamp": "t1", "type": "turn_context", "payload": {"cwd": "/q"}}))
    else {
        panic!()
    };
    assert_eq!((s.session_id, s.cwd.as_deref()), (None, Some("/q")));
    // Missing payloads still decode.
    assert!(
        matches!(codex(json!({"type": "session_meta"})), ParsedLine::System(ref s) if s.session_id.is_none())
    );
}

#[test]
fn codex_user_messages_keep_only_what_the_user_wrote() {
    // With provenance metadata: per item.
    let p = item(
        json!({"type": "message", "id": "m1", "role": "user", "content": [
        {"type": "input_text", "text": "# AGENTS.md instructions for /p\n<INSTRUCTIONS>x</INSTRUCTIONS>"},
        {"type": "input_text", "text": "fix the bug"},
        {"type": "input_image", "image_url": "data:..."}],
        "internal_chat_message_metadata_passthrough": {"content_item_metadata": [
            {"provenance": {"type": "agents_md"}}, {"provenance": {"type": "user"}}, {"provenance": {"type": "user"}}]}}),
    );
    let ParsedLine::User(l) = p else { panic!() };
    assert!(!l.is_meta);
    assert_eq!(l.uuid.as_deref(), Some("m1"));
    assert_eq!(
        blocks(&l),
        [
            Block::Text {
                text: "fix the bug".into()
            },
            Block::Image {}
        ]
    );
    // Nothing from the user: meta, content not kept.
    let ParsedLine::User(l) = item(json!({"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "<environment_context>..</environment_context>"}],
        "internal_chat_message_metadata_passthrough": {"content_item_metadata": [{"provenance": {"type": "harness"}}]}}))
    else {
        panic!()
    };
    assert!(l.is_meta && l.message.is_none());
    // Without metadata (older versions): the harness wrappers by their opening tag.
    for injected in [
        "<environment_context>\n<cwd>/p</cwd>\n</environment_context>",
        "<user_instructions>be nice</user_instructions>",
        "  # AGENTS.md instructions for /p",
        "<memctl-context source=\"restore\">x</memctl-context>",
    ] {
        let ParsedLine::User(l) = item(
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": injected}]}),
        ) else {
            panic!()
        };
        assert!(l.is_meta, "{injected}");
    }
    let ParsedLine::User(l) = item(
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}, {"type": "future_part"}]}),
    ) else {
        panic!()
    };
    assert_eq!(blocks(&l), [Block::Text { text: "hi".into() }]);
    // Developer and system messages (instructions, hooks' additionalContext): always meta.
    for role in ["developer", "system"] {
        let ParsedLine::User(l) = item(
            json!({"type": "message", "role": role, "content": [{"type": "input_text", "text": "a real-looking prompt"}]}),
        ) else {
            panic!()
        };
        assert!(l.is_meta, "{role}");
    }
}

#[test]
fn codex_assistant_messages_and_compaction_output() {
    let ParsedLine::Assistant(l) = item(
        json!({"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": "done"}, {"type": "refusal"}]}),
    ) else {
        panic!()
    };
    assert_eq!(l.message_id(), Some("msg_1"));
    assert_eq!(
        blocks(&l),
        [Block::Text {
            text: "done".into()
        }]
    );
    let p = codex(
        json!({"type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "summary"}]}, "metadata": {"compaction_output": true}}),
    );
    assert!(matches!(p, ParsedLine::Assistant(ref l) if l.is_meta && l.message.is_none()));
}

#[test]
fn codex_tool_calls_and_outputs() {
    let call = |p: Value| match item(p) {
        ParsedLine::Assistant(l) => blocks(&l).to_vec(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        call(
            json!({"type": "function_call", "name": "exec_command", "arguments": "{\"cmd\":\"ls\"}", "call_id": "c1"})
        ),
        [Block::ToolUse {
            id: "c1".into(),
            name: "exec_command".into(),
            input: json!({"cmd": "ls"})
        }]
    );
    // Arguments that are not JSON stay a string.
    assert_eq!(
        call(
            json!({"type": "function_call", "name": "f", "arguments": "not json", "call_id": "c2"})
        ),
        [Block::ToolUse {
            id: "c2".into(),
            name: "f".into(),
            input: json!("not json")
        }]
    );
    assert_eq!(
        call(
            json!({"type": "function_call", "name": "f", "arguments": {"already": "json"}, "call_id": "c5"})
        ),
        [Block::ToolUse {
            id: "c5".into(),
            name: "f".into(),
            input: json!({"already": "json"})
        }]
    );
    assert_eq!(
        call(
            json!({"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin Patch", "call_id": "c3"})
        ),
        [Block::ToolUse {
            id: "c3".into(),
            name: "apply_patch".into(),
            input: json!("*** Begin Patch")
        }]
    );
    assert_eq!(
        call(
            json!({"type": "local_shell_call", "call_id": "c4", "action": {"type": "exec", "command": ["ls"]}})
        ),
        [Block::ToolUse {
            id: "c4".into(),
            name: "local_shell".into(),
            input: json!({"type": "exec", "command": ["ls"]})
        }]
    );
    let result = |p: Value| match item(p) {
        ParsedLine::User(l) => (l.uuid.clone(), blocks(&l).to_vec()),
        other => panic!("{other:?}"),
    };
    let (uuid, b) =
        result(json!({"type": "function_call_output", "call_id": "c1", "output": "out"}));
    // No id of its own: derived from the call id, the same on every read.
    assert_eq!(uuid.as_deref(), Some("function_call_output:c1"));
    assert_eq!(
        b,
        [Block::ToolResult {
            tool_use_id: "c1".into(),
            content: Content::Text("out".into()),
            is_error: false
        }]
    );
    let (_, b) = result(
        json!({"type": "function_call_output", "call_id": "c2", "output": {"content": "boom", "success": false}}),
    );
    assert_eq!(
        b,
        [Block::ToolResult {
            tool_use_id: "c2".into(),
            content: Content::Text("boom".into()),
            is_error: true
        }]
    );
    let (_, b) = result(
        json!({"type": "custom_tool_call_output", "call_id": "c3", "output": [{"type": "input_text", "text": "ok"}, {"type": "input_image"}]}),
    );
    assert_eq!(
        b,
        [Block::ToolResult {
            tool_use_id: "c3".into(),
            content: Content::Blocks(vec![Block::Text { text: "ok".into() }, Block::Image {}]),
            is_error: false
        }]
    );
    let (_, b) = result(json!({"type": "function_call_output", "call_id": "c5"}));
    assert!(
        matches!(
            &b[..],
            [Block::ToolResult {
                content: Content::Empty,
                ..
            }]
        ),
        "{b:?}"
    );
}

#[test]
fn codex_compacted_lines() {
    let ParsedLine::User(l) = codex(
        json!({"timestamp": "t", "ordinal": 3, "type": "compacted", "payload": {"message": "Another language model started ... use the information in this summary to assist with your own analysis:\nWe fixed X.", "replacement_history": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "old prompt"}]}]}}),
    ) else {
        panic!()
    };
    assert!(l.is_compact_summary);
    assert_eq!(l.uuid.as_deref(), Some("compacted@t#3"));
    assert_eq!(l.content(), &Content::Text("We fixed X.".into()));
    // Without the known preamble the whole message is the summary.
    let line =
        json!({"timestamp": "t", "type": "compacted", "payload": {"message": "  plain summary "}});
    let ParsedLine::User(l) = codex(line.clone()) else {
        panic!()
    };
    assert_eq!(l.content(), &Content::Text("plain summary".into()));
    // No ordinal (older versions): the id is derived from the bytes, the same on every read.
    let id = l.uuid.clone().unwrap_or_default();
    assert!(id.starts_with("compacted@t~"), "{id}");
    assert!(
        matches!(codex(line), ParsedLine::User(ref again) if again.uuid.as_deref() == Some(id.as_str()))
    );
    // A remote compaction has no readable summary.
    assert!(matches!(
        codex(json!({"type": "compacted", "payload": {"message": ""}})),
        ParsedLine::Skipped { .. }
    ));
}

// ---------------------------------------------------------------- Gemini lines

fn gemini(v: Value) -> ParsedLine {
    parse_gemini_line(v.to_string().as_bytes()).unwrap_or_else(|e| panic!("{v}: {e}"))
}

#[test]
fn gemini_header_updates_notices_and_malformed_lines() {
    let ParsedLine::System(s) = gemini(
        json!({"sessionId": "sid", "projectHash": "h", "startTime": "t0", "lastUpdated": "t0", "kind": "main"}),
    ) else {
        panic!()
    };
    assert_eq!(
        (s.session_id.as_deref(), s.cwd, s.uuid.as_deref()),
        (Some("sid"), None, Some("session:sid@t0"))
    );
    for v in [
        json!({"$set": {"lastUpdated": "t"}}),
        json!({"$set": {"messages": [{"id": "x", "type": "user", "content": "old"}]}}),
    ] {
        assert_eq!(
            gemini(v),
            ParsedLine::Skipped {
                kind: LineKind::Unknown,
                type_name: "$set".into()
            }
        );
    }
    for t in ["info", "error", "warning", "brand_new"] {
        assert!(
            matches!(gemini(json!({"id": "i", "type": t, "content": "x"})), ParsedLine::Skipped { ref type_name, .. } if type_name == t)
        );
    }
    assert!(
        matches!(gemini(json!({"projectHash": "h"})), ParsedLine::Skipped { ref type_name, .. } if type_name == "(none)")
    );
    for bad in ["{oops", "7", r#"{"id":"a","type":"user","toolCalls":5}"#] {
        assert!(parse_gemini_line(bad.as_bytes()).is_err(), "{bad}");
    }
}

#[test]
fn gemini_user_messages_lose_the_injected_context() {
    let user = |content: Value| match gemini(
        json!({"id": "u1", "timestamp": "t", "type": "user", "content": content}),
    ) {
        ParsedLine::User(l) => l,
        other => panic!("{other:?}"),
    };
    let l = user(json!("plain string prompt"));
    assert_eq!(
        (l.uuid.as_deref(), l.timestamp.as_deref(), l.supersedes),
        (Some("u1"), Some("t"), true)
    );
    assert_eq!(
        blocks(&l),
        [Block::Text {
            text: "plain string prompt".into()
        }]
    );
    let l = user(json!([
        {"text": "<hook_context>&lt;memctl-context&gt;old&lt;/memctl-context&gt;</hook_context>\n\nfix it"},
        {"text": "<hook_context>more</hook_context>"},
        {"inlineData": {"mimeType": "image/png", "data": "AAAA"}},
        {"somethingNew": {}}
    ]));
    assert_eq!(
        blocks(&l),
        [
            Block::Text {
                text: "fix it".into()
            },
            Block::Image {}
        ]
    );
    // Only injected parts: meta. An unclosed hook_context runs to the end.
    for content in [
        json!([{"text": "<session_context>\nThis is the Gemini CLI.\n</session_context>"}]),
        json!([{"text": "<hook_context>never closed ... fix it"}]),
        json!([]),
        json!(null),
    ] {
        let l = user(content.clone());
        assert!(l.is_meta && l.message.is_none(), "{content}");
    }
    // Missing content too.
    assert!(
        matches!(gemini(json!({"type": "user"})), ParsedLine::User(ref l) if l.is_meta && l.uuid.is_none())
    );
}

#[test]
fn gemini_function_responses_are_the_tool_results() {
    let ParsedLine::User(l) = gemini(json!({"id": "u2", "type": "user", "content": [
        {"functionResponse": {"id": "c1", "name": "run_shell_command", "response": {"output": "ok"}}},
        {"functionResponse": {"id": "c2", "name": "read_file", "response": {"error": "no such file"}}},
        {"functionResponse": {"id": "c3", "name": "x", "response": {"llmContent": "other shape"}}}
    ]})) else {
        panic!()
    };
    assert_eq!(
        blocks(&l),
        [
            Block::ToolResult {
                tool_use_id: "c1".into(),
                content: Content::Text("ok".into()),
                is_error: false
            },
            Block::ToolResult {
                tool_use_id: "c2".into(),
                content: Content::Text("no such file".into()),
                is_error: true
            },
            Block::ToolResult {
                tool_use_id: "c3".into(),
                content: Content::Text(r#"{"llmContent":"other shape"}"#.into()),
                is_error: false
            },
        ]
    );
}

#[test]
fn gemini_model_messages_text_and_calls_once() {
    let ParsedLine::Assistant(l) = gemini(json!({"id": "g1", "type": "gemini",
        "content": [{"text": "thinking...", "thought": true}, {"text": "Let me look."},
                    {"functionCall": {"id": "c1", "name": "ls", "args": {"dir": "."}}},
                    {"functionCall": {"id": "c9", "name": "grep", "args": {"q": "x"}}}],
        "thoughts": [{"subject": "s", "description": "d"}],
        "toolCalls": [{"id": "c1", "name": "ls", "args": {"dir": "."}, "result": [{"functionResponse": {"id": "c1", "response": {"output": "COPY"}}}], "status": "success"}]}))
    else {
        panic!()
    };
    assert_eq!(
        (l.message_id(), l.supersedes, l.is_meta),
        (Some("g1"), true, false)
    );
    assert_eq!(
        blocks(&l),
        [
            Block::Text {
                text: "Let me look.".into()
            },
            Block::ToolUse {
                id: "c9".into(),
                name: "grep".into(),
                input: json!({"q": "x"})
            },
            Block::ToolUse {
                id: "c1".into(),
                name: "ls".into(),
                input: json!({"dir": "."})
            },
        ]
    );
    // A bare record decodes to an empty message.
    assert!(
        matches!(gemini(json!({"type": "gemini"})), ParsedLine::Assistant(ref l) if blocks(l).is_empty())
    );
}

// ---------------------------------------------------------------- superseding lines

fn msg(uuid: &str, role: &str, content: Vec<Block>, supersedes: bool) -> MessageLine {
    MessageLine {
        uuid: Some(uuid.to_owned()),
        supersedes,
        message: Some(Message {
            id: Some(uuid.to_owned()),
            role: Some(role.to_owned()),
            content: Content::Blocks(content),
        }),
        ..MessageLine::default()
    }
}

fn text(t: &str) -> Block {
    Block::Text { text: t.to_owned() }
}

fn tool_use(id: &str) -> Block {
    Block::ToolUse {
        id: id.to_owned(),
        name: "Bash".to_owned(),
        input: json!({"command": "ls"}),
    }
}

fn tool_result(id: &str) -> Block {
    Block::ToolResult {
        tool_use_id: id.to_owned(),
        content: Content::Text("files".into()),
        is_error: false,
    }
}

fn run(lines: &[ParsedLine]) -> Vec<Turn> {
    let mut asm = TurnAssembler::new(0, 0);
    for (i, l) in lines.iter().enumerate() {
        asm.push(l, i * 10);
    }
    asm.finish().turns
}

#[test]
fn a_rewritten_message_is_archived_once_with_its_last_content() {
    let lines = [
        ParsedLine::User(msg("p1", "user", vec![text("go")], true)),
        // First write: the text so far, no tool calls yet.
        ParsedLine::Assistant(msg("g1", "assistant", vec![text("Running")], true)),
        // Second write of the same message: text (grown) and the call.
        ParsedLine::Assistant(msg(
            "g1",
            "assistant",
            vec![text("Running it"), tool_use("c1")],
            true,
        )),
        ParsedLine::User(msg("r1", "user", vec![tool_result("c1")], true)),
        // A third write after the result keeps the message in its place.
        ParsedLine::Assistant(msg(
            "g1",
            "assistant",
            vec![text("Running it"), tool_use("c1")],
            true,
        )),
        ParsedLine::Assistant(msg("g2", "assistant", vec![text("Done.")], true)),
        // The prompt written again does not open a second turn.
        ParsedLine::User(msg("p1", "user", vec![text("go")], true)),
    ];
    let turns = run(&lines);
    assert_eq!(turns.len(), 1, "{turns:#?}");
    assert_eq!(turns[0].prompt, "go");
    assert_eq!(
        events(&turns[0]),
        [
            "text: Running it",
            r#"call c1 Bash {"command":"ls"}"#,
            "result c1 Bash: files",
            "text: Done.",
        ]
    );
    assert_eq!(turns[0].tools, ["Bash"]);
}

#[test]
fn without_the_flag_lines_with_one_uuid_add_up_as_before() {
    // Claude Code's split lines share a message id and each adds its own blocks.
    let lines = [
        ParsedLine::User(msg("p1", "user", vec![text("go")], false)),
        ParsedLine::Assistant(msg("a1", "assistant", vec![text("one")], false)),
        ParsedLine::Assistant(msg("a1", "assistant", vec![tool_use("c1")], false)),
        ParsedLine::User(msg("p1", "user", vec![text("go")], false)),
    ];
    let turns = run(&lines);
    assert_eq!(turns.len(), 2);
    assert_eq!(
        events(&turns[0]),
        ["text: one", r#"call c1 Bash {"command":"ls"}"#]
    );
}

#[test]
fn a_rewrite_right_after_its_first_write_counts_secrets_and_private_spans_once() {
    let run_counting = |lines: &[ParsedLine]| {
        let mut asm = TurnAssembler::new(0, 0);
        for (i, l) in lines.iter().enumerate() {
            asm.push(l, i * 10);
        }
        asm.finish()
    };
    let key = format!("ghp_{}", "A1b2C3d4E5".repeat(4));
    let with_key = format!("token {key}");
    let done = run_counting(&[
        ParsedLine::User(msg("p1", "user", vec![text("go")], true)),
        ParsedLine::Assistant(msg("g1", "assistant", vec![text(&with_key)], true)),
        ParsedLine::Assistant(msg(
            "g1",
            "assistant",
            vec![text(&with_key), tool_use("c1")],
            true,
        )),
    ]);
    assert_eq!(done.redactions.get(RedactionKind::GithubToken), 1);
    assert!(!events(&done.turns[0]).concat().contains(&key));

    let done = run_counting(&[
        ParsedLine::User(msg("p1", "user", vec![text("go")], true)),
        ParsedLine::Assistant(msg("g1", "assistant", vec![text("a <private>b")], true)),
        ParsedLine::Assistant(msg(
            "g1",
            "assistant",
            vec![text("a <private>b"), tool_use("c1")],
            true,
        )),
        // Closes the one span the message opened: what follows is visible again.
        ParsedLine::User(msg(
            "r1",
            "user",
            vec![tool_result("c1"), text("</private> after")],
            true,
        )),
        ParsedLine::Assistant(msg("g2", "assistant", vec![text("visible")], true)),
    ]);
    let ev = events(&done.turns[0]);
    assert_eq!(
        ev.last().map(String::as_str),
        Some("text: visible"),
        "{ev:?}"
    );
}
