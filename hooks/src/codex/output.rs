//! Codex's hook output: a [`Reply`] in the JSON Codex reads. Only what was verified with the
//! real binary is printed: `hookSpecificOutput.additionalContext` at SessionStart and
//! UserPromptSubmit, which reaches the model as a developer message.
//!
//! Not verified, so printed as nothing (and said so in the debug log): compaction
//! instructions at PreCompact and a replacement tool output at PostToolUse. The engine still
//! archives and swaps as for any agent; only the output is left out.

use super::policy::CodexEventName;
use memctl_engine::{Injection, Reply};

/// The exact stdout bytes answering `event` (Codex's name of the calling event) with `reply`,
/// and what they put into the model's context (measured on the printed, redacted text).
pub fn render(event: &str, reply: Reply) -> (String, Injection) {
    let verified = CodexEventName::from_name(event).is_some_and(CodexEventName::context_verified);
    crate::protocol::render_verified_context("codex", event, reply, verified)
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
            "nothing removed: {inj:?}"
        );
        assert_eq!(render("Stop", Reply::None).0, "");
        assert_eq!(render("Stop", Reply::Context("x".into())).0, "");
    }
}
