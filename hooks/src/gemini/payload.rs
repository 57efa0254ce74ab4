//! Typed Gemini CLI hook payloads (as recorded with 0.61.0) and their translation into the
//! engine's agent-neutral [`AgentEvent`]. Fields memctl does not read (`timestamp`,
//! `prompt_response`, `reason`, `trigger`, `returnDisplay`, ...) are ignored.

use super::policy::GeminiEventName;
use crate::protocol::{CommonFields, PayloadError, RawJson, SessionSource, raw_text};
use memctl_engine::{AgentEvent, EventKind, ToolUse};
use serde::Deserialize;

/// The event-specific part of a Gemini CLI payload.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum GeminiEvent {
    /// A session started (`startup`, `resume`, `clear`).
    SessionStart {
        /// Why it started.
        source: SessionSource,
    },
    /// The user submitted a prompt.
    BeforeAgent {
        /// The prompt text.
        prompt: String,
    },
    /// A tool ran.
    AfterTool {
        /// Tool name (`run_shell_command`, `read_file`, ...).
        tool_name: String,
        /// Tool input as JSON text.
        tool_input: String,
        /// What the model gets of the tool's response (`tool_response.llmContent`, JSON text;
        /// the whole response when it has no `llmContent`).
        tool_response: String,
        /// The response carried an `error`.
        failed: bool,
    },
    /// Before a model call (compressing or not).
    PreCompress,
    /// The agent finished its turn.
    AfterAgent,
    /// The session ended.
    SessionEnd,
    /// Any other event: acknowledged, nothing done.
    Other(String),
}

impl GeminiEvent {
    /// Which handled event this is; `None` for [`Self::Other`].
    pub fn kind(&self) -> Option<GeminiEventName> {
        Some(match self {
            Self::SessionStart { .. } => GeminiEventName::SessionStart,
            Self::BeforeAgent { .. } => GeminiEventName::BeforeAgent,
            Self::AfterTool { .. } => GeminiEventName::AfterTool,
            Self::PreCompress => GeminiEventName::PreCompress,
            Self::AfterAgent => GeminiEventName::AfterAgent,
            Self::SessionEnd => GeminiEventName::SessionEnd,
            Self::Other(_) => return None,
        })
    }

    /// The event name as Gemini CLI spells it.
    pub fn name(&self) -> &str {
        match (self.kind(), self) {
            (Some(k), _) => k.as_str(),
            (None, Self::Other(n)) => n,
            (None, _) => "",
        }
    }
}

/// A parsed Gemini CLI hook payload.
#[derive(Debug, Clone)]
pub struct GeminiPayload {
    /// Common fields.
    pub common: CommonFields,
    /// Event-specific fields.
    pub event: GeminiEvent,
}

/// AfterTool's `tool_response` as far as memctl reads it.
#[derive(Deserialize)]
struct ToolResponse {
    #[serde(rename = "llmContent", default)]
    llm_content: Option<RawJson>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

/// `tool_response.llmContent` and whether the response holds an error; a response of another
/// shape is handed on whole (a new Gemini CLI never fails the hook here).
fn tool_response(raw: Option<RawJson>) -> (String, bool) {
    let Some(raw) = raw else {
        return (String::new(), false);
    };
    match serde_json::from_str::<ToolResponse>(raw.get()) {
        Ok(ToolResponse {
            llm_content: Some(content),
            error,
        }) => (
            content.get().to_string(),
            error.is_some_and(|e| !e.is_null()),
        ),
        _ => (raw.get().to_string(), false),
    }
}

impl GeminiPayload {
    /// Parse stdin bytes. The event comes from argv when given (what `memctl install` writes),
    /// else from `hook_event_name`.
    pub fn parse(raw: &[u8], event_arg: Option<&str>) -> Result<Self, PayloadError> {
        let common: CommonFields = serde_json::from_slice(raw)?;
        let name = common.event_name(event_arg)?;
        let Some(kind) = GeminiEventName::from_name(&name) else {
            return Ok(Self {
                common,
                event: GeminiEvent::Other(name),
            });
        };
        let event = match kind {
            GeminiEventName::SessionStart => GeminiEvent::SessionStart {
                source: crate::protocol::session_source(raw)?,
            },
            GeminiEventName::BeforeAgent => GeminiEvent::BeforeAgent {
                prompt: crate::protocol::prompt(raw)?,
            },
            GeminiEventName::AfterTool => {
                let f: crate::protocol::ToolFields = serde_json::from_slice(raw)?;
                let (tool_response, failed) = tool_response(f.tool_response);
                GeminiEvent::AfterTool {
                    tool_name: f.tool_name.unwrap_or_default(),
                    tool_input: raw_text(f.tool_input),
                    tool_response,
                    failed,
                }
            }
            GeminiEventName::PreCompress => GeminiEvent::PreCompress,
            GeminiEventName::AfterAgent => GeminiEvent::AfterAgent,
            GeminiEventName::SessionEnd => GeminiEvent::SessionEnd,
        };
        Ok(Self { common, event })
    }

    /// The engine's event for this payload (fields moved, not copied). PreCompress is a turn
    /// end, not a compaction: it fires before every model call, and a restore prepared for a
    /// compaction that does not come would be wrong. A payload without `cwd` runs for
    /// `project_dir`.
    pub fn into_event(self, project_dir: Option<&str>) -> AgentEvent {
        let kind = match self.event {
            GeminiEvent::SessionStart { source } => EventKind::SessionStart(source.start_kind()),
            GeminiEvent::BeforeAgent { prompt } => EventKind::Prompt { prompt },
            GeminiEvent::AfterTool {
                tool_name,
                tool_input,
                tool_response,
                failed,
            } => EventKind::ToolOutput(ToolUse {
                tool_name,
                tool_input,
                tool_response,
                tool_use_id: None,
                failed,
            }),
            GeminiEvent::PreCompress | GeminiEvent::AfterAgent => EventKind::TurnEnd,
            GeminiEvent::SessionEnd => EventKind::SessionEnd,
            GeminiEvent::Other(_) => EventKind::Other,
        };
        self.common.into_event(kind, project_dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memctl_engine::StartKind;
    use std::path::PathBuf;

    const FIXTURE: &str = include_str!("../../../tests/fixtures/payloads/gemini-0.61.0.jsonl");

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
            let by_arg = GeminiPayload::parse(line.as_bytes(), Some(&name)).expect("payload");
            assert_eq!(by_arg.event.name(), name);
            let e = GeminiPayload::parse(line.as_bytes(), None)
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
                "SessionStart" => {
                    assert_eq!(v["source"], "startup");
                    EventKind::SessionStart(StartKind::Startup)
                }
                "BeforeAgent" => EventKind::Prompt {
                    prompt: v["prompt"].as_str().expect("prompt").into(),
                },
                "AfterTool" => {
                    let content = v["tool_response"]["llmContent"].as_str().expect("content");
                    EventKind::ToolOutput(ToolUse {
                        tool_name: "run_shell_command".into(),
                        tool_input: r#"{"command":"echo tool-output"}"#.into(),
                        tool_response: serde_json::to_string(content).expect("json"),
                        tool_use_id: None,
                        failed: false,
                    })
                }
                "PreCompress" | "AfterAgent" => EventKind::TurnEnd,
                "SessionEnd" => EventKind::SessionEnd,
                "BeforeModel" | "AfterModel" | "BeforeToolSelection" | "BeforeTool" => {
                    EventKind::Other
                }
                other => panic!("unexpected event {other}"),
            };
            assert_eq!(e.kind, want, "{line}");
            *seen.entry(name).or_default() += 1;
        }
        // The recording covers every event memctl installs for Gemini CLI.
        for ev in GeminiEventName::ALL {
            assert!(
                seen.contains_key(ev.as_str()),
                "{ev} not recorded: {seen:?}"
            );
        }
    }

    #[test]
    fn tool_responses_of_other_shapes_are_handed_on_whole() {
        let tool = |raw: &str| match GeminiPayload::parse(raw.as_bytes(), Some("AfterTool"))
            .expect("payload")
            .event
        {
            GeminiEvent::AfterTool {
                tool_response,
                failed,
                ..
            } => (tool_response, failed),
            e => panic!("{e:?}"),
        };
        assert_eq!(
            tool(r#"{"tool_response":"plain"}"#),
            (r#""plain""#.into(), false)
        );
        assert_eq!(
            tool(r#"{"tool_response":{"llmContent":"x","error":{"message":"boom"}}}"#),
            (r#""x""#.into(), true)
        );
        assert_eq!(
            tool(r#"{"tool_response":{"llmContent":[{"text":"a"}],"error":null}}"#),
            (r#"[{"text":"a"}]"#.into(), false)
        );
        assert_eq!(tool("{}"), (String::new(), false));
        assert!(GeminiPayload::parse(b"[1]", Some("AfterTool")).is_err());
        assert!(GeminiPayload::parse(br#"{"prompt": 5}"#, Some("BeforeAgent")).is_err());
    }
}
