//! Usage-aware reinforcement as pure functions: did the agent *use* a chunk memctl injected
//! (restore block or prompt-time recall), and what does that verdict do to its confidence?
//!
//! Why: injecting a chunk says only that memctl guessed it was relevant. Boosting it for that
//! (what restores once did) rewards the guess, so the same chunks win every later
//! restore whether they helped or not. The evidence of help is the agent acting on it: the
//! chunk's distinctive identifiers (a path, an error code, a function name) reappear in the
//! agent's own later turns.
//!
//! The rules (parameters in [`RankParams`]):
//! - [`identifiers`]: distinctive identifiers of a text (see its doc for the classes); common
//!   words are never identifiers.
//! - [`used`]: which of a chunk's identifiers reappear in later text, each a whole token there;
//!   a *strong* identifier (a path, an error or ticket code, a hex id, or any identifier of at
//!   least [`RankParams::usage_strong_len`] chars) scores 2, another 1; the chunk is used when
//!   the score reaches [`RankParams::usage_min_score`] (one strong or two weak identifiers).
//! - [`verdict`]: used → [`Verdict::Used`]; not used after
//!   [`RankParams::usage_window_turns`] later agent turns → [`Verdict::Unused`]; else pending.
//! - [`reinforce`]: used → the ordinary boost ([`RankParams::boost_per_use`]); unused → minus
//!   [`RankParams::unused_decay`], never below the floor; pending → unchanged.

use super::RankParams;
use std::collections::BTreeSet;

/// File names found in nearly every project: a path to one is distinctive, the bare name is
/// not.
const COMMON_FILES: &[&str] = &[
    "mod.rs",
    "lib.rs",
    "main.rs",
    "Cargo.toml",
    "Cargo.lock",
    "README.md",
    "package.json",
    "index.js",
    "index.ts",
    "__init__.py",
    "setup.py",
    "Makefile",
    "go.mod",
];

/// Longest token looked at (a longer run is data, not a name).
const MAX_TOKEN: usize = 200;

/// A character that continues a token: letters, digits, `_`.
fn word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// A character a candidate token may hold (paths, dotted and `::` names, flags, kebab runs).
fn token_char(c: char) -> bool {
    word_char(c) || matches!(c, '-' | '.' | '/' | ':' | '~')
}

/// Distinctive identifiers of `text`, as a set. Candidates are maximal runs of letters, digits
/// and `_ - . / : ~`, trimmed of sentence punctuation; a candidate is an identifier when it is
/// one of:
/// - a **path**: holds `/` and either ends in a file name with an extension, starts at the
///   root (`/`, `~`), or has three segments or more (`and/or` and `src/x` are not paths); its
///   file name is an identifier too unless it is one found in every project ([`COMMON_FILES`]);
/// - a **file or dotted name**: `core.rs`, `host.example.io` (an extension with a letter);
/// - an **error or ticket code**: `E0433`, `TS2304`, `OPS-4471`;
/// - a **hex id** of 7+ digits holding a digit and a letter (`b7d2b3c`), or `0x…`;
/// - a **snake_case** or `SCREAMING_CASE` name (not a key of Claude Code's tool JSON);
/// - a **CamelCase** or **camelCase** name (`ContextState`, `recordAccess`);
/// - a **flag**: `--all-targets`;
/// - a **`::` path** (`rank::reinforce`), whose segments are judged on their own too.
///
/// Plain words, numbers and kebab-case runs are never identifiers: prose repeats them without
/// meaning to. Everything but paths and file names must be ASCII. Never panics.
pub fn identifiers(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for raw in text.split(|c: char| !token_char(c)) {
        if raw.is_empty() || raw.len() > MAX_TOKEN {
            continue;
        }
        let tok = trim_token(raw);
        if tok.is_empty() {
            continue;
        }
        if tok.contains("::") {
            let segs: Vec<&str> = tok.split("::").filter(|s| !s.is_empty()).collect();
            if segs.len() >= 2 && segs.iter().all(|s| is_name(s)) {
                out.insert(tok.to_string());
            }
            for s in segs {
                classify(trim_token(s), &mut out);
            }
            continue;
        }
        classify(tok, &mut out);
    }
    out
}

/// Trim sentence punctuation: trailing `. : - /`, leading `. : -` (a flag keeps its `--`).
fn trim_token(raw: &str) -> &str {
    let t = raw.trim_end_matches(['.', ':', '-', '/']);
    if t.starts_with("--") && t.len() > 2 {
        return t;
    }
    t.trim_start_matches(['.', ':', '-'])
}

/// Add `tok` (already trimmed, no `::`) and what it contains to `out` when it is an identifier.
fn classify(tok: &str, out: &mut BTreeSet<String>) {
    if tok.contains('/') {
        if is_path(tok) {
            out.insert(tok.to_string());
            if let Some(name) = tok.rsplit('/').next()
                && is_file_name(name)
                && !COMMON_FILES.contains(&name)
            {
                out.insert(name.to_string());
            }
        }
        return;
    }
    if tok.contains(':') {
        return; // times, `key:value`, URLs' schemes
    }
    let keep = is_file_name(tok) && !COMMON_FILES.contains(&tok)
        || tok.is_ascii()
            && (is_flag(tok) || is_code(tok) || is_hex_id(tok) || is_snake(tok) || is_camel(tok));
    if keep {
        out.insert(tok.to_string());
    }
}

/// A path: `/` with a letter somewhere, no empty segment inside, and a file name, a root or
/// three segments.
fn is_path(t: &str) -> bool {
    if t.len() < 5 || t.contains("//") && !t.contains("://") || !t.chars().any(char::is_alphabetic)
    {
        return false;
    }
    let rooted = t.starts_with('/') || t.starts_with("~/");
    let segs: Vec<&str> = t.split('/').filter(|s| !s.is_empty()).collect();
    let last_is_file = segs.last().is_some_and(|s| is_file_name(s));
    !segs.is_empty() && (rooted || last_is_file || segs.len() >= 3)
}

/// `stem.ext` (or `a.b.c`): every part non-empty, a letter in the stem, the last part 1–8
/// alphanumerics with a letter, at least 4 chars in all (`e.g` and `3.5x` are not files).
fn is_file_name(t: &str) -> bool {
    let Some((stem, ext)) = t.rsplit_once('.') else {
        return false;
    };
    t.chars().count() >= 4
        && !stem.is_empty()
        && !stem.split('.').any(str::is_empty)
        && stem.chars().any(char::is_alphabetic)
        && (1..=8).contains(&ext.len())
        && ext.chars().all(|c| c.is_ascii_alphanumeric())
        && ext.chars().any(|c| c.is_ascii_alphabetic())
        && t.chars().all(|c| word_char(c) || c == '.' || c == '-')
}

/// A name of a `::` path: ASCII letters, digits, `_`, starting with a letter or `_`.
fn is_name(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `--flag-name` (3+ chars after the dashes).
fn is_flag(t: &str) -> bool {
    t.strip_prefix("--").is_some_and(|f| {
        f.len() >= 3
            && f.starts_with(|c: char| c.is_ascii_lowercase())
            && f.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    })
}

/// `E0433`, `TS2304` (1–4 capitals, 3–5 digits) or a ticket `OPS-4471`.
fn is_code(t: &str) -> bool {
    let letters = t.chars().take_while(char::is_ascii_uppercase).count();
    let digits = &t[letters..];
    let plain = (1..=4).contains(&letters)
        && (3..=5).contains(&digits.len())
        && digits.chars().all(|c| c.is_ascii_digit());
    let ticket = t.split_once('-').is_some_and(|(k, n)| {
        (2..=10).contains(&k.len())
            && k.starts_with(|c: char| c.is_ascii_uppercase())
            && k.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
            && (2..=7).contains(&n.len())
            && n.chars().all(|c| c.is_ascii_digit())
    });
    plain || ticket
}

/// A hex id: 7–64 lowercase hex digits with a digit and a letter, or `0x` and 4+ hex digits.
fn is_hex_id(t: &str) -> bool {
    if let Some(h) = t.strip_prefix("0x") {
        return h.len() >= 4 && h.chars().all(|c| c.is_ascii_hexdigit());
    }
    (7..=64).contains(&t.len())
        && t.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'))
        && t.chars().any(|c| c.is_ascii_digit())
        && t.chars().any(|c| c.is_ascii_alphabetic())
}

/// `snake_case` / `SCREAMING_CASE`: a letter first, `_`-separated non-empty parts, at least two
/// parts, not a key of the tool JSON.
fn is_snake(t: &str) -> bool {
    let t = t.trim_start_matches('_');
    t.len() >= 4
        && t.starts_with(|c: char| c.is_ascii_alphabetic())
        && t.contains('_')
        && t.split('_').all(|p| !p.is_empty())
        && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !crate::patterns::TOOL_KEYS.contains(&t)
}

/// `CamelCase` (a capital, lowercase, then another capital) or `camelCase`; letters and digits.
fn is_camel(t: &str) -> bool {
    let mut cs = t.chars();
    let Some(first) = cs.next() else { return false };
    if t.len() < 4 || !first.is_ascii_alphabetic() || !t.chars().all(|c| c.is_ascii_alphanumeric())
    {
        return false;
    }
    let has_lower = t.chars().any(|c| c.is_ascii_lowercase());
    let inner_upper = t.chars().skip(1).any(|c| c.is_ascii_uppercase());
    has_lower && inner_upper
}

/// Whether an identifier is strong evidence on its own (see the module doc).
pub fn is_strong(id: &str, p: &RankParams) -> bool {
    id.contains('/')
        || is_code(id)
        || is_hex_id(id)
        || id.chars().count() >= p.usage_strong_len as usize
}

/// Whether `id` occurs in `text` as a whole token: the characters around it are not letters,
/// digits or `_` (so `core.rs` is found in `src/core.rs`, not in `core.rsx`).
pub fn occurs(text: &str, id: &str) -> bool {
    if id.is_empty() {
        return false;
    }
    text.match_indices(id).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + id.len()..].chars().next();
        !before.is_some_and(word_char) && !after.is_some_and(word_char)
    })
}

/// Which of a chunk's identifiers reappeared, and whether that is use.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Usage {
    /// The identifiers found in the later text.
    pub found: BTreeSet<String>,
    /// 2 per strong identifier found, 1 per other.
    pub score: u32,
    /// `score ≥ usage_min_score`.
    pub used: bool,
}

/// Which of `injected` (a chunk's identifiers) occur in `later` (the agent's later text), and
/// the verdict on use. Pure; more later text never lowers the score.
pub fn used(injected: &BTreeSet<String>, later: &str, p: &RankParams) -> Usage {
    let found: BTreeSet<String> = injected
        .iter()
        .filter(|id| occurs(later, id))
        .cloned()
        .collect();
    let score = found
        .iter()
        .map(|id| if is_strong(id, p) { 2 } else { 1 })
        .sum::<u32>();
    Usage {
        used: score >= p.usage_min_score.max(1),
        found,
        score,
    }
}

/// What an injected chunk's later turns say about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Its identifiers reappeared in the agent's turns: boost.
    Used,
    /// Not used within the window: decay once.
    Unused,
    /// Not used yet, the window is still open: nothing.
    Pending,
}

/// The verdict after `agent_turns` complete later agent turns.
pub fn verdict(usage: &Usage, agent_turns: u32, p: &RankParams) -> Verdict {
    if usage.used {
        Verdict::Used
    } else if agent_turns >= p.usage_window_turns {
        Verdict::Unused
    } else {
        Verdict::Pending
    }
}

/// Confidence after a verdict: used → `max(c, min(cap, c + boost))` (never lowers);
/// unused → `max(floor, c − unused_decay)`, or `c` when already at or below the floor (never
/// raises); pending → `c`.
pub fn reinforce(confidence: f32, v: Verdict, p: &RankParams) -> f32 {
    match v {
        Verdict::Used => super::boost(confidence, p).max(confidence),
        Verdict::Unused if confidence <= p.confidence_floor => confidence,
        Verdict::Unused => (confidence - p.unused_decay.max(0.0)).max(p.confidence_floor),
        Verdict::Pending => confidence,
    }
}

#[cfg(test)]
#[path = "usage_tests.rs"]
mod tests;
