//! Claude Code's hook output: the engine's neutral [`Reply`] in the exact JSON (or plain text)
//! Claude Code reads for the event that called us, and what it puts where (injection
//! telemetry, measured on the printed text).

use memctl_engine::{Injection, Redacted, Reply};
use serde::Serialize;

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
    /// [`Self::Context`] whose text was redacted already ([`Reply::RedactedContext`]):
    /// printed without a second pass.
    RedactedContext {
        /// The event that called us.
        event: String,
        /// Text for the model.
        text: Redacted,
    },
    /// Plain text (PreCompact instructions).
    Plain(String),
    /// PostToolUse `hookSpecificOutput.updatedToolOutput`: the tool's response (JSON object
    /// text, in the tool's own shape) the model gets instead of the original
    /// ([`Reply::ReplaceToolOutput`]).
    ToolOutput {
        /// The event that called us (PostToolUse).
        event: String,
        /// The replacement response (a JSON object, as text).
        response: String,
        /// Characters taken out of the live context (telemetry).
        removed_chars: u64,
    },
}

impl HookOutput {
    /// The output answering `event` (Claude Code's name of the event that called us) with
    /// `reply`. Only SessionStart and UserPromptSubmit reply with context and only PostToolUse
    /// replaces a tool output, so `hookEventName` is always the calling event's own.
    pub fn answer(event: &str, reply: Reply) -> Self {
        match reply {
            Reply::None => Self::None,
            Reply::Context(text) => Self::Context {
                event: event.to_string(),
                text,
            },
            Reply::RedactedContext(text) => Self::RedactedContext {
                event: event.to_string(),
                text,
            },
            Reply::CompactInstructions(text) => Self::Plain(text),
            Reply::ReplaceToolOutput {
                response,
                removed_chars,
            } => Self::ToolOutput {
                event: event.to_string(),
                response,
                removed_chars,
            },
        }
    }
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

impl HookOutput {
    /// The exact stdout bytes.
    pub fn render(&self) -> String {
        self.render_measured().0
    }

    /// What this output puts where, measured on the text as printed (for injection
    /// telemetry, [`memctl_engine::record_hook`]). Same as [`Self::render_measured`]`().1`.
    pub fn telemetry(&self) -> Injection {
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
    pub fn render_measured(&self) -> (String, Injection) {
        let chars = |s: &str| s.chars().count() as u64;
        match self {
            Self::None => (String::new(), Injection::default()),
            // Everything we print is redacted once more: PreCompact echoed the user's
            // `custom_instructions` unredacted once, and printed text must never be the
            // one place a secret slips through.
            Self::Plain(t) => {
                let text = memctl_engine::redact(t).into_owned();
                let n = chars(&text);
                (
                    text,
                    Injection {
                        summarizer_chars: n,
                        ..Injection::default()
                    },
                )
            }
            Self::Context { event, text } => crate::protocol::render_context(event, text),
            Self::RedactedContext { event, text } => {
                crate::protocol::render_redacted_context(event, text)
            }
            Self::ToolOutput {
                event,
                response,
                removed_chars,
            } => {
                // Every string of the response redacted as its unescaped text (the digest is
                // made of stored, redacted text already: this is the last line of defence).
                let Some(redacted) = memctl_engine::redact_json(response) else {
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
    fn replies_become_the_outputs_of_the_calling_event() {
        assert_eq!(
            HookOutput::answer("SessionStart", Reply::Context("ctx".into())),
            HookOutput::Context {
                event: "SessionStart".into(),
                text: "ctx".into()
            }
        );
        assert_eq!(
            HookOutput::answer("PreCompact", Reply::CompactInstructions("keep X".into())),
            HookOutput::Plain("keep X".into())
        );
        let swapped = HookOutput::answer(
            "PostToolUse",
            Reply::ReplaceToolOutput {
                response: r#"{"stdout":"digest"}"#.into(),
                removed_chars: 7,
            },
        );
        assert_eq!(
            swapped.render_measured(),
            (
                r#"{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":{"stdout":"digest"}}}"#
                    .to_string(),
                Injection {
                    removed_chars: 7,
                    ..Injection::default()
                }
            )
        );
        assert_eq!(HookOutput::answer("Stop", Reply::None), HookOutput::None);
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
