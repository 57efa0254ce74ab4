//! Swap settings: which tools are swapped from what size, store limits, retention.

use super::SwapEntry;

/// One hour in seconds.
const HOUR: i64 = 3600;

/// The tools whose outputs are swapped, and the size (characters) from which they are: the
/// default of [`SwapConfig::thresholds`] and the `matcher` `memctl install` writes
/// (`memctl_hooks::claude::HookEventName::tool_matcher`).
pub const SWAPPED_TOOLS: &[(&str, usize)] = &[
    ("Read", 8192),
    ("Grep", 4096),
    ("Glob", 2048),
    ("Bash", 6144),
    ("WebFetch", 4096),
];

/// Other agents' tools whose outputs are swapped (stored whole, not replaced), from the same
/// size as Claude Code's equivalent. Kept apart from [`SWAPPED_TOOLS`], which is also Claude
/// Code's install matcher. Codex's shell reaches hooks as `Bash` already; Gemini CLI's is
/// `run_shell_command`, whose AfterTool cannot replace an output cleanly (ARCHITECTURE.md).
pub const OTHER_AGENTS_SWAPPED_TOOLS: &[(&str, usize)] = &[("run_shell_command", 6144)];

/// The tools whose outputs are swapped *in place* by default, and the size (characters of the
/// whole output) from which they are: the PostToolUse hook then returns a digest through
/// `updatedToolOutput` and the model never sees the full output (see [`super::inplace`]).
///
/// Only shapes verified with the real CLI are listed (2.1.330: Bash's `{stdout, stderr,
/// interrupted, isImage, noOutputExpected, persistedOutputPath?, persistedOutputSize?}`).
/// Never Read: Edit relies on what a Read showed the model (and Claude Code checks that the
/// file was read). Why 8,192: a digest is at most [`super::inplace::MAX_DIGEST_CHARS`]
/// characters, so from 8 KB on a swap removes at least ~75 % of the output's tokens (about
/// 2,000 tokens and up), while shorter outputs (a `git status`, a short test run) are cheap to
/// keep whole and more likely to be read in full.
pub const IN_PLACE_TOOLS: &[(&str, usize)] = &[("Bash", 8192)];

/// The tools whose response shape [`super::inplace`] can rewrite (a configured in-place tool
/// outside this list is refused: an untested shape is ignored or worse by the client).
pub const IN_PLACE_SHAPES: &[&str] = &["Bash"];

/// Swap settings (defaults are the product's; every number is configurable).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwapConfig {
    /// Master switch (`MEMCTL_SWAP=0` turns swapping off; see [`crate::Settings::swap`]).
    pub enabled: bool,
    /// Tool name → minimum output size in characters. Tools not listed are never swapped.
    pub thresholds: Vec<(String, usize)>,
    /// Entries kept per session; the oldest never-accessed entries of the session go first.
    pub max_entries_per_session: usize,
    /// Original bytes of all stored outputs together (deduplicated by content).
    pub max_total_bytes: u64,
    /// Outputs larger than this (after redaction) are not swapped at all (a truncated copy
    /// would break the promise that `memctl swap show` gives the exact output back).
    pub max_entry_bytes: u64,
    /// A never-accessed entry expires this long after its session's last activity
    /// (an idle session is not going to be compacted and ask for it).
    pub ttl_idle_unaccessed: i64,
    /// A never-accessed entry expires at the latest this long after it was stored.
    pub ttl_unaccessed: i64,
    /// An entry that was accessed (`memctl swap show`) expires this long after its last access.
    pub ttl_accessed: i64,
    /// Expired entries removed at most per automatic pass (run inside the swap write).
    pub auto_prune_batch: usize,
    /// Swap in place at all (`MEMCTL_SWAP_IN_PLACE`, default on).
    pub in_place_enabled: bool,
    /// Tool name → output size (characters) from which the output is swapped in place
    /// (`MEMCTL_SWAP_IN_PLACE_CHARS` sets Bash's). Empty: never in place.
    pub in_place: Vec<(String, usize)>,
    /// An output swapped in place expires this long after its session's last activity:
    /// Claude Code keeps transcripts 30 days by default (`cleanupPeriodDays`), and a resumed
    /// transcript brings the digest back into a context.
    pub ttl_in_place: i64,
}

impl Default for SwapConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            thresholds: SWAPPED_TOOLS
                .iter()
                .chain(OTHER_AGENTS_SWAPPED_TOOLS)
                .map(|(t, n)| ((*t).to_string(), *n))
                .collect(),
            max_entries_per_session: 50,
            max_total_bytes: 64 << 20,
            max_entry_bytes: 8 << 20,
            ttl_idle_unaccessed: 6 * HOUR,
            ttl_unaccessed: 24 * HOUR,
            ttl_accessed: 48 * HOUR,
            auto_prune_batch: 8,
            in_place_enabled: true,
            in_place: IN_PLACE_TOOLS
                .iter()
                .map(|(t, n)| ((*t).to_string(), *n))
                .collect(),
            ttl_in_place: 30 * 24 * HOUR,
        }
    }
}

impl SwapConfig {
    /// The size (characters) from which `tool`'s output is swapped; `None`: never swapped.
    pub fn threshold(&self, tool: &str) -> Option<usize> {
        self.thresholds
            .iter()
            .find(|(t, _)| t == tool)
            .map(|(_, n)| *n)
    }

    /// The size (characters) from which `tool`'s output is swapped in place; `None`: never.
    pub fn in_place_threshold(&self, tool: &str) -> Option<usize> {
        if !self.enabled || !self.in_place_enabled {
            return None;
        }
        self.in_place
            .iter()
            .find(|(t, _)| t == tool && IN_PLACE_SHAPES.contains(&t.as_str()))
            .map(|(_, n)| *n)
    }

    /// When `e` expires (unix seconds), given the last activity of its session.
    ///
    /// Swapped in place: session activity + [`Self::ttl_in_place`]. Accessed entries: last
    /// access + [`Self::ttl_accessed`]. Never-accessed entries: the
    /// earlier of created + [`Self::ttl_unaccessed`] and session activity +
    /// [`Self::ttl_idle_unaccessed`] (activity is never taken as older than the entry).
    pub fn expires_at(&self, e: &SwapEntry, session_activity: i64) -> i64 {
        if e.in_place {
            session_activity.max(e.created_at) + self.ttl_in_place
        } else if e.access_count > 0 {
            e.last_access.unwrap_or(e.created_at) + self.ttl_accessed
        } else {
            (e.created_at + self.ttl_unaccessed)
                .min(session_activity.max(e.created_at) + self.ttl_idle_unaccessed)
        }
    }
}
