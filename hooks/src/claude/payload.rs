//! Typed Claude Code hook payloads (as observed with CLI 2.1.197/2.1.330), and their
//! translation into the engine's agent-neutral [`AgentEvent`].

use super::policy::HookEventName;
pub use crate::protocol::{CommonFields, PayloadError, SessionSource};
use memctl_engine::{AgentEvent, EventKind, ToolUse};
use serde::Deserialize;
use std::path::PathBuf;

/// The event-specific part of a payload.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum HookEvent {
    /// A session started (`startup`, `resume`, `clear`, `compact`, `fork`).
    SessionStart {
        /// Why it started.
        source: SessionSource,
    },
    /// The user submitted a prompt.
    UserPromptSubmit {
        /// The prompt text.
        prompt: String,
    },
    /// Compaction is about to run (`manual` / `auto`).
    PreCompact {
        /// What triggered it.
        trigger: String,
        /// The `/compact` argument.
        custom_instructions: Option<String>,
    },
    /// Compaction finished.
    PostCompact {
        /// The summary Claude wrote.
        compact_summary: Option<String>,
    },
    /// A tool ran (`PostToolUse`) or failed (`PostToolUseFailure`).
    PostToolUse {
        /// Tool name.
        tool_name: String,
        /// Tool input as JSON text.
        tool_input: String,
        /// Tool response as JSON text (or the error for failures).
        tool_response: String,
        /// Tool use id.
        tool_use_id: Option<String>,
        /// True for PostToolUseFailure.
        failed: bool,
    },
    /// The session ended.
    SessionEnd {
        /// Why (`other`, `prompt_input_exit`, `clear`, ...).
        reason: String,
    },
    /// Any other event: acknowledged, nothing done.
    Other(String),
}

impl HookEvent {
    /// Which handled event this is; `None` for [`Self::Other`].
    pub fn kind(&self) -> Option<HookEventName> {
        Some(match self {
            Self::SessionStart { .. } => HookEventName::SessionStart,
            Self::UserPromptSubmit { .. } => HookEventName::UserPromptSubmit,
            Self::PreCompact { .. } => HookEventName::PreCompact,
            Self::PostCompact { .. } => HookEventName::PostCompact,
            Self::PostToolUse { failed: false, .. } => HookEventName::PostToolUse,
            Self::PostToolUse { failed: true, .. } => HookEventName::PostToolUseFailure,
            Self::SessionEnd { .. } => HookEventName::SessionEnd,
            Self::Other(_) => return None,
        })
    }

    /// The event name Claude Code uses (for `hookEventName` in outputs).
    pub fn name(&self) -> &str {
        match (self.kind(), self) {
            (Some(k), _) => k.as_str(),
            (None, Self::Other(n)) => n,
            (None, _) => "",
        }
    }
}

/// A parsed hook payload.
#[derive(Debug, Clone)]
pub struct HookPayload {
    /// Common fields.
    pub common: CommonFields,
    /// Event-specific fields.
    pub event: HookEvent,
}

impl HookPayload {
    /// A payload without `cwd` runs for Claude Code's `CLAUDE_PROJECT_DIR`
    /// (`memctl_engine::Settings::project_dir`, passed in by the binary).
    pub fn fill_project_dir(&mut self, project_dir: Option<&str>) {
        if self.common.cwd.is_none() {
            self.common.cwd = project_dir.map(str::to_string);
        }
    }

    /// The engine's event for this payload (its fields moved, not copied: a tool response can
    /// be megabytes). Claude Code's PostToolUse and PostToolUseFailure are both a tool output
    /// (failed or not); events memctl does not handle are [`EventKind::Other`], and what the
    /// engine does not read (PreCompact's trigger, SessionEnd's reason) is left out.
    pub fn into_event(self) -> AgentEvent {
        let kind = match self.event {
            HookEvent::SessionStart { source } => EventKind::SessionStart(source.start_kind()),
            HookEvent::UserPromptSubmit { prompt } => EventKind::Prompt { prompt },
            HookEvent::PreCompact {
                custom_instructions,
                ..
            } => EventKind::BeforeCompact {
                instructions: custom_instructions,
            },
            HookEvent::PostCompact { compact_summary } => EventKind::AfterCompact {
                summary: compact_summary,
            },
            HookEvent::PostToolUse {
                tool_name,
                tool_input,
                tool_response,
                tool_use_id,
                failed,
            } => EventKind::ToolOutput(ToolUse {
                tool_name,
                tool_input,
                tool_response,
                tool_use_id,
                failed,
            }),
            HookEvent::SessionEnd { .. } => EventKind::SessionEnd,
            HookEvent::Other(_) => EventKind::Other,
        };
        AgentEvent {
            session_id: self.common.session_id,
            transcript_path: self.common.transcript_path.map(PathBuf::from),
            cwd: self.common.cwd,
            kind,
        }
    }
}

#[derive(Deserialize)]
struct PreCompactFields {
    #[serde(default)]
    trigger: Option<String>,
    #[serde(default)]
    custom_instructions: Option<String>,
}

#[derive(Deserialize)]
struct PostCompactFields {
    #[serde(default)]
    compact_summary: Option<String>,
}

#[derive(Deserialize)]
struct SessionEndFields {
    #[serde(default)]
    reason: Option<String>,
}

impl HookPayload {
    /// Parse stdin bytes. The event comes from argv when given (what `memctl install` writes),
    /// else from `hook_event_name`.
    pub fn parse(raw: &[u8], event_arg: Option<&str>) -> Result<Self, PayloadError> {
        let common: CommonFields = serde_json::from_slice(raw)?;
        let name = common.event_name(event_arg)?;
        let Some(kind) = HookEventName::from_name(&name) else {
            return Ok(Self {
                common,
                event: HookEvent::Other(name),
            });
        };
        let event = match kind {
            HookEventName::SessionStart => HookEvent::SessionStart {
                source: crate::protocol::session_source(raw)?,
            },
            HookEventName::UserPromptSubmit => HookEvent::UserPromptSubmit {
                prompt: crate::protocol::prompt(raw)?,
            },
            HookEventName::PreCompact => {
                let f: PreCompactFields = serde_json::from_slice(raw)?;
                HookEvent::PreCompact {
                    trigger: f.trigger.unwrap_or_else(|| "manual".into()),
                    custom_instructions: f.custom_instructions,
                }
            }
            HookEventName::PostCompact => {
                let f: PostCompactFields = serde_json::from_slice(raw)?;
                HookEvent::PostCompact {
                    compact_summary: f.compact_summary,
                }
            }
            HookEventName::PostToolUse | HookEventName::PostToolUseFailure => {
                let f: crate::protocol::ToolFields = serde_json::from_slice(raw)?;
                let failed = kind == HookEventName::PostToolUseFailure;
                use crate::protocol::raw_text;
                HookEvent::PostToolUse {
                    tool_name: f.tool_name.unwrap_or_default(),
                    tool_input: raw_text(f.tool_input),
                    tool_response: if failed {
                        raw_text(f.error)
                    } else {
                        raw_text(f.tool_response)
                    },
                    tool_use_id: f.tool_use_id,
                    failed,
                }
            }
            HookEventName::SessionEnd => {
                let f: SessionEndFields = serde_json::from_slice(raw)?;
                HookEvent::SessionEnd {
                    reason: f.reason.unwrap_or_else(|| "other".into()),
                }
            }
        };
        Ok(Self { common, event })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memctl_engine::StartKind;

    #[test]
    fn parses_each_event() {
        let p = HookPayload::parse(
            br#"{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/w","hook_event_name":"SessionStart","source":"compact"}"#,
            None,
        )
        .expect("payload");
        assert_eq!(
            p.event,
            HookEvent::SessionStart {
                source: SessionSource::Compact
            }
        );
        let p = HookPayload::parse(
            br#"{"session_id":"s","hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"false"},"error":"exit 1","tool_use_id":"t1"}"#,
            None,
        )
        .expect("payload");
        match p.event {
            HookEvent::PostToolUse {
                failed,
                tool_input,
                tool_response,
                ..
            } => {
                assert!(failed);
                assert_eq!(tool_input, r#"{"command":"false"}"#);
                assert_eq!(tool_response, r#""exit 1""#);
            }
            e => panic!("{e:?}"),
        }
        let p = HookPayload::parse(
            br#"{"session_id":"s","custom_instructions":null}"#,
            Some("PreCompact"),
        )
        .expect("payload");
        assert_eq!(p.event.name(), "PreCompact");
    }

    #[test]
    fn session_sources_decode_and_unknown_ones_never_fail() {
        let source = |json: &str| match HookPayload::parse(json.as_bytes(), Some("SessionStart"))
            .expect("payload")
            .event
        {
            HookEvent::SessionStart { source } => source,
            e => panic!("{e:?}"),
        };
        for (text, want) in [
            ("startup", SessionSource::Startup),
            ("resume", SessionSource::Resume),
            ("clear", SessionSource::Clear),
            ("compact", SessionSource::Compact),
            ("fork", SessionSource::Fork),
        ] {
            let got = source(&format!(r#"{{"source":"{text}"}}"#));
            assert_eq!(got.as_str(), text);
            assert_eq!(got, want);
        }
        assert_eq!(
            source(r#"{"source":"teleport"}"#),
            SessionSource::Other("teleport".into())
        );
        assert_eq!(source(r#"{"source":null}"#), SessionSource::Startup);
        assert_eq!(source("{}"), SessionSource::Startup);
    }

    #[test]
    fn event_names_come_from_the_policy() {
        for e in HookEventName::ALL {
            let p =
                HookPayload::parse(br#"{"session_id":"s"}"#, Some(e.as_str())).expect("payload");
            assert_eq!(p.event.kind(), Some(e));
            assert_eq!(p.event.name(), e.as_str());
        }
        let p = HookPayload::parse(br#"{"session_id":"s"}"#, Some("Stop")).expect("payload");
        assert_eq!(p.event, HookEvent::Other("Stop".into()));
        assert_eq!((p.event.kind(), p.event.name()), (None, "Stop"));
    }

    #[test]
    fn project_dir_stands_in_for_a_missing_cwd() {
        let mut p =
            HookPayload::parse(br#"{"session_id":"s"}"#, Some("SessionEnd")).expect("payload");
        assert_eq!(p.clone().into_event().project(), "");
        p.fill_project_dir(Some("/proj"));
        assert_eq!(p.clone().into_event().project(), "/proj");
        let mut p = HookPayload::parse(br#"{"cwd":"/w"}"#, Some("SessionEnd")).expect("payload");
        p.fill_project_dir(Some("/proj"));
        assert_eq!(p.clone().into_event().project(), "/w");
    }

    #[test]
    fn payloads_translate_to_the_engines_events() {
        let p = HookPayload::parse(
            br#"{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/w","source":"teleport"}"#,
            Some("SessionStart"),
        )
        .expect("payload");
        assert_eq!(
            p.clone().into_event(),
            AgentEvent {
                session_id: "s".into(),
                transcript_path: Some(PathBuf::from("/t.jsonl")),
                cwd: Some("/w".into()),
                kind: EventKind::SessionStart(StartKind::Other),
            }
        );
        let kind = |raw: &str, event: &str| {
            HookPayload::parse(raw.as_bytes(), Some(event))
                .expect("payload")
                .into_event()
                .kind
        };
        assert_eq!(
            kind(r#"{"source":"compact"}"#, "SessionStart"),
            EventKind::SessionStart(StartKind::Compact)
        );
        assert_eq!(
            kind(r#"{"prompt":"why?"}"#, "UserPromptSubmit"),
            EventKind::Prompt {
                prompt: "why?".into()
            }
        );
        assert_eq!(
            kind(
                r#"{"trigger":"manual","custom_instructions":"keep X"}"#,
                "PreCompact"
            ),
            EventKind::BeforeCompact {
                instructions: Some("keep X".into())
            }
        );
        assert_eq!(
            kind(r#"{"compact_summary":"S"}"#, "PostCompact"),
            EventKind::AfterCompact {
                summary: Some("S".into())
            }
        );
        assert_eq!(
            kind(
                r#"{"tool_name":"Bash","tool_input":{"command":"false"},"error":"exit 1","tool_use_id":"t1"}"#,
                "PostToolUseFailure"
            ),
            EventKind::ToolOutput(ToolUse {
                tool_name: "Bash".into(),
                tool_input: r#"{"command":"false"}"#.into(),
                tool_response: r#""exit 1""#.into(),
                tool_use_id: Some("t1".into()),
                failed: true,
            })
        );
        assert_eq!(kind("{}", "SessionEnd"), EventKind::SessionEnd);
        assert_eq!(kind("{}", "Stop"), EventKind::Other);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(HookPayload::parse(b"not json", Some("SessionStart")).is_err());
        assert!(HookPayload::parse(b"[1,2]", Some("SessionStart")).is_err());
        assert!(HookPayload::parse(b"{}", None).is_err());
        assert!(HookPayload::parse(br#"{"prompt": 5}"#, Some("UserPromptSubmit")).is_err());
    }
}
