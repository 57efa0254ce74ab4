//! Gemini CLI's hook output: a [`Reply`] in the JSON Gemini CLI reads. Only what was verified
//! with the real binary is printed: `hookSpecificOutput.additionalContext` at SessionStart and
//! BeforeAgent, which reaches the model as a `<hook_context>` part of the user's message.
//!
//! Nothing else was verified, so any other reply prints nothing (and says so in the debug
//! log); Gemini CLI parses stdout as JSON, and an unexpected shape could fail the hook there.

use super::policy::GeminiEventName;
use memctl_engine::{Injection, Reply};

/// The exact stdout bytes answering `event` (Gemini CLI's name of the calling event) with
/// `reply`, and what they put into the model's context (measured on the printed text).
pub fn render(event: &str, reply: Reply) -> (String, Injection) {
    let verified = GeminiEventName::from_name(event).is_some_and(GeminiEventName::context_verified);
    crate::protocol::render_verified_context("gemini", event, reply, verified)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_is_printed_in_the_verified_shape_and_nothing_else() {
        for event in ["SessionStart", "BeforeAgent"] {
            let (json, inj) = render(event, Reply::Context("é".into()));
            assert_eq!(
                json,
                format!(
                    r#"{{"hookSpecificOutput":{{"hookEventName":"{event}","additionalContext":"é"}}}}"#
                )
            );
            assert_eq!(inj.injected_chars, 1);
        }
        for event in [
            "AfterTool",
            "PreCompress",
            "AfterAgent",
            "SessionEnd",
            "BeforeModel",
        ] {
            assert_eq!(render(event, Reply::Context("x".into())).0, "", "{event}");
        }
        assert_eq!(
            render("PreCompress", Reply::CompactInstructions("keep".into())).0,
            ""
        );
    }
}
