//! The typed input and output of every tool of `memctl mcp`.
//!
//! The input structs are the tools' JSON schemas (rmcp derives them with schemars, doc comments
//! become the field descriptions the model reads); the outputs are what the model reads back, so
//! they are compact: optional fields are left out when empty, times are cut to the minute,
//! scores to three decimals, gists to one line.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where `search` looks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// One session of this project: `session` (id or 8-char prefix), else the latest one.
    Session,
    /// This project (the folder the agent runs in).
    #[default]
    Project,
    /// Every archived project.
    All,
    /// The team store: turns teammates synced from projects shared with you (each hit names
    /// the teammate and project; open them by reading the hit, `get` is for local ids).
    Team,
}

/// `search`: find archived turns.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SearchInput {
    /// What to look for: rare words (names, error text, ids) or a question in plain words (at
    /// most 4096 bytes).
    #[schemars(length(max = 4096))]
    pub query: String,
    /// session, project (default), all, or team (the team store, when configured).
    #[serde(default)]
    pub scope: Scope,
    /// With scope=session: the session id or its 8-char prefix (default: the latest session).
    #[serde(default)]
    #[schemars(length(max = 256))]
    pub session: Option<String>,
    /// Only turns that used this tool (Bash, Edit, Read, ...).
    #[serde(default)]
    #[schemars(length(max = 256))]
    pub tool: Option<String>,
    /// Only turns that touched a file whose path contains this text (at most 4096 bytes).
    #[serde(default)]
    #[schemars(length(max = 4096))]
    pub file: Option<String>,
    /// Only turns at or after this time: RFC 3339, YYYY-MM-DD, an age (30m, 12h, 7d, 2w), today
    /// or yesterday.
    #[serde(default)]
    #[schemars(length(max = 256))]
    pub since: Option<String>,
    /// Only sessions of this agent: claude, codex or gemini (default: every agent).
    #[serde(default)]
    #[schemars(length(max = 32))]
    pub agent: Option<String>,
    /// Number of hits (default 5, at most 20).
    #[serde(default)]
    pub k: Option<usize>,
}

/// One search hit: enough to decide whether to open it (`get`, `timeline`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Hit {
    /// Chunk id (for `get` and `timeline`).
    pub id: u64,
    /// Session id prefix (8 chars).
    pub session: String,
    /// Turn index in its session.
    pub turn: u32,
    /// When the turn started (UTC, to the minute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// How long ago that was ("3 days ago"): the agent may not know today's date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub age: Option<String>,
    /// One line: the prompt and the outcome.
    pub gist: String,
    /// Tools the turn used.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// The agent whose session it is, when not Claude Code (codex, gemini).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Fused relevance (higher is better), to three decimals: orders the hits, relative to
    /// the other candidates.
    pub score: f64,
    /// Absolute confidence 0..1 from the hit's own cosine and word coverage (local hits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Whether the confidence clears the calibrated threshold; false = a weak match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confident: Option<bool>,
    /// The turn's best line for the query, when it fits the hit's size (local hits).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<String>,
    /// A later hit of this search that decides about the same subject: this hit's decision is
    /// no longer the current one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<u64>,
    /// Near-identical turns folded into this hit: "×N, first <time>, last <time>"
    /// (`get`/`timeline` open this one; `memctl show <id>` lists the others).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copies: Option<String>,
    /// scope=team: the teammate who synced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub teammate: Option<String>,
    /// scope=team: their project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
}

/// `search`'s answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SearchOutput {
    /// Best first.
    pub hits: Vec<Hit>,
    /// Set when the search ran degraded, or when nothing matched: what to try next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// `get`: full chunks by id.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct GetInput {
    /// Chunk ids from `search` or `timeline` (at most 10).
    #[schemars(length(max = 10))]
    pub ids: Vec<u64>,
}

/// One full archived chunk.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct FullChunk {
    /// Chunk id.
    pub id: u64,
    /// Full session id.
    pub session: String,
    /// Turn index in its session.
    pub turn: u32,
    /// Part of a long turn ("2/3"); absent for a one-part turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
    /// When the turn started (UTC, to the minute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// Tools the turn used.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// Files the turn touched.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// The archived text (redacted): prompt, answer, tool calls and their output.
    pub text: String,
}

/// `get`'s answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct GetOutput {
    /// The chunks found, in the order asked.
    pub chunks: Vec<FullChunk>,
    /// Ids with no chunk (never existed, or pruned).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<u64>,
}

/// `timeline`: the turns around a hit.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct TimelineInput {
    /// A chunk id from `search`.
    pub id: u64,
    /// Turns before it (default 3, at most 20).
    #[serde(default)]
    pub before: Option<u32>,
    /// Turns after it (default 3, at most 20).
    #[serde(default)]
    pub after: Option<u32>,
}

/// One turn of a timeline or a session.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TurnLine {
    /// Chunk id (for `get`).
    pub id: u64,
    /// Turn index.
    pub turn: u32,
    /// When the turn started (UTC, to the minute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// One line: the prompt and the outcome.
    pub gist: String,
    /// True for the turn asked about.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hit: bool,
}

/// `timeline`'s answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TimelineOutput {
    /// Full session id.
    pub session: String,
    /// Turns in order (the first part of each long turn).
    pub turns: Vec<TurnLine>,
}

/// `tool_output`: the exact stored output of a tool call (a swapped output).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ToolOutputInput {
    /// The output's id from a restore inventory or `memctl swap list` (a unique prefix works).
    #[schemars(length(max = 256))]
    pub id: String,
    /// First line to return (1-based).
    #[serde(default)]
    pub line_start: Option<u64>,
    /// Last line to return (inclusive).
    #[serde(default)]
    pub line_end: Option<u64>,
    /// First byte to return (0-based; used when no line is given).
    #[serde(default)]
    pub byte_start: Option<u64>,
    /// End byte (exclusive).
    #[serde(default)]
    pub byte_end: Option<u64>,
}

/// `tool_output`'s answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ToolOutputOutput {
    /// The output's id (short form).
    pub id: String,
    /// The tool that produced it.
    pub tool: String,
    /// Its input: command, file path, pattern.
    pub input: String,
    /// Size of the whole stored output.
    pub total_bytes: u64,
    /// Lines of the whole stored output.
    pub total_lines: u64,
    /// What `text` holds: "lines A-B" or "bytes A-B".
    pub range: String,
    /// The exact text of that range.
    pub text: String,
    /// When the range was cut at the size cap: the arguments that continue it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

/// `sessions`: archived sessions, newest first.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SessionsInput {
    /// project (default) or all.
    #[serde(default)]
    pub scope: Option<Scope>,
    /// At most this many (default 20, at most 100).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// One archived session.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SessionLine {
    /// Full session id (for `session_summary` and `search` with scope=session).
    pub id: String,
    /// Its project, when listing all projects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Turns archived.
    pub turns: u32,
    /// First and last activity (UTC, to the minute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<String>,
    /// Last activity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<String>,
    /// One line of its summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gist: Option<String>,
}

/// `sessions`' answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SessionsOutput {
    /// Newest first.
    pub sessions: Vec<SessionLine>,
    /// Sessions not listed (past the limit).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// `session_summary`: load a past session.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SessionSummaryInput {
    /// Session id or a unique prefix (8 chars is enough).
    #[schemars(length(max = 256))]
    pub session: String,
    /// Newest turns listed (default 30, at most 200).
    #[serde(default)]
    pub turns: Option<u32>,
}

/// `session_summary`'s answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SessionSummaryOutput {
    /// Full session id.
    pub id: String,
    /// Its project.
    pub project: String,
    /// Turns archived.
    pub turns: u32,
    /// First activity (UTC, to the minute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<String>,
    /// Last activity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<String>,
    /// Compactions seen in it.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub compactions: u32,
    /// memctl's extractive summary (no LLM): decisions, files, commands, errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Claude Code's own compaction summary, clipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compact_summary: Option<String>,
    /// The newest turns, in order (open one with `get`).
    pub recent_turns: Vec<TurnLine>,
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

/// Which memory file a note belongs in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NoteKind {
    /// A choice later sessions must not undo (decisions.md).
    #[default]
    Decision,
    /// A trap found the hard way (gotchas.md).
    Gotcha,
    /// How the user wants the work done (feedback.md).
    Feedback,
    /// Where the current task stands (active-state.md).
    State,
}

/// `remember`: append a note to the project's memory files.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RememberInput {
    /// The note: one line, at most 500 characters (secrets are redacted).
    #[schemars(length(max = 65536))]
    pub text: String,
    /// decision (default), gotcha, feedback or state.
    #[serde(default)]
    pub kind: NoteKind,
}

/// `remember`'s answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RememberOutput {
    /// The file, relative to the project.
    pub file: String,
    /// The line appended.
    pub line: String,
    /// Secrets replaced by markers before writing.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub redacted: u32,
}

/// `forget`: remove archived turns for good.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ForgetInput {
    /// Chunk ids of the turns the user asked to forget (from `search`, `get` or `timeline`;
    /// at most 20). Each id takes the rest of its turn.
    #[schemars(length(max = 20))]
    pub ids: Vec<u64>,
}

/// One forgotten turn.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ForgottenTurn {
    /// Its first chunk's id.
    pub id: u64,
    /// Session id prefix (8 chars).
    pub session: String,
    /// Turn index in its session.
    pub turn: u32,
    /// When the turn started (UTC, to the minute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// One line: the prompt and the outcome.
    pub gist: String,
}

/// `forget`'s answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ForgetOutput {
    /// The turns removed.
    pub turns: Vec<ForgottenTurn>,
    /// Chunks removed (a long turn has several).
    pub chunks: u64,
    /// Every chunk id removed.
    pub removed_ids: Vec<u64>,
    /// Stored tool outputs of those turns removed.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub tool_outputs: u64,
    /// Sessions of which nothing is left (removed entirely), full ids.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sessions_removed: Vec<String>,
    /// What else to tell the user.
    pub note: String,
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}
