//! Typed Codex CLI hook payloads (as recorded with 0.171.0) and their translation into the
//! engine's agent-neutral [`AgentEvent`]. Fields memctl does not read (`model`,
//! `permission_mode`, `turn_id`, `last_assistant_message`, ...) are ignored.

use super::policy::CodexEventName;
use crate::protocol::{CommonFields, PayloadError, SessionSource, raw_text};
use memctl_engine::{AgentEvent, EventKind, ToolUse};

/// The event-specific part of a Codex payload.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CodexEvent {
    /// A session started (`startup`, `resume`, `clear`, `compact`).
    SessionStart {
        /// Why it started.
        source: SessionSource,
    },
    /// The user submitted a prompt.
    UserPromptSubmit {
        /// The prompt text.
        prompt: String,
    },
    /// Compaction is about to run (`trigger`: `auto` / `manual`; no user instructions).
    PreCompact,
    /// Compaction finished (Codex passes no summary).
    PostCompact,
    /// A shell command ran.
    PostToolUse {
        /// Tool name (`Bash`).
        tool_name: String,
        /// Tool input as JSON text (`{"command": ...}`).
        tool_input: String,
        /// Tool response as JSON text (a JSON string: the command's output).
        tool_response: String,
        /// Tool use id.
        tool_use_id: Option<String>,
    },
    /// The turn ended.
    Stop,
    /// Any other event: acknowledged, nothing done.
    Other(String),
}

impl CodexEvent {
    /// Which handled event this is; `None` for [`Self::Other`].
    pub fn kind(&self) -> Option<CodexEventName> {
        Some(match self {
            Self::SessionStart { .. } => CodexEventName::SessionStart,
            Self::UserPromptSubmit { .. } => CodexEventName::UserPromptSubmit,
            Self::PreCompact => CodexEventName::PreCompact,
            Self::PostCompact => CodexEventName::PostCompact,
            Self::PostToolUse { .. } => CodexEventName::PostToolUse,
            Self::Stop => CodexEventName::Stop,
            Self::Other(_) => return None,
        })
    }

    /// The event name as Codex spells it.
    pub fn name(&self) -> &str {
        match (self.kind(), self) {
            (Some(k), _) => k.as_str(),
            (None, Self::Other(n)) => n,
            (None, _) => "",
        }
    }
}

/// A parsed Codex hook payload.
#[derive(Debug, Clone)]
pub struct CodexPayload {
    /// Common fields.
    pub common: CommonFields,
    /// Event-specific fields.
    pub event: CodexEvent,
}

impl CodexPayload {
    /// Parse stdin bytes. The event comes from argv when given (what `memctl install` writes),
    /// else from `hook_event_name`.
    pub fn parse(raw: &[u8], event_arg: Option<&str>) -> Result<Self, PayloadError> {
        let common: CommonFields = serde_json::from_slice(raw)?;
        let name = common.event_name(event_arg)?;
        let Some(kind) = CodexEventName::from_name(&name) else {
            return Ok(Self {
                common,
                event: CodexEvent::Other(name),
            });
        };
        let event = match kind {
            CodexEventName::SessionStart => CodexEvent::SessionStart {
                source: crate::protocol::session_source(raw)?,
            },
            CodexEventName::UserPromptSubmit => CodexEvent::UserPromptSubmit {
                prompt: crate::protocol::prompt(raw)?,
            },
            CodexEventName::PreCompact => CodexEvent::PreCompact,
            CodexEventName::PostCompact => CodexEvent::PostCompact,
            CodexEventName::PostToolUse => {
                let f: crate::protocol::ToolFields = serde_json::from_slice(raw)?;
                CodexEvent::PostToolUse {
                    tool_name: f.tool_name.unwrap_or_default(),
                    tool_input: raw_text(f.tool_input),
                    tool_response: raw_text(f.tool_response),
                    tool_use_id: f.tool_use_id,
                }
            }
            CodexEventName::Stop => CodexEvent::Stop,
        };
        Ok(Self { common, event })
    }

    /// The engine's event for this payload (fields moved, not copied). A payload without
    /// `cwd` runs for `project_dir`.
    pub fn into_event(self, project_dir: Option<&str>) -> AgentEvent {
        let kind = match self.event {
            CodexEvent::SessionStart { source } => EventKind::SessionStart(source.start_kind()),
            CodexEvent::UserPromptSubmit { prompt } => EventKind::Prompt { prompt },
            CodexEvent::PreCompact => EventKind::BeforeCompact { instructions: None },
            CodexEvent::PostCompact => EventKind::AfterCompact { summary: None },
            CodexEvent::PostToolUse {
                tool_name,
                tool_input,
                tool_response,
                tool_use_id,
            } => EventKind::ToolOutput(ToolUse {
                tool_name,
                tool_input,
                tool_response,
                tool_use_id,
                failed: false,
            }),
            CodexEvent::Stop => EventKind::TurnEnd,
            CodexEvent::Other(_) => EventKind::Other,
        };
        self.common.into_event(kind, project_dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memctl_engine::StartKind;
    use std::path::PathBuf;

    const FIXTURE: &str = include_str!("../../../tests/fixtures/payloads/codex-0.171.0.jsonl");

    /// Every recorded payload decodes, from argv's event name as installed and from
    /// `hook_event_name` alone, into the event the mapping says, with the payload's own ids.
    #[test]
    fn every_recorded_payload_decodes_into_its_event() {
        let mut seen = std::collections::BTreeMap::<String, usize>::new();
        for line in FIXTURE.lines().filter(|l| !l.trim().is_empty()) {
            let v: serde_json::Value = serde_json::from_str(line).expect("fixture json");
            let name = v["hook_event_name"]
                .as_str()
                .expect("event name")
                .to_string();
            let by_arg = CodexPayload::parse(line.as_bytes(), Some(&name)).expect("payload");
            assert_eq!(by_arg.event.name(), name);
            let e = CodexPayload::parse(line.as_bytes(), None)
                .expect("payload")
                .into_event(None);
            assert_eq!(e.session_id, v["session_id"].as_str().expect("session id"));
            assert!(!e.session_id.is_empty());
            assert_eq!(
                e.transcript_path,
                Some(PathBuf::from(v["transcript_path"].as_str().expect("path")))
            );
            assert_eq!(e.cwd.as_deref(), v["cwd"].as_str());
            let want = match name.as_str() {
                "SessionStart" => EventKind::SessionStart(match v["source"].as_str() {
                    Some("compact") => StartKind::Compact,
                    Some("startup") => StartKind::Startup,
                    s => panic!("unexpected source {s:?}"),
                }),
                "UserPromptSubmit" => EventKind::Prompt {
                    prompt: v["prompt"].as_str().expect("prompt").into(),
                },
                "PreCompact" => EventKind::BeforeCompact { instructions: None },
                "PostCompact" => EventKind::AfterCompact { summary: None },
                "PostToolUse" => EventKind::ToolOutput(ToolUse {
                    tool_name: "Bash".into(),
                    tool_input: r#"{"command":"echo tool-output"}"#.into(),
                    tool_response: r#""tool-output\n""#.into(),
                    tool_use_id: v["tool_use_id"].as_str().map(String::from),
                    failed: false,
                }),
                "Stop" => EventKind::TurnEnd,
                "PreToolUse" => EventKind::Other,
                other => panic!("unexpected event {other}"),
            };
            assert_eq!(e.kind, want, "{line}");
            *seen.entry(name).or_default() += 1;
        }
        // The recording covers every event memctl installs for Codex.
        for ev in CodexEventName::ALL {
            assert!(
                seen.contains_key(ev.as_str()),
                "{ev} not recorded: {seen:?}"
            );
        }
    }

    #[test]
    fn sources_and_garbage() {
        let kind = |raw: &str| {
            CodexPayload::parse(raw.as_bytes(), Some("SessionStart"))
                .expect("payload")
                .into_event(None)
                .kind
        };
        for (s, k) in [
            ("resume", StartKind::Resume),
            ("clear", StartKind::Clear),
            ("teleport", StartKind::Other),
        ] {
            assert_eq!(
                kind(&format!(r#"{{"source":"{s}"}}"#)),
                EventKind::SessionStart(k)
            );
        }
        assert_eq!(kind("{}"), EventKind::SessionStart(StartKind::Startup));
        assert!(CodexPayload::parse(b"not json", Some("Stop")).is_err());
        assert!(CodexPayload::parse(b"{}", None).is_err());
        assert!(CodexPayload::parse(br#"{"prompt": 5}"#, Some("UserPromptSubmit")).is_err());
    }
}
