//! Which coding agent a hook runs for (`memctl-hook --agent claude|codex|gemini`), and the two
//! places the hook's flow differs by agent: its payload in (an [`AgentEvent`], the event's
//! name as the agent spells it, the event's deadline) and the engine's [`Reply`] out (the
//! exact stdout bytes). Everything between is agent-neutral.

use crate::protocol::PayloadError;
use crate::{claude, codex, gemini};
use memctl_engine::{AgentEvent, Injection, Reply};
use std::time::Duration;

pub use memctl_engine::Agent;

/// A payload as the hook's shared flow uses it.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The engine's event.
    pub event: AgentEvent,
    /// The event's name as the agent spells it (output's `hookEventName`, logs, telemetry).
    pub label: String,
    /// How long the hook may take for it.
    pub deadline: Duration,
}

/// An agent's adapter: its payloads in, its output out ([`Agent`] is the engine's, which
/// also names the agent of an archived session).
pub trait Adapter {
    /// Parse stdin bytes (`event_arg`: the event named on argv). A payload without `cwd` runs
    /// for `project_dir`; `deadline_ms` (`MEMCTL_HOOK_DEADLINE_MS`) overrides every deadline.
    fn parse(
        self,
        raw: &[u8],
        event_arg: Option<&str>,
        project_dir: Option<&str>,
        deadline_ms: Option<u64>,
    ) -> Result<Parsed, PayloadError>;

    /// The exact stdout bytes answering `event` (the agent's name of the calling event) with
    /// `reply`, and what they put where (injection telemetry, measured on the printed text).
    fn render(self, event: &str, reply: Reply) -> (String, Injection);
}

impl Adapter for Agent {
    /// Parse stdin bytes (`event_arg`: the event named on argv). A payload without `cwd` runs
    /// for `project_dir`; `deadline_ms` (`MEMCTL_HOOK_DEADLINE_MS`) overrides every deadline.
    fn parse(
        self,
        raw: &[u8],
        event_arg: Option<&str>,
        project_dir: Option<&str>,
        deadline_ms: Option<u64>,
    ) -> Result<Parsed, PayloadError> {
        Ok(match self {
            Self::ClaudeCode => {
                let mut p = claude::HookPayload::parse(raw, event_arg)?;
                p.fill_project_dir(project_dir);
                let (label, kind) = (p.event.name().to_string(), p.event.kind());
                Parsed {
                    event: p.into_event(),
                    label,
                    deadline: claude::deadline(kind, deadline_ms),
                }
            }
            Self::Codex => {
                let p = codex::CodexPayload::parse(raw, event_arg)?;
                let (label, kind) = (p.event.name().to_string(), p.event.kind());
                Parsed {
                    event: p.into_event(project_dir),
                    label,
                    deadline: codex::policy::deadline(kind, deadline_ms),
                }
            }
            Self::Gemini => {
                let p = gemini::GeminiPayload::parse(raw, event_arg)?;
                let (label, kind) = (p.event.name().to_string(), p.event.kind());
                Parsed {
                    event: p.into_event(project_dir),
                    label,
                    deadline: gemini::policy::deadline(kind, deadline_ms),
                }
            }
        })
    }

    fn render(self, event: &str, reply: Reply) -> (String, Injection) {
        match self {
            Self::ClaudeCode => claude::HookOutput::answer(event, reply).render_measured(),
            Self::Codex => codex::output::render(event, reply),
            Self::Gemini => gemini::output::render(event, reply),
        }
    }
}

/// An `--agent` value (clap's parser).
pub fn parse_agent(s: &str) -> Result<Agent, String> {
    Agent::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = Agent::ALL.iter().map(|a| a.as_str()).collect();
        format!("unknown agent {s:?}; one of: {}", names.join(", "))
    })
}

#[cfg(test)]
mod fuzz_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use memctl_engine::EventKind;

    #[test]
    fn each_agent_reads_its_own_event_names() {
        for a in Agent::ALL {
            assert_eq!(Agent::from_name(a.as_str()), Some(a));
        }
        assert_eq!(Agent::from_name("cursor"), None);
        let raw = br#"{"session_id":"s","cwd":"/w","prompt":"p"}"#;
        let kind = |a: Agent, ev: &str| a.parse(raw, Some(ev), None, None).expect("parsed");
        assert!(matches!(
            kind(Agent::Gemini, "BeforeAgent").event.kind,
            EventKind::Prompt { .. }
        ));
        assert_eq!(
            kind(Agent::ClaudeCode, "BeforeAgent").event.kind,
            EventKind::Other
        );
        assert_eq!(kind(Agent::Codex, "Stop").event.kind, EventKind::TurnEnd);
        assert_eq!(kind(Agent::ClaudeCode, "Stop").event.kind, EventKind::Other);
        let p = kind(Agent::Gemini, "SessionEnd");
        assert_eq!(
            (p.label.as_str(), p.deadline),
            ("SessionEnd", Duration::from_millis(900))
        );
        let p = Agent::Codex
            .parse(raw, Some("PreCompact"), None, Some(5))
            .expect("parsed");
        assert_eq!(p.deadline, Duration::from_millis(5));
    }

    #[test]
    fn claude_keeps_its_plain_text_outputs_and_the_others_print_only_context() {
        let keep = Reply::CompactInstructions("keep X".into());
        assert_eq!(
            Agent::ClaudeCode.render("PreCompact", keep.clone()).0,
            "keep X"
        );
        assert_eq!(Agent::Codex.render("PreCompact", keep.clone()).0, "");
        assert_eq!(Agent::Gemini.render("PreCompress", keep).0, "");
        let ctx = Reply::Context("c".into());
        for (a, ev) in [
            (Agent::ClaudeCode, "UserPromptSubmit"),
            (Agent::Codex, "UserPromptSubmit"),
            (Agent::Gemini, "BeforeAgent"),
        ] {
            let (json, _) = a.render(ev, ctx.clone());
            let v: serde_json::Value = serde_json::from_str(&json).expect("json");
            assert_eq!(v["hookSpecificOutput"]["hookEventName"], ev);
            assert_eq!(v["hookSpecificOutput"]["additionalContext"], "c");
        }
    }
}
