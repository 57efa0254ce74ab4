//! Extractive digest of a swapped output: a one-line summary and key patterns (definitions,
//! files, match counts, line count, first error line), by cheap regexes, no model.

use crate::transcript::clip_line;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// Summary and key patterns of one output.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Digest {
    /// One line: what the output is (≤ [`MAX_SUMMARY`] characters).
    pub summary: String,
    /// Key patterns: defined names, files, counts (short strings).
    pub patterns: Vec<String>,
    /// Number of lines of the output.
    pub lines: u64,
    /// The first line that looks like an error.
    pub first_error: Option<String>,
}

/// Longest summary line.
pub const MAX_SUMMARY: usize = 300;
/// Definitions listed at most.
const MAX_DEFS: usize = 16;
/// Files listed at most.
const MAX_FILES: usize = 12;

// Definitions in common languages: Rust, Python, JS/TS, Go, Java/Kotlin/C#/Scala, Ruby, shell.
// An optional `cat -n` style line-number prefix is allowed (the Read tool shows one).
static DEF_RE: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r"(?m)^[ \t]*(?:\d+(?:\t|→))?[ \t]*(?:(?:pub(?:\([^)\n]*\))?|export|default|abstract|async|static|public|private|protected|internal|final|unsafe|sealed|data|open|override)[ \t]+)*(?:fn|struct|enum|trait|mod|union|class|interface|def|func(?:[ \t]*\([^)\n]*\))?|function\*?|impl(?:<[^>\n]*>)?|object|module|record)[ \t]+([A-Za-z_$][A-Za-z0-9_$]*)",
    )
    .unwrap_or_else(|_| unreachable!())
});

static ERROR_RE: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        // `error:` / `error[E0433]:` but not the path `crate::error::X`; upper-case `ERROR`
        // log levels; the usual failure words.
        r"(?im)(?-u:\b)(?:error(?:\[[a-z0-9]+\])?:(?:[^:]|$)|(?-i:ERROR)(?-u:\b)|failed|panicked|traceback|exception|fatal:)",
    )
    .unwrap_or_else(|_| unreachable!())
});

static EXIT_RE: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"(?m)^Error: Exit code (\d+)").unwrap_or_else(|_| unreachable!())
});

/// Language name from a path's extension.
fn language(path: &str) -> Option<&'static str> {
    let file = path.split_whitespace().next().unwrap_or(path);
    let ext = file.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "rs" => "rust",
        "py" => "python",
        "js" | "mjs" | "cjs" | "jsx" => "javascript",
        "ts" | "tsx" => "typescript",
        "go" => "go",
        "java" => "java",
        "kt" | "kts" => "kotlin",
        "cs" => "c#",
        "c" | "h" => "c",
        "cc" | "cpp" | "hpp" | "cxx" => "c++",
        "rb" => "ruby",
        "sh" | "bash" => "shell",
        "md" => "markdown",
        "toml" => "toml",
        "json" | "jsonl" => "json",
        "yaml" | "yml" => "yaml",
        "html" => "html",
        "css" => "css",
        "sql" => "sql",
        "log" | "txt" => "text",
        _ => return None,
    })
}

fn line_count(text: &str) -> u64 {
    if text.is_empty() {
        return 0;
    }
    let n = memchr_count(text.as_bytes(), b'\n');
    n + u64::from(!text.ends_with('\n'))
}

fn memchr_count(b: &[u8], c: u8) -> u64 {
    b.iter().filter(|x| **x == c).count() as u64
}

/// The line looks like a failure (the same rule as [`Digest::first_error`]).
pub(crate) fn is_error_line(line: &str) -> bool {
    ERROR_RE.is_match(line)
}

/// The first line matching [`ERROR_RE`], trimmed and clipped.
fn first_error(text: &str) -> Option<String> {
    let m = ERROR_RE.find(text)?;
    let start = text[..m.start()].rfind('\n').map_or(0, |i| i + 1);
    let end = text[m.end()..]
        .find('\n')
        .map_or(text.len(), |i| m.end() + i);
    Some(clip_line(&text[start..end], 200))
}

/// Names defined in source text (first [`MAX_DEFS`], in order, unique).
pub fn definitions(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in DEF_RE.captures_iter(text) {
        if let Some(m) = c.get(1) {
            let name = m.as_str();
            if !out.iter().any(|x| x == name) {
                out.push(name.to_string());
                if out.len() >= MAX_DEFS {
                    break;
                }
            }
        }
    }
    out
}

/// Files named by grep-style output lines (`path:line:text`, `path:count` or bare paths).
fn grep_files(text: &str) -> (Vec<String>, usize) {
    let mut files: Vec<String> = Vec::new();
    let mut distinct = 0;
    let mut last = "";
    for line in text.lines().filter(|l| !l.is_empty()) {
        let f = line.split(':').next().unwrap_or(line);
        if f == last || f.is_empty() || (f.contains(' ') && !f.contains('/')) {
            continue;
        }
        last = f;
        if !files.iter().any(|x| x == f) {
            distinct += 1;
            if files.len() < MAX_FILES {
                files.push(f.to_string());
            }
        }
    }
    (files, distinct)
}

/// Extensions histogram of a file list, most common first (`.rs ×12`).
fn extensions(paths: &[&str]) -> Vec<String> {
    let mut h: BTreeMap<&str, usize> = BTreeMap::new();
    for p in paths {
        let name = p.rsplit('/').next().unwrap_or(p);
        if let Some((_, e)) = name.rsplit_once('.') {
            *h.entry(e).or_default() += 1;
        }
    }
    let mut v: Vec<(&str, usize)> = h.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    v.into_iter()
        .take(4)
        .map(|(e, n)| format!(".{e} ×{n}"))
        .collect()
}

fn first_content_line(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find(|l| l.chars().any(char::is_alphanumeric))
        .map(|l| clip_line(l, 120))
}

/// Digest of `text`, the output of `tool` called with `input` (its one-line summary).
pub fn digest(tool: &str, input: &str, text: &str) -> Digest {
    let lines = line_count(text);
    // In source code "error"/"failed" are identifiers and messages, not a failure of the read.
    let is_code = tool == "Read" && language(input).is_some_and(|l| l != "text");
    let first_error = if is_code { None } else { first_error(text) };
    let mut patterns: Vec<String> = Vec::new();
    let summary = match tool {
        "Read" => {
            let lang = language(input);
            let defs = definitions(text);
            let mut s = format!("{input}: {lines} lines");
            if let Some(l) = lang {
                s.push_str(&format!(" of {l}"));
            }
            if defs.is_empty() {
                if let Some(l) = first_content_line(text) {
                    s.push_str(&format!("; starts: {l}"));
                }
            } else {
                s.push_str(&format!("; defines {}", defs.join(", ")));
            }
            patterns.extend(defs);
            s
        }
        "Grep" => {
            let (files, n_files) = grep_files(text);
            let s = format!(
                "grep {input}: {lines} result lines in {n_files} files: {}",
                files.join(", ")
            );
            patterns.push(format!("{lines} lines"));
            patterns.push(format!("{n_files} files"));
            patterns.extend(files);
            s
        }
        "Glob" => {
            let all: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
            let ext = extensions(&all);
            let shown: Vec<&str> = all.iter().take(MAX_FILES).copied().collect();
            let s = format!(
                "glob {input}: {} files ({}): {}",
                all.len(),
                ext.join(", "),
                shown.join(", ")
            );
            patterns.push(format!("{} files", all.len()));
            patterns.extend(ext);
            patterns.extend(shown.iter().map(|s| (*s).to_string()));
            s
        }
        "Bash" => {
            let mut s = format!("`{input}`: {lines} lines of output");
            if let Some(code) = EXIT_RE.captures(text).and_then(|c| c.get(1)) {
                s.push_str(&format!(", exit code {}", code.as_str()));
                patterns.push(format!("exit code {}", code.as_str()));
            }
            if let Some(l) = text
                .lines()
                .rev()
                .map(str::trim)
                .find(|l| l.chars().any(char::is_alphanumeric))
            {
                s.push_str(&format!("; last line: {}", clip_line(l, 120)));
            }
            s
        }
        "WebFetch" => {
            let mut s = format!("{input}: {lines} lines");
            if let Some(l) = first_content_line(text) {
                s.push_str(&format!("; starts: {l}"));
            }
            s
        }
        _ => format!("{tool} {input}: {lines} lines"),
    };
    let mut summary = summary;
    if let Some(e) = &first_error {
        summary.push_str(&format!("; first error: {e}"));
        patterns.push(format!("error: {e}"));
    }
    patterns.push(format!("{lines} lines"));
    patterns.dedup();
    Digest {
        summary: clip_line(&summary, MAX_SUMMARY),
        patterns,
        lines,
        first_error,
    }
}
