//! Codex's hook output: a [`Reply`] in the JSON Codex reads. Only what was verified with the
//! real binary is printed:
//! - `hookSpecificOutput.additionalContext` at SessionStart and UserPromptSubmit, which
//!   reaches the model as a developer message;
//! - a tool output replaced at PostToolUse: `{"decision":"block","reason":R}` makes R the
//!   whole `function_call_output` the model gets, and the turn goes on (0.171.0 has no
//!   `updatedToolOutput`; it refuses `updatedMCPToolOutput` for every tool). Codex logs it
//!   as a blocked result, which is what the user sees of it.
//!
//! Not verified, so printed as nothing (and said so in the debug log): compaction
//! instructions at PreCompact.

use super::policy::CodexEventName;
use memctl_engine::{Injection, Reply};
use serde::Serialize;

/// PostToolUse's answer that replaces the tool's output with `reason`.
#[derive(Serialize)]
struct Replace<'a> {
    decision: &'static str,
    reason: &'a str,
}

/// The exact stdout bytes answering `event` (Codex's name of the calling event) with `reply`,
/// and what they put into the model's context (measured on the printed, redacted text).
pub fn render(event: &str, reply: Reply) -> (String, Injection) {
    if let Reply::ReplaceToolOutput {
        response,
        removed_chars,
    } = &reply
        && event == CodexEventName::PostToolUse.as_str()
        && let Some(text) = replacement_text(response)
    {
        let json = serde_json::to_string(&Replace {
            decision: "block",
            reason: &text,
        })
        .unwrap_or_default();
        let inj = Injection {
            removed_chars: *removed_chars,
            ..Injection::default()
        };
        return (json, inj);
    }
    let verified = CodexEventName::from_name(event).is_some_and(CodexEventName::context_verified);
    crate::protocol::render_verified_context("codex", event, reply, verified)
}

/// The text of a replacement response: Codex's shell response is one JSON string (the
/// engine keeps the shape a response came in); anything else is not Codex's and prints
/// nothing.
fn replacement_text(response: &str) -> Option<String> {
    match serde_json::from_str::<serde_json::Value>(response) {
        Ok(serde_json::Value::String(s)) if !s.is_empty() => Some(s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_is_printed_in_the_verified_shape_and_nothing_else() {
        for event in ["SessionStart", "UserPromptSubmit"] {
            let (json, inj) = render(event, Reply::Context("hi \"x\"".into()));
            assert_eq!(
                json,
                format!(
                    r#"{{"hookSpecificOutput":{{"hookEventName":"{event}","additionalContext":"hi \"x\""}}}}"#
                )
            );
            assert_eq!(inj.injected_chars, 6);
        }
        let (json, _) = render("PreCompact", Reply::CompactInstructions("keep X".into()));
        assert_eq!(json, "");
        let (json, inj) = render(
            "PostToolUse",
            Reply::ReplaceToolOutput {
                response: r#"{"stdout":"digest"}"#.into(),
                removed_chars: 9,
            },
        );
        assert!(
            json.is_empty() && inj.is_empty(),
            "not Codex's shape, nothing removed: {inj:?}"
        );
        let (json, inj) = render(
            "PostToolUse",
            Reply::ReplaceToolOutput {
                response: serde_json::to_string("digest \"x\"\nline 2").expect("json"),
                removed_chars: 9,
            },
        );
        let v: serde_json::Value = serde_json::from_str(&json).expect("json");
        assert_eq!(v["decision"], "block");
        assert_eq!(v["reason"], "digest \"x\"\nline 2");
        assert_eq!(inj.removed_chars, 9);
        assert_eq!(render("Stop", Reply::None).0, "");
        assert_eq!(render("Stop", Reply::Context("x".into())).0, "");
    }
}
