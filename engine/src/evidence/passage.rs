//! What a recalled turn shows: where it is, its one-line summary, the exact identifiers it holds,
//! and the passages of its text that answer the prompt, within a per-turn allowance.
//!
//! Why passages and not the summary: the buried fact of a turn is rarely in its summary (a
//! summary is the prompt's first sentence and the outcome's), and a recalled turn whose line
//! lacks the fact is noise. A paraphrased question shares few words with the fact's line
//! ("where on disk do the refused records end up?" vs `quarantine_dir = "~/…"`), so a line is
//! scored by the prompt terms it holds *and* by whether it holds the shape of answer the
//! question asks for (a path for "where", a date for "when", a figure for "how much", a command
//! for "how do I"...). When the budget allows (fewer turns recalled), several passages are shown.

use crate::store::ChunkRecord;
use regex::Regex;
use std::collections::HashSet;
use std::sync::LazyLock;

/// Longest passage shown (a passage is a line, or a sentence of a long line).
const PASSAGE_MAX: usize = 280;
/// A line longer than this is split into sentences before scoring (a prompt often says the
/// fact in its second sentence, after one the summary already shows).
const UNIT_SPLIT: usize = 120;
/// Room kept for the identifiers list after the passages.
const IDS_RESERVE: usize = 120;
/// Score of holding a shape of answer the prompt asks for: worth two shared terms (the shared
/// words of a paraphrase are often common verbs such as "set" or "make", weaker evidence than
/// the answer itself).
const SHAPE_BONUS: f32 = 2.0;
/// Score of holding any exact-looking token (a name, a figure): breaks ties towards facts.
const IDENT_BONUS: f32 = 0.25;
/// Passages below this score are not shown (a lone identifier in a log line is not a passage).
const MIN_SCORE: f32 = 1.0;

/// A shape of answer a question can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Shape {
    /// An absolute or `./` / `~/` path with two or more segments.
    Path,
    /// A host name or URL.
    Host,
    /// A calendar date.
    Date,
    /// A person's name (two capitalized words).
    Person,
    /// A number with a unit.
    Quantity,
    /// A number with a unit of bytes (memory, disk, download size).
    Size,
    /// A number with a unit of time (latency, duration).
    Duration,
    /// A dotted version number.
    Version,
    /// A shell command line.
    Command,
    /// A name: CONSTANT_CASE, camelCase, snake_case, backticked, Hyphen-Name, letters+digits.
    Name,
}

fn re(s: &str) -> Regex {
    Regex::new(s).unwrap_or_else(|_| unreachable!())
}

static PATH_RE: LazyLock<Regex> =
    LazyLock::new(|| re(r#"(?:^|[\s"'=(:])(?:/|~/|\./)[\w.@-]+(?:/[\w.@-]+)+"#));
static HOST_RE: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+){2,}\b|\bhttps?://\S+"));
static DATE_RE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b\d{4}-\d{2}-\d{2}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d{1,2}\b|\b\d{1,2} (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b",
    )
});
static PERSON_RE: LazyLock<Regex> = LazyLock::new(|| re(r"\b[A-Z][a-z]+ [A-Z][a-z]+\b"));
static QUANTITY_RE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b\d+(?:[.,]\d+)?\s?(?:ms|s|sec|seconds|min|minutes|h|hours|µs|us|ns|b|kb|kib|mb|mib|gb|gib|tb|%|rows/s|req/s|rps|qps|x)(?:\b|$)",
    )
});
static SIZE_RE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b\d+(?:[.,]\d+)?\s?(?:b|bytes|kb|kib|mb|mib|gb|gib|tb|tib)\b"));
static DURATION_RE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)\b\d+(?:[.,]\d+)?\s?(?:ns|µs|us|ms|s|secs?|seconds|mins?|minutes|h|hours|days)\b")
});
static VERSION_RE: LazyLock<Regex> = LazyLock::new(|| re(r"\bv?\d+\.\d+\.\d+\b"));
static COMMAND_LINE_RE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:\$ )?(?:make|\./[\w.-]+|cargo|npm|npx|pnpm|yarn|python3?|pip|uv|go|docker|kubectl|git|bash|sh|gradle|mvn|pytest|ruff|psql|curl|memctl)\s+\S",
    )
});
static NAME_RE: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b",      // CONSTANT_CASE
        r"|\b[a-z]+(?:[A-Z][a-z0-9]*)+\b",         // camelCase
        r"|\b[a-z][a-z0-9]*(?:_[a-z0-9]+){1,6}\b", // snake_case
        r"|`[^`\n]{2,60}`",                        // `name`
        r"|\b[A-Z][a-z]+-[A-Z][a-z]+\b",           // Okabe-Ito style
        r"|\b[a-z]{3,}\d+[a-z0-9]*\b",             // letters then digits
        r"|\b[A-Z][a-z]+(?: [A-Z][a-z]+){1,3}\b",  // Multi Word Name
        r"|\b[A-Z][A-Z0-9]{1,9}-\d{2,7}\b",        // OPS-4471
    ))
});

/// Words of a prompt that ask for each shape (stems and whole words, lowercase).
const SHAPE_CUES: &[(Shape, &[&str])] = &[
    (
        Shape::Path,
        &[
            "where",
            "folder",
            "directory",
            "dir",
            "path",
            "disk",
            "file",
        ],
    ),
    (
        Shape::Host,
        &[
            "where", "host", "server", "machine", "endpoint", "url", "address", "box", "cluster",
        ],
    ),
    (
        Shape::Date,
        &[
            "when", "date", "deadline", "due", "cut-off", "cutoff", "day",
        ],
    ),
    (
        Shape::Person,
        &[
            "who", "whom", "whose", "person", "owner", "owns", "approve", "sign-off",
        ],
    ),
    (
        Shape::Quantity,
        &[
            "much",
            "many",
            "big",
            "large",
            "fast",
            "slow",
            "long",
            "heavy",
            "size",
            "latency",
            "memory",
            "ram",
            "peak",
            "worst",
            "throughput",
            "percent",
            "p99",
            "p95",
        ],
    ),
    (
        Shape::Size,
        &[
            "memory", "ram", "rss", "heap", "disk", "storage", "space", "size", "big", "large",
            "heavy", "download",
        ],
    ),
    (
        Shape::Duration,
        &[
            "fast", "slow", "long", "latency", "time", "took", "duration", "p99", "p95", "p50",
        ],
    ),
    (
        Shape::Version,
        &["version", "release", "pinned", "pin", "stuck"],
    ),
    (
        Shape::Command,
        &[
            "command",
            "invocation",
            "invoke",
            "run",
            "rerun",
            "re-run",
            "redo",
            "replay",
        ],
    ),
    (
        Shape::Name,
        &[
            "name", "named", "called", "call", "flag", "toggle", "switch", "setting", "variable",
            "key", "env", "option", "library", "package", "font", "typeface", "palette", "colour",
            "color", "scheme", "tool", "pick", "picked", "use", "ticket", "issue", "bug",
            "tracker", "id", "number",
        ],
    ),
];

/// The shapes of answer a prompt asks for, from its cue words. Pure.
pub(crate) fn wanted_shapes(prompt: &str) -> HashSet<Shape> {
    let lower = prompt.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .filter(|w| !w.is_empty())
        .collect();
    let mut out = HashSet::new();
    for (shape, cues) in SHAPE_CUES {
        if words.iter().any(|w| cues.contains(w)) {
            out.insert(*shape);
        }
    }
    if words
        .windows(2)
        .any(|w| w == ["how", "do"] || w == ["how", "to"])
    {
        out.insert(Shape::Command);
    }
    out
}

/// Whether `unit` holds an answer of `shape`.
fn has_shape(unit: &str, shape: Shape) -> bool {
    match shape {
        Shape::Path => PATH_RE.is_match(unit),
        Shape::Host => HOST_RE.is_match(unit),
        Shape::Date => DATE_RE.is_match(unit),
        Shape::Person => PERSON_RE.is_match(unit),
        Shape::Quantity => QUANTITY_RE.is_match(unit),
        Shape::Size => SIZE_RE.is_match(unit),
        Shape::Duration => DURATION_RE.is_match(unit),
        Shape::Version => VERSION_RE.is_match(unit),
        Shape::Command => COMMAND_LINE_RE.is_match(unit.trim_start_matches(['`', ' '])),
        Shape::Name => NAME_RE.is_match(unit),
    }
}

/// The score of one unit: distinct prompt terms it holds, plus [`SHAPE_BONUS`] for each wanted
/// shape it holds (at most two), plus [`IDENT_BONUS`] when it holds any exact-looking token. Pure; more shared
/// terms never lower it.
pub(crate) fn unit_score(unit: &str, terms: &HashSet<&str>, shapes: &HashSet<Shape>) -> f32 {
    let got: HashSet<String> = crate::index::lexical::tokenize(unit).into_iter().collect();
    let shared = terms.iter().filter(|t| got.contains(**t)).count() as f32;
    // Two matched shapes ("how much RAM": a size; "the invocation for one date": a command
    // with a date) beat one ("41.2 s" for a memory question).
    let matched = shapes
        .iter()
        .filter(|s| has_shape(unit, **s))
        .count()
        .min(2);
    let shape = SHAPE_BONUS * matched as f32;
    let ident = if NAME_RE.is_match(unit) || crate::patterns::IDENTIFIER_RE.is_match(unit) {
        IDENT_BONUS
    } else {
        0.0
    };
    shared + shape + ident
}

/// Lines of `text`, long lines split into sentences, without speaker prefixes or line-number
/// gutters of file reads; empty ones dropped.
pub(crate) fn units(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut l = line.trim();
        for p in ["User: ", "Assistant: "] {
            l = l.strip_prefix(p).unwrap_or(l);
        }
        // Claude Code's Read output: "    12→text" or "    12\ttext".
        if let Some((num, rest)) = l.split_once(['\u{2192}', '\t'])
            && !num.is_empty()
            && num.trim().chars().all(|c| c.is_ascii_digit())
        {
            l = rest.trim();
        }
        // A tool call's input is structure (JSON keys, a written file's code): only a Bash
        // command is a passage; what a tool returned is content and stays.
        if l.starts_with("[tool: ") {
            if let Some(cmd) = bash_command(l) {
                out.push(cmd);
            }
            continue;
        }
        if l.is_empty() {
            continue;
        }
        if l.chars().count() <= UNIT_SPLIT {
            out.push(l);
            continue;
        }
        let mut start = 0;
        let b = l.as_bytes();
        for i in 0..b.len().saturating_sub(1) {
            if matches!(b[i], b'.' | b'?' | b'!') && b[i + 1] == b' ' {
                let s = l[start..=i].trim();
                if !s.is_empty() {
                    out.push(s);
                }
                start = i + 1;
            }
        }
        let s = l[start..].trim();
        if !s.is_empty() {
            out.push(s);
        }
    }
    out
}

/// The command of a shell tool's `[tool: Bash] {"command": ...}` line (any agent's shell tool,
/// still JSON-escaped); None for other tools or without a command.
fn bash_command(line: &str) -> Option<&str> {
    let name = line.strip_prefix("[tool: ")?.split_once(']')?.0;
    if !crate::patterns::is_shell_tool(name) {
        return None;
    }
    crate::patterns::bash_command(line)
}

/// The passages of `text` to show, best first, within `allowance` characters: units scoring at
/// least [`MIN_SCORE`], not already in `shown`, each clipped to [`PASSAGE_MAX`].
pub(crate) fn passages(
    text: &str,
    prompt_terms: &[String],
    prompt: &str,
    shown: &str,
    allowance: usize,
) -> Vec<String> {
    let terms: HashSet<&str> = prompt_terms.iter().map(String::as_str).collect();
    let shapes = wanted_shapes(prompt);
    let mut scored: Vec<(usize, f32, &str)> = units(text)
        .into_iter()
        .enumerate()
        .map(|(i, u)| (i, unit_score(u, &terms, &shapes), u))
        .filter(|(_, s, u)| *s >= MIN_SCORE && !shown.contains(*u))
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut out: Vec<String> = Vec::new();
    let mut used = 0;
    for (_, _, u) in scored {
        let p = crate::transcript::clip_line(u, PASSAGE_MAX);
        let cost = p.chars().count() + 5;
        if out.iter().any(|o| o == &p) {
            continue;
        }
        if used + cost > allowance {
            if out.is_empty() {
                // The best passage is always shown, clipped to what is left.
                out.push(crate::transcript::clip_line(&p, allowance.max(40)));
            }
            break;
        }
        used += cost;
        out.push(p);
    }
    out
}

/// Exact identifiers a turn holds, in order of appearance, that `shown` does not already
/// carry: host names, ticket ids, snake_case names, figures with units, multi-word proper
/// names, backticked names. The buried fact of a turn is usually one of these, and the model
/// needs it verbatim.
pub(crate) fn identifiers(text: &str, shown: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for m in crate::patterns::IDENTIFIER_RE.find_iter(text) {
        let id = m.as_str().trim_matches('`');
        if id.len() < 3
            || shown.contains(id)
            || out.iter().any(|o| o == id)
            || crate::patterns::TOOL_KEYS.contains(&id)
        {
            continue;
        }
        // File names and paths are listed as files; long dotted runs are usually paths.
        if id.ends_with(".py") || id.ends_with(".rs") || id.ends_with(".md") || id.contains('/') {
            continue;
        }
        out.push(id.to_string());
        if out.len() >= 8 {
            break;
        }
    }
    out
}

/// Who asks for a recalled line: the asking session (a turn of it reads "this session") and the
/// turn's age as the line shows it (none for a recent turn of this session).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Asking<'a> {
    pub(crate) session: &'a str,
    pub(crate) age: Option<&'a str>,
}

/// One recalled line within `allowance` characters: where the turn is (its time and, when
/// given, its age), its summary (unless a restore block showed it and a passage exists), the
/// identifiers, the passages, the files.
pub(crate) fn recall_line(
    rec: &ChunkRecord,
    asking: Asking<'_>,
    prompt: &str,
    terms: &[String],
    with_summary: bool,
    allowance: usize,
) -> String {
    let c = &rec.chunk;
    let Asking { session, age } = asking;
    let when = crate::clock::short_time(c.started_at.as_deref());
    let whose = if c.session_id == session {
        "this session".to_string()
    } else {
        format!("session {}", c.session_id.get(..8).unwrap_or(&c.session_id))
    };
    let mut s = format!("[{whose}, turn {}", c.turn_index);
    if !when.is_empty() {
        s.push_str(&format!(", {when}"));
    }
    if let Some(age) = age {
        s.push_str(&format!(", {age}"));
    }
    s.push_str("] ");
    let probe = passages(&c.text, terms, prompt, &c.summary, PASSAGE_MAX);
    if with_summary || probe.is_empty() {
        s.push_str(&crate::transcript::clip_line(&c.summary, 140));
    }
    // Passages come first (they answer), then the identifiers they do not already show (a
    // compact fallback when no passage holds the fact; some room is kept for them), then the
    // files when they fit whole.
    let ids = identifiers(&c.text, &s);
    let reserve = if ids.is_empty() {
        0
    } else {
        (ids.join(", ").chars().count() + 10).min(IDS_RESERVE)
    };
    let left = allowance.saturating_sub(s.chars().count() + reserve);
    // Only what the line really shows is excluded: the summary is clipped, and the sentence
    // holding the fact may be in its cut-off part.
    for p in passages(&c.text, terms, prompt, &s, left) {
        s.push_str(" · \u{201c}");
        s.push_str(&p);
        s.push('\u{201d}');
    }
    let mut first = true;
    for id in ids
        .iter()
        .filter(|id| !s.contains(id.as_str()))
        .collect::<Vec<_>>()
    {
        let add = if first {
            format!(" · holds: {id}")
        } else {
            format!(", {id}")
        };
        if s.chars().count() + add.chars().count() > allowance {
            break;
        }
        s.push_str(&add);
        first = false;
    }
    if !c.files.is_empty() {
        let files: Vec<&str> = c.files.iter().take(4).map(String::as_str).collect();
        let add = format!(" · files: {}", files.join(", "));
        if s.chars().count() + add.chars().count() <= allowance {
            s.push_str(&add);
        }
    }
    crate::transcript::clip_line(&s, allowance)
}
