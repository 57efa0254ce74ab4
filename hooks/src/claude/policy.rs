//! The Claude Code adapter's policy, in one place: which events memctl handles (names written
//! once, used by payload decoding, output rendering and `memctl install`), the timeout
//! `memctl install` writes and the shorter deadline the hook keeps for each, and which tools'
//! outputs the tool events are matched for.

use std::time::Duration;

/// A Claude Code hook event memctl handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HookEventName {
    /// The user submitted a prompt: incremental archive, autopilot sample.
    UserPromptSubmit,
    /// Compaction is about to run: final archive, instructions for the summariser.
    PreCompact,
    /// A session started: restore block after compact / resume / clear.
    SessionStart,
    /// Compaction finished: keep Claude's summary.
    PostCompact,
    /// A tool ran: big outputs go to the swap.
    PostToolUse,
    /// A tool failed: its error output goes to the swap.
    PostToolUseFailure,
    /// The session ended: flush, summary, optional prune pass.
    SessionEnd,
}

impl HookEventName {
    /// Every event, in the order `memctl install` writes them.
    pub const ALL: [Self; 7] = [
        Self::UserPromptSubmit,
        Self::PreCompact,
        Self::SessionStart,
        Self::PostCompact,
        Self::PostToolUse,
        Self::PostToolUseFailure,
        Self::SessionEnd,
    ];

    /// The name as Claude Code spells it (argv, `hook_event_name`, `hookEventName`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::UserPromptSubmit => "UserPromptSubmit",
            Self::PreCompact => "PreCompact",
            Self::SessionStart => "SessionStart",
            Self::PostCompact => "PostCompact",
            Self::PostToolUse => "PostToolUse",
            Self::PostToolUseFailure => "PostToolUseFailure",
            Self::SessionEnd => "SessionEnd",
        }
    }

    /// The event of a name; `None` for events memctl does not handle.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == name)
    }

    /// The timeout (seconds) `memctl install` writes: Claude Code SIGTERMs the hook after it.
    pub const fn install_timeout_secs(self) -> u32 {
        match self {
            Self::PreCompact => 30,
            Self::SessionStart => 15,
            Self::SessionEnd => 5,
            _ => 10,
        }
    }

    /// The hook's own deadline, well below the install timeout (SessionEnd hooks are cut off
    /// after ~1.5 s whatever the timeout says).
    pub const fn deadline(self) -> Duration {
        Duration::from_millis(match self {
            Self::SessionEnd => 900,
            Self::PreCompact => 8_000,
            Self::SessionStart => 3_000,
            _ => 2_000,
        })
    }

    /// The `matcher` `memctl install` writes: the swapped tools for tool events, else none.
    pub fn tool_matcher(self) -> Option<String> {
        matches!(self, Self::PostToolUse | Self::PostToolUseFailure).then(|| {
            memctl_engine::SWAPPED_TOOLS
                .iter()
                .map(|(t, _)| *t)
                .collect::<Vec<_>>()
                .join("|")
        })
    }
}

impl std::fmt::Display for HookEventName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Deadline of an event (`None`: an event memctl does not handle), unless `override_ms`
/// (`MEMCTL_HOOK_DEADLINE_MS`) sets one for all.
pub fn deadline(event: Option<HookEventName>, override_ms: Option<u64>) -> Duration {
    crate::protocol::deadline(event.map(HookEventName::deadline), override_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        for e in HookEventName::ALL {
            assert_eq!(HookEventName::from_name(e.as_str()), Some(e));
            assert_eq!(e.to_string(), e.as_str());
        }
        assert_eq!(HookEventName::from_name("Stop"), None);
        assert_eq!(HookEventName::from_name("sessionstart"), None);
    }

    #[test]
    fn deadlines_stay_below_install_timeouts() {
        for e in HookEventName::ALL {
            assert!(
                e.deadline() < Duration::from_secs(u64::from(e.install_timeout_secs())),
                "{e}"
            );
        }
        assert_eq!(
            deadline(Some(HookEventName::SessionEnd), None),
            Duration::from_millis(900)
        );
        assert_eq!(deadline(None, None), Duration::from_millis(2_000));
        assert_eq!(
            deadline(Some(HookEventName::PreCompact), Some(50)),
            Duration::from_millis(50)
        );
    }

    #[test]
    fn tool_events_match_the_swapped_tools() {
        assert_eq!(
            HookEventName::PostToolUse.tool_matcher().as_deref(),
            Some("Read|Grep|Glob|Bash|WebFetch")
        );
        assert_eq!(
            HookEventName::PostToolUseFailure.tool_matcher(),
            HookEventName::PostToolUse.tool_matcher()
        );
        assert_eq!(HookEventName::SessionStart.tool_matcher(), None);
    }
}
