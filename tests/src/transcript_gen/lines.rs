//! Typed shapes of the JSONL lines the generator writes, field names as Claude Code spells them.
//!
//! Typed rather than `json!` maps so that a misspelt field is a compile error and every line
//! kind is listed in one place; the shapes follow real CLI transcripts
//! (`engine/tests/fixtures/transcripts/*/`).

use serde::Serialize;

/// Fields every chained line (one with `uuid`/`parentUuid`) carries, around its own `body`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Chained<B> {
    pub parent_uuid: Option<String>,
    /// Only on `compact_boundary`: the line before the boundary (`parentUuid` is null there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logical_parent_uuid: Option<String>,
    pub is_sidechain: bool,
    pub user_type: &'static str,
    /// Written by newer CLIs only (the extras' lines), so optional.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entrypoint: Option<&'static str>,
    pub cwd: String,
    pub session_id: String,
    pub version: String,
    pub git_branch: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(flatten)]
    pub body: B,
    pub uuid: String,
    pub timestamp: String,
}

/// A `user` line: a prompt, a tool result, a slash command, a compaction summary.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserBody {
    pub message: UserMessage,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_meta: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_visible_in_transcript_only: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_compact_summary: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_use_result: Option<ToolUseResult>,
}

impl UserBody {
    /// A plain user message with no flags.
    pub fn new(content: UserContent) -> Self {
        Self {
            message: UserMessage {
                role: "user",
                content,
            },
            is_meta: None,
            is_visible_in_transcript_only: None,
            is_compact_summary: None,
            tool_use_result: None,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct UserMessage {
    pub role: &'static str,
    pub content: UserContent,
}

/// Claude Code writes typed prompts as a string and pasted/SDK ones as text blocks.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum UserContent {
    Text(String),
    Blocks(Vec<UserBlock>),
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum UserBlock {
    Text {
        text: String,
    },
    ToolResult {
        tool_use_id: String,
        content: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        is_error: Option<bool>,
    },
}

/// An `assistant` line: one API message (combined layout) or one of its blocks (split).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantBody {
    pub message: AssistantMessage,
    pub request_id: String,
}

#[derive(Debug, Serialize)]
pub struct AssistantMessage {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub role: &'static str,
    pub model: &'static str,
    pub content: Vec<AssistantBlock>,
    pub stop_reason: Option<&'static str>,
    pub stop_sequence: Option<String>,
    pub usage: Usage,
}

#[derive(Clone, Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AssistantBlock {
    Thinking {
        thinking: String,
        signature: String,
    },
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: &'static str,
        input: ToolInput,
    },
}

#[derive(Clone, Debug, Serialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub cache_creation: CacheCreation,
    pub output_tokens: u64,
    pub service_tier: &'static str,
}

#[derive(Clone, Debug, Serialize)]
pub struct CacheCreation {
    pub ephemeral_5m_input_tokens: u64,
    pub ephemeral_1h_input_tokens: u64,
}

/// The `input` of a `tool_use` block, per tool.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum ToolInput {
    Read {
        file_path: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        offset: Option<usize>,
        #[serde(skip_serializing_if = "Option::is_none")]
        limit: Option<usize>,
    },
    Edit {
        file_path: String,
        old_string: String,
        new_string: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        replace_all: Option<bool>,
    },
    Write {
        file_path: String,
        content: String,
    },
    Grep {
        pattern: String,
        path: String,
        output_mode: &'static str,
        #[serde(rename = "-n", skip_serializing_if = "Option::is_none")]
        line_numbers: Option<bool>,
    },
    Glob {
        pattern: &'static str,
    },
    TodoWrite {
        todos: Vec<Todo>,
    },
    Bash {
        command: String,
        description: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        timeout: Option<u64>,
    },
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Todo {
    pub content: String,
    pub status: &'static str,
    pub active_form: String,
}

/// The top-level `toolUseResult` of a tool-result line: the tool's structured output (or the
/// error text), which Claude Code keeps next to the model-facing `tool_result` block.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum ToolUseResult {
    Error(String),
    Read {
        #[serde(rename = "type")]
        kind: &'static str,
        file: ReadFile,
    },
    #[serde(rename_all = "camelCase")]
    Edit {
        file_path: String,
        old_string: String,
        new_string: String,
        original_file: String,
        structured_patch: Vec<Hunk>,
        user_modified: bool,
        replace_all: bool,
    },
    #[serde(rename_all = "camelCase")]
    Write {
        #[serde(rename = "type")]
        kind: &'static str,
        file_path: String,
        content: String,
        structured_patch: Vec<Hunk>,
    },
    #[serde(rename_all = "camelCase")]
    GrepContent {
        mode: &'static str,
        num_files: usize,
        filenames: Vec<String>,
        content: String,
        num_lines: usize,
    },
    #[serde(rename_all = "camelCase")]
    GrepFiles {
        mode: &'static str,
        filenames: Vec<String>,
        num_files: usize,
    },
    #[serde(rename_all = "camelCase")]
    Glob {
        filenames: Vec<String>,
        duration_ms: u64,
        num_files: usize,
        truncated: bool,
    },
    #[serde(rename_all = "camelCase")]
    Todo {
        old_todos: Vec<Todo>,
        new_todos: Vec<Todo>,
    },
    #[serde(rename_all = "camelCase")]
    Bash {
        stdout: String,
        stderr: String,
        interrupted: bool,
        is_image: bool,
    },
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadFile {
    pub file_path: String,
    pub content: String,
    pub num_lines: usize,
    pub start_line: usize,
    pub total_lines: usize,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hunk {
    pub old_start: usize,
    pub old_lines: usize,
    pub new_start: usize,
    pub new_lines: usize,
    pub lines: Vec<String>,
}

/// `system` / `compact_boundary`: where an auto-compaction cut the conversation.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactBoundaryBody {
    pub subtype: &'static str,
    pub content: &'static str,
    pub is_meta: bool,
    pub level: &'static str,
    pub compact_metadata: CompactMetadata,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactMetadata {
    pub trigger: &'static str,
    pub pre_tokens: u64,
}

/// An `attachment` line: hook output written back into the chain (never conversation).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AttachmentBody {
    pub attachment: Attachment,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rendered: Option<Vec<Rendered>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rendered_role: Option<&'static str>,
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Attachment {
    /// A hook ran and exited 0; its stdout (the JSON it printed) is kept verbatim.
    #[serde(rename_all = "camelCase")]
    HookSuccess {
        hook_name: &'static str,
        #[serde(rename = "toolUseID")]
        tool_use_id: String,
        hook_event: &'static str,
        content: &'static str,
        exit_code: i32,
        duration_ms: u64,
        stdout: String,
        stderr: &'static str,
        command: &'static str,
    },
    /// The `additionalContext` a hook returned, as the model saw it.
    #[serde(rename_all = "camelCase")]
    HookAdditionalContext {
        content: Vec<String>,
        hook_name: &'static str,
        #[serde(rename = "toolUseID")]
        tool_use_id: &'static str,
        hook_event: &'static str,
    },
}

#[derive(Debug, Serialize)]
pub struct Rendered {
    pub content: String,
}

/// What a hook prints on stdout (`hook_success.stdout` holds it serialised).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookOutput {
    pub hook_specific_output: HookSpecificOutput,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookSpecificOutput {
    pub hook_event_name: &'static str,
    pub additional_context: String,
}

/// `file-history-snapshot`, written before each prompt (not chained).
#[derive(Debug, Serialize)]
#[serde(
    tag = "type",
    rename = "file-history-snapshot",
    rename_all = "camelCase"
)]
pub struct FileHistorySnapshot {
    pub message_id: String,
    pub snapshot: Snapshot,
    pub is_snapshot_update: bool,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    pub message_id: String,
    pub tracked_file_backups: std::collections::BTreeMap<String, String>,
    pub timestamp: String,
}

/// `queue-operation`: the CLI queued a prompt typed while it was busy (not chained).
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename = "queue-operation", rename_all = "camelCase")]
pub struct QueueOperation {
    pub operation: &'static str,
    pub timestamp: String,
    pub session_id: String,
    pub content: String,
}

/// `last-prompt`: the CLI's bookmark of the latest prompt and chain leaf (not chained).
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename = "last-prompt", rename_all = "camelCase")]
pub struct LastPrompt {
    pub last_prompt: String,
    pub leaf_uuid: Option<String>,
    pub session_id: String,
}

/// A line type no parser knows yet: a future CLI will write some, and they must be skipped.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename = "future-line-kind", rename_all = "camelCase")]
pub struct FutureLine {
    pub session_id: String,
    pub timestamp: String,
    pub payload: FuturePayload,
}

#[derive(Debug, Serialize)]
pub struct FuturePayload {
    pub note: &'static str,
}
