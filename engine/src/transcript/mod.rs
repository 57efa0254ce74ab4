//! Transcript JSONL (Claude Code's, Codex CLI's rollouts, Gemini CLI's chats) → turns →
//! redacted, bounded [`Chunk`](crate::Chunk)s. Each agent's lines are decoded into the same
//! [`ParsedLine`](line::ParsedLine)s (`codex`, `gemini`); the chunker recognises the format by
//! the file's first line ([`crate::Agent::sniff`]).
//!
//! Three layers, each usable alone:
//! - [`parse_line`]: one line → a typed [`ParsedLine`] (two-step serde decode; unknown line
//!   and block types are skipped, malformed lines are counted in [`ParseStats`], never fatal).
//! - [`TurnAssembler`]: parsed lines → [`Turn`]s (a real prompt plus the assistant loop that
//!   answers it: text, tool calls, whole tool results). The rules for which user lines open a
//!   turn are in the `turns` module doc.
//! - [`Chunker`]: bytes → [`Batch`] of [`EmittedChunk`]s, incrementally.
//!
//! # Chunk text format
//! ```text
//! User: <prompt>
//! Assistant: <text>
//! [tool: Bash] {"command":"cargo test"}
//! [result: Bash] <first 3/4 of the budget> … [N bytes omitted] … <last 1/4>
//! [error: Read] <bounded error text>
//! [command output] <output of a built-in slash command>
//! Assistant: <text>
//! ```
//! A compaction summary chunk starts with `Compaction summary: `. Parts after the first of a
//! long turn start with `User: <first line of the prompt> (continued)`.
//!
//! # Turn indexes
//! `turn_index` counts turns in transcript order from 0, per file. Every turn kind takes an
//! index: prompts, slash commands, compaction summaries and a leading preamble. A compaction
//! summary takes the next index when it is seen, even when it sits inside an open turn (after
//! auto-compaction Claude Code writes it between a prompt and the answer); that turn keeps its
//! own earlier index and keeps collecting the answer. Indexes are therefore unique per file and
//! `distinct turn indexes out == turn-opening lines in`.
//!
//! # Incremental use
//! The test `tests::an_incremental_chunker_resumes_from_its_saved_state` shows it.
//! The state's `resume_offset` is the start of the last open turn (the last prompt has no
//! successor yet), so each call re-reads that turn plus what is new and emits it again with
//! [`TurnStatus::Open`]; the caller replaces stored chunks by `turn_uuid`. Closed turns are
//! emitted exactly once. A trailing line without `\n` is never consumed.

mod chunker;
// Dispatched to by the chunker once it detects the transcript's format.
mod codex;
mod gemini;
pub(crate) mod line;
mod text;
mod tool_input;
mod turns;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_agents;
#[cfg(test)]
mod tests_real;

pub use chunker::{Batch, Chunker, ChunkerConfig, ChunkerState, chunk_transcript};
pub use text::{CONTEXT_CLOSE, clip_line, ellipsize};
pub use turns::Turn;
