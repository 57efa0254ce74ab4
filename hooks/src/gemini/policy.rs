//! The Gemini CLI adapter's policy: which Gemini events memctl handles, the timeout `memctl
//! install` writes (milliseconds: Gemini CLI's unit) and the shorter deadline the hook keeps
//! for each, and the tool matcher of the tool event.

use std::time::Duration;

/// A Gemini CLI hook event memctl handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GeminiEventName {
    /// A session started (`startup`, `resume`, `clear`): restore after a loss.
    SessionStart,
    /// The user submitted a prompt: incremental archive, recall.
    BeforeAgent,
    /// A tool ran.
    AfterTool,
    /// Before every model call (compressing or not): archive what is new.
    PreCompress,
    /// The agent finished its turn: archive what is new.
    AfterAgent,
    /// The session ended: flush, summary.
    SessionEnd,
}

impl GeminiEventName {
    /// Every event, in the order `memctl install` writes them.
    pub const ALL: [Self; 6] = [
        Self::SessionStart,
        Self::BeforeAgent,
        Self::AfterTool,
        Self::PreCompress,
        Self::AfterAgent,
        Self::SessionEnd,
    ];

    /// The name as Gemini CLI spells it (argv, `hook_event_name`, `hookEventName`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::SessionStart => "SessionStart",
            Self::BeforeAgent => "BeforeAgent",
            Self::AfterTool => "AfterTool",
            Self::PreCompress => "PreCompress",
            Self::AfterAgent => "AfterAgent",
            Self::SessionEnd => "SessionEnd",
        }
    }

    /// The event of a name; `None` for events memctl does not handle.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == name)
    }

    /// The timeout `memctl install` writes, in milliseconds (Gemini CLI's unit for hook
    /// timeouts, unlike Claude Code's and Codex's seconds).
    pub const fn install_timeout_ms(self) -> u32 {
        match self {
            Self::SessionStart => 15_000,
            Self::SessionEnd => 5_000,
            _ => 10_000,
        }
    }

    /// The hook's own deadline, well below the install timeout. SessionEnd keeps Claude
    /// Code's short one: whether Gemini CLI waits for it at exit was not measured.
    pub const fn deadline(self) -> Duration {
        Duration::from_millis(match self {
            Self::SessionEnd => 900,
            Self::SessionStart => 3_000,
            _ => 2_000,
        })
    }

    /// The `matcher` `memctl install` writes (a regex over tool names): the shell tool for
    /// AfterTool, else none.
    pub fn tool_matcher(self) -> Option<String> {
        matches!(self, Self::AfterTool).then(|| "run_shell_command".to_string())
    }

    /// Whether `additionalContext` at this event was seen to reach the model (SessionStart and
    /// BeforeAgent, as `<hook_context>` parts of the user's message).
    pub const fn context_verified(self) -> bool {
        matches!(self, Self::SessionStart | Self::BeforeAgent)
    }
}

impl std::fmt::Display for GeminiEventName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Deadline of an event (`None`: one memctl does not handle), unless `override_ms`
/// (`MEMCTL_HOOK_DEADLINE_MS`) sets one for all.
pub fn deadline(event: Option<GeminiEventName>, override_ms: Option<u64>) -> Duration {
    crate::protocol::deadline(event.map(GeminiEventName::deadline), override_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_deadlines_stay_below_timeouts() {
        for e in GeminiEventName::ALL {
            assert_eq!(GeminiEventName::from_name(e.as_str()), Some(e));
            assert!(
                e.deadline() < Duration::from_millis(u64::from(e.install_timeout_ms())),
                "{e}"
            );
        }
        assert_eq!(GeminiEventName::from_name("BeforeModel"), None);
        assert_eq!(
            deadline(Some(GeminiEventName::SessionEnd), None),
            Duration::from_millis(900)
        );
        assert_eq!(
            GeminiEventName::AfterTool.tool_matcher().as_deref(),
            Some("run_shell_command")
        );
        assert_eq!(GeminiEventName::PreCompress.tool_matcher(), None);
    }
}
