//! The Codex adapter's policy: which Codex events memctl handles, the timeout `memctl install`
//! writes (seconds, Codex's unit) and the shorter deadline the hook keeps for each, and the
//! tool matcher of the tool event.

use std::time::Duration;

/// A Codex hook event memctl handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CodexEventName {
    /// A session started (`startup`, `resume`, `clear`, `compact`): restore after a loss.
    SessionStart,
    /// The user submitted a prompt: incremental archive, recall.
    UserPromptSubmit,
    /// Compaction is about to run: final archive.
    PreCompact,
    /// Compaction finished.
    PostCompact,
    /// A shell command ran: big outputs go to the swap.
    PostToolUse,
    /// The turn ended: archive what is new.
    Stop,
}

impl CodexEventName {
    /// Every event, in the order `memctl install` writes them.
    pub const ALL: [Self; 6] = [
        Self::SessionStart,
        Self::UserPromptSubmit,
        Self::PreCompact,
        Self::PostCompact,
        Self::PostToolUse,
        Self::Stop,
    ];

    /// The name as Codex spells it (argv, `hook_event_name`, `hookEventName`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::SessionStart => "SessionStart",
            Self::UserPromptSubmit => "UserPromptSubmit",
            Self::PreCompact => "PreCompact",
            Self::PostCompact => "PostCompact",
            Self::PostToolUse => "PostToolUse",
            Self::Stop => "Stop",
        }
    }

    /// The event of a name; `None` for events memctl does not handle.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == name)
    }

    /// The timeout (seconds) `memctl install` writes: Codex stops the hook after it.
    pub const fn install_timeout_secs(self) -> u32 {
        match self {
            Self::PreCompact => 30,
            Self::SessionStart => 15,
            _ => 10,
        }
    }

    /// The hook's own deadline, well below the install timeout.
    pub const fn deadline(self) -> Duration {
        Duration::from_millis(match self {
            Self::PreCompact => 8_000,
            Self::SessionStart => 3_000,
            _ => 2_000,
        })
    }

    /// The `matcher` `memctl install` writes: Codex's shell tool (`Bash`, the only tool its
    /// tool hooks see) for PostToolUse, else none.
    pub fn tool_matcher(self) -> Option<String> {
        matches!(self, Self::PostToolUse).then(|| "Bash".to_string())
    }

    /// Whether `additionalContext` at this event was seen to reach the model (SessionStart and
    /// UserPromptSubmit, as developer messages).
    pub const fn context_verified(self) -> bool {
        matches!(self, Self::SessionStart | Self::UserPromptSubmit)
    }
}

impl std::fmt::Display for CodexEventName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Deadline of an event (`None`: one memctl does not handle), unless `override_ms`
/// (`MEMCTL_HOOK_DEADLINE_MS`) sets one for all.
pub fn deadline(event: Option<CodexEventName>, override_ms: Option<u64>) -> Duration {
    crate::protocol::deadline(event.map(CodexEventName::deadline), override_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_deadlines_stay_below_timeouts() {
        for e in CodexEventName::ALL {
            assert_eq!(CodexEventName::from_name(e.as_str()), Some(e));
            assert!(
                e.deadline() < Duration::from_secs(u64::from(e.install_timeout_secs())),
                "{e}"
            );
        }
        assert_eq!(CodexEventName::from_name("PreToolUse"), None);
        assert_eq!(deadline(None, None), Duration::from_millis(2_000));
        assert_eq!(
            deadline(Some(CodexEventName::Stop), Some(50)),
            Duration::from_millis(50)
        );
        assert_eq!(
            CodexEventName::PostToolUse.tool_matcher().as_deref(),
            Some("Bash")
        );
        assert_eq!(CodexEventName::Stop.tool_matcher(), None);
    }
}
