//! Swap *in place*: a big tool output leaves the live context the moment it is produced.
//!
//! Claude Code lets a PostToolUse hook replace a tool's output (`updatedToolOutput`, which must
//! keep the tool's own response shape, or the client ignores it for built-in tools). Verified
//! with the real CLI 2.1.330 (`tests/e2e/scenarios/swap-in-place.json`): the model's next
//! request and the transcript both carry the replacement, never the original. So above a size
//! ([`super::SwapConfig::in_place`]) the hook stores the whole output and hands the model a
//! digest instead: size, head, the key lines (errors, failing tests, with a line of context)
//! and tail, each with its line number, and the exact way to get any line range back.
//!
//! What the client does on its own, and why a digest beats it: an output over ~30 KB is saved
//! to `<transcript dir>/<session>/tool-results/<id>.txt` and the model sees a blind 2 KB head
//! (`<persisted-output>`; an error near the end is not in it); the hook's `tool_response` then
//! holds a 30 KB head plus `persistedOutputPath`. We read that file (after checking that it is
//! a regular file inside this session's `tool-results/`), so the store holds the exact output,
//! and drop the `persisted*` fields from the replacement (with them the client wraps our
//! digest in its own `<persisted-output>` preview).
//!
//! Never in place: Read (Edit relies on what the model read), failed calls (their output is an
//! error string, and short), images, shapes not verified ([`super::config::IN_PLACE_SHAPES`]),
//! outputs we could not store (store busy, over [`super::SwapConfig::max_entry_bytes`]): the
//! model then gets the output as the client made it, and the swap stores what it can.

use super::{Prepared, StoreReport, SwapConfig, ToolCall, human_bytes, short_id};
use crate::core::Core;
use crate::error::EngineError;
use crate::transcript::ellipsize;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Longest digest (characters): head, key lines and tail are cut to fit.
pub const MAX_DIGEST_CHARS: usize = 2000;
/// Characters of one digest line at most.
const LINE_CHARS: usize = 160;
/// Lines of the head and of the tail shown at most.
const HEAD_LINES: usize = 6;
const TAIL_LINES: usize = 12;
/// Key lines shown at most (each with one line of context on both sides).
const KEY_LINES: usize = 8;
/// What the client shows of an output it saved to a file: a 2 KB preview and its wrapper
/// (`<persisted-output>`, the size and the file's path), measured with the real CLI.
pub const CLIENT_PREVIEW_CHARS: u64 = 2048 + 260;

/// Bash's `tool_response` as the client sends it (2.1.330). Unknown fields pass through
/// unchanged (`rest`): the replacement keeps the response's own shape.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BashResponse {
    stdout: String,
    #[serde(default)]
    stderr: String,
    #[serde(default)]
    is_image: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    persisted_output_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    persisted_output_size: Option<u64>,
    #[serde(flatten)]
    rest: serde_json::Map<String, serde_json::Value>,
}

/// A shell tool's `tool_response` in either verified shape: Claude Code's object, or the
/// command's output as one JSON string (Codex CLI 0.171.0, whose hooks see `exec_command` as
/// `Bash`). The replacement keeps the shape it came in.
#[derive(Debug, Serialize, Deserialize)]
#[serde(untagged)]
enum Shape {
    Object(BashResponse),
    Text(String),
}

/// Why an output was not swapped in place (the normal swap may still store it).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotInPlace {
    /// In-place swapping is off for this tool, or its shape is not verified.
    ToolNotEnabled,
    /// A failed call (PostToolUseFailure).
    Failed,
    /// The response is not of the shape we know (or an image).
    UnknownShape,
    /// The client saved the output to a file we may not or cannot read.
    PersistedUnreadable(String),
    /// Smaller than the in-place threshold.
    BelowThreshold {
        /// Characters of the whole output.
        chars: usize,
        /// The tool's in-place threshold.
        threshold: usize,
    },
    /// The swap would not store it (too large, disabled).
    NotStored(super::SkipReason),
}

/// An output that can be swapped in place: its whole text and how to rebuild the response.
#[derive(Debug)]
pub struct Candidate {
    /// The whole output (from the client's file when it cut it).
    pub text: String,
    /// Characters of the output the model would see without us.
    pub visible_chars: u64,
    response: Shape,
}

/// Decide whether `call` is swapped in place and collect its whole output. `transcript`: the
/// payload's `transcript_path` (the client's own output files live beside it).
pub fn candidate(
    call: &ToolCall<'_>,
    transcript: Option<&Path>,
    cfg: &SwapConfig,
) -> Result<Candidate, NotInPlace> {
    let threshold = cfg
        .in_place_threshold(call.tool_name)
        .ok_or(NotInPlace::ToolNotEnabled)?;
    if call.failed {
        return Err(NotInPlace::Failed);
    }
    // PostToolUse runs on every Bash call: the JSON text is at least as long as the output it
    // holds, so a short one that names no saved file is not parsed.
    if call.tool_response.len() < threshold && !call.tool_response.contains("persistedOutputPath") {
        return Err(NotInPlace::BelowThreshold {
            chars: call.tool_response.chars().count(),
            threshold,
        });
    }
    let mut response: Shape =
        serde_json::from_str(call.tool_response).map_err(|_| NotInPlace::UnknownShape)?;
    let (text, visible_chars) = match &mut response {
        Shape::Text(t) => {
            let t = std::mem::take(t);
            let n = t.chars().count() as u64;
            (t, n)
        }
        Shape::Object(r) => object_text(r, call, transcript, cfg)?,
    };
    let chars = text.chars().count();
    if chars < threshold {
        return Err(NotInPlace::BelowThreshold { chars, threshold });
    }
    Ok(Candidate {
        text,
        visible_chars,
        response,
    })
}

/// The whole output of Claude Code's Bash response and the characters the model would see.
fn object_text(
    response: &mut BashResponse,
    call: &ToolCall<'_>,
    transcript: Option<&Path>,
    cfg: &SwapConfig,
) -> Result<(String, u64), NotInPlace> {
    if response.is_image {
        return Err(NotInPlace::UnknownShape);
    }
    if let Some(p) = &response.persisted_output_path {
        let text = read_persisted(Path::new(p), transcript, call.session_id, cfg)
            .map_err(NotInPlace::PersistedUnreadable)?;
        return Ok((text, CLIENT_PREVIEW_CHARS));
    }
    // The replacement overwrites stdout: the output moves out, no copy.
    let mut t = std::mem::take(&mut response.stdout);
    if !response.stderr.is_empty() {
        if !t.is_empty() && !t.ends_with('\n') {
            t.push('\n');
        }
        t.push_str(&response.stderr);
    }
    let n = t.chars().count() as u64;
    Ok((t, n))
}

/// Read the client's saved output: only a regular file inside
/// `<transcript dir>/<session>/tool-results/`, at most `max_entry_bytes` (a payload is input:
/// a path elsewhere — `/etc/shadow`, a FIFO, another session's files — is refused).
fn read_persisted(
    path: &Path,
    transcript: Option<&Path>,
    session: &str,
    cfg: &SwapConfig,
) -> Result<String, String> {
    let dir = transcript
        .and_then(Path::parent)
        .ok_or("no transcript path to check the saved output's place against")?;
    if session.is_empty()
        || !session
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(format!("session id {session:?} cannot name a folder"));
    }
    let allowed = dir
        .join(session)
        .join("tool-results")
        .canonicalize()
        .map_err(|e| format!("the session's tool-results folder: {e}"))?;
    let real = path
        .canonicalize()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if real.parent() != Some(allowed.as_path()) {
        return Err(format!(
            "{} is not in this session's tool-results folder",
            path.display()
        ));
    }
    crate::paths::read_regular_string(&real, cfg.max_entry_bytes)
        .map_err(|e| format!("{}: {e}", real.display()))
}

impl Candidate {
    /// The response the model gets instead, in the shape it came in: the digest as the whole
    /// string, or the object with `stdout` = `digest`, `stderr` empty (the digest covers
    /// both) and no `persisted*` fields.
    pub fn replacement(mut self, digest: &str) -> Result<Box<serde_json::value::RawValue>, String> {
        match &mut self.response {
            Shape::Text(t) => *t = digest.to_string(),
            Shape::Object(r) => {
                r.stdout = digest.to_string();
                r.stderr = String::new();
                r.persisted_output_path = None;
                r.persisted_output_size = None;
            }
        }
        serde_json::value::to_raw_value(&self.response).map_err(|e| e.to_string())
    }
}

/// A line range of `text` as a byte span: lines `first..=last`, 1-based (the numbering of
/// the digest, `memctl swap show --lines` and the MCP `tool_output` tool).
pub fn line_span(text: &str, first: u64, last: u64) -> (usize, usize) {
    let (mut start, mut end) = (text.len(), text.len());
    let mut pos = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let n = i as u64 + 1;
        if n == first {
            start = pos;
        }
        pos += line.len();
        if n == last {
            end = pos;
            break;
        }
    }
    (start, end.max(start))
}

/// A key line: a failure (`error:`, `FAILED`, `panicked`, a traceback, ...), a failing test
/// (cargo's `... FAILED`, pytest's `FAILED`, go's `--- FAIL`, TAP's `not ok`) or a warning.
fn is_key(line: &str) -> bool {
    let t = line.trim_start();
    super::digest::is_error_line(line)
        || line.contains("FAIL")
        || t.starts_with("not ok")
        || line.contains("warning:")
}

/// The digest the model sees instead of `text` (pure; at most [`MAX_DIGEST_CHARS`]).
///
/// Layout: one header (size, lines, the stored id and the exact commands that fetch a range),
/// then numbered lines: the head, the key lines with one line of context each, the tail.
/// Elisions say how many lines they skip, so the model knows where to ask.
pub fn render(p: &Prepared) -> String {
    let e = &p.entry;
    let text = p.content.as_str();
    let id = short_id(&e.id);
    let lines: Vec<&str> = text.lines().collect();
    let n = lines.len();
    let header = format!(
        "[memctl: this {} output ({}, {n} lines) was swapped out of the context; the exact output is stored as {id}. \
Get any lines: `memctl swap show {id} --lines A:B` (or the MCP tool tool_output with id {id}, line_start, line_end).]\n",
        e.tool,
        human_bytes(e.bytes),
    );
    // Smaller and smaller shapes until one fits: the tail (where a build or a test run ends)
    // and the header (the id) go last. Lines are clipped to LINE_CHARS, so the last shape
    // always fits; `fit` is a guard, never the plan.
    let shapes = [
        (HEAD_LINES, TAIL_LINES, KEY_LINES),
        (HEAD_LINES, TAIL_LINES, KEY_LINES / 2),
        (4, 10, 2),
        (3, 8, 1),
        (2, 6, 0),
        (1, 3, 0),
    ];
    let mut out = String::new();
    for (head, tail, keys) in shapes {
        out = format!("{header}{}", body(&lines, head, tail, keys));
        if out.chars().count() <= MAX_DIGEST_CHARS {
            break;
        }
    }
    fit(out)
}

/// Cut a digest to [`MAX_DIGEST_CHARS`] at a line end (long lines already clipped).
fn fit(s: String) -> String {
    if s.chars().count() <= MAX_DIGEST_CHARS {
        return s;
    }
    let cut = s
        .char_indices()
        .nth(MAX_DIGEST_CHARS - 1)
        .map_or(s.len(), |(i, _)| i);
    let cut = s[..cut].rfind('\n').map_or(cut, |i| i + 1);
    s[..cut].to_string()
}

/// The numbered lines: head, key lines with context, tail; gaps say how much they skip.
fn body(lines: &[&str], head: usize, tail: usize, keys: usize) -> String {
    let n = lines.len();
    let mut keep = vec![false; n];
    for k in keep.iter_mut().take(head.min(n)) {
        *k = true;
    }
    for k in keep.iter_mut().skip(n.saturating_sub(tail)) {
        *k = true;
    }
    let mut found = 0;
    for (i, l) in lines.iter().enumerate() {
        if found >= keys {
            break;
        }
        if keep[i] || !is_key(l) {
            continue;
        }
        found += 1;
        for k in keep
            .iter_mut()
            .take((i + 2).min(n))
            .skip(i.saturating_sub(1))
        {
            *k = true;
        }
    }
    let width = n.to_string().len();
    let mut out = String::new();
    let mut skipped = 0usize;
    for (i, l) in lines.iter().enumerate() {
        if !keep[i] {
            skipped += 1;
            continue;
        }
        if skipped > 0 {
            out.push_str(&format!("{:>width$}│ … {skipped} lines …\n", ""));
            skipped = 0;
        }
        out.push_str(&format!(
            "{:>width$}│ {}\n",
            i + 1,
            ellipsize(l.trim_end(), LINE_CHARS)
        ));
    }
    out
}

/// An output swapped in place: the replacement for the client and what it saved.
#[derive(Debug)]
pub struct InPlace {
    /// `updatedToolOutput`: the tool's response with the digest as its output.
    pub replacement: Box<serde_json::value::RawValue>,
    /// What storing the whole output did.
    pub report: StoreReport,
    /// Characters of the digest.
    pub digest_chars: u64,
    /// Characters the model would have seen without us (the client's own cut included).
    pub visible_chars: u64,
}

impl InPlace {
    /// Characters taken out of the live context (never negative: over the client's own
    /// cut the digest replaces a preview of about the same size, with better lines).
    pub fn removed_chars(&self) -> u64 {
        self.visible_chars.saturating_sub(self.digest_chars)
    }
}

impl Core {
    /// PostToolUse: swap the output in place when it qualifies ([`candidate`]): store it whole
    /// (one write transaction, pinned: [`crate::store::SwapEntry::in_place`]) and return the
    /// replacement. `Ok(Err(why))`: not in place (the caller stores it the normal way);
    /// `Err`: the store failed (busy: the caller spools).
    pub fn swap_in_place(
        &self,
        call: &ToolCall<'_>,
        transcript: Option<&Path>,
        cfg: &SwapConfig,
        now: i64,
    ) -> Result<Result<InPlace, NotInPlace>, EngineError> {
        let c = match candidate(call, transcript, cfg) {
            Ok(c) => c,
            Err(why) => return Ok(Err(why)),
        };
        let mut p = match super::prepare_content(call, &c.text, cfg, now) {
            Ok(p) => p,
            Err(why) => return Ok(Err(NotInPlace::NotStored(why))),
        };
        p.entry.in_place = true;
        let report = self
            .store()
            .write(|w| super::db::put(w, cfg, &p.entry, &p.blob, &p.vector, now))?;
        // The digest is made of the stored (redacted) text, never of the raw output.
        let digest = render(&p);
        let visible_chars = c.visible_chars;
        let replacement = c
            .replacement(&digest)
            .map_err(|e| EngineError::Invalid(format!("tool response: {e}")))?;
        Ok(Ok(InPlace {
            replacement,
            report,
            digest_chars: digest.chars().count() as u64,
            visible_chars,
        }))
    }
}
