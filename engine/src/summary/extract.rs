//! Pure extraction over chunk texts (see the labelled-line format of `transcript::chunker`).

use super::{SessionSummary, SummaryConfig, clip};
use crate::patterns::{DECISION_RE, bash_command, file_paths};
use crate::store::ChunkRecord;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::LazyLock;

/// One labelled block of a chunk text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block<'a> {
    /// `User: ...` (the prompt; `continued` for later parts of a long turn).
    User {
        /// Prompt text.
        text: String,
        /// True for the repeated header of a later part.
        continued: bool,
    },
    /// `Assistant: ...` (continuation lines included).
    Assistant(String),
    /// `[tool: Name] {input json}`.
    Tool {
        /// Tool name.
        name: &'a str,
        /// Input JSON (possibly cut).
        input: &'a str,
    },
    /// Tool results, notes, subagent text, anything else.
    Other,
}

/// Split a chunk text into labelled blocks (unlabelled lines continue the previous block).
pub fn blocks(text: &str) -> Vec<Block<'_>> {
    let mut out: Vec<Block<'_>> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("User: ") {
            let continued = rest.ends_with(" (continued)");
            out.push(Block::User {
                text: rest.trim_end_matches(" (continued)").to_string(),
                continued,
            });
        } else if let Some(rest) = line.strip_prefix("Assistant: ") {
            out.push(Block::Assistant(rest.to_string()));
        } else if let Some(rest) = line.strip_prefix("[tool: ") {
            let (name, input) = rest
                .split_once("] ")
                .unwrap_or((rest.trim_end_matches(']'), ""));
            out.push(Block::Tool { name, input });
        } else if line.starts_with('[')
            || line.starts_with("Subagent: ")
            || line.starts_with("Compaction summary")
        {
            out.push(Block::Other);
        } else {
            match out.last_mut() {
                Some(Block::User { text, .. }) | Some(Block::Assistant(text)) => {
                    text.push('\n');
                    text.push_str(line);
                }
                _ => {}
            }
        }
    }
    out
}

static OPEN_RE: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r"(?i)(\bTODO\b|\bFIXME\b|\bstill (need|needs|to do)\b|\bnot (done|finished|fixed) yet\b|\bfollow[- ]up\b|\bleft to do\b|\bremaining (work|issue|step)s?\b)",
    )
    .unwrap_or_else(|_| unreachable!())
});

/// The prefix of the open item that is the last prompt, left without an answer.
pub(super) const UNANSWERED: &str = "Unanswered: ";

const FILE_TOOLS: [&str; 4] = ["Edit", "Write", "MultiEdit", "NotebookEdit"];

/// Files a chunk text's Edit / Write / MultiEdit / NotebookEdit calls wrote (as written in the
/// tool input: absolute paths stay absolute). Restore lines tell a turn that changed code from
/// one that only talked.
pub(crate) fn edited_files(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for b in blocks(text) {
        if let Block::Tool { name, input } = b
            && FILE_TOOLS.contains(&name)
        {
            for m in file_paths(input) {
                push_unique(&mut out, unescape(m));
            }
        }
    }
    out
}

fn unescape(s: &str) -> String {
    s.replace("\\\"", "\"")
        .replace("\\n", " ")
        .replace("\\t", " ")
        .replace("\\\\", "\\")
}

/// Sentences of a text (split on `. `, `! `, `? ` and newlines; list markers dropped).
pub(crate) fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for para in text.lines() {
        let para = para.trim().trim_start_matches("- ").trim();
        let mut cur = String::new();
        let mut chars = para.chars().peekable();
        while let Some(c) = chars.next() {
            cur.push(c);
            if matches!(c, '.' | '!' | '?') && chars.peek().is_none_or(|n| n.is_whitespace()) {
                out.push(std::mem::take(&mut cur).trim().to_string());
            }
        }
        if !cur.trim().is_empty() {
            out.push(cur.trim().to_string());
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

const STOP: &[&str] = &[
    "about",
    "above",
    "after",
    "again",
    "all",
    "also",
    "and",
    "any",
    "are",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "can",
    "could",
    "did",
    "does",
    "doing",
    "done",
    "down",
    "each",
    "few",
    "file",
    "files",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "her",
    "here",
    "hers",
    "him",
    "his",
    "how",
    "into",
    "its",
    "itself",
    "just",
    "let",
    "like",
    "look",
    "make",
    "more",
    "most",
    "need",
    "needs",
    "now",
    "off",
    "once",
    "only",
    "other",
    "our",
    "out",
    "over",
    "own",
    "please",
    "run",
    "same",
    "see",
    "should",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "too",
    "under",
    "until",
    "use",
    "used",
    "using",
    "very",
    "want",
    "was",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "i'll",
    "it's",
    "let's",
    "don't",
    "doesn't",
    "that's",
    "there's",
    "we'll",
    "i'm",
    "can't",
    "won't",
    "isn't",
    "works",
    "work",
    "check",
    "still",
    "first",
    "next",
    "change",
    "changes",
    "changed",
    "fix",
    "fixed",
    "add",
    "added",
    "test",
    "tests",
    "pass",
    "passes",
    "failing",
    "fails",
    "failed",
    "error",
    "errors",
    "line",
    "lines",
    "code",
    "thing",
    "things",
    "way",
    "new",
    "old",
    "get",
    "got",
    "try",
    "again",
    "sure",
    "good",
    "great",
    "okay",
    "thanks",
    "think",
    "know",
    "going",
    "time",
    "without",
    "within",
    "value",
    "output",
    "input",
    "result",
    "results",
    "build",
    "running",
    "rather",
    "note",
    "full",
    "todo",
    "here",
    "here's",
    "summary",
    "approach",
    "since",
    "took",
    "choosing",
    "chose",
    "instead",
    "everywhere",
    "including",
    "tell",
    "whether",
    "right",
    "plan",
    "step",
    "steps",
    "review",
    "rename",
    "looks",
    "commit",
    "help",
    "show",
    "take",
    "takes",
    "seems",
    "seem",
    "maybe",
    "might",
    "must",
    "really",
    "actually",
    "already",
    "every",
    "everything",
    "something",
    "anything",
    "nothing",
    "able",
    "both",
    "either",
    "neither",
    "less",
    "much",
    "many",
    "well",
    "even",
    "though",
    "although",
    "however",
    "yes",
    "yeah",
    "sorry",
    "hello",
    "done",
    "ready",
    "start",
    "started",
    "call",
    "calls",
    "called",
    "return",
    "returns",
    "true",
    "false",
    "none",
    "null",
    "let's",
    "i've",
    "we're",
    "you're",
    "they're",
    "what's",
    "didn't",
    "wasn't",
    "aren't",
    "haven't",
    "couldn't",
    "shouldn't",
    "wouldn't",
    "read",
    "write",
    "edit",
    "update",
    "updated",
    "create",
    "created",
    "makes",
    "made",
    "keep",
    "keeps",
    "kept",
    "give",
    "gives",
    "found",
    "find",
    "looks",
    "looking",
    "again",
    "last",
    "latest",
    "part",
    "parts",
    "continued",
    "because",
    "types",
];

/// The outcome of an assistant block: its first sentence, or, when that only announces what
/// follows ("Here's a summary of the changes:"), the sentence joined with the next line.
fn outcome(text: &str) -> Option<String> {
    let sents = sentences(text);
    let first = sents.first()?;
    if first.ends_with(':') {
        let rest: Vec<&str> = sents.iter().skip(1).take(1).map(String::as_str).collect();
        if !rest.is_empty() {
            return Some(clip(&format!("{first} {}", rest.join(" ")), 160));
        }
    }
    Some(clip(first, 160))
}

/// Candidate topic terms of a text: lowercase words (≥ 4 chars, not stop words, not numbers)
/// and identifiers (`snake_case`, `dotted.names`, `camelCase`, `` `quoted` ``).
fn terms(text: &str) -> Vec<(String, u32)> {
    static STOPS: LazyLock<HashSet<&'static str>> =
        LazyLock::new(|| STOP.iter().copied().collect());
    let mut out = Vec::new();
    for raw in text.split(|c: char| c.is_whitespace() || ",;:()[]{}<>\"'!?".contains(c)) {
        let w = raw.trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
        if w.len() < 4 || w.len() > 40 || w.chars().all(|c| c.is_ascii_digit() || c == '.') {
            continue;
        }
        if w.contains('/') || w.starts_with("http") {
            continue;
        }
        let ident = w.contains('_')
            || (w.contains('.') && !w.ends_with('.'))
            || w.chars().skip(1).any(|c| c.is_ascii_uppercase())
                && w.chars().any(|c| c.is_ascii_lowercase());
        let lower = w.to_lowercase();
        if STOPS.contains(lower.as_str()) {
            continue;
        }
        if !ident && !lower.chars().all(|c| c.is_alphabetic()) {
            continue;
        }
        out.push((
            if ident { w.to_string() } else { lower },
            if ident { 2 } else { 1 },
        ));
    }
    out
}

fn push_unique(list: &mut Vec<String>, item: String) {
    if !item.is_empty() && !list.contains(&item) {
        list.push(item);
    }
}

/// Keep the last `n` items (most recent), preserving order.
fn keep_last(list: &mut Vec<String>, n: usize) {
    if list.len() > n {
        list.drain(..list.len() - n);
    }
}

fn relative<'a>(path: &'a str, project: &str) -> &'a str {
    if project.is_empty() {
        return path;
    }
    path.strip_prefix(project)
        .and_then(|p| p.strip_prefix('/'))
        .filter(|p| !p.is_empty())
        .unwrap_or(path)
}

/// Extract a summary from chunk records of one session, in turn order.
pub(super) fn extract(recs: &[&ChunkRecord], project: &str, cfg: &SummaryConfig) -> SessionSummary {
    let mut s = SessionSummary::default();
    // Per-turn document frequency × weight for topics.
    let mut topic_score: HashMap<String, u32> = HashMap::new();
    let mut topic_turns: HashMap<String, HashSet<u32>> = HashMap::new();
    // Last assistant text per turn, last prompt per turn.
    let mut outcome_by_turn: BTreeMap<u32, String> = BTreeMap::new();
    let mut prompt_by_turn: BTreeMap<u32, String> = BTreeMap::new();
    let mut turns: HashSet<u32> = HashSet::new();
    let mut open: Vec<String> = Vec::new();
    for rec in recs {
        if rec.chunk.is_compact_summary {
            continue;
        }
        let turn = rec.chunk.turn_index;
        turns.insert(turn);
        for b in blocks(&rec.chunk.text) {
            match b {
                Block::User { text, continued } => {
                    if !continued {
                        prompt_by_turn.insert(turn, text.clone());
                        for (t, w) in terms(&text) {
                            if topic_turns.entry(t.clone()).or_default().insert(turn) {
                                *topic_score.entry(t).or_default() += w;
                            }
                        }
                    }
                }
                Block::Assistant(text) => {
                    for (t, w) in terms(&text) {
                        if topic_turns.entry(t.clone()).or_default().insert(turn) {
                            *topic_score.entry(t).or_default() += w;
                        }
                    }
                    for sent in sentences(&text) {
                        if sent.len() > 12 && DECISION_RE.is_match(&sent) {
                            let d = clip(&sent, 220);
                            s.decisions.retain(|x| x != &d);
                            s.decisions.push(d);
                        }
                        if OPEN_RE.is_match(&sent) {
                            let o = clip(&sent, 200);
                            open.retain(|x| x != &o);
                            open.push(o);
                        }
                    }
                    if let Some(o) = outcome(&text) {
                        outcome_by_turn.insert(turn, o);
                    }
                }
                Block::Tool { name, input } => {
                    if FILE_TOOLS.contains(&name) {
                        for m in file_paths(input) {
                            let path = unescape(m);
                            let rel = relative(&path, project).to_string();
                            s.files_changed.retain(|x| x != &rel);
                            s.files_changed.push(rel);
                        }
                    } else if crate::patterns::is_shell_tool(name)
                        && let Some(m) = bash_command(input)
                    {
                        let cmd = clip(&unescape(m), 160);
                        s.commands.retain(|x| x != &cmd);
                        s.commands.push(cmd);
                    }
                }
                Block::Other => {}
            }
        }
    }
    s.turns_covered = turns.len() as u32;
    keep_last(&mut s.files_changed, cfg.files);
    keep_last(&mut s.commands, cfg.commands);
    keep_last(&mut s.decisions, cfg.decisions);
    let mut topics: Vec<(String, u32)> = topic_score.into_iter().filter(|(_, n)| *n >= 2).collect();
    topics.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    s.topics = topics
        .into_iter()
        .take(cfg.topics)
        .map(|(t, _)| t)
        .collect();
    for o in outcome_by_turn.values() {
        s.outcomes.retain(|x| x != o);
        s.outcomes.push(o.clone());
    }
    keep_last(&mut s.outcomes, cfg.outcomes);
    // Open items: the last prompt when its turn has no assistant text, then TODO-like sentences.
    if let Some((turn, prompt)) = prompt_by_turn.iter().next_back()
        && !outcome_by_turn.contains_key(turn)
    {
        push_unique(
            &mut s.open_items,
            format!("{UNANSWERED}{}", clip(prompt, 200)),
        );
    }
    // The newest TODO-like ones fill the rest (the unanswered prompt takes a place).
    keep_last(&mut open, cfg.open_items.saturating_sub(s.open_items.len()));
    for o in open {
        push_unique(&mut s.open_items, o);
    }
    s
}
