//! One transcript line → a typed [`ParsedLine`].
//!
//! Decoding is two-step on purpose: step one reads only the line's `type` (serde skips every
//! other field without allocating), step two decodes the typed struct for the few types that
//! carry conversation. Most bytes of a real transcript are attachments and `api-request*`
//! lines (hundreds of kB of tool listings and request shapes) that we never need: they cost one
//! skim, not a full decode into a generic tree.
//!
//! Unknown line types and unknown content-block types are not errors: Claude Code adds new
//! ones in minor versions, and an archive must keep working across versions.

use serde::de::{self, Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// The `type` of a transcript line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum LineKind {
    /// A user message: a prompt, tool results, command output, a compaction summary.
    User,
    /// One or more content blocks of an assistant API message.
    Assistant,
    /// A system event (`compact_boundary`, `local_command`, `stop_hook_summary`, ...).
    System,
    /// Context Claude Code attached (hook output, environment, file contents): never archived.
    Attachment,
    /// A session title line (older versions).
    Summary,
    /// File backup bookkeeping.
    FileHistorySnapshot,
    /// Prompt queue bookkeeping.
    QueueOperation,
    /// The last prompt, for `--resume` pickers.
    LastPrompt,
    /// Permission mode changes.
    Mode,
    /// Running cost totals.
    CostState,
    /// API request metadata.
    ApiRequest,
    /// API request shape (tool listings etc.).
    ApiRequestShape,
    /// API request payload pieces.
    ApiRequestBlob,
    /// Tool names used so far.
    ToolsUsed,
    /// Internal latch state.
    AtisLatch,
    /// Any type this version does not know: skipped, never fatal.
    #[serde(other)]
    Unknown,
}

impl LineKind {
    /// Map a `type` string; unknown strings map to [`LineKind::Unknown`].
    pub fn from_type(name: &str) -> Self {
        match name {
            "user" => Self::User,
            "assistant" => Self::Assistant,
            "system" => Self::System,
            "attachment" => Self::Attachment,
            "summary" => Self::Summary,
            "file-history-snapshot" => Self::FileHistorySnapshot,
            "queue-operation" => Self::QueueOperation,
            "last-prompt" => Self::LastPrompt,
            "mode" => Self::Mode,
            "cost-state" => Self::CostState,
            "api-request" => Self::ApiRequest,
            "api-request-shape" => Self::ApiRequestShape,
            "api-request-blob" => Self::ApiRequestBlob,
            "tools-used" => Self::ToolsUsed,
            "atis-latch" => Self::AtisLatch,
            _ => Self::Unknown,
        }
    }
}

/// A decoded transcript line.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ParsedLine {
    /// `type: user`.
    User(MessageLine),
    /// `type: assistant`.
    Assistant(MessageLine),
    /// `type: system`.
    System(SystemLine),
    /// `type: attachment`: only its kind is decoded, its content never is.
    Attachment(AttachmentLine),
    /// Any other type (known bookkeeping or unknown): nothing to archive.
    Skipped {
        /// The decoded kind.
        kind: LineKind,
        /// The raw `type` string (`"(none)"` when the line had none), for statistics.
        type_name: String,
    },
}

/// Why a line could not be decoded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LineError {
    /// Not JSON, truncated, not an object, or a known type with fields of the wrong shape.
    #[error("malformed transcript line: {0}")]
    Json(#[from] serde_json::Error),
}

/// A `user` or `assistant` line.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MessageLine {
    /// The line's own id.
    pub uuid: Option<String>,
    /// Claude Code session id.
    pub session_id: Option<String>,
    /// Working directory of the session.
    pub cwd: Option<String>,
    /// RFC 3339 write time.
    pub timestamp: Option<String>,
    /// Claude Code's own injected text (command caveats, expanded commands): not a prompt.
    #[serde(deserialize_with = "bool_or_null")]
    pub is_meta: bool,
    /// The compaction summary Claude Code writes after `compact_boundary`.
    #[serde(deserialize_with = "bool_or_null")]
    pub is_compact_summary: bool,
    /// A subagent's line (older versions wrote them into the main transcript).
    #[serde(deserialize_with = "bool_or_null")]
    pub is_sidechain: bool,
    /// The API message (absent on some synthetic lines).
    pub message: Option<Message>,
    /// This line is the latest whole version of a message written before under the same
    /// `uuid` (Gemini CLI writes a message again when it grows): the assembler replaces what
    /// the earlier lines put in the open turn instead of adding to it. Never set by Claude
    /// Code's decoder (its split lines share a message id, not a uuid, and add up).
    #[serde(skip)]
    pub supersedes: bool,
}

impl MessageLine {
    /// The message content, empty when the line had no message.
    pub fn content(&self) -> &Content {
        static EMPTY: Content = Content::Empty;
        self.message.as_ref().map_or(&EMPTY, |m| &m.content)
    }

    /// The API message id (`msg_...`), shared by split assistant lines of one message.
    pub fn message_id(&self) -> Option<&str> {
        self.message.as_ref().and_then(|m| m.id.as_deref())
    }
}

/// The `message` object of a user or assistant line.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Message {
    /// API message id (assistant lines).
    pub id: Option<String>,
    /// `user` or `assistant`.
    pub role: Option<String>,
    /// A string or a list of content blocks.
    pub content: Content,
}

/// Message content: Claude Code writes user prompts as a plain string and everything else as
/// a list of blocks.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Content {
    /// No content (missing or `null`).
    #[default]
    Empty,
    /// A plain string.
    Text(String),
    /// A list of typed blocks.
    Blocks(Vec<Block>),
}

/// One content block.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Block {
    /// Visible text.
    Text {
        /// The text.
        #[serde(default)]
        text: String,
    },
    /// Model reasoning: usually empty or signed; never archived.
    Thinking {},
    /// Encrypted reasoning: never archived.
    RedactedThinking {},
    /// A tool call.
    ToolUse {
        /// Call id, matched by the result's `tool_use_id`.
        #[serde(default)]
        id: String,
        /// Tool name (`Bash`, `Read`, `mcp__x__y`, ...).
        #[serde(default)]
        name: String,
        /// Tool input: free-form JSON by nature (each tool has its own schema).
        #[serde(default)]
        input: serde_json::Value,
    },
    /// A tool's result (in a user line).
    ToolResult {
        /// The id of the call this answers.
        #[serde(default)]
        tool_use_id: String,
        /// Result text, as a string or blocks.
        #[serde(default)]
        content: Content,
        /// True when the tool failed.
        #[serde(default, deserialize_with = "bool_or_null")]
        is_error: bool,
    },
    /// An image (pasted by the user or returned by a tool).
    Image {},
    /// A document (PDF etc.).
    Document {},
    /// Any block type this version does not know.
    #[serde(other)]
    Unknown,
}

/// A `system` line; only `local_command` ones carry text worth keeping.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SystemLine {
    /// The line's own id.
    pub uuid: Option<String>,
    /// Claude Code session id.
    pub session_id: Option<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// RFC 3339 write time.
    pub timestamp: Option<String>,
    /// `compact_boundary`, `local_command`, `stop_hook_summary`, ...
    pub subtype: Option<String>,
    /// Text of the event (a string in every version seen).
    pub content: Content,
}

/// An `attachment` line: what Claude Code attached to the context (hook output, environment,
/// file reads). Its content is deliberately not decoded: our own restored context comes back
/// as `hook_additional_context` attachments and must never be archived as conversation.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AttachmentLine {
    /// The line's own id.
    pub uuid: Option<String>,
    /// Claude Code session id.
    pub session_id: Option<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// The attachment's kind.
    pub attachment: Option<AttachmentHead>,
}

/// The `type` of an attachment (`hook_additional_context`, `hook_success`, `file`, ...).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct AttachmentHead {
    /// Attachment kind.
    #[serde(rename = "type")]
    pub kind: Option<String>,
}

/// Counters over the lines of one parse call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParseStats {
    /// Complete, non-blank lines seen.
    pub lines: u64,
    /// Lines read for the first time, blank ones included (see `Chunker::count_lines_from`):
    /// over every call on one file, the file's count of newline-terminated lines.
    #[serde(default)]
    pub new_lines: u64,
    /// Blank lines (ignored).
    pub blank: u64,
    /// Lines that were not valid JSON objects of a known shape (skipped, counted).
    pub malformed: u64,
    /// Lines skipped because their type carries no conversation, by `type`
    /// (`attachment`, `file-history-snapshot`, unknown types, ...).
    pub skipped_by_type: BTreeMap<String, u64>,
}

impl ParseStats {
    /// Count one line's outcome.
    pub fn record(&mut self, outcome: &Result<ParsedLine, LineError>) {
        self.lines += 1;
        match outcome {
            Err(_) => self.malformed += 1,
            Ok(ParsedLine::Attachment(_)) => self.skip("attachment"),
            Ok(ParsedLine::Skipped { type_name, .. }) => self.skip(type_name),
            Ok(_) => {}
        }
    }

    /// Total lines skipped by type.
    pub fn skipped(&self) -> u64 {
        self.skipped_by_type.values().sum()
    }

    fn skip(&mut self, type_name: &str) {
        *self
            .skipped_by_type
            .entry(type_name.to_owned())
            .or_insert(0) += 1;
    }
}

/// Step one: only the `type` field.
#[derive(Deserialize)]
struct TypeOnly {
    #[serde(rename = "type", default)]
    kind: Option<String>,
}

/// Decode one line (without its trailing newline).
pub fn parse_line(bytes: &[u8]) -> Result<ParsedLine, LineError> {
    let head: TypeOnly = serde_json::from_slice(bytes)?;
    let type_name = head.kind.unwrap_or_else(|| "(none)".to_owned());
    let kind = LineKind::from_type(&type_name);
    Ok(match kind {
        LineKind::User => ParsedLine::User(serde_json::from_slice(bytes)?),
        LineKind::Assistant => ParsedLine::Assistant(serde_json::from_slice(bytes)?),
        LineKind::System => ParsedLine::System(serde_json::from_slice(bytes)?),
        LineKind::Attachment => ParsedLine::Attachment(serde_json::from_slice(bytes)?),
        _ => ParsedLine::Skipped { kind, type_name },
    })
}

/// `true`/`false`, with `null` read as `false` (seen on some synthetic lines).
fn bool_or_null<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(Option::<bool>::deserialize(d)?.unwrap_or(false))
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ContentVisitor)
    }
}

/// Reads a string, a list of blocks, or `null`; anything else (a number, an object) is kept
/// out of the archive as [`Content::Empty`] rather than failing the whole line.
struct ContentVisitor;

impl<'de> Visitor<'de> for ContentVisitor {
    type Value = Content;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or a list of content blocks")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Content, E> {
        Ok(Content::Text(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Content, E> {
        Ok(Content::Text(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Content, E> {
        Ok(Content::Empty)
    }

    fn visit_none<E: de::Error>(self) -> Result<Content, E> {
        Ok(Content::Empty)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Content, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Content, A::Error> {
        let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(1));
        while let Some(block) = seq.next_element::<Block>()? {
            blocks.push(block);
        }
        Ok(Content::Blocks(blocks))
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Content, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Content::Empty)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Content, E> {
        Ok(Content::Empty)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Content, E> {
        Ok(Content::Empty)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Content, E> {
        Ok(Content::Empty)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Content, E> {
        Ok(Content::Empty)
    }
}
