//! One Gemini CLI chat-file line → a [`ParsedLine`], so the turn assembler and the chunker
//! work on Gemini sessions unchanged.
//!
//! The chat file (`~/.gemini/tmp/<project>/chats/session-*.jsonl`) holds three kinds of line:
//! - a header `{sessionId, projectHash, startTime, lastUpdated, kind}`, written again on every
//!   resume: a [`SystemLine`] with no content (subtype `session`) that carries the session id.
//!   The file has no cwd anywhere: lines leave it `None`.
//! - `{"$set": {...}}` updates (`lastUpdated`, `sessionId`, and whole-history `messages`
//!   rewrites on start, resume and compression): skipped, but for a compression's summary.
//!   Every other message they hold was written before as a line of its own, and kept
//!   messages come back with new ids after a compression. A compression rewrites the history
//!   as `[session context, summary (user), "Got it. Thanks for the additional context!"
//!   (gemini), kept messages…]` ([`COMPRESSION_ACK`]); the summary becomes a compaction
//!   summary line ([`MessageLine::is_compact_summary`]), as Claude Code's and Codex's do. A
//!   resume writes the compressed history again after its header line: the chunker drops the
//!   summary of such a rewrite (`Chunker`, which sees the header).
//! - a message `{id, timestamp, type, content, toolCalls?, thoughts?, tokens?}`:
//!   - `type: user`: `content` is a string or a list of parts. `{text}` parts become text
//!     blocks, with the harness's injections removed: a part opening with `<session_context>`
//!     is dropped, and every `<hook_context>…</hook_context>` span (hooks' additionalContext,
//!     our own restored context among it) is cut out (Gemini CLI puts SessionStart's context
//!     inside the prompt's own part, BeforeAgent's in a part of its own). `{functionResponse}`
//!     parts become tool results: they are the one source of results (`toolCalls[].result`
//!     holds a copy, ignored). A user message with nothing left is `is_meta`.
//!   - `type: gemini`: text parts (not `thought` ones) become text blocks and `toolCalls` tool
//!     calls (`functionCall` parts, which only the `$set` history uses, too, once per id).
//!     Gemini CLI writes a message again when it grows (tool calls added): the last write
//!     wins, so every message line is marked [`MessageLine::supersedes`] and the assembler
//!     replaces what an earlier line with the same id put in the turn.
//!   - other types (`info`, `error`, `warning`, ...): UI notices, skipped.
//!
//! Line ids are the message `id`s; thoughts are never decoded.

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

use super::line::{
    Block, Content, LineError, LineKind, Message, MessageLine, ParsedLine, SystemLine,
};

const SESSION_CONTEXT_OPEN: &str = "<session_context>";
const HOOK_CONTEXT_OPEN: &str = "<hook_context>";
const HOOK_CONTEXT_CLOSE: &str = "</hook_context>";
/// The model turn Gemini CLI (0.61.0) puts after the summary of a compressed history.
const COMPRESSION_ACK: &str = "Got it. Thanks for the additional context!";

/// A `$set` line's history rewrite, when it is one.
#[derive(Deserialize)]
struct SetLine {
    #[serde(rename = "$set")]
    set: SetMessages,
}

#[derive(Deserialize)]
struct SetMessages {
    messages: Vec<SetMessage>,
}

#[derive(Deserialize)]
struct SetMessage {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(flatten)]
    record: Record,
}

/// Step one: what kind of line this is.
#[derive(Deserialize)]
struct Head {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(rename = "sessionId", default)]
    session_id: Option<String>,
    #[serde(rename = "$set", default)]
    set: Option<IgnoredAny>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Header {
    session_id: Option<String>,
    start_time: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Record {
    id: Option<String>,
    timestamp: Option<String>,
    content: Option<Parts>,
    tool_calls: Option<Vec<ToolCall>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ToolCall {
    id: Option<String>,
    name: Option<String>,
    args: Option<Value>,
}

/// `content`: a plain string or a list of parts.
#[derive(Deserialize)]
#[serde(untagged)]
enum Parts {
    Text(String),
    List(Vec<Part>),
    Other(IgnoredAny),
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Part {
    text: Option<String>,
    thought: Option<bool>,
    function_call: Option<FunctionCall>,
    function_response: Option<FunctionResponse>,
    inline_data: Option<IgnoredAny>,
    file_data: Option<IgnoredAny>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct FunctionCall {
    id: Option<String>,
    name: Option<String>,
    args: Option<Value>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct FunctionResponse {
    id: Option<String>,
    response: Option<Value>,
}

/// Decode one Gemini CLI chat line (without its trailing newline).
pub(crate) fn parse_gemini_line(bytes: &[u8]) -> Result<ParsedLine, LineError> {
    let head: Head = serde_json::from_slice(bytes)?;
    if head.set.is_some() {
        return Ok(compression_summary(bytes).map_or_else(|| skipped("$set"), ParsedLine::User));
    }
    match head.kind.as_deref() {
        Some("user") => {
            let r: Record = serde_json::from_slice(bytes)?;
            Ok(ParsedLine::User(user_line(r)))
        }
        Some("gemini") => {
            let r: Record = serde_json::from_slice(bytes)?;
            Ok(ParsedLine::Assistant(gemini_line(r)))
        }
        Some(other) => Ok(skipped(other)),
        None if head.session_id.is_some() => {
            let h: Header = serde_json::from_slice(bytes)?;
            let uuid = h.session_id.as_ref().map(|s| match &h.start_time {
                Some(t) => format!("session:{s}@{t}"),
                None => format!("session:{s}"),
            });
            Ok(ParsedLine::System(SystemLine {
                uuid,
                session_id: h.session_id,
                cwd: None,
                timestamp: h.start_time,
                subtype: Some("session".to_owned()),
                content: Content::Empty,
            }))
        }
        None => Ok(skipped("(none)")),
    }
}

/// The summary of a compressed history in a `$set` rewrite (see the module doc), as a
/// compaction summary line; None for any other `$set` (most are: checked on the raw bytes
/// before the history is decoded).
fn compression_summary(bytes: &[u8]) -> Option<MessageLine> {
    let ack = COMPRESSION_ACK.as_bytes();
    if !bytes.windows(ack.len()).any(|w| w == ack) {
        return None;
    }
    let set: SetLine = serde_json::from_slice(bytes).ok()?;
    let msgs = set.set.messages;
    let at = msgs.windows(2).position(|w| {
        w[0].kind.as_deref() == Some("user")
            && w[1].kind.as_deref() == Some("gemini")
            && text_of(&w[1].record).trim() == COMPRESSION_ACK
    })?;
    let summary = msgs.into_iter().nth(at)?.record;
    let text = text_of(&summary);
    if text.trim().is_empty() {
        return None;
    }
    let mut line = message_line(summary.id, summary.timestamp, "user", Content::Text(text));
    line.supersedes = false;
    line.is_compact_summary = true;
    Some(line)
}

/// A record's text parts, joined (thoughts left out).
fn text_of(r: &Record) -> String {
    match &r.content {
        Some(Parts::Text(t)) => t.clone(),
        Some(Parts::List(parts)) => parts
            .iter()
            .filter(|p| p.thought != Some(true))
            .filter_map(|p| p.text.as_deref())
            .collect::<Vec<_>>()
            .join("\n"),
        Some(Parts::Other(_)) | None => String::new(),
    }
}

fn user_line(r: Record) -> MessageLine {
    let parts = match r.content {
        Some(Parts::Text(t)) => vec![Part {
            text: Some(t),
            ..Part::default()
        }],
        Some(Parts::List(p)) => p,
        Some(Parts::Other(_)) | None => Vec::new(),
    };
    let mut blocks = Vec::with_capacity(parts.len());
    for part in parts {
        if let Some(fr) = part.function_response {
            let (content, is_error) = response_content(fr.response);
            blocks.push(Block::ToolResult {
                tool_use_id: fr.id.unwrap_or_default(),
                content,
                is_error,
            });
        } else if let Some(text) = part.text {
            if text.trim_start().starts_with(SESSION_CONTEXT_OPEN) {
                continue;
            }
            let text = strip_hook_context(&text);
            if !text.trim().is_empty() {
                blocks.push(Block::Text {
                    text: text.trim().to_owned(),
                });
            }
        } else if part.inline_data.is_some() || part.file_data.is_some() {
            blocks.push(Block::Image {});
        }
    }
    let is_meta = blocks.is_empty();
    let mut line = message_line(r.id, r.timestamp, "user", Content::Blocks(blocks));
    if is_meta {
        line.message = None;
        line.is_meta = true;
    }
    line
}

fn gemini_line(r: Record) -> MessageLine {
    let mut blocks = Vec::new();
    let calls = r.tool_calls.unwrap_or_default();
    let mut call_ids: Vec<String> = calls.iter().filter_map(|c| c.id.clone()).collect();
    match r.content {
        Some(Parts::Text(t)) => blocks.push(Block::Text { text: t }),
        Some(Parts::List(parts)) => {
            for part in parts {
                if part.thought == Some(true) {
                    continue;
                }
                if let Some(text) = part.text {
                    blocks.push(Block::Text { text });
                } else if let Some(fc) = part.function_call {
                    let id = fc.id.unwrap_or_default();
                    if id.is_empty() || !call_ids.contains(&id) {
                        call_ids.push(id.clone());
                        blocks.push(Block::ToolUse {
                            id,
                            name: fc.name.unwrap_or_default(),
                            input: fc.args.unwrap_or_default(),
                        });
                    }
                }
            }
        }
        Some(Parts::Other(_)) | None => {}
    }
    for c in calls {
        blocks.push(Block::ToolUse {
            id: c.id.unwrap_or_default(),
            name: c.name.unwrap_or_default(),
            input: c.args.unwrap_or_default(),
        });
    }
    message_line(r.id, r.timestamp, "assistant", Content::Blocks(blocks))
}

/// A `functionResponse.response`: `{output}` or `{error}` (a failure), else the whole object.
fn response_content(response: Option<Value>) -> (Content, bool) {
    match response {
        None | Some(Value::Null) => (Content::Empty, false),
        Some(Value::String(s)) => (Content::Text(s), false),
        Some(Value::Object(o)) => {
            if let Some(e) = o.get("error").filter(|e| !e.is_null()) {
                return (Content::Text(value_text(e)), true);
            }
            match o.get("output") {
                Some(out) => (Content::Text(value_text(out)), false),
                None => (Content::Text(Value::Object(o).to_string()), false),
            }
        }
        Some(other) => (Content::Text(other.to_string()), false),
    }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Cut every `<hook_context>…</hook_context>` span (an unclosed one runs to the end).
fn strip_hook_context(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(HOOK_CONTEXT_OPEN) {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        rest = match after.find(HOOK_CONTEXT_CLOSE) {
            Some(end) => &after[end + HOOK_CONTEXT_CLOSE.len()..],
            None => "",
        };
    }
    out.push_str(rest);
    out
}

fn message_line(
    id: Option<String>,
    timestamp: Option<String>,
    role: &str,
    content: Content,
) -> MessageLine {
    MessageLine {
        uuid: id.clone(),
        timestamp,
        supersedes: true,
        message: Some(Message {
            id,
            role: Some(role.to_owned()),
            content,
        }),
        ..MessageLine::default()
    }
}

fn skipped(type_name: &str) -> ParsedLine {
    ParsedLine::Skipped {
        kind: LineKind::Unknown,
        type_name: type_name.to_owned(),
    }
}
