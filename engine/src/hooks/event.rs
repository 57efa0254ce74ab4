//! The agent-neutral events an adapter hands the engine, and the reply it gets back.
//!
//! An adapter (Claude Code's lives in the `memctl-hooks` crate) parses its agent's payloads
//! into an [`AgentEvent`] and renders a [`Reply`] in its agent's output format. Nothing here
//! knows an agent's spelling of events, fields or outputs.

use std::path::{Path, PathBuf};

/// One event of a coding agent's session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentEvent {
    /// Session id (empty when the agent gave none: per-session work is then skipped).
    pub session_id: String,
    /// The session's transcript (may not exist yet when a session starts).
    pub transcript_path: Option<PathBuf>,
    /// Working directory of the session: the project namespace.
    pub cwd: Option<String>,
    /// What happened.
    pub kind: EventKind,
}

/// What happened in the session.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EventKind {
    /// A session started.
    SessionStart(StartKind),
    /// The user submitted a prompt.
    Prompt {
        /// The prompt text.
        prompt: String,
    },
    /// The conversation is about to be compacted.
    BeforeCompact {
        /// The user's own instructions for the compaction, if any.
        instructions: Option<String>,
    },
    /// Compaction finished.
    AfterCompact {
        /// The summary the agent wrote, if it passed it on.
        summary: Option<String>,
    },
    /// A tool ran (or failed) and its output is about to enter the context.
    ToolOutput(ToolUse),
    /// The agent finished a turn, or is about to call its model with the conversation so
    /// far (agents whose compaction gives no earlier signal): archive what is new.
    TurnEnd,
    /// The session ended.
    SessionEnd,
    /// An event memctl does nothing for (acknowledged).
    Other,
}

/// Why a session started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum StartKind {
    /// A new session.
    #[default]
    Startup,
    /// An earlier session, reloaded.
    Resume,
    /// The conversation was cleared.
    Clear,
    /// The conversation was compacted.
    Compact,
    /// A forked session.
    Fork,
    /// Any other reason (nothing is restored).
    Other,
}

/// One tool call with its output, as the agent reported it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolUse {
    /// Tool name.
    pub tool_name: String,
    /// Tool input as JSON text.
    pub tool_input: String,
    /// Tool response as JSON text (the error for a failed call).
    pub tool_response: String,
    /// The agent's id of the call.
    pub tool_use_id: Option<String>,
    /// The call failed.
    pub failed: bool,
}

impl EventKind {
    /// A short neutral label for logs.
    pub fn label(&self) -> &'static str {
        match self {
            Self::SessionStart(_) => "session-start",
            Self::Prompt { .. } => "prompt",
            Self::BeforeCompact { .. } => "before-compact",
            Self::AfterCompact { .. } => "after-compact",
            Self::ToolOutput(_) => "tool-output",
            Self::TurnEnd => "turn-end",
            Self::SessionEnd => "session-end",
            Self::Other => "other",
        }
    }
}

impl AgentEvent {
    /// The project the event is for: its `cwd` (empty when unknown).
    pub fn project(&self) -> String {
        self.cwd.clone().unwrap_or_default()
    }

    /// The transcript path, unless the agent gave an empty one.
    pub(crate) fn transcript(&self) -> Option<&Path> {
        self.transcript_path
            .as_deref()
            .filter(|t| !t.as_os_str().is_empty())
    }

    /// The tool call of a [`EventKind::ToolOutput`] event, for the swap (stored now or
    /// spooled).
    pub(crate) fn tool_call<'a>(&'a self, project: &'a str) -> Option<crate::swap::ToolCall<'a>> {
        match &self.kind {
            EventKind::ToolOutput(t) => Some(crate::swap::ToolCall {
                session_id: &self.session_id,
                project,
                tool_name: &t.tool_name,
                tool_input: &t.tool_input,
                tool_response: &t.tool_response,
                tool_use_id: t.tool_use_id.as_deref(),
                failed: t.failed,
            }),
            _ => None,
        }
    }
}

/// What the engine answers an event with; the adapter renders it in its agent's format and
/// redacts it once more before printing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Reply {
    /// Nothing.
    #[default]
    None,
    /// Text added to the model's context (a restore or recall block, an autopilot note).
    Context(String),
    /// [`Self::Context`] whose text was redacted already (a block prepared before a
    /// compaction): rendered without a second pass.
    RedactedContext(crate::redact::Redacted),
    /// Instructions for the compaction summariser (not context the session carries on).
    CompactInstructions(String),
    /// A replacement for the tool output the model gets ([`crate::swap::inplace`]).
    ReplaceToolOutput {
        /// The replacement response: a JSON object, as text, in the tool's own shape.
        response: String,
        /// Characters taken out of the live context (telemetry).
        removed_chars: u64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_calls_come_from_tool_events_only() {
        let mut e = AgentEvent {
            session_id: "s".into(),
            transcript_path: Some(PathBuf::new()),
            cwd: None,
            kind: EventKind::ToolOutput(ToolUse {
                tool_name: "Bash".into(),
                failed: true,
                ..ToolUse::default()
            }),
        };
        assert_eq!(e.project(), "");
        assert_eq!(e.transcript(), None, "an empty path is no transcript");
        let call = e.tool_call("/p").expect("a tool call");
        assert_eq!(
            (call.session_id, call.project, call.failed),
            ("s", "/p", true)
        );
        e.kind = EventKind::SessionEnd;
        assert!(e.tool_call("/p").is_none());
        assert_eq!(e.kind.label(), "session-end");
    }
}
