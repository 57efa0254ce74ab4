//! The Claude Code adapter's policy, in one place: which events memctl handles (names written
//! once, used by payload decoding, the handlers and `memctl install`), the timeout `memctl
//! install` writes and the shorter deadline the hook keeps for each, which tools' outputs are
//! swapped, and when UserPromptSubmit hands a backlog to a background process (one at a time per
//! transcript: [`super::jobs`]).

use crate::engine::Engine;
use crate::error::EngineError;
use std::path::Path;
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
            crate::swap::SWAPPED_TOOLS
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
    match override_ms {
        Some(ms) => Duration::from_millis(ms),
        None => event.map_or(Duration::from_millis(2_000), HookEventName::deadline),
    }
}

/// Default of `MEMCTL_HOOK_INLINE_BYTES`: unarchived bytes above which UserPromptSubmit hands
/// the work to a background process (4 MiB ≈ 250 turns). PreCompact always archives inline.
pub const INLINE_BYTES: u64 = 4 << 20;

/// Bytes of `path` not yet archived (whole file when it has no cursor).
pub(super) fn backlog(engine: &Engine, path: &Path) -> Result<u64, EngineError> {
    let len = std::fs::metadata(path).map_or(0, |m| m.len());
    let key = std::fs::canonicalize(path).map_or_else(
        |_| path.display().to_string(),
        |p| p.to_string_lossy().into_owned(),
    );
    let done = engine.store().read()?.cursor(&key)?.map_or(0, |c| c.offset);
    Ok(len.saturating_sub(done))
}

/// Claim the background ingest of `path`: false when one is already running (it serves this
/// request, see [`super::jobs`]) or no request can be recorded (logged).
pub(super) fn claim_background(engine: &Engine, path: &Path) -> bool {
    super::jobs::request(engine.data_dir(), super::jobs::INGEST, path).unwrap_or_else(|e| {
        tracing::warn!(transcript = %path.display(), error = %e, "background ingest not requested");
        false
    })
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
