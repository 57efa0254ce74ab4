//! Why a search hit matched, in terms a person can check: an absolute confidence, the lines of
//! the turn that matched, where the query's words are in them, and the exact identifiers of the
//! query the turn holds.
//!
//! Why an absolute confidence: the fused score is normalised over the candidate set (the best
//! hit scores 1 whatever it is), so it cannot say "nothing relevant" and changes with `-k` and
//! the filters. The confidence is the prompt-time recall's calibrated gate made continuous
//! ([`crate::evidence::confidence`]): a function of the hit's own cosine and lexical coverage only.
//! Search uses the gate's thresholds for questions: a search is a lookup in the archive, which
//! is what those were calibrated for (the strict ones exist because a request to act restates
//! old work, which does not apply to someone searching for it).

use crate::evidence::{CONFIDENT, Evidence, GateParams, PromptKind};
use regex::Regex;
use std::sync::LazyLock;

/// The confidence of a search hit with this evidence (0..=1; see the module doc).
pub fn hit_confidence(e: &Evidence) -> f32 {
    crate::evidence::confidence(e, PromptKind::Question, &GateParams::default())
}

/// Whether a confidence clears the calibrated threshold.
pub fn is_confident(confidence: f32) -> bool {
    confidence >= CONFIDENT
}

/// Exact identifiers a query can hold: a `path:line`, a path or a file name, an error code
/// (`E0382`, `TS2345`, `ERR_MODULE_NOT_FOUND`, `ENOENT`), a ticket (`PAY-1042`) or an issue
/// reference (`#1234`), a snake_case, camelCase or PascalCase name, a hex hash of 7 or more
/// digits. Leftmost alternative first: a path with its line is one identifier, not three.
/// ASCII classes (`(?-u)`): code identifiers are ASCII, and the Unicode `\w` and `\b` made this
/// the costliest regex a search process compiled (~2.5 ms of a ~50 ms process, against 0.2).
static QUERY_IDENT_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?-u)[\w./-]*\w\.\w+:\d+(?::\d+)?\b", // billing.test.ts:52, src/main.rs:10:5
        r"|(?:[\w.-]+/)+[\w.-]*\w",         // kiln/utils/hashing.py, src/index/
        r"|\b[\w-]+(?:\.[\w-]+)*\.(?:rs|ts|tsx|js|jsx|mjs|py|go|java|kt|kts|rb|php|cs|cpp|cc|c|h|hpp|swift|scala|sh|sql|toml|json|yaml|yml|lock|md|html|css|vue|svelte|proto|tf)\b",
        r"|\b[A-Z]{1,4}\d{3,5}\b",          // E0382, TS2345
        r"|\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b", // ERR_MODULE_NOT_FOUND
        r"|\bE(?:NOENT|ACCES|ADDRINUSE|ADDRNOTAVAIL|CONNREFUSED|CONNRESET|PERM|EXIST|PIPE|TIMEDOUT|NOTDIR|ISDIR|MFILE|NOSPC|AGAIN|BUSY|NOTEMPTY|INVAL)\b",
        r"|\b[A-Z][A-Z0-9]+-\d+\b",          // PAY-1042
        r"|#\d{2,7}\b",                     // #1234
        r"|\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b", // test_render_token
        r"|\b[a-z][a-z0-9]*(?:[A-Z][a-z0-9]+)+\b", // getUserById
        r"|\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b", // InvoiceBuilder
        r"|\b[0-9a-fA-F]{7,64}\b", // a hash (checked for a digit and a letter below)
    ))
    .unwrap_or_else(|_| unreachable!())
});

/// The exact identifiers of `query`, distinct, in order. A run of hex digits counts only when it
/// mixes digits and letters (`1234567` is a number, `deadbeef` a word); a path needs a file
/// name or two slashes (`and/or`, `I/O` are words).
pub fn query_identifiers(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for m in QUERY_IDENT_RE.find_iter(query) {
        let s = m.as_str();
        if is_hash(s)
            && !(s.chars().any(|c| c.is_ascii_digit())
                && s.chars().any(|c| c.is_ascii_alphabetic()))
        {
            continue;
        }
        if s.contains('/') && !s.contains('.') && s.matches('/').count() < 2 {
            continue;
        }
        if !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
    }
    out
}

/// How many of `ids` occur verbatim in `text` as whole tokens: `billing.test.ts:52` is in
/// `src/billing.test.ts:52:7` but not in `billing.test.ts:520`. A hash also matches the start
/// of a longer one (a short commit id), in any case.
pub fn identifiers_held(text: &str, ids: &[String]) -> usize {
    let mut lower: Option<String> = None;
    ids.iter()
        .filter(|id| {
            if is_hash(id) {
                let l = lower.get_or_insert_with(|| text.to_ascii_lowercase());
                occurs(l, &id.to_ascii_lowercase(), false)
            } else {
                occurs(text, id, true)
            }
        })
        .count()
}

/// A hash: 7 or more hex digits (`E0382` is hex too, but a code).
fn is_hash(id: &str) -> bool {
    id.len() >= 7 && id.chars().all(|c| c.is_ascii_hexdigit())
}

/// Whether `needle` occurs in `hay` not glued to a word character before it (nor after it,
/// when `whole`).
fn occurs(hay: &str, needle: &str, whole: bool) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    hay.match_indices(needle).any(|(at, m)| {
        let before = hay[..at].chars().next_back().is_none_or(|c| !word(c));
        let after = !whole || hay[at + m.len()..].chars().next().is_none_or(|c| !word(c));
        before && after
    })
}

/// Room for the matched lines of one hit.
const LINES_CHARS: usize = 480;
/// At most this many matched lines per hit.
const LINES_MAX: usize = 3;

/// The lines of `text` that matched `query`, best first (the recall's passage selection: the
/// lines holding the most query terms, or the shape of answer the query asks for), at most
/// [`LINES_MAX`], none already in `shown`. A line holding an exact identifier of the query
/// comes first.
pub fn matched_lines(text: &str, query: &str, shown: &str) -> Vec<String> {
    let terms = crate::evidence::informative_terms(query);
    let ids = query_identifiers(query);
    let mut lines: Vec<String> = Vec::new();
    for l in crate::evidence::passages(text, &terms, query, shown, LINES_CHARS) {
        if let Some(l) = unshown_part(&l, shown)
            && !lines.iter().any(|o| o == l)
        {
            lines.push(l.to_string());
        }
    }
    // Stable: passage order among lines holding as many identifiers.
    lines.sort_by_key(|l| std::cmp::Reverse(identifiers_held(l, &ids)));
    if let Some(exact) = crate::evidence::units(text)
        .into_iter()
        .find(|u| identifiers_held(u, &ids) > 0 && !shown.contains(*u))
        && !lines.iter().any(|l| identifiers_held(l, &ids) > 0)
    {
        lines.insert(0, crate::transcript::clip_line(exact, 280));
    }
    lines.truncate(LINES_MAX);
    lines
}

/// `line` without its leading sentences that `shown` already has (a summary holds the first
/// sentence of the prompt, the line may go on); None when nothing new is left.
fn unshown_part<'a>(line: &'a str, shown: &str) -> Option<&'a str> {
    let mut rest = line.trim();
    while !rest.is_empty() {
        if shown.contains(rest) {
            return None;
        }
        let cut = rest
            .char_indices()
            .find(|&(i, c)| matches!(c, '.' | '?' | '!') && rest[i + 1..].starts_with(' '))
            .map(|(i, _)| i + 1);
        match cut {
            Some(end) if shown.contains(&rest[..end]) => rest = rest[end..].trim_start(),
            _ => return Some(rest),
        }
    }
    None
}

/// The query's index terms, distinct (the lexical index's own tokenizer: stop words out,
/// English stems): what a hit can have matched on.
pub fn index_terms(query: &str) -> Vec<String> {
    let mut t = crate::index::lexical::tokenize(query);
    t.sort_unstable();
    t.dedup();
    t
}

/// Byte ranges of the words of `text` whose index terms include one of `terms`: whole words
/// (never `on` inside `seconds`), matched as the index matches them (`caches` for `cache`).
pub fn term_spans(text: &str, terms: &[String]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    let check = |s: usize, e: usize, out: &mut Vec<(usize, usize)>| {
        if crate::index::lexical::tokenize(&text[s..e])
            .iter()
            .any(|t| terms.contains(t))
        {
            out.push((s, e));
        }
    };
    for (i, c) in text.char_indices() {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                check(s, i, &mut out);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        check(s, text.len(), &mut out);
    }
    out
}

/// Byte ranges of `text` to mark for `query`: its words ([`term_spans`]) and each occurrence of
/// its exact identifiers, sorted, overlaps merged.
pub fn highlight_spans(text: &str, query: &str) -> Vec<(usize, usize)> {
    let mut spans = term_spans(text, &index_terms(query));
    for id in query_identifiers(query) {
        spans.extend(
            text.match_indices(id.as_str())
                .map(|(s, m)| (s, s + m.len())),
        );
    }
    spans.sort_unstable();
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (s, e) in spans {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn identifiers_of_a_query() {
        assert_eq!(
            query_identifiers("billing.test.ts:52 fails with E0382 and ERR_MODULE_NOT_FOUND"),
            ["billing.test.ts:52", "E0382", "ERR_MODULE_NOT_FOUND"]
        );
        assert_eq!(
            query_identifiers("revert 2d87d59 (ENOENT)"),
            ["2d87d59", "ENOENT"]
        );
        assert!(query_identifiers("why is the build failing 1234567 deadbeef").is_empty());
        assert!(query_identifiers(&"x".repeat(130_000)).is_empty());
        assert_eq!(
            query_identifiers(
                "why did tests/test_runner.py::test_render_token fail in InvoiceBuilder, \
                 getUserById and PAY-1042 (see #4821, Cargo.toml)?"
            ),
            [
                "tests/test_runner.py",
                "test_render_token",
                "InvoiceBuilder",
                "getUserById",
                "PAY-1042",
                "#4821",
                "Cargo.toml"
            ]
        );
        // Words, not identifiers.
        assert!(
            query_identifiers("the I/O and/or the cache, what did we decide last week?").is_empty()
        );
    }

    #[test]
    fn identifiers_are_held_verbatim() {
        let ids = query_identifiers("billing.test.ts:52 2D87D59");
        assert_eq!(identifiers_held("at billing.test.ts:52:7", &ids), 1);
        assert_eq!(
            identifiers_held("billing.test.ts:5 and commit 2d87d59abc", &ids),
            1
        );
        assert_eq!(identifiers_held("billing tests", &ids), 0);
        assert_eq!(
            identifiers_held("billing.test.ts:520 and xbilling.test.ts:52", &ids),
            0
        );
        let codes = query_identifiers("E0382");
        assert_eq!(identifiers_held("error[E0382]: borrow", &codes), 1);
        assert_eq!(identifiers_held("E03821", &codes), 0);
    }

    #[test]
    fn the_line_holding_the_identifier_is_shown_first() {
        let text = "User: The build is failing with this:\n\
                    FAIL src/billing.test.ts:52 expected 3 got 4\n\
                    some unrelated log line\n\
                    Assistant: All 18 tests pass now.";
        let shown = "The build is failing with this: → All 18 tests pass now.";
        let lines = matched_lines(text, "billing.test.ts:52", shown);
        assert_eq!(
            lines[0], "FAIL src/billing.test.ts:52 expected 3 got 4",
            "{lines:?}"
        );
    }

    #[test]
    fn what_the_summary_shows_is_not_repeated() {
        let shown = "Why is pytest slow on CI? → Done.";
        assert_eq!(
            unshown_part("Why is pytest slow on CI? Look at conftest.py.", shown),
            Some("Look at conftest.py.")
        );
        assert_eq!(unshown_part("Why is pytest slow on CI?", shown), None);
        assert_eq!(unshown_part("pytest -q", shown), Some("pytest -q"));
    }

    #[test]
    fn highlights_words_and_identifiers() {
        let text = "FAIL billing.test.ts:52 while caching";
        let spans = highlight_spans(text, "billing.test.ts:52 cache");
        let marked: Vec<&str> = spans.iter().map(|&(s, e)| &text[s..e]).collect();
        assert_eq!(marked, ["billing.test.ts:52", "caching"]);
    }

    proptest! {
        /// Spans are sorted, disjoint and on char boundaries, whatever the text and query.
        #[test]
        fn highlight_spans_are_disjoint_char_ranges(text in "\\PC{0,80}", query in "\\PC{0,20}") {
            let spans = highlight_spans(&text, &query);
            for w in spans.windows(2) {
                prop_assert!(w[0].1 < w[1].0);
            }
            for (s, e) in spans {
                prop_assert!(s < e && text.is_char_boundary(s) && text.is_char_boundary(e));
            }
        }
    }
}
