//! Parsed lines → [`Turn`]s: a real user prompt plus the assistant loop that answers it.
//!
//! Classification of user lines (the only place turns start):
//! - `isMeta` lines (command caveats, expanded command text) are Claude Code's own: skipped.
//! - `isCompactSummary` lines become a turn of their own ([`TurnKind::CompactSummary`]) that
//!   takes the next turn index but does **not** close the open turn: after an auto-compaction
//!   Claude Code writes the summary between a prompt and its answer.
//! - `<command-name>` lines (what the user typed as a slash command) open a
//!   [`TurnKind::Command`] turn, because custom commands are answered by the model.
//! - `<local-command-stdout>`, `<bash-stdout>`, `[Request interrupted by user...]` and text that
//!   arrives in the same line as tool results are notes inside the open turn.
//! - tool-result blocks are events of the open turn.
//! - any other text or image content opens a [`TurnKind::Prompt`] turn.
//!
//! A line marked [`MessageLine::supersedes`] (Gemini CLI writes a message again as it grows) is
//! the whole latest version of the lines with its uuid: what they put in the open turn is
//! replaced in place, and a rewrite of the prompt that opened the open turn updates its text
//! instead of opening another turn.
//!
//! Content with no open turn (assistant text before the first prompt) opens a
//! [`TurnKind::Preamble`] turn: nothing is dropped silently. Attachments never reach a turn.
//!
//! All text in a [`Turn`] is already redacted and stripped of `<memctl-context>` blocks.

use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

use super::line::{Block, Content, MessageLine, ParsedLine, SystemLine};
use super::text::{between, is_memctl_mcp_tool, strip_restored_context};
use super::tool_input::{redact_json_strings, tool_input_json, tool_paths};
use crate::redact::{RedactionCounts, redact_in_turn};

/// How a turn began.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnKind {
    /// A real user prompt.
    Prompt,
    /// A slash command the user typed (`/compact ...`, custom commands).
    Command,
    /// Claude Code's compaction summary (`isCompactSummary`).
    CompactSummary,
    /// Content seen before any prompt (rare: a transcript that starts mid-loop).
    Preamble,
}

/// Whether more content can still arrive for a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnStatus {
    /// A later turn started (or the turn is a compaction summary): the turn is final.
    Closed,
    /// The last turn seen: it may still grow; re-ingesting replaces it by `turn_uuid`.
    Open,
}

/// One tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// `tool_use` id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// The whole input as compact JSON, with secrets redacted in every string value.
    pub input_json: String,
}

/// One tool result, whole (the chunk text holds a bounded copy; the swap store wants it all).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The `tool_use_id` this answers.
    pub tool_use_id: String,
    /// The called tool's name, when its call is in the same turn.
    pub tool_name: Option<String>,
    /// The full result text (redacted, context-stripped).
    pub text: String,
    /// True when the tool failed.
    pub is_error: bool,
    /// `uuid` of the user line that carried the result.
    pub line_uuid: Option<String>,
}

/// Something that happened inside a turn, in transcript order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum TurnEvent {
    /// Assistant text.
    Text {
        /// The text.
        text: String,
        /// True for a subagent's (sidechain) text.
        sidechain: bool,
        /// Source line.
        line_uuid: Option<String>,
    },
    /// A tool call.
    ToolCall {
        /// The call.
        call: ToolCall,
        /// Source line.
        line_uuid: Option<String>,
    },
    /// A tool result.
    ToolResult(ToolResult),
    /// A rendered note: command output, an interruption, a subagent's task text.
    Note {
        /// The note, already labelled (e.g. `[command output] ...`).
        text: String,
        /// Source line.
        line_uuid: Option<String>,
    },
}

impl TurnEvent {
    /// The uuid of the transcript line the event came from.
    pub fn line_uuid(&self) -> Option<&str> {
        match self {
            Self::Text { line_uuid, .. }
            | Self::ToolCall { line_uuid, .. }
            | Self::Note { line_uuid, .. } => line_uuid.as_deref(),
            Self::ToolResult(r) => r.line_uuid.as_deref(),
        }
    }
}

/// A turn, as parsed (before rendering into chunks).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    /// 0-based index in the session (see the module doc of `transcript` for the scheme).
    pub index: u32,
    /// uuid of the line that opened the turn (or `noid-<file offset>` when it had none).
    pub uuid: String,
    /// How the turn began.
    pub kind: TurnKind,
    /// The prompt text (the summary text for compaction summaries; empty for a preamble).
    pub prompt: String,
    /// What followed, in order.
    pub events: Vec<TurnEvent>,
    /// uuids of the user/assistant lines in the turn, in order.
    pub line_uuids: Vec<String>,
    /// Timestamp of the first line.
    pub started_at: Option<String>,
    /// Timestamp of the last line.
    pub ended_at: Option<String>,
    /// Tool names, deduplicated, in first-use order.
    pub tools: Vec<String>,
    /// File paths from tool inputs, deduplicated, in first-use order.
    pub files: Vec<String>,
    /// Closed or still open.
    pub status: TurnStatus,
    /// Byte offset (relative to the parsed slice) of the line that opened the turn.
    pub start_offset: usize,
    /// `cwd` of the first line that had one.
    pub cwd: Option<String>,
    /// `sessionId` of the first line that had one.
    pub session_id: Option<String>,
}

impl Turn {
    fn new(index: u32, uuid: String, kind: TurnKind, start_offset: usize) -> Self {
        Self {
            index,
            uuid,
            kind,
            prompt: String::new(),
            events: Vec::new(),
            line_uuids: Vec::new(),
            started_at: None,
            ended_at: None,
            tools: Vec::new(),
            files: Vec::new(),
            status: TurnStatus::Open,
            start_offset,
            cwd: None,
            session_id: None,
        }
    }

    /// The last assistant text of the turn (not a subagent's), for the summary.
    pub fn last_assistant_text(&self) -> Option<&str> {
        self.events.iter().rev().find_map(|e| match e {
            TurnEvent::Text {
                text,
                sidechain: false,
                ..
            } if !text.trim().is_empty() => Some(text.as_str()),
            _ => None,
        })
    }

    /// Every tool result of the turn (for the swap store).
    pub fn tool_results(&self) -> impl Iterator<Item = &ToolResult> {
        self.events.iter().filter_map(|e| match e {
            TurnEvent::ToolResult(r) => Some(r),
            _ => None,
        })
    }
}

/// The envelope fields every turn-relevant line shares.
#[derive(Debug, Clone, Copy)]
struct LineRef<'a> {
    uuid: Option<&'a str>,
    session_id: Option<&'a str>,
    cwd: Option<&'a str>,
    timestamp: Option<&'a str>,
    /// Byte offset of the line in the parsed slice.
    offset: usize,
    /// Absolute file offset, for synthetic ids of lines without a uuid.
    abs_offset: u64,
}

impl<'a> LineRef<'a> {
    fn of_message(l: &'a MessageLine, offset: usize, abs_offset: u64) -> Self {
        Self {
            uuid: l.uuid.as_deref(),
            session_id: l.session_id.as_deref(),
            cwd: l.cwd.as_deref(),
            timestamp: l.timestamp.as_deref(),
            offset,
            abs_offset,
        }
    }

    fn of_system(l: &'a SystemLine, offset: usize, abs_offset: u64) -> Self {
        Self {
            uuid: l.uuid.as_deref(),
            session_id: l.session_id.as_deref(),
            cwd: l.cwd.as_deref(),
            timestamp: l.timestamp.as_deref(),
            offset,
            abs_offset,
        }
    }

    fn id(&self) -> String {
        self.uuid
            .map_or_else(|| format!("noid-{}", self.abs_offset), str::to_owned)
    }
}

/// What a user line is, once its content is looked at.
enum UserLineClass {
    /// Opens a turn of this kind with this (redacted) prompt.
    Opens(TurnKind, String),
    /// Belongs to the open turn.
    InTurn,
    /// Nothing to archive.
    Ignore,
}

/// Builds turns from lines fed in transcript order.
#[derive(Debug)]
pub struct TurnAssembler {
    /// Absolute file offset of the slice's first byte.
    base_offset: u64,
    next_index: u32,
    /// Finished turns, and the compaction-summary turns (final as soon as they are seen).
    done: Vec<Turn>,
    current: Option<Turn>,
    /// `tool_use_id` → tool name, for the open turn.
    tool_names: HashMap<String, String>,
    /// Blocks already taken from a split assistant message: `(message id, block key)`.
    seen_blocks: HashSet<(String, String)>,
    redactions: RedactionCounts,
    /// `<private>` spans the open turn's messages left open so far: a span opened in the
    /// prompt and closed in the answer hides what lies between (tool calls and outputs too).
    private_open: u32,
    /// When the last line pushed superseded: its uuid and the redaction state from before its
    /// first version, so a rewrite that follows right away counts its secrets and private spans
    /// once, not once per write.
    before_last: Option<(String, RedactionCounts, u32)>,
    /// `before_last` as it was when the line being pushed arrived.
    rewind: Option<(String, RedactionCounts, u32)>,
}

/// What [`TurnAssembler::finish`] hands back.
#[derive(Debug)]
pub struct AssembledTurns {
    /// Every turn in start order; the last prompt-like one is `Open`.
    pub turns: Vec<Turn>,
    /// The index the next new turn will get.
    pub next_index: u32,
    /// What redaction replaced, by kind.
    pub redactions: RedactionCounts,
}

impl TurnAssembler {
    /// Start assembling; `next_index` is the index the first new turn gets, `base_offset` the
    /// file offset of the slice's first byte.
    pub fn new(next_index: u32, base_offset: u64) -> Self {
        Self {
            base_offset,
            next_index,
            done: Vec::new(),
            current: None,
            tool_names: HashMap::new(),
            seen_blocks: HashSet::new(),
            redactions: RedactionCounts::default(),
            private_open: 0,
            before_last: None,
            rewind: None,
        }
    }

    /// Feed one parsed line that starts at `offset` in the slice.
    pub fn push(&mut self, line: &ParsedLine, offset: usize) {
        let abs = self.base_offset + offset as u64;
        // Only lines that reach a turn separate a rewrite from its earlier version.
        if matches!(line, ParsedLine::User(_) | ParsedLine::Assistant(_)) {
            self.rewind = self.before_last.take();
        }
        match line {
            ParsedLine::User(l) => self.push_user(l, LineRef::of_message(l, offset, abs)),
            ParsedLine::Assistant(l) => self.push_assistant(l, LineRef::of_message(l, offset, abs)),
            ParsedLine::System(l) => self.push_system(l, LineRef::of_system(l, offset, abs)),
            // Attachments carry hook output, including our own restored context: never archived.
            ParsedLine::Attachment(_) | ParsedLine::Skipped { .. } => {}
        }
    }

    /// Finish: every turn in start order (the last prompt-like turn is `Open`), the index the
    /// next new turn will get, and the redaction counts.
    pub fn finish(mut self) -> AssembledTurns {
        if let Some(open) = self.current.take() {
            self.done.push(open);
        }
        self.done.sort_by_key(|t| t.index);
        AssembledTurns {
            turns: self.done,
            next_index: self.next_index,
            redactions: self.redactions,
        }
    }

    fn push_user(&mut self, l: &MessageLine, at: LineRef<'_>) {
        if l.is_meta {
            return;
        }
        if l.is_compact_summary {
            self.push_compact_summary(l, at);
            return;
        }
        if l.is_sidechain {
            self.push_sidechain_user(l, at);
            return;
        }
        let rewrites_open_prompt = l.supersedes
            && at.uuid.is_some()
            && self.current.as_ref().map(|t| t.uuid.as_str()) == at.uuid;
        match self.classify_user(l.content()) {
            // The prompt that opened the open turn, written again: the turn keeps going with
            // the latest text.
            UserLineClass::Opens(_, prompt) if rewrites_open_prompt => {
                if let Some(turn) = self.current.as_mut() {
                    turn.prompt = prompt;
                    touch(turn, at);
                }
            }
            UserLineClass::Opens(kind, prompt) => {
                let turn = self.open_turn(kind, at);
                turn.prompt = prompt;
            }
            UserLineClass::InTurn => {
                self.superseding(l, at, |this| this.push_user_in_turn(l.content(), at));
            }
            UserLineClass::Ignore => {}
        }
    }

    /// Run `push` for line `l`; when `l` supersedes earlier lines with its uuid, what they put
    /// in the open turn is dropped first and what `push` adds takes their place in the event
    /// order (Gemini CLI writes a message again once its tool calls are known: last write
    /// wins, and the message is archived once).
    fn superseding(&mut self, l: &MessageLine, at: LineRef<'_>, push: impl FnOnce(&mut Self)) {
        let Some(uuid) = at.uuid.filter(|_| l.supersedes) else {
            push(self);
            return;
        };
        // Right after its earlier version: undo what that version counted.
        if let Some((_, counts, private)) = self.rewind.take().filter(|(u, ..)| u == uuid) {
            self.redactions = counts;
            self.private_open = private;
        }
        let before = (uuid.to_owned(), self.redactions.clone(), self.private_open);
        let splice_at = self.current.as_mut().and_then(|t| {
            let pos = t.events.iter().position(|e| e.line_uuid() == Some(uuid))?;
            t.events.retain(|e| e.line_uuid() != Some(uuid));
            Some(pos)
        });
        if let Some(mid) = l.message_id() {
            self.seen_blocks.retain(|(m, _)| m != mid);
        }
        let len_before = self.current.as_ref().map_or(0, |t| t.events.len());
        push(self);
        if let (Some(pos), Some(turn)) = (splice_at, self.current.as_mut())
            && turn.events.len() >= len_before
        {
            let added: Vec<TurnEvent> = turn.events.drain(len_before..).collect();
            turn.events.splice(pos..pos, added);
        }
        self.before_last = Some(before);
    }

    fn classify_user(&mut self, content: &Content) -> UserLineClass {
        let has_result = matches!(content, Content::Blocks(b) if b.iter().any(|b| matches!(b, Block::ToolResult { .. })));
        if has_result {
            return UserLineClass::InTurn;
        }
        let raw = user_text(content);
        let stripped = strip_restored_context(&raw);
        let trimmed = stripped.trim();
        if is_note_text(trimmed) {
            return UserLineClass::InTurn;
        }
        if trimmed.starts_with("<local-command-caveat>") {
            return UserLineClass::Ignore;
        }
        // A new prompt opens a new turn: no span of the last turn runs into it.
        self.private_open = 0;
        if let Some(command) = command_prompt(trimmed) {
            return UserLineClass::Opens(TurnKind::Command, self.redact(&command));
        }
        if trimmed.is_empty() && !has_image(content) {
            return UserLineClass::Ignore;
        }
        let prompt = if trimmed.is_empty() {
            "[image]".to_owned()
        } else {
            self.redact(trimmed)
        };
        UserLineClass::Opens(TurnKind::Prompt, prompt)
    }

    /// Tool results, notes, and text sent along with tool results.
    fn push_user_in_turn(&mut self, content: &Content, at: LineRef<'_>) {
        let blocks: &[Block] = match content {
            Content::Blocks(b) => b,
            Content::Text(t) => {
                let note = self.note_for(t);
                self.push_note(note, at);
                return;
            }
            Content::Empty => return,
        };
        for block in blocks {
            match block {
                Block::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => self.push_tool_result(tool_use_id, content, *is_error, at),
                Block::Text { text } => {
                    let note = self.note_for(text);
                    self.push_note(note, at);
                }
                Block::Image {} => self.push_note("User: [image]".to_owned(), at),
                _ => {}
            }
        }
    }

    /// Label in-turn user text: command output, interruption, or plain text.
    fn note_for(&mut self, raw: &str) -> String {
        let text = self.clean(raw);
        let t = text.trim();
        for (open, close, label) in NOTE_TAGS {
            if let Some(inner) = between(t, open, close) {
                return if inner.is_empty() {
                    String::new()
                } else {
                    format!("{label} {inner}")
                };
            }
        }
        if t.starts_with("[Request interrupted") {
            return t.to_owned();
        }
        if t.is_empty() {
            String::new()
        } else {
            format!("User: {t}")
        }
    }

    fn push_note(&mut self, text: String, at: LineRef<'_>) {
        if text.is_empty() {
            return;
        }
        let line_uuid = at.uuid.map(str::to_owned);
        self.turn_for_content(at)
            .events
            .push(TurnEvent::Note { text, line_uuid });
    }

    fn push_tool_result(
        &mut self,
        tool_use_id: &str,
        content: &Content,
        is_error: bool,
        at: LineRef<'_>,
    ) {
        let raw = result_text(content);
        let tool_name = self.tool_names.get(tool_use_id).cloned();
        let text = if tool_name.as_deref().is_some_and(is_memctl_mcp_tool) {
            format!(
                "[memctl archive lookup: {} chars, not archived again]",
                raw.chars().count()
            )
        } else {
            self.clean(&raw)
        };
        let result = ToolResult {
            tool_use_id: tool_use_id.to_owned(),
            tool_name,
            text,
            is_error,
            line_uuid: at.uuid.map(str::to_owned),
        };
        self.turn_for_content(at)
            .events
            .push(TurnEvent::ToolResult(result));
    }

    fn push_compact_summary(&mut self, l: &MessageLine, at: LineRef<'_>) {
        // A turn of its own: no span of the open turn runs into it, nor out of it.
        let open = std::mem::take(&mut self.private_open);
        let text = self.clean(&user_text(l.content()));
        self.private_open = open;
        let mut turn = Turn::new(
            self.take_index(),
            at.id(),
            TurnKind::CompactSummary,
            at.offset,
        );
        turn.prompt = text.trim().to_owned();
        turn.status = TurnStatus::Closed;
        touch(&mut turn, at);
        self.done.push(turn);
    }

    fn push_sidechain_user(&mut self, l: &MessageLine, at: LineRef<'_>) {
        match l.content() {
            Content::Text(t) => {
                let text = self.clean(t);
                if !text.trim().is_empty() {
                    self.push_note(format!("[subagent task] {}", text.trim()), at);
                }
            }
            other => self.push_user_in_turn(other, at),
        }
    }

    fn push_assistant(&mut self, l: &MessageLine, at: LineRef<'_>) {
        self.superseding(l, at, |this| this.push_assistant_blocks(l, at));
    }

    fn push_assistant_blocks(&mut self, l: &MessageLine, at: LineRef<'_>) {
        let Content::Blocks(blocks) = l.content() else {
            if let Content::Text(t) = l.content() {
                self.push_assistant_text(t, l.is_sidechain, l.message_id(), at);
            }
            return;
        };
        for block in blocks {
            match block {
                Block::Text { text } => {
                    self.push_assistant_text(text, l.is_sidechain, l.message_id(), at)
                }
                Block::ToolUse { id, name, input } => {
                    self.push_tool_use(id, name, input, l.message_id(), at)
                }
                // Thinking is empty or signed in practice, and never meant for the archive.
                _ => {}
            }
        }
    }

    fn push_assistant_text(
        &mut self,
        raw: &str,
        sidechain: bool,
        message_id: Option<&str>,
        at: LineRef<'_>,
    ) {
        if raw.trim().is_empty() || !self.first_sight(message_id, "text", raw) {
            return;
        }
        let text = self.clean(raw);
        let line_uuid = at.uuid.map(str::to_owned);
        self.turn_for_content(at).events.push(TurnEvent::Text {
            text,
            sidechain,
            line_uuid,
        });
    }

    fn push_tool_use(
        &mut self,
        id: &str,
        name: &str,
        input: &serde_json::Value,
        message_id: Option<&str>,
        at: LineRef<'_>,
    ) {
        if !self.first_sight(message_id, "tool", id) {
            return;
        }
        let mut input = input.clone();
        if self.private_open > 0 {
            // Inside a private span opened earlier in the turn: the call goes whole.
            input = serde_json::Value::String(crate::redact::RedactionKind::Private.marker());
        }
        let paths = tool_paths(&input);
        redact_json_strings(&mut input, &mut self.redactions);
        let input_json = tool_input_json(&input);
        self.tool_names.insert(id.to_owned(), name.to_owned());
        let paths: Vec<String> = paths.iter().map(|p| self.clean(p)).collect();
        let turn = self.turn_for_content(at);
        push_unique(&mut turn.tools, name);
        for p in paths {
            push_unique(&mut turn.files, &p);
        }
        let call = ToolCall {
            id: id.to_owned(),
            name: name.to_owned(),
            input_json,
        };
        turn.events.push(TurnEvent::ToolCall {
            call,
            line_uuid: at.uuid.map(str::to_owned),
        });
    }

    /// `local_command` system lines carry the output of built-in commands such as `/cost`.
    /// The command's own user line opened a turn, so output with no open turn is not worth a
    /// preamble of its own.
    fn push_system(&mut self, l: &SystemLine, at: LineRef<'_>) {
        if l.subtype.as_deref() != Some("local_command") {
            return;
        }
        if let Content::Text(t) = &l.content {
            let note = self.note_for(t);
            if !note.is_empty() && self.current.is_some() {
                self.push_note(note, at);
            }
        }
    }

    /// True the first time a block is seen for a message: Claude Code may write one API
    /// message as several lines sharing `message.id`, and a block must not be counted twice.
    fn first_sight(&mut self, message_id: Option<&str>, what: &str, key: &str) -> bool {
        let Some(mid) = message_id else { return true };
        self.seen_blocks
            .insert((mid.to_owned(), format!("{what}:{key}")))
    }

    /// Strip our own restored context, then redact.
    fn clean(&mut self, raw: &str) -> String {
        let stripped = strip_restored_context(raw);
        self.redact(&stripped)
    }

    /// Redact, counting what was replaced.
    fn redact(&mut self, text: &str) -> String {
        let (red, counts) = redact_in_turn(text, &mut self.private_open);
        self.redactions.merge(&counts);
        red.into_owned()
    }

    fn take_index(&mut self) -> u32 {
        let i = self.next_index;
        self.next_index = self.next_index.saturating_add(1);
        i
    }

    /// Close the open turn (a new one starts) and open a turn of `kind` at `at`.
    fn open_turn(&mut self, kind: TurnKind, at: LineRef<'_>) -> &mut Turn {
        if let Some(mut prev) = self.current.take() {
            prev.status = TurnStatus::Closed;
            self.done.push(prev);
        }
        let turn = self.new_turn(kind, at);
        self.current.insert(turn)
    }

    /// The open turn, recording the line in it; opens a preamble turn when there is none.
    fn turn_for_content(&mut self, at: LineRef<'_>) -> &mut Turn {
        let turn = match self.current.take() {
            Some(open) => open,
            None => self.new_turn(TurnKind::Preamble, at),
        };
        let turn = self.current.insert(turn);
        touch(turn, at);
        turn
    }

    /// A fresh turn with the next index; per-turn lookups start empty.
    fn new_turn(&mut self, kind: TurnKind, at: LineRef<'_>) -> Turn {
        self.tool_names.clear();
        self.seen_blocks.clear();
        let mut turn = Turn::new(self.take_index(), at.id(), kind, at.offset);
        touch(&mut turn, at);
        turn
    }
}

/// Record a line's uuid, timestamps, session and cwd in a turn.
fn touch(turn: &mut Turn, at: LineRef<'_>) {
    if let Some(u) = at.uuid
        && turn.line_uuids.last().map(String::as_str) != Some(u)
    {
        turn.line_uuids.push(u.to_owned());
    }
    if let Some(ts) = at.timestamp {
        if turn.started_at.is_none() {
            turn.started_at = Some(ts.to_owned());
        }
        turn.ended_at = Some(ts.to_owned());
    }
    if turn.cwd.is_none() {
        turn.cwd = at.cwd.map(str::to_owned);
    }
    if turn.session_id.is_none() {
        turn.session_id = at.session_id.map(str::to_owned);
    }
}

/// Wrappers of user lines that are output, not prompts: `(open, close, label)`.
const NOTE_TAGS: [(&str, &str, &str); 4] = [
    (
        "<local-command-stdout>",
        "</local-command-stdout>",
        "[command output]",
    ),
    (
        "<local-command-stderr>",
        "</local-command-stderr>",
        "[command error]",
    ),
    ("<bash-stdout>", "</bash-stdout>", "[shell output]"),
    ("<bash-stderr>", "</bash-stderr>", "[shell error]"),
];

/// True for user text that belongs to the open turn rather than starting one.
fn is_note_text(t: &str) -> bool {
    t.starts_with("[Request interrupted")
        || NOTE_TAGS.iter().any(|(open, _, _)| t.starts_with(open))
}

/// `/name args` for a slash-command line (`<command-name>` / `<command-message>` tags).
fn command_prompt(t: &str) -> Option<String> {
    if !(t.starts_with("<command-name>") || t.starts_with("<command-message>")) {
        return None;
    }
    let name = between(t, "<command-name>", "</command-name>")
        .or_else(|| between(t, "<command-message>", "</command-message>"))?;
    let args = between(t, "<command-args>", "</command-args>").unwrap_or("");
    let name = if name.starts_with('/') {
        name.to_owned()
    } else {
        format!("/{name}")
    };
    Some(if args.is_empty() {
        name
    } else {
        format!("{name} {args}")
    })
}

/// The text of a user message: the string, or text blocks joined (images as `[image]`).
fn user_text(content: &Content) -> String {
    match content {
        Content::Empty => String::new(),
        Content::Text(t) => t.clone(),
        Content::Blocks(blocks) => join_blocks(blocks),
    }
}

/// The text of a tool result: the string, or its text blocks joined.
fn result_text(content: &Content) -> String {
    user_text(content)
}

fn join_blocks(blocks: &[Block]) -> String {
    let mut out = String::new();
    for block in blocks {
        let piece = match block {
            Block::Text { text } => text.as_str(),
            Block::Image {} => "[image]",
            Block::Document {} => "[document]",
            _ => continue,
        };
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(piece);
    }
    out
}

fn has_image(content: &Content) -> bool {
    matches!(content, Content::Blocks(b) if b.iter().any(|b| matches!(b, Block::Image {} | Block::Document {})))
}

fn push_unique(list: &mut Vec<String>, item: &str) {
    if !item.is_empty() && !list.iter().any(|x| x == item) {
        list.push(item.to_owned());
    }
}
