//! One Codex CLI rollout line → a [`ParsedLine`], so the turn assembler and the chunker work
//! on Codex sessions unchanged.
//!
//! A rollout line is `{timestamp, type, payload}` (0.171 adds `ordinal`). What becomes what:
//! - `session_meta` (`payload.id`, `payload.cwd`) and `turn_context` (`payload.cwd`): a
//!   [`SystemLine`] with no content, subtype `session_meta` / `turn_context`: it carries the
//!   session id and cwd to the chunker and is otherwise ignored by the assembler.
//! - `response_item` `message`:
//!   - role `user`: a prompt, made only of the items the user wrote. Codex tags each content
//!     item with a `provenance` (`user`, `harness`, `skills`, ...) in
//!     `internal_chat_message_metadata_passthrough.content_item_metadata`; items of any other
//!     provenance (`<environment_context>`, AGENTS.md, skills listings) are dropped. Without
//!     that metadata (older versions) the known harness wrappers are dropped by their opening
//!     tag. A message with nothing left is an `is_meta` line (never archived).
//!   - role `developer` / `system`: harness instructions and hooks' `additionalContext` (our own
//!     restored context comes back this way): always `is_meta`, content not decoded.
//!   - role `assistant`: text blocks. A message the compaction request produced
//!     (`metadata.compaction_output: true`) is `is_meta`: its text is the summary, which the
//!     `compacted` line carries.
//! - `function_call` / `custom_tool_call` / `local_shell_call` / `web_search_call`: an assistant
//!   line with one [`Block::ToolUse`] (id = `call_id`; `arguments` parsed as JSON, else kept as
//!   a string).
//! - `function_call_output` / `custom_tool_call_output`: a user line with one
//!   [`Block::ToolResult`].
//! - `compacted`: a user line with `is_compact_summary` and the summary text (Codex's fixed
//!   preamble before it removed); `replacement_history` (a copy of kept messages) is ignored.
//! - `reasoning`, `event_msg` (UI copies of the same messages), `world_state`,
//!   `token_usage_record`, unknown types: skipped.
//!
//! Line ids: the item's own `id` when it has one, else one derived from the line
//! (`<type>:<call_id>`, `<type>@<timestamp>#<ordinal>`, or a digest of the line's bytes when
//! there is no `ordinal`): stable across re-reads.

use serde::Deserialize;
use serde_json::Value;

use super::line::{
    Block, Content, LineError, LineKind, Message, MessageLine, ParsedLine, SystemLine,
};

/// Codex's own preamble before the summary text of a `compacted` line (0.171).
const SUMMARY_PREFIX_END: &str =
    "use the information in this summary to assist with your own analysis:";

/// Opening tags of harness-injected user items, for rollouts without provenance metadata.
const INJECTED_OPENINGS: [&str; 7] = [
    "<environment_context>",
    "<user_instructions>",
    "<INSTRUCTIONS>",
    "# AGENTS.md instructions for ",
    "<skills_instructions>",
    "<permissions instructions>",
    "<memctl-context",
];

/// Step one: the envelope's `type` only.
#[derive(Deserialize)]
struct Head {
    #[serde(rename = "type", default)]
    kind: Option<String>,
}

/// Step two: the whole envelope with a typed payload.
#[derive(Deserialize)]
struct Envelope<P> {
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    ordinal: Option<u64>,
    #[serde(default)]
    payload: Option<P>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct SessionMeta {
    id: Option<String>,
    cwd: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct TurnContext {
    cwd: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Compacted {
    message: Option<String>,
}

/// A `response_item` payload: every field any item type uses, all optional.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Item {
    #[serde(rename = "type")]
    kind: Option<String>,
    id: Option<String>,
    role: Option<String>,
    content: Option<Vec<Part>>,
    name: Option<String>,
    /// The namespace of a function (an MCP server's tools: `mcp__<server>`).
    namespace: Option<String>,
    /// A JSON string in every version seen; an object is taken as is.
    arguments: Option<Value>,
    /// Free-form text (custom tools such as `apply_patch`).
    input: Option<Value>,
    call_id: Option<String>,
    output: Option<Value>,
    action: Option<Value>,
    internal_chat_message_metadata_passthrough: Option<Passthrough>,
}

/// `response_item` lines carry a sibling `metadata` object beside the payload.
#[derive(Deserialize, Default)]
#[serde(default)]
struct ItemEnvelope {
    timestamp: Option<String>,
    ordinal: Option<u64>,
    payload: Option<Item>,
    metadata: Option<ItemMetadata>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ItemMetadata {
    compaction_output: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Passthrough {
    content_item_metadata: Option<Vec<ItemMeta>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ItemMeta {
    provenance: Option<Provenance>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Provenance {
    #[serde(rename = "type")]
    kind: Option<String>,
}

/// One content item of a message.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part {
    InputText {
        #[serde(default)]
        text: String,
    },
    OutputText {
        #[serde(default)]
        text: String,
    },
    InputImage {},
    #[serde(other)]
    Unknown,
}

/// The envelope fields every produced line shares.
struct Env {
    uuid: String,
    timestamp: Option<String>,
}

/// Decode one Codex rollout line (without its trailing newline).
pub(crate) fn parse_codex_line(bytes: &[u8]) -> Result<ParsedLine, LineError> {
    let head: Head = serde_json::from_slice(bytes)?;
    let type_name = head.kind.unwrap_or_else(|| "(none)".to_owned());
    match type_name.as_str() {
        "session_meta" => {
            let e: Envelope<SessionMeta> = serde_json::from_slice(bytes)?;
            let p = e.payload.unwrap_or_default();
            let uuid = p
                .id
                .as_ref()
                .map(|id| format!("session_meta:{id}"))
                .unwrap_or_else(|| derived_id(&type_name, None, &e.timestamp, e.ordinal, bytes));
            Ok(ParsedLine::System(SystemLine {
                uuid: Some(uuid),
                session_id: p.id,
                cwd: p.cwd,
                timestamp: e.timestamp,
                subtype: Some(type_name),
                content: Content::Empty,
            }))
        }
        "turn_context" => {
            let e: Envelope<TurnContext> = serde_json::from_slice(bytes)?;
            Ok(ParsedLine::System(SystemLine {
                uuid: Some(derived_id(&type_name, None, &e.timestamp, e.ordinal, bytes)),
                session_id: None,
                cwd: e.payload.unwrap_or_default().cwd,
                timestamp: e.timestamp,
                subtype: Some(type_name),
                content: Content::Empty,
            }))
        }
        "compacted" => {
            let e: Envelope<Compacted> = serde_json::from_slice(bytes)?;
            let env = Env {
                uuid: derived_id(&type_name, None, &e.timestamp, e.ordinal, bytes),
                timestamp: e.timestamp,
            };
            let text = summary_text(e.payload.unwrap_or_default().message.as_deref());
            if text.is_empty() {
                // A remote compaction keeps only an opaque replacement history: nothing to read.
                return Ok(skipped(type_name));
            }
            let mut line = message_line(env, "user", None, Content::Text(text));
            line.is_compact_summary = true;
            Ok(ParsedLine::User(line))
        }
        "response_item" => {
            let e: ItemEnvelope = serde_json::from_slice(bytes)?;
            Ok(response_item(e, bytes))
        }
        _ => Ok(skipped(type_name)),
    }
}

fn response_item(e: ItemEnvelope, bytes: &[u8]) -> ParsedLine {
    let item = e.payload.unwrap_or_default();
    let kind = item.kind.clone().unwrap_or_else(|| "(none)".to_owned());
    let uuid = item.id.clone().unwrap_or_else(|| {
        derived_id(
            &kind,
            item.call_id.as_deref(),
            &e.timestamp,
            e.ordinal,
            bytes,
        )
    });
    let env = Env {
        uuid,
        timestamp: e.timestamp,
    };
    let compaction_output = e.metadata.and_then(|m| m.compaction_output) == Some(true);
    match kind.as_str() {
        "message" => message(item, env, compaction_output),
        "function_call" => {
            let input = match item.arguments {
                Some(Value::String(args)) => {
                    serde_json::from_str(&args).unwrap_or(Value::String(args))
                }
                other => other.unwrap_or_default(),
            };
            // `mcp__memctl` + `search` → `mcp__memctl__search`, as Claude Code names MCP tools:
            // memctl's own tool results are then recognised and never archived again.
            let name = match (item.namespace, item.name) {
                (Some(ns), Some(n)) if !ns.is_empty() => Some(format!("{ns}__{n}")),
                (_, n) => n,
            };
            tool_use(env, item.call_id, name, input)
        }
        "custom_tool_call" => {
            let input = item.input.unwrap_or_default();
            tool_use(env, item.call_id, item.name, input)
        }
        "local_shell_call" => tool_use(
            env,
            item.call_id.or(item.id),
            Some("local_shell".to_owned()),
            item.action.unwrap_or_default(),
        ),
        "web_search_call" => tool_use(
            env,
            item.id,
            Some("web_search".to_owned()),
            item.action.unwrap_or_default(),
        ),
        "function_call_output" | "custom_tool_call_output" => {
            let (content, is_error) = tool_output(item.output);
            let block = Block::ToolResult {
                tool_use_id: item.call_id.unwrap_or_default(),
                content,
                is_error,
            };
            ParsedLine::User(message_line(
                env,
                "user",
                None,
                Content::Blocks(vec![block]),
            ))
        }
        // `reasoning` (never archived) and item types this version does not know.
        _ => skipped(format!("response_item.{kind}")),
    }
}

fn message(item: Item, env: Env, compaction_output: bool) -> ParsedLine {
    let role = item.role.unwrap_or_default();
    match role.as_str() {
        "user" => {
            let provenance: Option<Vec<Option<String>>> = item
                .internal_chat_message_metadata_passthrough
                .and_then(|p| p.content_item_metadata)
                .map(|m| {
                    m.into_iter()
                        .map(|m| m.provenance.and_then(|p| p.kind))
                        .collect()
                });
            let parts = item.content.unwrap_or_default();
            let mut blocks = Vec::with_capacity(parts.len());
            for (i, part) in parts.into_iter().enumerate() {
                let from_user = match &provenance {
                    // One metadata entry per content item, in order.
                    Some(p) if p.len() > i => p[i].as_deref() == Some("user"),
                    // No metadata (older versions): the known harness wrappers are not prompts.
                    _ => !matches!(&part, Part::InputText { text } if is_injected(text)),
                };
                if !from_user {
                    continue;
                }
                match part {
                    Part::InputText { text } | Part::OutputText { text } => {
                        blocks.push(Block::Text { text });
                    }
                    Part::InputImage {} => blocks.push(Block::Image {}),
                    Part::Unknown => {}
                }
            }
            if blocks.is_empty() {
                return ParsedLine::User(meta_line(env));
            }
            ParsedLine::User(message_line(env, "user", None, Content::Blocks(blocks)))
        }
        "assistant" => {
            if compaction_output {
                return ParsedLine::Assistant(meta_line(env));
            }
            let blocks = item
                .content
                .unwrap_or_default()
                .into_iter()
                .filter_map(|p| match p {
                    Part::OutputText { text } | Part::InputText { text } => {
                        Some(Block::Text { text })
                    }
                    _ => None,
                })
                .collect();
            ParsedLine::Assistant(message_line(
                env,
                "assistant",
                item.id,
                Content::Blocks(blocks),
            ))
        }
        // `developer` and `system`: harness instructions and hooks' additionalContext.
        _ => ParsedLine::User(meta_line(env)),
    }
}

/// An assistant line with one tool call.
fn tool_use(env: Env, id: Option<String>, name: Option<String>, input: Value) -> ParsedLine {
    let block = Block::ToolUse {
        id: id.unwrap_or_default(),
        name: name.unwrap_or_default(),
        input,
    };
    ParsedLine::Assistant(message_line(
        env,
        "assistant",
        None,
        Content::Blocks(vec![block]),
    ))
}

/// A tool output: a string, a list of content items, or `{content, success}`.
fn tool_output(output: Option<Value>) -> (Content, bool) {
    match output {
        None | Some(Value::Null) => (Content::Empty, false),
        Some(Value::String(s)) => (Content::Text(s), false),
        Some(Value::Array(items)) => (Content::Blocks(output_items(&items)), false),
        Some(Value::Object(o)) => {
            let failed = o.get("success").and_then(Value::as_bool) == Some(false);
            let content = match o.get("content") {
                Some(Value::String(s)) => Content::Text(s.clone()),
                Some(Value::Array(items)) => Content::Blocks(output_items(items)),
                _ => Content::Text(Value::Object(o.clone()).to_string()),
            };
            (content, failed)
        }
        Some(other) => (Content::Text(other.to_string()), false),
    }
}

/// Content items of a tool output (`input_text` / `output_text` / `input_image`).
fn output_items(items: &[Value]) -> Vec<Block> {
    items
        .iter()
        .filter_map(|item| match item.get("type").and_then(Value::as_str) {
            Some("input_text" | "output_text" | "text") => Some(Block::Text {
                text: item
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            }),
            Some("input_image" | "image") => Some(Block::Image {}),
            _ => None,
        })
        .collect()
}

/// The summary of a `compacted` line without Codex's fixed preamble.
fn summary_text(message: Option<&str>) -> String {
    let m = message.unwrap_or_default();
    let body = m
        .find(SUMMARY_PREFIX_END)
        .map_or(m, |at| &m[at + SUMMARY_PREFIX_END.len()..]);
    body.trim().to_owned()
}

fn is_injected(text: &str) -> bool {
    let t = text.trim_start();
    INJECTED_OPENINGS.iter().any(|o| t.starts_with(o))
}

/// An id for a line whose item has none: `<type>:<call_id>`, else
/// `<type>@<timestamp>#<ordinal>`; versions without `ordinal` (and older ones that did not
/// write item ids) get a digest of the line's bytes instead, so two items written in the same
/// millisecond do not share an id.
fn derived_id(
    kind: &str,
    call_id: Option<&str>,
    timestamp: &Option<String>,
    ordinal: Option<u64>,
    bytes: &[u8],
) -> String {
    use sha2::{Digest, Sha256};
    if let Some(c) = call_id {
        return format!("{kind}:{c}");
    }
    let ts = timestamp.as_deref().unwrap_or("");
    match ordinal {
        Some(o) => format!("{kind}@{ts}#{o}"),
        None => format!("{kind}@{ts}~{}", hex::encode(&Sha256::digest(bytes)[..6])),
    }
}

fn message_line(env: Env, role: &str, id: Option<String>, content: Content) -> MessageLine {
    MessageLine {
        uuid: (!env.uuid.is_empty()).then_some(env.uuid),
        timestamp: env.timestamp,
        message: Some(Message {
            id,
            role: Some(role.to_owned()),
            content,
        }),
        ..MessageLine::default()
    }
}

/// A harness-injected message: kept out of every turn, its content not even decoded further.
fn meta_line(env: Env) -> MessageLine {
    MessageLine {
        uuid: (!env.uuid.is_empty()).then_some(env.uuid),
        timestamp: env.timestamp,
        is_meta: true,
        ..MessageLine::default()
    }
}

fn skipped(type_name: String) -> ParsedLine {
    ParsedLine::Skipped {
        kind: LineKind::Unknown,
        type_name,
    }
}
