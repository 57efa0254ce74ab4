//! The one redaction pass over an export record: every field that can carry user text.
//!
//! Why every field and not only the texts: a tool name, a `tool_use_id`, a line uuid or a
//! transcript path comes from a transcript or an import file like any text, and a crafted (or
//! older) file may hold a secret there. Keys that tie records together (session ids, project
//! paths, tombstone hashes) are left as they are: changing them would orphan records, and they
//! are written by memctl itself, not taken from message text.

use super::ExportError;
use super::format::{ChunkRec, Record, SessionRec, SwapOutputRec};
use crate::redact::{RedactionCounts, redact_counted};

/// Redact `s` in place, counting.
pub(super) fn text(s: &mut String, n: &mut RedactionCounts) {
    let (r, c) = redact_counted(s);
    if let std::borrow::Cow::Owned(r) = r {
        *s = r;
    }
    n.merge(&c);
}

/// [`text`] of a field that may be absent.
pub(super) fn opt(s: &mut Option<String>, n: &mut RedactionCounts) {
    if let Some(s) = s {
        text(s, n);
    }
}

fn all(v: &mut [String], n: &mut RedactionCounts) {
    v.iter_mut().for_each(|s| text(s, n));
}

/// Redact every user-text field of `r` (see the module doc for what is left alone).
pub(super) fn record(r: &mut Record, n: &mut RedactionCounts) -> Result<(), ExportError> {
    match r {
        Record::Chunk(c) => chunk(c, n),
        Record::Session(s) => session(s, n)?,
        Record::SwapOutput(s) => swap(s, n),
        Record::MemoryFile(m) => text(&mut m.text, n),
        Record::Header(_)
        | Record::Trailer(_)
        | Record::Project(_)
        | Record::Tombstone(_)
        | Record::TurnLink(_) => {}
    }
    Ok(())
}

fn chunk(c: &mut ChunkRec, n: &mut RedactionCounts) {
    text(&mut c.text, n);
    text(&mut c.summary, n);
    text(&mut c.turn_uuid, n);
    all(&mut c.files, n);
    all(&mut c.tools, n);
    all(&mut c.line_uuids, n);
}

fn session(s: &mut SessionRec, n: &mut RedactionCounts) -> Result<(), ExportError> {
    opt(&mut s.transcript_path, n);
    opt(&mut s.summary, n);
    opt(&mut s.compact_summary, n);
    if let Some(st) = &s.structured_summary {
        let json = serde_json::to_string(st).map_err(|e| ExportError::Encode(e.to_string()))?;
        if let Some(clean) = crate::redact::redact_json(&json)
            && clean != json
        {
            s.structured_summary = Some(
                serde_json::from_str(&clean)
                    .map_err(|e| ExportError::Encode(format!("redacted session summary: {e}")))?,
            );
        }
    }
    Ok(())
}

fn swap(s: &mut SwapOutputRec, n: &mut RedactionCounts) {
    text(&mut s.content, n);
    let e = &mut s.entry;
    text(&mut e.tool, n);
    opt(&mut e.tool_use_id, n);
    text(&mut e.input_summary, n);
    text(&mut e.summary, n);
    all(&mut e.patterns, n);
    opt(&mut e.first_error, n);
}
