//! Near-duplicate folding: turns whose text differs only in what changes between two runs of
//! the same thing (timings, timestamps, process and commit ids, uuids, temp paths) share one
//! fold key, so a result list shows one of them with a count instead of spending its slots on
//! copies.
//!
//! Folding happens at query time over the ranked hits, never in the store: nothing is merged
//! or deleted, every copy stays searchable (`memctl search --no-fold`) and is listed by
//! `memctl show`. Exact copies in other sessions are already stored once (`shared_with`);
//! this folds the near-identical ones the store keeps apart.
//!
//! What is masked and what is not: numbers that vary between identical runs (decimals,
//! durations, integers of four digits or more, times and dates) are masked; small bare
//! integers are kept, because they carry meaning ("3 passed; 2 failed" is not "5 passed;
//! 0 failed"). Case and runs of whitespace are ignored.

use regex::{Captures, Regex};
use std::collections::HashMap;
use std::sync::LazyLock;

/// One alternation, tried left to right at each position: the longest shapes first (a uuid
/// before its hex parts, a timestamp before its numbers). ASCII word boundaries and digits
/// only: a Unicode `\b` makes the regex engine leave its fast automaton on non-ASCII text, and
/// a search reads the key of every loaded hit.
static VOLATILE: LazyLock<Regex> = LazyLock::new(|| {
    let pattern = concat!(
        r"(?P<uuid>\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b)",
        r"|(?P<ts>\b[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[T ][0-9]{1,2}:[0-9]{2}(?::[0-9]{2}(?:[.,][0-9]+)?)?(?:Z|[+-][0-9]{2}:?[0-9]{2})?)?\b)",
        r"|(?P<clock>\b[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)?\b)",
        r#"|(?P<tmp>(?:/private)?/(?:tmp|var/tmp|var/folders)/[^\s'"`,;)\]]*)"#,
        r"|(?P<tmpname>\btmp[._-]?[A-Za-z0-9_]{6,}\b)",
        r"|(?P<dur>\b[0-9]+(?:\.[0-9]+)?\s?(?:ns|µs|us|ms|s|secs?|seconds?|min|mins|minutes?|h|hours?)\b)",
        r"|(?P<hex>\b(?:0x)?[0-9a-fA-F]{7,}\b)",
        r"|(?P<num>\b[0-9]+(?:\.[0-9]+)+\b)",
    );
    Regex::new(&pattern.replace(r"\b", r"(?-u:\b)")).expect("fold pattern compiles")
});

/// The text with what varies between runs of the same thing masked, lowercased, whitespace
/// collapsed: two texts fold together exactly when this is equal.
pub(crate) fn normalize(text: &str) -> String {
    let masked = VOLATILE.replace_all(text, |c: &Captures<'_>| mask(text, c));
    let masked = LONG_INT.replace_all(&masked, "<n>");
    let mut out = String::with_capacity(masked.len());
    for word in masked.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    out
}

/// The replacement of one volatile match in `text` (the match itself when it is not volatile
/// after all).
fn mask(text: &str, c: &Captures<'_>) -> String {
    let all = &c[0];
    let start = c.get(0).map_or(0, |m| m.start());
    // `/tmp/` inside another path (`/home/u/tmp/x`) is not a temp dir.
    let inside_word = text[..start]
        .chars()
        .next_back()
        .is_some_and(|p| p.is_alphanumeric() || "_.-/~".contains(p));
    let kind = ["uuid", "ts", "clock", "tmp", "tmpname", "dur", "hex", "num"]
        .into_iter()
        .find(|k| c.name(k).is_some())
        .unwrap_or("num");
    match kind {
        "uuid" => "<id>".to_string(),
        "ts" | "clock" => "<time>".to_string(),
        "tmp" if inside_word => all.to_string(),
        "tmp" | "tmpname" => "<tmp>".to_string(),
        "dur" => "<dur>".to_string(),
        // A word made of the letters a–f ("defaced") is a word, not an id.
        "hex" if all.bytes().all(|b| b.is_ascii_alphabetic()) => all.to_string(),
        // One token for every masked number, so an id of digits only and one with letters
        // (a commit, a byte count of 6 or 7 digits) never make two keys.
        "hex" => "<n>".to_string(),
        // A decimal is a measurement; a dotted version (1.80.0) is kept.
        _ if all.matches('.').count() == 1 => "<n>".to_string(),
        _ => all.to_string(),
    }
}

/// Integers of four digits or more (pids, ports, byte counts, epochs) vary between runs of the
/// same command; shorter ones are counts and are kept. Masked after the shapes above.
static LONG_INT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?-u:\b)[0-9]{4,}(?-u:\b)").expect("fold pattern compiles"));

/// The fold key of a chunk's text: the first 8 bytes of the sha256 of [`normalize`] (stable
/// across builds, unlike `std`'s hasher).
pub fn fold_key(text: &str) -> u64 {
    use sha2::{Digest, Sha256};
    let norm = normalize(text);
    let d = Sha256::digest(norm.as_bytes());
    u64::from_le_bytes(d[..8].try_into().expect("sha256 is 32 bytes"))
}

/// The copies folded into one shown chunk: their ids (rank order) and the span of start times
/// over the shown chunk and its copies.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Copies {
    /// Chunk ids of the other copies (the shown chunk is not among them).
    pub ids: Vec<u64>,
    /// Earliest start time (RFC 3339) over the shown chunk and its copies.
    pub first: Option<String>,
    /// Latest start time over the shown chunk and its copies.
    pub last: Option<String>,
}

impl Copies {
    /// No copies yet, for a shown chunk that started at `started`.
    pub fn of(started: Option<&str>) -> Self {
        Self {
            ids: Vec::new(),
            first: started.map(str::to_string),
            last: started.map(str::to_string),
        }
    }

    /// Fold in chunk `id`, started at `started`.
    pub fn add(&mut self, id: u64, started: Option<&str>) {
        self.ids.push(id);
        if let Some(t) = started {
            if self.first.as_deref().is_none_or(|f| t < f) {
                self.first = Some(t.to_string());
            }
            if self.last.as_deref().is_none_or(|l| t > l) {
                self.last = Some(t.to_string());
            }
        }
    }

    /// The shown chunk and its copies.
    pub fn count(&self) -> usize {
        1 + self.ids.len()
    }

    /// `×3, first 2026-11-20 10:02, last 2026-11-27 09:14`; `None` without copies.
    pub fn label(&self) -> Option<String> {
        if self.ids.is_empty() {
            return None;
        }
        let at = |t: &Option<String>| {
            t.as_deref()
                .and_then(|t| t.get(..16))
                .map_or_else(|| "-".to_string(), |t| t.replace('T', " "))
        };
        Some(format!(
            "×{}, first {}, last {}",
            self.count(),
            at(&self.first),
            at(&self.last)
        ))
    }
}

/// Which fold keys a result list holds, per project (a project's copies fold, another
/// project's near-identical turn is its own memory).
#[derive(Debug, Default)]
pub(crate) struct Folder {
    shown: HashMap<(u32, u64), usize>,
}

impl Folder {
    /// The index of the shown result `text` (of `project`) is a copy of, if any; else records
    /// it as result `index` and answers `None`.
    pub(crate) fn copy_of(&mut self, project: u32, text: &str, index: usize) -> Option<usize> {
        match self.shown.entry((project, fold_key(text))) {
            std::collections::hash_map::Entry::Occupied(e) => Some(*e.get()),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(index);
                None
            }
        }
    }

    /// The index of the shown result `text` is a copy of, recording nothing.
    pub(crate) fn find(&self, project: u32, text: &str) -> Option<usize> {
        self.shown.get(&(project, fold_key(text))).copied()
    }
}

#[cfg(test)]
#[path = "fold_tests.rs"]
mod tests;
