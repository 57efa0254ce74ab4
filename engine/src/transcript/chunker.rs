//! Turns → redacted, bounded [`Chunk`]s, and the incremental [`Chunker`] that keeps a resume
//! point between calls.

use serde::{Deserialize, Serialize};

use super::line::{LineError, ParseStats, ParsedLine, parse_line};
use super::text::{bound_head, bound_head_tail, ellipsize, first_line, first_sentence};
use super::turns::{AssembledTurns, Turn, TurnAssembler, TurnEvent, TurnKind, TurnStatus};
use crate::agent::Agent;
use crate::chunk::Chunk;
use crate::redact::{RedactionCounts, redact_counted};

/// Smallest `max_chunk_chars` honoured: below it the part header would crowd out the body.
const MIN_CHUNK_CHARS: usize = 200;

/// Input at least this large is parsed and rendered on every core (rayon). Why: a first
/// archive of a long history parsed 80 MB of JSON on one core while the other idled (issue
/// 17); a hook's usual few new lines stay on the calling thread, where a thread hand-off
/// would cost more than the work.
const PARALLEL_MIN_BYTES: usize = 256 * 1024;

/// Lines parsed in parallel per block: the turn assembly between blocks is sequential, and
/// a block bounds how many decoded lines are alive at once.
const PARSE_BLOCK_LINES: usize = 2048;

/// Limits that shape chunk text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ChunkerConfig {
    /// Maximum characters per chunk; longer turns are split into parts on line boundaries
    /// (clamped to at least 200).
    pub max_chunk_chars: usize,
    /// Maximum bytes of one tool call's JSON input in chunk text (head kept).
    pub max_tool_input_bytes: usize,
    /// Maximum bytes of one tool result in chunk text (head and tail kept). The whole result
    /// stays available in [`Turn::tool_results`].
    pub max_tool_result_bytes: usize,
    /// Maximum characters of each half of the summary (prompt sentence, outcome sentence).
    pub summary_sentence_chars: usize,
    /// Maximum characters of the prompt line repeated at the top of continuation parts.
    pub header_chars: usize,
}

impl Default for ChunkerConfig {
    fn default() -> Self {
        Self {
            max_chunk_chars: 4000,
            max_tool_input_bytes: 2048,
            max_tool_result_bytes: 2048,
            summary_sentence_chars: 160,
            header_chars: 120,
        }
    }
}

/// What must survive between incremental calls (serialize it next to the byte cursor).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkerState {
    /// File offset where the next call's bytes must start: the first line of the open turn,
    /// or the end of the last complete line when no turn is open.
    pub resume_offset: u64,
    /// The index the turn starting at `resume_offset` gets.
    pub next_turn_index: u32,
    /// The first `sessionId` seen in the file.
    pub session_id: Option<String>,
    /// The first `cwd` seen in the file (the project namespace).
    pub project: Option<String>,
    /// The agent whose format the file is in, recognised by its first line. States saved
    /// before agents were told apart have none, and resume as Claude Code's format.
    #[serde(default)]
    pub agent: Option<Agent>,
    /// Gemini CLI: a session header came after the last message line, so a history rewrite
    /// now is a resume's, whose compression summary was archived when it happened. Saved
    /// with the state: a feed that starts at an open turn's first line (a message) resets it
    /// there, one that starts where the last ended continues from the value it left.
    #[serde(default)]
    pub gemini_after_header: bool,
}

/// A chunk and whether its turn can still grow.
#[derive(Debug, Clone, PartialEq)]
pub struct EmittedChunk {
    /// The chunk (text redacted).
    pub chunk: Chunk,
    /// `Open` for the parts of the last turn: a later call re-emits it, and the caller replaces
    /// every stored part with the same `turn_uuid`.
    pub status: TurnStatus,
}

/// The output of one [`Chunker::feed`] call.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    /// Chunks of every turn that started in the bytes, in turn order.
    pub chunks: Vec<EmittedChunk>,
    /// The parsed turns (full tool results for the swap store), redacted.
    pub turns: Vec<Turn>,
    /// Line counters.
    pub stats: ParseStats,
    /// Secrets replaced, by kind.
    pub redactions: RedactionCounts,
    /// Bytes of the input that were complete lines (a trailing line without `\n` is not).
    pub consumed: usize,
}

impl Batch {
    /// Just the chunks.
    pub fn into_chunks(self) -> Vec<Chunk> {
        self.chunks.into_iter().map(|c| c.chunk).collect()
    }
}

/// Incremental transcript chunker.
///
/// Resume design: the state stores the file offset of the first line of the last open turn
/// (and that turn's index). Each call is given the file's bytes from that offset to the
/// current end, re-parses the open turn together with whatever is new, and emits it again:
/// the caller replaces stored chunks by `turn_uuid`. Work per call is O(open turn + new
/// lines), never O(history), and no half-built turn has to be serialized.
#[derive(Debug, Clone)]
pub struct Chunker {
    config: ChunkerConfig,
    state: ChunkerState,
    fallback_session_id: String,
    /// [`PARALLEL_MIN_BYTES`], changed by tests to compare both paths.
    parallel_min_bytes: usize,
    /// File offset up to which lines were counted as read ([`ParseStats::new_lines`]): the
    /// open turn is fed again on every call, and its lines must count once.
    counted_to: u64,
}

impl Chunker {
    /// A chunker at the start of a transcript. `fallback_session_id` (the file stem) is used
    /// when no line carries a `sessionId`.
    pub fn new(config: ChunkerConfig, fallback_session_id: impl Into<String>) -> Self {
        Self {
            config,
            state: ChunkerState::default(),
            fallback_session_id: fallback_session_id.into(),
            parallel_min_bytes: PARALLEL_MIN_BYTES,
            counted_to: 0,
        }
    }

    /// Lines before file offset `offset` were read by an earlier call (another process's, or
    /// a pass whose chunker is gone): [`ParseStats::new_lines`] leaves them out.
    pub fn count_lines_from(mut self, offset: u64) -> Self {
        self.counted_to = offset;
        self
    }

    /// Parse and render on every core from this many input bytes on (tests: `0` always,
    /// `usize::MAX` never). The output does not depend on it.
    #[cfg(test)]
    pub(crate) fn with_parallel_min_bytes(mut self, n: usize) -> Self {
        self.parallel_min_bytes = n;
        self
    }

    /// The project for a transcript whose lines name no working directory (Gemini CLI's
    /// chats), found beside the file by the caller; asked only while the state has none (it
    /// is kept in the state, so a file is looked for once per transcript, not once per hook).
    pub fn with_project_hint(mut self, project: impl FnOnce() -> Option<String>) -> Self {
        if self.state.project.is_none() {
            self.state.project = project();
        }
        self
    }

    /// Continue from a saved state.
    pub fn with_state(mut self, state: ChunkerState) -> Self {
        self.state = state;
        self
    }

    /// The current state; `resume_offset` is where the next call's bytes must start.
    pub fn state(&self) -> &ChunkerState {
        &self.state
    }

    /// Parse `bytes` — the transcript from `state().resume_offset` to its current end — and
    /// advance the state. Only complete lines are consumed: a trailing line without `\n` may be
    /// half-written and is read again next time.
    pub fn feed(&mut self, bytes: &[u8]) -> Batch {
        let complete = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        self.feed_lines(&bytes[..complete])
    }

    /// Like [`Chunker::feed`], but the input is a finished file: a last line without `\n` is
    /// parsed too.
    pub fn feed_final(&mut self, bytes: &[u8]) -> Batch {
        self.feed_lines(bytes)
    }

    fn feed_lines(&mut self, bytes: &[u8]) -> Batch {
        use rayon::prelude::*;
        let parallel = bytes.len() >= self.parallel_min_bytes;
        let base = self.state.resume_offset;
        let mut stats = ParseStats::default();
        let mut assembler = TurnAssembler::new(self.state.next_turn_index, base);
        // Lines are decoded a block at a time (on every core for a big input), then fed to the
        // assembler one by one in file order: the turn assembly is sequential by nature.
        let lines: Vec<(usize, &[u8])> = split_lines(bytes).collect();
        let parse = line_parser(self.agent_of(&lines));
        let decode = |line: &&[u8]| (!line.trim_ascii().is_empty()).then(|| parse(line));
        for block in lines.chunks(PARSE_BLOCK_LINES) {
            let parsed: Vec<Option<Result<ParsedLine, LineError>>> = if parallel {
                block.par_iter().map(|(_, l)| decode(l)).collect()
            } else {
                block.iter().map(|(_, l)| decode(l)).collect()
            };
            for ((offset, _), parsed) in block.iter().zip(parsed) {
                if base + *offset as u64 >= self.counted_to {
                    stats.new_lines += 1;
                }
                let Some(parsed) = parsed else {
                    stats.blank += 1;
                    continue;
                };
                stats.record(&parsed);
                match parsed {
                    Ok(line) => {
                        if self.resumed_summary(&line) {
                            continue;
                        }
                        self.observe(&line);
                        assembler.push(&line, *offset);
                    }
                    Err(e) => {
                        tracing::debug!(offset = base + *offset as u64, error = %e, "skipping malformed transcript line")
                    }
                }
            }
        }
        self.counted_to = self.counted_to.max(base + bytes.len() as u64);
        let AssembledTurns {
            turns,
            next_index,
            mut redactions,
        } = assembler.finish();
        self.advance(&turns, next_index, base, bytes.len());
        // Turns render independently (text, parts, final redaction): on every core for a big
        // input, collected in turn order, redaction counts added up afterwards.
        let this = &*self;
        let render = |t: &Turn| {
            let mut counts = RedactionCounts::default();
            let chunks = this.render(t, &mut counts);
            (chunks, counts)
        };
        let rendered: Vec<(Vec<EmittedChunk>, RedactionCounts)> = if parallel {
            turns.par_iter().map(render).collect()
        } else {
            turns.iter().map(render).collect()
        };
        let mut chunks = Vec::with_capacity(rendered.iter().map(|(c, _)| c.len()).sum());
        for (c, counts) in rendered {
            redactions.merge(&counts);
            chunks.extend(c);
        }
        Batch {
            chunks,
            turns,
            stats,
            redactions,
            consumed: bytes.len(),
        }
    }

    /// The file's agent: recognised once, from the first non-blank line at the file's start,
    /// then kept in the state. A state that resumes mid-file without one is Claude Code's.
    fn agent_of(&mut self, lines: &[(usize, &[u8])]) -> Agent {
        if let Some(a) = self.state.agent {
            return a;
        }
        if self.state.resume_offset > 0 {
            self.state.agent = Some(Agent::ClaudeCode);
            return Agent::ClaudeCode;
        }
        let Some((_, first)) = lines.iter().find(|(_, l)| !l.trim_ascii().is_empty()) else {
            return Agent::ClaudeCode;
        };
        let agent = Agent::sniff(first);
        self.state.agent = Some(agent);
        agent
    }

    /// Whether `line` is a compaction summary a Gemini CLI resume wrote again (see
    /// [`ChunkerState::gemini_after_header`]); tracks the header/message order as it goes.
    fn resumed_summary(&mut self, line: &ParsedLine) -> bool {
        if self.state.agent != Some(Agent::Gemini) {
            return false;
        }
        match line {
            ParsedLine::System(l) if l.subtype.as_deref() == Some("session") => {
                self.state.gemini_after_header = true;
                false
            }
            ParsedLine::User(l) if l.is_compact_summary => self.state.gemini_after_header,
            ParsedLine::User(_) | ParsedLine::Assistant(_) => {
                self.state.gemini_after_header = false;
                false
            }
            _ => false,
        }
    }

    /// Remember the file's first session id and cwd.
    fn observe(&mut self, line: &ParsedLine) {
        let (session, cwd) = match line {
            ParsedLine::User(l) | ParsedLine::Assistant(l) => (&l.session_id, &l.cwd),
            ParsedLine::System(l) => (&l.session_id, &l.cwd),
            ParsedLine::Attachment(l) => (&l.session_id, &l.cwd),
            _ => return,
        };
        if self.state.session_id.is_none() {
            self.state.session_id.clone_from(session);
        }
        if self.state.project.is_none() {
            self.state.project.clone_from(cwd);
        }
    }

    /// Move the resume point to the open turn, or past everything when none is open.
    fn advance(&mut self, turns: &[Turn], next_index: u32, base: u64, consumed: usize) {
        match turns.iter().find(|t| t.status == TurnStatus::Open) {
            Some(open) => {
                self.state.resume_offset = base + open.start_offset as u64;
                self.state.next_turn_index = open.index;
            }
            None => {
                self.state.resume_offset = base + consumed as u64;
                self.state.next_turn_index = next_index;
            }
        }
    }

    /// One turn → one or more chunks.
    fn render(&self, turn: &Turn, redactions: &mut RedactionCounts) -> Vec<EmittedChunk> {
        let segments = segments(turn, &self.config);
        let header = continuation_header(turn, self.config.header_chars);
        let parts = split_parts(&segments, &header, self.config.max_chunk_chars);
        let summary = final_redact(
            &summarize(turn, self.config.summary_sentence_chars),
            redactions,
        );
        let total = u16::try_from(parts.len()).unwrap_or(u16::MAX);
        let session_id = self
            .state
            .session_id
            .clone()
            .unwrap_or_else(|| self.fallback_session_id.clone());
        let project = self
            .state
            .project
            .clone()
            .or_else(|| turn.cwd.clone())
            .unwrap_or_default();
        parts
            .into_iter()
            .enumerate()
            .map(|(i, part)| {
                let text = final_redact(&part.text, redactions);
                let chunk = Chunk {
                    session_id: session_id.clone(),
                    project: project.clone(),
                    turn_index: turn.index,
                    part: u16::try_from(i).unwrap_or(u16::MAX),
                    parts: total,
                    turn_uuid: turn.uuid.clone(),
                    line_uuids: part.uuids,
                    started_at: turn.started_at.clone(),
                    ended_at: turn.ended_at.clone(),
                    sha256: Chunk::hash_text(&text),
                    text,
                    tools: turn.tools.clone(),
                    files: turn.files.clone(),
                    summary: summary.clone(),
                    is_compact_summary: turn.kind == TurnKind::CompactSummary,
                };
                EmittedChunk {
                    chunk,
                    status: turn.status,
                }
            })
            .collect()
    }
}

/// The line decoder of an agent's transcript format: each turns its lines into the same
/// [`ParsedLine`]s, so that turns and chunks are built one way for every agent.
fn line_parser(agent: Agent) -> fn(&[u8]) -> Result<ParsedLine, LineError> {
    match agent {
        Agent::ClaudeCode => parse_line,
        Agent::Codex => super::codex::parse_codex_line,
        Agent::Gemini => super::gemini::parse_gemini_line,
    }
}

/// Parse a whole transcript in one pass (a finished file; the last line needs no `\n`).
pub fn chunk_transcript(bytes: &[u8], fallback_session_id: &str, config: &ChunkerConfig) -> Batch {
    Chunker::new(config.clone(), fallback_session_id).feed_final(bytes)
}

/// `(offset, line)` pairs, without the `\n` (and a `\r` before it).
fn split_lines(bytes: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let mut offset = 0;
    bytes.split_inclusive(|b| *b == b'\n').map(move |raw| {
        let at = offset;
        offset += raw.len();
        let line = raw.strip_suffix(b"\n").unwrap_or(raw);
        (at, line.strip_suffix(b"\r").unwrap_or(line))
    })
}

/// Defence in depth: turn text is redacted piece by piece already; a secret split across two
/// pieces (or a future rendering change) is caught here.
fn final_redact(text: &str, redactions: &mut RedactionCounts) -> String {
    let (red, counts) = redact_counted(text);
    redactions.merge(&counts);
    red.into_owned()
}

/// A rendered piece of a turn and the line it came from.
#[derive(Debug)]
struct Segment {
    text: String,
    uuid: Option<String>,
}

/// The turn as labelled lines:
/// `User:` / `Compaction summary:` / `Assistant:` / `Subagent:` / `[tool: X]` / `[result: X]` /
/// `[error: X]` / notes.
fn segments(turn: &Turn, config: &ChunkerConfig) -> Vec<Segment> {
    let mut out = Vec::with_capacity(turn.events.len() + 1);
    let opener = match turn.kind {
        TurnKind::Prompt | TurnKind::Command => Some(format!("User: {}", turn.prompt)),
        TurnKind::CompactSummary => Some(format!("Compaction summary: {}", turn.prompt)),
        TurnKind::Preamble => None,
    };
    if let Some(text) = opener {
        out.push(Segment {
            text,
            uuid: Some(turn.uuid.clone()),
        });
    }
    for event in &turn.events {
        let text = match event {
            TurnEvent::Text {
                text, sidechain, ..
            } => {
                let who = if *sidechain { "Subagent" } else { "Assistant" };
                format!("{who}: {}", text.trim())
            }
            TurnEvent::ToolCall { call, .. } => {
                format!(
                    "[tool: {}] {}",
                    call.name,
                    bound_head(&call.input_json, config.max_tool_input_bytes)
                )
            }
            TurnEvent::ToolResult(r) => {
                let label = if r.is_error { "error" } else { "result" };
                let head = r
                    .tool_name
                    .as_deref()
                    .map_or_else(|| format!("[{label}]"), |n| format!("[{label}: {n}]"));
                let body = r.text.trim_end();
                if body.trim().is_empty() {
                    format!("{head} (no output)")
                } else {
                    format!(
                        "{head} {}",
                        bound_head_tail(body, config.max_tool_result_bytes)
                    )
                }
            }
            TurnEvent::Note { text, .. } => text.clone(),
        };
        out.push(Segment {
            text,
            uuid: event.line_uuid().map(str::to_owned),
        });
    }
    out
}

/// The line repeated at the top of every part after the first, so a part is self-describing.
fn continuation_header(turn: &Turn, max_chars: usize) -> String {
    match turn.kind {
        TurnKind::Prompt | TurnKind::Command => {
            format!(
                "User: {} (continued)",
                ellipsize(first_line(&turn.prompt), max_chars)
            )
        }
        TurnKind::CompactSummary => "Compaction summary (continued)".to_owned(),
        TurnKind::Preamble => "(continued)".to_owned(),
    }
}

/// A part being filled.
#[derive(Debug, Default)]
struct Part {
    text: String,
    chars: usize,
    has_body: bool,
    uuids: Vec<String>,
}

impl Part {
    fn continued(header: &str, header_uuid: Option<&str>) -> Self {
        let mut p = Part {
            text: header.to_owned(),
            chars: header.chars().count(),
            ..Part::default()
        };
        p.note_uuid(header_uuid);
        p
    }

    /// Characters that still fit, after the newline the next line needs.
    fn room(&self, max: usize) -> usize {
        let sep = usize::from(!self.text.is_empty());
        max.saturating_sub(self.chars + sep)
    }

    fn push_line(&mut self, line: &str, chars: usize, uuid: Option<&str>) {
        if !self.text.is_empty() {
            self.text.push('\n');
            self.chars += 1;
        }
        self.text.push_str(line);
        self.chars += chars;
        self.has_body = true;
        self.note_uuid(uuid);
    }

    fn note_uuid(&mut self, uuid: Option<&str>) {
        if let Some(u) = uuid
            && !self.uuids.iter().any(|x| x == u)
        {
            self.uuids.push(u.to_owned());
        }
    }
}

/// Split segments into parts of at most `max` characters, on line boundaries; a single line
/// longer than a part is cut at a character boundary.
fn split_parts(segments: &[Segment], header: &str, max: usize) -> Vec<Part> {
    let max = max.max(MIN_CHUNK_CHARS);
    let header = ellipsize(header, max / 4);
    let header_uuid = segments.first().and_then(|s| s.uuid.as_deref());
    let mut parts = Vec::new();
    let mut cur = Part::default();
    for seg in segments {
        for line in seg.text.split('\n') {
            let mut rest = line;
            loop {
                let len = rest.chars().count();
                let room = cur.room(max);
                if len <= room {
                    cur.push_line(rest, len, seg.uuid.as_deref());
                    break;
                }
                if !cur.has_body {
                    let take = room.max(1);
                    let cut = rest.char_indices().nth(take).map_or(rest.len(), |(i, _)| i);
                    cur.push_line(&rest[..cut], take, seg.uuid.as_deref());
                    rest = &rest[cut..];
                }
                parts.push(std::mem::replace(
                    &mut cur,
                    Part::continued(&header, header_uuid),
                ));
            }
        }
    }
    if cur.has_body || parts.is_empty() {
        parts.push(cur);
    }
    parts
}

/// Extractive one-liner: the prompt's first sentence → the last answer's first sentence (or
/// the tools used when the turn has no text answer).
fn summarize(turn: &Turn, n: usize) -> String {
    let head = match turn.kind {
        TurnKind::Prompt | TurnKind::Command => first_sentence(&turn.prompt, n),
        TurnKind::CompactSummary => {
            format!("Compaction summary: {}", compact_gist(&turn.prompt, n))
        }
        TurnKind::Preamble => "(before the first prompt)".to_owned(),
    };
    let outcome = turn
        .last_assistant_text()
        .map(|t| first_sentence(t, n))
        .filter(|s| !s.is_empty())
        .or_else(|| (!turn.tools.is_empty()).then(|| format!("tools: {}", turn.tools.join(", "))));
    match outcome {
        Some(o) => format!("{head} → {o}"),
        None => head,
    }
}

/// The first content line after the `Summary:` heading of a compaction summary (skipping
/// sub-headings that end in `:`), else its first sentence.
fn compact_gist(text: &str, n: usize) -> String {
    let mut lines = text.lines().map(str::trim);
    let Some(heading) = lines.find(|l| l.starts_with("Summary:")) else {
        return first_sentence(text, n);
    };
    let inline = heading.trim_start_matches("Summary:").trim();
    let gist = if inline.is_empty() {
        lines.find(|l| !l.is_empty() && !l.ends_with(':'))
    } else {
        Some(inline)
    };
    first_sentence(gist.unwrap_or(text), n)
}
