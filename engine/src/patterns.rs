//! The one set of text patterns that summaries and restore blocks both look for.
//!
//! Why one: summary extraction and compaction instructions each had their own command and
//! decision regexes, with different patterns, so the same turn could count as a decision for one
//! and not the other.

use std::sync::LazyLock;

/// The `command` of a Bash tool input as JSON text (pretty or compact); group 1 is the escaped
/// command, at most 300 characters.
pub(crate) static COMMAND_RE: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r#""command"\s*:\s*"((?:[^"\\]|\\.){1,300})"#)
        .unwrap_or_else(|_| unreachable!())
});

/// A sentence that records a decision or a standing constraint ("we'll use", "rather than",
/// "the fix is", "must not", ...).
pub(crate) static DECISION_RE: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r"(?i)\b(decided|decision|we('ll| will) (use|go with|keep)|i('ll| will) (use|go with|keep)|chose|choosing|instead of|rather than|root cause|the fix (is|was)|going with|agreed|opted|switched to|must not)\b",
    )
    .unwrap_or_else(|_| unreachable!())
});

/// Exact identifiers a turn may hold (prompt-time recall lists them): host names, ticket ids,
/// snake_case names, figures with units, multi-word proper names, backticked names.
pub(crate) static IDENTIFIER_RE: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| {
        regex::Regex::new(concat!(
            r"\b[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+){2,}\b", // host.domain.tld
            r"|\b[A-Z][A-Z0-9]{1,9}-\d{2,7}\b",            // OPS-4471
            r"|\b[a-z][a-z0-9]*(?:_[a-z0-9]+){1,6}\b",     // snake_case
            r"|\b\d+(?:\.\d+)?\s?(?:ms|s|µs|us|MB|MiB|KB|KiB|GB|GiB|%)(?:\b|$)", // 183 ms
            r"|\b[A-Z][a-z]+(?: [A-Z][a-z]+){1,3}\b",      // Atkinson Hyperlegible Mono
            r"|`[^`\n]{2,60}`",                            // `name`
        ))
        .unwrap_or_else(|_| unreachable!())
    });

/// Keys of Claude Code's tool inputs and outputs as they appear in archived tool-call JSON:
/// structure, never content (recall's passages) and never evidence of use (reinforcement).
pub(crate) const TOOL_KEYS: &[&str] = &[
    "file_path",
    "old_string",
    "new_string",
    "replace_all",
    "output_mode",
    "head_limit",
    "run_in_background",
    "tool_use_id",
    "is_error",
    "notebook_path",
    "num_lines",
    "start_line",
    "total_lines",
    "num_files",
    "duration_ms",
    "subagent_type",
    "timeout_ms",
    "stdout",
    "stderr",
    "interrupted",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_in_compact_and_pretty_json() {
        for s in [
            r#"[tool: Bash] {"command":"cargo test -p x","description":"t"}"#,
            r#"{"command": "cargo test -p x"}"#,
        ] {
            let c = COMMAND_RE.captures(s).and_then(|c| c.get(1));
            assert_eq!(c.map(|m| m.as_str()), Some("cargo test -p x"), "{s}");
        }
    }

    #[test]
    fn decisions_of_both_former_patterns() {
        for s in [
            "We decided to pin the runtime.",
            "I'll use redb rather than sqlite.",
            "The fix was a missing flush.",
            "Hooks must not block on the store.",
        ] {
            assert!(DECISION_RE.is_match(s), "{s}");
        }
        assert!(!DECISION_RE.is_match("Looking at the file now."));
    }
}
