//! What the agents' hook protocols share. Codex CLI and Gemini CLI copied Claude Code's: every
//! payload carries `session_id`, `transcript_path`, `cwd` and `hook_event_name`, SessionStart
//! says why with the same `source` words, and all three read context for the model from
//! `{"hookSpecificOutput":{"hookEventName":..,"additionalContext":..}}`. The adapters
//! (`claude/`, `codex/`, `gemini/`) build on these pieces; nothing here knows one agent.

use memctl_engine::{AgentEvent, EventKind, Injection, Redacted, Reply, StartKind};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// Why a session started (SessionStart `source`). Unknown sources decode as [`Self::Other`]:
/// a new value never fails the hook.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(from = "String")]
pub enum SessionSource {
    /// A new session (also when the payload has no `source`).
    #[default]
    Startup,
    /// A resumed session.
    Resume,
    /// `/clear`.
    Clear,
    /// After compaction.
    Compact,
    /// A forked session (Claude Code).
    Fork,
    /// Any other value, as given.
    Other(String),
}

impl From<String> for SessionSource {
    fn from(s: String) -> Self {
        match s.as_str() {
            "startup" => Self::Startup,
            "resume" => Self::Resume,
            "clear" => Self::Clear,
            "compact" => Self::Compact,
            "fork" => Self::Fork,
            _ => Self::Other(s),
        }
    }
}

impl SessionSource {
    /// Why the session started, in the engine's terms.
    pub fn start_kind(&self) -> StartKind {
        match self {
            Self::Startup => StartKind::Startup,
            Self::Resume => StartKind::Resume,
            Self::Clear => StartKind::Clear,
            Self::Compact => StartKind::Compact,
            Self::Fork => StartKind::Fork,
            Self::Other(_) => StartKind::Other,
        }
    }

    /// The value as the agents spell it.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Startup => "startup",
            Self::Resume => "resume",
            Self::Clear => "clear",
            Self::Compact => "compact",
            Self::Fork => "fork",
            Self::Other(s) => s,
        }
    }
}

/// Fields every hook payload carries (other fields are ignored).
#[derive(Debug, Clone, Deserialize)]
pub struct CommonFields {
    /// Session id.
    #[serde(default)]
    pub session_id: String,
    /// Path of the session transcript (may not exist yet when a session starts).
    #[serde(default)]
    pub transcript_path: Option<String>,
    /// Working directory of the session: our project namespace.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Event name as the agent spells it.
    #[serde(default)]
    pub hook_event_name: Option<String>,
}

impl CommonFields {
    /// The event name: argv's when given (what `memctl install` writes), else the payload's.
    pub fn event_name(&self, event_arg: Option<&str>) -> Result<String, PayloadError> {
        event_arg
            .map(str::to_string)
            .or_else(|| self.hook_event_name.clone())
            .ok_or(PayloadError::NoEvent)
    }

    /// The engine's event of `kind` for these fields; a payload without `cwd` runs for
    /// `project_dir` (`memctl_engine::Settings::project_dir`).
    pub fn into_event(self, kind: EventKind, project_dir: Option<&str>) -> AgentEvent {
        AgentEvent {
            session_id: self.session_id,
            transcript_path: self.transcript_path.map(PathBuf::from),
            cwd: self.cwd.or_else(|| project_dir.map(str::to_string)),
            kind,
        }
    }
}

/// The deadline of an event: its own (`None`: an event memctl does not handle, 2 s), unless
/// `override_ms` (`MEMCTL_HOOK_DEADLINE_MS`) sets one for all.
pub(crate) fn deadline(event_deadline: Option<Duration>, override_ms: Option<u64>) -> Duration {
    match override_ms {
        Some(ms) => Duration::from_millis(ms),
        None => event_deadline.unwrap_or(Duration::from_millis(2_000)),
    }
}

/// Why a payload could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PayloadError {
    /// Not JSON, or not an object of the expected shape.
    #[error("hook payload is not valid JSON")]
    Json(#[from] serde_json::Error),
    /// No event name in argv or payload.
    #[error("no hook event name (argv or hook_event_name)")]
    NoEvent,
}

/// SessionStart's `source` (startup when absent).
pub(crate) fn session_source(raw: &[u8]) -> Result<SessionSource, PayloadError> {
    #[derive(Deserialize)]
    struct Fields {
        #[serde(default)]
        source: Option<SessionSource>,
    }
    let f: Fields = serde_json::from_slice(raw)?;
    Ok(f.source.unwrap_or_default())
}

/// The user's `prompt` (empty when absent).
pub(crate) fn prompt(raw: &[u8]) -> Result<String, PayloadError> {
    #[derive(Deserialize)]
    struct Fields {
        #[serde(default)]
        prompt: Option<String>,
    }
    let f: Fields = serde_json::from_slice(raw)?;
    Ok(f.prompt.unwrap_or_default())
}

/// The fields of a tool event, as far as any agent sends them (`error`: Claude Code's
/// PostToolUseFailure; `tool_use_id`: not Gemini CLI's).
#[derive(Deserialize)]
pub(crate) struct ToolFields {
    #[serde(default)]
    pub tool_name: Option<String>,
    #[serde(default)]
    pub tool_input: Option<RawJson>,
    #[serde(default)]
    pub tool_response: Option<RawJson>,
    #[serde(default)]
    pub error: Option<RawJson>,
    #[serde(default)]
    pub tool_use_id: Option<String>,
}

/// A JSON value kept as its text (tool inputs and responses are handed on, never read here).
pub(crate) type RawJson = Box<serde_json::value::RawValue>;

/// The text of a raw JSON value, empty when absent.
pub(crate) fn raw_text(v: Option<RawJson>) -> String {
    v.map(|r| r.get().to_string()).unwrap_or_default()
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SpecificOutput<'a> {
    hook_event_name: &'a str,
    additional_context: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct OutputDoc<'a> {
    hook_specific_output: SpecificOutput<'a>,
}

/// `hookSpecificOutput.additionalContext` of `event` holding `text` (redacted by the caller),
/// and its size as injected context; nothing for an empty text.
fn context_json(event: &str, text: &str) -> (String, Injection) {
    if text.is_empty() {
        return (String::new(), Injection::default());
    }
    let doc = OutputDoc {
        hook_specific_output: SpecificOutput {
            hook_event_name: event,
            additional_context: text,
        },
    };
    match serde_json::to_string(&doc) {
        Ok(json) => (
            json,
            Injection {
                injected_chars: text.chars().count() as u64,
                ..Injection::default()
            },
        ),
        Err(_) => (String::new(), Injection::default()),
    }
}

/// [`context_json`] of `text` redacted once more: printed text must never be the one place a
/// secret slips through, whatever the engine did before.
pub(crate) fn render_context(event: &str, text: &str) -> (String, Injection) {
    if text.is_empty() {
        return (String::new(), Injection::default());
    }
    context_json(event, &memctl_engine::redact(text))
}

/// [`context_json`] of text redacted already under the same rules ([`Reply::RedactedContext`]).
pub(crate) fn render_redacted_context(event: &str, text: &Redacted) -> (String, Injection) {
    context_json(event, text.as_str())
}

/// The output of an agent that reads memctl's context only where it was verified with the real
/// binary (`context_verified`: the calling event is one whose `additionalContext` reached the
/// model). Every other reply prints nothing: an unverified shape could fail the agent's output
/// validation or be shown to the user instead of the model, so it is dropped, and said so in
/// the debug log.
pub(crate) fn render_verified_context(
    agent: &str,
    event: &str,
    reply: Reply,
    context_verified: bool,
) -> (String, Injection) {
    let dropped = match reply {
        Reply::None => return (String::new(), Injection::default()),
        Reply::Context(text) if context_verified => return render_context(event, &text),
        Reply::RedactedContext(text) if context_verified => {
            return render_redacted_context(event, &text);
        }
        Reply::Context(_) | Reply::RedactedContext(_) => "context",
        Reply::CompactInstructions(_) => "compaction instructions",
        Reply::ReplaceToolOutput { .. } => "a tool output replacement",
    };
    tracing::debug!(
        agent,
        event,
        reply = dropped,
        "no output shape verified with this agent for this reply; printing nothing"
    );
    (String::new(), Injection::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_verified_context_is_printed_and_always_redacted() {
        let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
        let (json, inj) = render_verified_context(
            "codex",
            "SessionStart",
            Reply::Context(format!("token {secret}")),
            true,
        );
        assert!(!json.contains(secret), "{json}");
        let v: serde_json::Value = serde_json::from_str(&json).expect("json");
        let ctx = v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .expect("context");
        assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
        assert_eq!(inj.injected_chars, ctx.chars().count() as u64);
        for reply in [
            Reply::Context("ctx".into()),
            Reply::CompactInstructions("keep X".into()),
            Reply::ReplaceToolOutput {
                response: "{}".into(),
                removed_chars: 3,
            },
            Reply::None,
        ] {
            let (text, inj) = render_verified_context("codex", "PreCompact", reply, false);
            assert!(text.is_empty() && inj.is_empty());
        }
        let (text, _) = render_verified_context("codex", "SessionStart", Reply::None, true);
        assert!(text.is_empty());
    }

    #[test]
    fn a_missing_cwd_falls_back_to_the_project_dir() {
        let c: CommonFields = serde_json::from_str(r#"{"session_id":"s"}"#).expect("fields");
        assert_eq!(c.event_name(Some("X")).expect("name"), "X");
        assert!(matches!(c.event_name(None), Err(PayloadError::NoEvent)));
        let e = c.into_event(EventKind::TurnEnd, Some("/p"));
        assert_eq!(e.project(), "/p");
    }
}
