//! The one set of text patterns that summaries and restore blocks both look for.
//!
//! Why one: summary extraction and compaction instructions each had their own command and
//! decision regexes, with different patterns, so the same turn could count as a decision for one
//! and not the other.

use std::sync::LazyLock;

/// The `command` of a Bash tool input as JSON text (pretty or compact); group 1 is the escaped
/// command, whole: [`bash_command`] cuts it.
///
/// No bounded repetition (`{1,300}`) in these JSON-value patterns: the compiler unrolls one
/// copy of the Unicode class per repetition, and compiling the two of them took 8–13 ms, most
/// of a SessionStart hook's CPU. The bounds are applied to the match instead ([`json_units`]).
static COMMAND_RE: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r#""(?:command|cmd)"\s*:\s*"((?:[^"\\]|\\.)+)"#)
        .unwrap_or_else(|_| unreachable!())
});

/// Most JSON-string units (characters, or backslash escapes) of a command [`bash_command`] keeps.
const COMMAND_UNITS: usize = 300;

/// The `file_path` / `notebook_path` of an edit tool's input as JSON text; group 1 is the
/// escaped path ([`file_paths`] keeps those of at most [`PATH_UNITS`]).
static FILE_RE: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r#""(?:file_path|notebook_path)"\s*:\s*"((?:[^"\\]|\\.)+)""#)
        .unwrap_or_else(|_| unreachable!())
});

/// Longest path (in JSON-string units) [`file_paths`] returns: a longer value is not a path.
const PATH_UNITS: usize = 400;

/// The first `max` units of an escaped JSON string value (a unit is one character or one
/// backslash escape, as the patterns count them), and whether it had more.
fn json_units(escaped: &str, max: usize) -> (&str, bool) {
    let mut units = 0;
    let mut chars = escaped.char_indices();
    while let Some((i, c)) = chars.next() {
        if units == max {
            return (&escaped[..i], true);
        }
        units += 1;
        if c == '\\' {
            chars.next();
        }
    }
    (escaped, false)
}

/// The escaped command of the first Bash tool input in `text` (JSON, pretty or compact), its
/// first 300 units. Codex CLI's shell tool names it `cmd`.
pub(crate) fn bash_command(text: &str) -> Option<&str> {
    let m = COMMAND_RE.captures(text)?.get(1)?;
    Some(json_units(m.as_str(), COMMAND_UNITS).0)
}

/// The shell tools of the agents memctl archives: Claude Code's `Bash`, Codex CLI's
/// `exec_command` (and `shell` / `local_shell` of older versions), Gemini CLI's
/// `run_shell_command`. Their command is [`bash_command`].
pub(crate) fn is_shell_tool(name: &str) -> bool {
    matches!(
        name,
        "Bash" | "exec_command" | "shell" | "local_shell" | "run_shell_command"
    )
}

/// The escaped `file_path` / `notebook_path` values in `input` (an edit tool's JSON input), in
/// order; values longer than 400 units are skipped.
pub(crate) fn file_paths(input: &str) -> impl Iterator<Item = &str> {
    FILE_RE
        .captures_iter(input)
        .filter_map(|c| c.get(1))
        .map(|m| m.as_str())
        .filter(|p| !json_units(p, PATH_UNITS).1)
}

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
            assert_eq!(bash_command(s), Some("cargo test -p x"), "{s}");
        }
    }

    /// The bounds the patterns had as `{1,300}` / `{1,400}`: a command is cut after 300 units
    /// (an escape is one unit), a longer path is no path, and a later one is still found.
    #[test]
    fn json_value_bounds_count_escapes_as_one_unit() {
        let long = format!(r#"{{"command":"{}\"tail"}}"#, "a".repeat(299));
        assert_eq!(bash_command(&long), Some(&long[12..12 + 301]));
        let short = r#"{"command":"echo \"hi\""}"#;
        assert_eq!(bash_command(short), Some(r#"echo \"hi\""#));
        let path = |n: usize| "p".repeat(n);
        let two = format!(
            r#"{{"file_path":"{}"}} {{"file_path":"{}"}} {{"notebook_path":"{}"}}"#,
            path(401),
            path(400),
            "a\\b"
        );
        let found: Vec<&str> = file_paths(&two).collect();
        assert_eq!(found, vec![path(400).as_str(), "a\\b"]);
        assert_eq!(json_units("ab\\c", 2), ("ab", true));
        assert_eq!(json_units("a\\nb", 2), ("a\\n", true));
        assert_eq!(json_units("a\\nb", 3), ("a\\nb", false));
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
