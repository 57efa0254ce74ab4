//! What one archived turn becomes in a restore block: pure functions over the turn's labelled
//! text (see `transcript::chunker`), no store access.
//!
//! Why not the chunk's stored one-line summary: it is the prompt's first sentence and the
//! answer's first sentence, and real blocks showed what that keeps: "The build is failing with
//! this:" without the failure, "Here's a summary of the changes:" without the changes. A
//! restore line keeps the lines that carry substance instead: the failure line of a pasted log,
//! the request, the concluding sentences and bullets of the answer, the files it changed, the
//! commands it ran, and an `error:` only when a command really failed.

use crate::patterns::{DECISION_RE, bash_command};
use crate::summary::{Block, blocks, edited_files, sentences};
use crate::transcript::clip_line as clip;
use std::sync::LazyLock;

/// Longest prompt gist and reply gist of a line (the line itself is capped by the budget).
pub(crate) const GIST_CHARS: usize = 260;

/// A concrete error line: a compiler or runtime error with its message, a failed test, a panic.
static CONCRETE_ERROR_RE: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(concat!(
        r"(?:^|[\s:])error(?:\[[A-Z]?\d+\])?:\s", // error: / error[E0308]: / mypy's `: error:`
        r"|\berror TS\d+:",                       // tsc
        r"|\b[A-Z]\w*(?:Error|Exception)\b(?::|$)", // KeyError: / sqlite3.OperationalError:
        r"|^Error: ",                             // Node / anyhow
        r"|\bpanicked at\b",                      // Rust panics
        r"|^(?:FAILED|FAIL)\b",                   // pytest / vitest / jest
        r"|^npm ERR!",
        r"|^fatal: ", // git
    ))
    .unwrap_or_else(|_| unreachable!())
});

/// Where an error happened: `--> src/x.rs:12:5`, `File "x.py", line 3`, `at f (x.ts:1:2)`.
static LOCATION_RE: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r#"^(?:-->\s*\S+:\d+|File "[^"]+", line \d+|at .*\(\S+:\d+:\d+\))"#)
        .unwrap_or_else(|_| unreachable!())
});

/// A log line (timestamp first): pasted logs are evidence, not the request. ASCII digits: a
/// Unicode `\d` repeated 12 times made this pattern's compilation cost milliseconds.
static LOG_LINE_RE: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"^\[?[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}")
        .unwrap_or_else(|_| unreachable!())
});

/// Sentences that announce, ask or narrate instead of concluding.
static FILLER_RE: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r"(?i)^(here'?s|here is|here are|below is|let me|let's|i'll|i will|i'm going to|now i'll|now let me|next,? i'll|that compiles|want me to|should i|shall i|do you want|would you like|sure|ok(ay)?|great|perfect|got it|done)\b",
    )
    .unwrap_or_else(|_| unreachable!())
});

/// How strongly a line says something failed: 0 not at all, 1 a failure word ("3 tests
/// failed"), 2 an error header (`Traceback`, `assertion failed`), 3 a concrete error message.
/// Negated counts ("0 failed"), passing summaries (`test result: ok`) and words inside paths or
/// identifiers (`errors.rs`, `on_error`) are 0: they are why `error:` used to label Read
/// output and passing test runs.
pub(crate) fn error_strength(line: &str) -> u8 {
    let l = line.trim();
    if l.is_empty() {
        return 0;
    }
    if CONCRETE_ERROR_RE.is_match(l) {
        return 3;
    }
    let lower = l.to_ascii_lowercase();
    if lower.starts_with("traceback (most recent call last)") || lower.contains("assertion") {
        return 2;
    }
    if lower.contains("test result: ok") {
        return 0;
    }
    let words: Vec<&str> = l.split_whitespace().collect();
    let failure = words.iter().enumerate().any(|(i, w)| {
        let t = w
            .trim_matches(|c: char| ",;:.!()[]'\"".contains(c))
            .to_ascii_lowercase();
        let word = matches!(
            t.as_str(),
            "error" | "errors" | "failed" | "failure" | "fatal"
        );
        let negated = i > 0 && words[i - 1] == "0";
        let in_name = w.contains('/') || w.contains('_');
        word && !negated && !in_name
    });
    u8::from(failure)
}

/// The labelled result blocks of a turn that can hold a real failure: any `[error: X]` result
/// (the tool said it failed) and the output of commands (`[result: Bash]`). Read, Grep, Glob and
/// edit results are file content: an "error" there is code, not a failure.
/// What follows `[result: <shell tool>]` on a line (any agent's shell tool, or
/// `BashOutput`); None for other lines.
fn shell_result(line: &str) -> Option<&str> {
    let (name, rest) = line.strip_prefix("[result: ")?.split_once(']')?;
    (crate::patterns::is_shell_tool(name) || name == "BashOutput").then_some(rest)
}

fn failure_blocks(text: &str) -> Vec<(bool, Vec<&str>)> {
    let mut out: Vec<(bool, Vec<&str>)> = Vec::new();
    let mut current: Option<(bool, Vec<&str>)> = None;
    for line in text.lines() {
        let labelled = line.starts_with("[tool: ")
            || line.starts_with("[result")
            || line.starts_with("[error")
            || line.starts_with("User:")
            || line.starts_with("Assistant:")
            || line.starts_with("Subagent:");
        if labelled {
            out.extend(current.take());
            let (errored, body) = if let Some(rest) = line.strip_prefix("[error") {
                (true, rest)
            } else if let Some(rest) = shell_result(line) {
                (false, rest)
            } else {
                continue;
            };
            let body = body.split_once("] ").map_or(body, |(_, b)| b);
            current = Some((errored, vec![body]));
        } else if let Some((_, lines)) = &mut current {
            lines.push(line);
        }
    }
    out.extend(current);
    out
}

/// The most telling error line of a turn: a concrete error message from a command or a failed
/// tool wins over an error header, which wins over a failure word (accepted only in a failed
/// tool's output). `Exit code N` preambles are skipped. None when nothing failed.
pub(crate) fn first_error_line(text: &str) -> Option<String> {
    let mut best: Option<(u8, &str)> = None;
    for (errored, lines) in failure_blocks(text) {
        for l in lines.into_iter().map(str::trim) {
            if l.is_empty() || is_exit_code_line(l) {
                continue;
            }
            let s = error_strength(l);
            let counts = s >= 2 || (s == 1 && errored);
            if counts && best.is_none_or(|(b, _)| s > b) {
                best = Some((s, l));
            }
        }
    }
    best.map(|(_, l)| clip(l, 200))
}

fn is_exit_code_line(l: &str) -> bool {
    l.strip_prefix("Exit code ")
        .is_some_and(|rest| rest.trim().chars().all(|c| c.is_ascii_digit() || c == '-'))
}

/// `text` with every path under `project` written relative to it: the model works in the
/// project, and `/home/…/project/src/x.rs` spends 25 characters of the budget on nothing.
pub(crate) fn relativize(text: &str, project: &str) -> String {
    let root = project.trim_end_matches('/');
    if root.len() < 2 || !text.contains(root) {
        return text.to_string();
    }
    text.replace(&format!("{root}/"), "")
}

/// Replace runs of digits by `#`: repeated log lines differ only in counters and timestamps.
fn digit_shape(l: &str) -> String {
    let mut out = String::with_capacity(l.len());
    let mut in_num = false;
    for c in l.chars() {
        if c.is_ascii_digit() {
            if !in_num {
                out.push('#');
            }
            in_num = true;
        } else {
            out.push(c);
            in_num = false;
        }
    }
    out
}

/// The evidence of a pasted block (a log, a compiler output): its most telling error line, the
/// first location, and one representative of lines repeated with other numbers (`(×5)`), at
/// most three lines in their order. A block without any of these keeps its first line.
fn evidence(block: &[&str]) -> Vec<String> {
    let best = block
        .iter()
        .enumerate()
        .map(|(i, l)| (error_strength(l), i))
        .filter(|(s, _)| *s >= 1)
        .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))
        .map(|(_, i)| i);
    let location = block.iter().position(|l| LOCATION_RE.is_match(l.trim()));
    let mut repeated: Option<(usize, usize)> = None; // (first index, count)
    for (i, l) in block.iter().enumerate() {
        let shape = digit_shape(l);
        let n = block.iter().filter(|o| digit_shape(o) == shape).count();
        if n >= 3 && repeated.is_none_or(|(_, m)| n > m) {
            repeated = Some((i, n));
        }
    }
    let mut picked: Vec<(usize, String)> = Vec::new();
    if let Some(i) = best {
        picked.push((i, block[i].trim().to_string()));
    }
    if let Some(i) = location.filter(|i| Some(*i) != best) {
        picked.push((i, block[i].trim().to_string()));
    }
    if let Some((i, n)) = repeated.filter(|(i, _)| Some(*i) != best) {
        picked.push((i, format!("{} (×{n})", block[i].trim())));
    }
    if picked.is_empty()
        && let Some(first) = block.iter().find(|l| !l.trim().is_empty())
    {
        picked.push((0, first.trim().to_string()));
    }
    picked.sort_by_key(|(i, _)| *i);
    picked.into_iter().map(|(_, l)| l).collect()
}

/// One piece of a gist, with its keep priority (lower is kept longer).
struct Piece {
    text: String,
    priority: u8,
}

/// Pieces joined in order: a space after a sentence, `; ` after a bullet or a pasted line
/// (they end without punctuation and would run together).
fn join(pieces: &[Piece]) -> String {
    let mut out = String::new();
    for p in pieces {
        if !out.is_empty() {
            out.push_str(if out.ends_with(['.', '!', '?', ':']) {
                " "
            } else {
                "; "
            });
        }
        out.push_str(&p.text);
    }
    out
}

/// Join pieces in order within `max` characters: drop the lowest-priority (then latest) pieces
/// first, clip what is left.
fn fit(mut pieces: Vec<Piece>, max: usize) -> String {
    loop {
        let joined = join(&pieces);
        if joined.chars().count() <= max || pieces.len() <= 1 {
            return clip(&joined, max);
        }
        let worst = pieces
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.priority.cmp(&b.1.priority).then(a.0.cmp(&b.0)))
            .map_or(0, |(i, _)| i);
        pieces.remove(worst);
    }
}

/// The informative lines of a prompt, within `max` characters: the request (its first line
/// outside pasted blocks first, then the rest of it) and, from each pasted block (a fenced
/// block, or log and error lines pasted bare), the lines that say what failed. A pasted failure
/// log is the point of such a prompt; its first line ("The build is failing with this:") is not.
pub(crate) fn prompt_gist(prompt: &str, max: usize) -> String {
    let mut pieces: Vec<Piece> = Vec::new();
    let mut pasted: Vec<&str> = Vec::new();
    let mut in_fence = false;
    let mut asked = 0;
    let flush = |pasted: &mut Vec<&str>, pieces: &mut Vec<Piece>| {
        if !pasted.is_empty() {
            for e in evidence(pasted) {
                pieces.push(Piece {
                    text: format!("`{e}`"),
                    priority: 1,
                });
            }
            pasted.clear();
        }
    };
    for raw in prompt.lines() {
        let l = raw.trim();
        if l.starts_with("```") {
            if in_fence {
                flush(&mut pasted, &mut pieces);
            }
            in_fence = !in_fence;
            continue;
        }
        if l.is_empty() {
            continue;
        }
        let bare_paste =
            error_strength(l) >= 2 || LOG_LINE_RE.is_match(l) || LOCATION_RE.is_match(l);
        if in_fence || bare_paste {
            pasted.push(l);
            continue;
        }
        flush(&mut pasted, &mut pieces);
        pieces.push(Piece {
            text: l.to_string(),
            priority: if asked == 0 { 0 } else { 2 },
        });
        asked += 1;
    }
    flush(&mut pasted, &mut pieces);
    fit(pieces, max)
}

/// How much a sentence of an answer concludes: 0 filler (announces, asks, narrates: "Here's a
/// summary of the changes:", "Want me to commit this?", "Let me run the tests."), 1 a generic
/// outcome ("All 42 tests pass now.", "Fixed."), 2 concrete (a decision or root cause, a name,
/// a path, a backticked identifier, a figure).
pub(crate) fn substance(sentence: &str) -> u8 {
    let s = sentence.trim();
    if s.is_empty() || s.ends_with(':') || s.ends_with('?') || FILLER_RE.is_match(s) {
        // A filler opening can still carry a decision ("Done. I took X rather than Y").
        return if DECISION_RE.is_match(s) && !s.ends_with(':') {
            2
        } else {
            0
        };
    }
    let concrete = DECISION_RE.is_match(s)
        || s.contains('`')
        || s.split_whitespace().any(|w| {
            let w = w.trim_matches(|c: char| ",;:.!?()'\"".contains(c));
            w.contains('/') || w.contains('_') || w.contains("::") || is_file_name(w)
        });
    let generic = s.split_whitespace().count() <= 7
        && s.split_whitespace()
            .all(|w| w.chars().any(|c| c.is_ascii_digit()) || w.len() < 12);
    if concrete {
        2
    } else if generic {
        1
    } else {
        2
    }
}

/// `name.ext` with a short alphabetic extension (`lib.rs`, `users.test.ts`), not `e.g` or `3.5`.
fn is_file_name(w: &str) -> bool {
    w.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphabetic())
            && stem.chars().any(|c| c.is_ascii_alphabetic())
            && w.len() > 4
    })
}

/// What an answer concluded, within `max` characters: its sentences and bullets with substance
/// (concrete ones kept longest), in their order, without filler; sentences `known` says the
/// model already has (decisions listed elsewhere in the block, CLAUDE.md lines) are left out.
/// Empty when the answer only announced or narrated.
pub(crate) fn reply_gist(reply: &str, max: usize, known: &dyn Fn(&str) -> bool) -> String {
    let pieces: Vec<Piece> = sentences(reply)
        .into_iter()
        .filter(|s| !known(s))
        .filter_map(|s| match substance(&s) {
            0 => None,
            n => Some(Piece {
                text: s,
                priority: 3 - n,
            }),
        })
        .collect();
    if pieces.iter().all(|p| p.priority > 1) && pieces.len() > 1 {
        // Only generic outcomes: one is enough.
        return fit(pieces.into_iter().take(1).collect(), max);
    }
    fit(pieces, max)
}

/// A prompt that only acknowledges or steers ("yes, do that", "continue", "ok", "lgtm,
/// next"): a few words, none of them a name, path, number or identifier.
pub(crate) fn is_ack_prompt(prompt: &str) -> bool {
    let p = prompt.trim();
    let words: Vec<&str> = p.split_whitespace().collect();
    words.len() <= 6
        && !p.contains('`')
        && words.iter().all(|w| {
            !w.contains('/')
                && !w.contains('_')
                && !w.chars().any(|c| c.is_ascii_digit())
                && !is_file_name(w.trim_end_matches(|c: char| ",.!?".contains(c)))
        })
}

/// The parts of a turn's text a line is made of.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TurnParts {
    /// The prompt (whole, continuation headers excluded).
    pub prompt: String,
    /// The turn's last assistant text (its answer).
    pub reply: String,
    /// Files written by edit tools.
    pub edited: Vec<String>,
    /// Bash commands, in order, unique.
    pub commands: Vec<String>,
    /// The most telling real error line.
    pub error: Option<String>,
}

/// Split a turn's labelled text (all its parts joined) into [`TurnParts`].
pub(crate) fn turn_parts(text: &str) -> TurnParts {
    let mut p = TurnParts::default();
    for b in blocks(text) {
        match b {
            Block::User { text, continued } if !continued && p.prompt.is_empty() => {
                p.prompt = text;
            }
            Block::Assistant(t) => p.reply = t,
            Block::Tool { name, input } if crate::patterns::is_shell_tool(name) => {
                if let Some(c) = bash_command(input) {
                    let cmd = c.replace("\\\"", "\"").replace("\\n", " ");
                    if !p.commands.contains(&cmd) {
                        p.commands.push(cmd);
                    }
                }
            }
            _ => {}
        }
    }
    p.edited = edited_files(text);
    p.error = first_error_line(text);
    p
}

/// True when a turn says nothing worth restoring: an acknowledging prompt, an answer without a
/// concrete sentence, no file changed and nothing failed ("yes, do that → All tests pass").
pub(crate) fn is_trivial(parts: &TurnParts, reply_gist: &str) -> bool {
    is_ack_prompt(&parts.prompt)
        && parts.edited.is_empty()
        && parts.error.is_none()
        && sentences(reply_gist).iter().all(|s| substance(s) < 2)
}

/// Where a line comes from, for its `[...]` head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LineHead<'a> {
    /// Session id (shown, shortened, for turns of other sessions).
    pub session: Option<&'a str>,
    /// Turn index.
    pub turn: u32,
    /// `MM-DD HH:MM`, or empty.
    pub time: &'a str,
    /// How long ago the turn was ("3 days ago"), for a turn of another session or an older
    /// one ([`crate::retrieve::when::line_age`]).
    pub age: Option<&'a str>,
}

/// One restore line for a turn: `[turn N, time, age] prompt → answer · changed: … · ran: … · error: …`,
/// paths relative to `project`. `files` are the chunk's files (shown when none was edited);
/// `known` filters answer sentences the block or the CLI already carries. None when the turn
/// is trivial ([`is_trivial`]).
pub(crate) fn turn_line(
    head: LineHead<'_>,
    parts: &TurnParts,
    files: &[String],
    project: &str,
    known: &dyn Fn(&str) -> bool,
) -> Option<String> {
    let reply = reply_gist(&parts.reply, GIST_CHARS, known);
    if is_trivial(parts, &reply) {
        return None;
    }
    let mut s = match head.session {
        Some(id) => format!("[session {} turn {}", id.get(..8).unwrap_or(id), head.turn),
        None => format!("[turn {}", head.turn),
    };
    if !head.time.is_empty() {
        s.push_str(&format!(", {}", head.time));
    }
    if let Some(age) = head.age {
        s.push_str(&format!(", {age}"));
    }
    s.push_str("] ");
    let prompt = prompt_gist(&parts.prompt, GIST_CHARS);
    s.push_str(if prompt.is_empty() {
        "(no prompt)"
    } else {
        &prompt
    });
    if !reply.is_empty() {
        s.push_str(" → ");
        s.push_str(&reply);
    }
    let (label, shown) = if parts.edited.is_empty() {
        ("files", files)
    } else {
        ("changed", parts.edited.as_slice())
    };
    if !shown.is_empty() {
        let list: Vec<&str> = shown.iter().take(5).map(String::as_str).collect();
        s.push_str(&format!(" · {label}: {}", list.join(", ")));
    }
    if !parts.commands.is_empty() {
        let cmds: Vec<String> = parts
            .commands
            .iter()
            .take(3)
            .map(|c| format!("`{}`", clip(c, 80)))
            .collect();
        s.push_str(&format!(" · ran: {}", cmds.join(", ")));
    }
    if let Some(e) = &parts.error {
        s.push_str(&format!(" · error: {e}"));
    }
    Some(relativize(&s, project))
}

#[cfg(test)]
mod tests;
