//! Typed Claude Code hook payloads and outputs (as observed with CLI 2.1.197/2.1.330).

use super::policy::HookEventName;
use serde::{Deserialize, Serialize};

/// Why a session started (SessionStart `source`). Unknown sources decode as [`Self::Other`]:
/// a new Claude Code value never fails the hook.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(from = "String")]
pub enum SessionSource {
    /// A new session (also when the payload has no `source`).
    #[default]
    Startup,
    /// `--resume` / `--continue`.
    Resume,
    /// `/clear`.
    Clear,
    /// After compaction.
    Compact,
    /// A forked session.
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
    /// The value as Claude Code spells it.
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

/// Fields every hook payload carries.
#[derive(Debug, Clone, Deserialize)]
pub struct CommonFields {
    /// Session id (also the transcript file stem).
    #[serde(default)]
    pub session_id: String,
    /// Path of the session transcript (may not exist yet at SessionStart(startup)).
    #[serde(default)]
    pub transcript_path: Option<String>,
    /// Working directory of the session: our project namespace.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Event name as Claude Code spells it.
    #[serde(default)]
    pub hook_event_name: Option<String>,
}

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
    /// The project a hook runs for: the payload's `cwd` (see [`Self::fill_project_dir`]).
    pub fn project(&self) -> String {
        self.common.cwd.clone().unwrap_or_default()
    }

    /// A payload without `cwd` runs for Claude Code's `CLAUDE_PROJECT_DIR`
    /// ([`crate::Settings::project_dir`], passed in by the binary).
    pub fn fill_project_dir(&mut self, project_dir: Option<&str>) {
        if self.common.cwd.is_none() {
            self.common.cwd = project_dir.map(str::to_string);
        }
    }

    /// The tool call of a PostToolUse(Failure) payload, for the swap (stored now or spooled).
    pub fn tool_call<'a>(&'a self, project: &'a str) -> Option<crate::swap::ToolCall<'a>> {
        match &self.event {
            HookEvent::PostToolUse {
                tool_name,
                tool_input,
                tool_response,
                tool_use_id,
                failed,
            } => Some(crate::swap::ToolCall {
                session_id: &self.common.session_id,
                project,
                tool_name,
                tool_input,
                tool_response,
                tool_use_id: tool_use_id.as_deref(),
                failed: *failed,
            }),
            _ => None,
        }
    }
}

#[derive(Deserialize)]
struct SessionStartFields {
    #[serde(default)]
    source: Option<SessionSource>,
}

#[derive(Deserialize)]
struct PromptFields {
    #[serde(default)]
    prompt: Option<String>,
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
struct ToolFields {
    #[serde(default)]
    tool_name: Option<String>,
    #[serde(default)]
    tool_input: Option<Box<serde_json::value::RawValue>>,
    #[serde(default)]
    tool_response: Option<Box<serde_json::value::RawValue>>,
    #[serde(default)]
    error: Option<Box<serde_json::value::RawValue>>,
    #[serde(default)]
    tool_use_id: Option<String>,
}

#[derive(Deserialize)]
struct SessionEndFields {
    #[serde(default)]
    reason: Option<String>,
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

impl HookPayload {
    /// Parse stdin bytes. The event comes from argv when given (what `memctl install` writes),
    /// else from `hook_event_name`.
    pub fn parse(raw: &[u8], event_arg: Option<&str>) -> Result<Self, PayloadError> {
        let common: CommonFields = serde_json::from_slice(raw)?;
        let name = event_arg
            .map(str::to_string)
            .or_else(|| common.hook_event_name.clone())
            .ok_or(PayloadError::NoEvent)?;
        let Some(kind) = HookEventName::from_name(&name) else {
            return Ok(Self {
                common,
                event: HookEvent::Other(name),
            });
        };
        let event = match kind {
            HookEventName::SessionStart => {
                let f: SessionStartFields = serde_json::from_slice(raw)?;
                HookEvent::SessionStart {
                    source: f.source.unwrap_or_default(),
                }
            }
            HookEventName::UserPromptSubmit => {
                let f: PromptFields = serde_json::from_slice(raw)?;
                HookEvent::UserPromptSubmit {
                    prompt: f.prompt.unwrap_or_default(),
                }
            }
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
                let f: ToolFields = serde_json::from_slice(raw)?;
                let failed = kind == HookEventName::PostToolUseFailure;
                let raw_text = |v: Option<Box<serde_json::value::RawValue>>| {
                    v.map(|r| r.get().to_string()).unwrap_or_default()
                };
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

/// What a hook prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookOutput {
    /// Nothing (exit 0, empty stdout).
    None,
    /// `hookSpecificOutput.additionalContext` JSON for the given event.
    Context {
        /// The event that called us.
        event: String,
        /// Text for the model.
        text: String,
    },
    /// [`Self::Context`] whose text is redacted already (a block PreCompact prepared): printed
    /// without a second pass.
    RedactedContext {
        /// The event that called us.
        event: String,
        /// Text for the model.
        text: crate::redact::Redacted,
    },
    /// Plain text (PreCompact instructions).
    Plain(String),
    /// PostToolUse `hookSpecificOutput.updatedToolOutput`: the tool's response (JSON object
    /// text, in the tool's own shape) the model gets instead of the original
    /// ([`crate::swap::inplace`]).
    ToolOutput {
        /// The event that called us (PostToolUse).
        event: String,
        /// The replacement response (a JSON object, as text).
        response: String,
        /// Characters taken out of the live context (telemetry).
        removed_chars: u64,
    },
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

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolOutputSpecific<'a> {
    hook_event_name: &'a str,
    updated_tool_output: &'a serde_json::value::RawValue,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolOutputDoc<'a> {
    hook_specific_output: ToolOutputSpecific<'a>,
}

/// `hookSpecificOutput.additionalContext` of `event` holding `text` (redacted by the caller),
/// and its size as injected context.
fn context_json(event: &str, text: &str) -> (String, crate::telemetry::Injection) {
    use crate::telemetry::Injection;
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

impl HookOutput {
    /// The exact stdout bytes.
    pub fn render(&self) -> String {
        self.render_measured().0
    }

    /// What this output puts where, measured on the text as printed (for injection
    /// telemetry, [`crate::telemetry`]). Same as [`Self::render_measured`]`().1`.
    pub fn telemetry(&self) -> crate::telemetry::Injection {
        self.render_measured().1
    }

    /// The exact stdout bytes and what they put where, from one redaction.
    ///
    /// The one place each variant says both how it is printed and what it costs, so the two
    /// cannot drift apart. Counts are Unicode scalar values of the printed text:
    /// - `Context`: the `additionalContext` string (after redaction, before JSON escaping)
    ///   is `injected_chars`: it enters the model's context as is.
    /// - `Plain` (PreCompact): `summarizer_chars`. It is instructions for the compaction
    ///   summariser, not context the session carries on, so it is kept apart from what we
    ///   inject (counting it as injected would overstate our cost on the window).
    /// - A variant that replaces a tool output by a digest (PostToolUse
    ///   `updatedToolOutput`) reports `removed_chars` = original output chars − digest chars
    ///   (saturating), and nothing injected: the digest stands in for text that was there.
    pub fn render_measured(&self) -> (String, crate::telemetry::Injection) {
        use crate::telemetry::Injection;
        let chars = |s: &str| s.chars().count() as u64;
        match self {
            Self::None => (String::new(), Injection::default()),
            // Everything we print is redacted once more: PreCompact echoed the user's
            // `custom_instructions` unredacted once, and printed text must never be the
            // one place a secret slips through.
            Self::Plain(t) => {
                let text = crate::redact::redact(t).into_owned();
                let n = chars(&text);
                (
                    text,
                    Injection {
                        summarizer_chars: n,
                        ..Injection::default()
                    },
                )
            }
            Self::Context { event, text } => {
                if text.is_empty() {
                    return (String::new(), Injection::default());
                }
                context_json(event, &crate::redact::redact(text))
            }
            Self::RedactedContext { event, text } => {
                if text.as_str().is_empty() {
                    return (String::new(), Injection::default());
                }
                context_json(event, text.as_str())
            }
            Self::ToolOutput {
                event,
                response,
                removed_chars,
            } => {
                // Every string of the response redacted as its unescaped text (the digest is
                // made of stored, redacted text already: this is the last line of defence).
                let Some(redacted) = crate::redact::redact_json(response) else {
                    return (String::new(), Injection::default());
                };
                let Ok(raw) = serde_json::value::RawValue::from_string(redacted) else {
                    return (String::new(), Injection::default());
                };
                let doc = ToolOutputDoc {
                    hook_specific_output: ToolOutputSpecific {
                        hook_event_name: event,
                        updated_tool_output: &raw,
                    },
                };
                match serde_json::to_string(&doc) {
                    // The digest replaces the output: what it saves is net of its own size.
                    Ok(json) => (
                        json,
                        Injection {
                            removed_chars: *removed_chars,
                            ..Injection::default()
                        },
                    ),
                    Err(_) => (String::new(), Injection::default()),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_event() {
        let p = HookPayload::parse(
            br#"{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/w","hook_event_name":"SessionStart","source":"compact"}"#,
            None,
        )
        .unwrap();
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
        .unwrap();
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
        .unwrap();
        assert_eq!(p.event.name(), "PreCompact");
    }

    #[test]
    fn session_sources_decode_and_unknown_ones_never_fail() {
        let source = |json: &str| match HookPayload::parse(json.as_bytes(), Some("SessionStart"))
            .unwrap()
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
            let p = HookPayload::parse(br#"{"session_id":"s"}"#, Some(e.as_str())).unwrap();
            assert_eq!(p.event.kind(), Some(e));
            assert_eq!(p.event.name(), e.as_str());
        }
        let p = HookPayload::parse(br#"{"session_id":"s"}"#, Some("Stop")).unwrap();
        assert_eq!(p.event, HookEvent::Other("Stop".into()));
        assert_eq!((p.event.kind(), p.event.name()), (None, "Stop"));
    }

    #[test]
    fn project_dir_stands_in_for_a_missing_cwd() {
        let mut p = HookPayload::parse(br#"{"session_id":"s"}"#, Some("SessionEnd")).unwrap();
        assert_eq!(p.project(), "");
        p.fill_project_dir(Some("/proj"));
        assert_eq!(p.project(), "/proj");
        let mut p = HookPayload::parse(br#"{"cwd":"/w"}"#, Some("SessionEnd")).unwrap();
        p.fill_project_dir(Some("/proj"));
        assert_eq!(p.project(), "/w");
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(HookPayload::parse(b"not json", Some("SessionStart")).is_err());
        assert!(HookPayload::parse(b"[1,2]", Some("SessionStart")).is_err());
        assert!(HookPayload::parse(b"{}", None).is_err());
        assert!(HookPayload::parse(br#"{"prompt": 5}"#, Some("UserPromptSubmit")).is_err());
    }

    #[test]
    fn output_shapes() {
        let o = HookOutput::Context {
            event: "SessionStart".into(),
            text: "hi \"x\"".into(),
        };
        assert_eq!(
            o.render(),
            r#"{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"hi \"x\""}}"#
        );
        assert_eq!(HookOutput::Plain("keep X".into()).render(), "keep X");
        assert_eq!(HookOutput::None.render(), "");
    }

    #[test]
    fn telemetry_counts_the_printed_text() {
        use crate::telemetry::Injection;
        // Characters, not bytes, and before JSON escaping: `"` and `é` count one each.
        let o = HookOutput::Context {
            event: "SessionStart".into(),
            text: "hé \"x\"".into(),
        };
        let (json, inj) = o.render_measured();
        assert_eq!(json, o.render());
        assert_eq!(
            inj,
            Injection {
                injected_chars: 6,
                ..Injection::default()
            }
        );
        assert_eq!(o.telemetry(), inj);
        // After redaction: the count is what reached the model.
        let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
        let o = HookOutput::Context {
            event: "UserPromptSubmit".into(),
            text: format!("token {secret}"),
        };
        let printed: serde_json::Value = serde_json::from_str(&o.render()).unwrap();
        let ctx = printed["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap();
        assert_ne!(ctx.chars().count(), 6 + secret.len());
        assert_eq!(o.telemetry().injected_chars, ctx.chars().count() as u64);
        // PreCompact's instructions go to the summariser, counted apart.
        let p = HookOutput::Plain("keep X".into()).telemetry();
        assert_eq!((p.injected_chars, p.summarizer_chars), (0, 6));
        assert!(HookOutput::None.telemetry().is_empty());
        let empty = HookOutput::Context {
            event: "SessionStart".into(),
            text: String::new(),
        };
        assert!(empty.telemetry().is_empty());
    }
}

#[cfg(test)]
mod output_redaction_tests {
    use super::*;

    /// Regression: PreCompact stdout echoed `custom_instructions` unredacted.
    #[test]
    fn printed_output_is_redacted() {
        let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
        let plain = HookOutput::Plain(format!("Keep the token {secret} in mind")).render();
        assert!(!plain.contains(secret), "{plain}");
        let ctx = HookOutput::Context {
            event: "SessionStart".into(),
            text: format!("DB_PASSWORD=\"pw-{secret}\""),
        }
        .render();
        assert!(!ctx.contains(secret), "{ctx}");
    }
}
