//! Forgetting stored tool outputs: which entries a forget removes ([`SwapSelector`]), chosen
//! by one function over a read transaction (the dry run) or the forget's write transaction.
//!
//! An output is matched by its own facts (session, project, time it was stored, its content and
//! description for a text); for chunk ids, by the time windows of the forgotten turns in their
//! session (the PostToolUse hook stores an output while its turn runs). Outputs of a session
//! the forget removed entirely go too: nothing in the archive refers to them any more.

use super::{SwapEntry, db};
use crate::error::StoreError;
use crate::store::{SWAP_BLOBS, SWAP_ENTRIES, StoreReader, StoreWriter};
use redb::ReadableTable;
use std::collections::{BTreeSet, HashMap};

/// Which stored outputs a forget removes: those meeting every criterion given, and every
/// output of `gone_sessions`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SwapSelector {
    /// Outputs of this session.
    pub session: Option<String>,
    /// Outputs of this project (normalized path).
    pub project: Option<String>,
    /// Stored at or after (unix seconds).
    pub since: Option<i64>,
    /// Stored before (unix seconds).
    pub until: Option<i64>,
    /// Whose content or description contains this (lowercase).
    pub text: Option<String>,
    /// Stored during one of these turns: (session, from, to) in unix seconds, inclusive.
    pub windows: Option<Vec<(String, i64, i64)>>,
    /// Sessions the forget removes entirely: all their outputs go.
    pub gone_sessions: BTreeSet<String>,
}

impl SwapSelector {
    fn has_criteria(&self) -> bool {
        self.session.is_some()
            || self.project.is_some()
            || self.since.is_some()
            || self.until.is_some()
            || self.text.is_some()
            || self.windows.is_some()
    }

    /// Every criterion but the text, on an output's session, project and time.
    fn meta_matches(&self, session: &str, project: &str, created_at: i64) -> bool {
        self.session.as_ref().is_none_or(|s| s == session)
            && self
                .project
                .as_ref()
                .is_none_or(|p| crate::filter::normalize_project(project) == *p)
            && self.since.is_none_or(|t| created_at >= t)
            && self.until.is_none_or(|t| created_at < t)
            && self.windows.as_ref().is_none_or(|w| {
                w.iter()
                    .any(|(s, from, to)| s == session && (*from..=*to).contains(&created_at))
            })
    }

    /// Does a tool call not stored yet (spooled by a hook that found the store busy) fall
    /// under this selector? `content` is its input and output.
    pub(crate) fn matches_call(
        &self,
        session: &str,
        project: &str,
        created_at: i64,
        content: &str,
    ) -> bool {
        if self.gone_sessions.contains(session) {
            return true;
        }
        self.has_criteria()
            && self.meta_matches(session, project, created_at)
            && self
                .text
                .as_ref()
                .is_none_or(|t| content.to_lowercase().contains(t.as_str()))
    }
}

/// Does the text occur in the entry's description or in its content (blob `id`)?
fn text_in(
    blobs: Option<&impl ReadableTable<&'static str, &'static [u8]>>,
    e: &SwapEntry,
    text: &str,
) -> Result<bool, StoreError> {
    let described = [&e.summary, &e.input_summary]
        .into_iter()
        .chain(e.first_error.as_ref())
        .any(|s| s.to_lowercase().contains(text));
    if described {
        return Ok(true);
    }
    let Some(blobs) = blobs else {
        return Ok(false);
    };
    let Some(v) = blobs.get(e.id.as_str())? else {
        return Ok(false);
    };
    // Lossy: a damaged blob must not stop a forget; what can be read is searched.
    let raw = db::decode_blob(v.value())?;
    Ok(String::from_utf8_lossy(&raw).to_lowercase().contains(text))
}

fn select_in(
    entries: &impl ReadableTable<(&'static str, &'static str), &'static [u8]>,
    blobs: Option<&impl ReadableTable<&'static str, &'static [u8]>>,
    sel: &SwapSelector,
) -> Result<Vec<SwapEntry>, StoreError> {
    let mut out = Vec::new();
    let mut text_hits: HashMap<String, bool> = HashMap::new();
    for e in db::all_entries(entries)? {
        if sel.gone_sessions.contains(&e.session_id) {
            out.push(e);
            continue;
        }
        if !sel.has_criteria() || !sel.meta_matches(&e.session_id, &e.project, e.created_at) {
            continue;
        }
        if let Some(t) = &sel.text {
            let hit = match text_hits.get(&e.id) {
                Some(h) => *h,
                None => {
                    let h = text_in(blobs, &e, t)?;
                    text_hits.insert(e.id.clone(), h);
                    h
                }
            };
            if !hit {
                continue;
            }
        }
        out.push(e);
    }
    out.sort_by(|a, b| {
        (&a.session_id, a.created_at, &a.id).cmp(&(&b.session_id, b.created_at, &b.id))
    });
    Ok(out)
}

/// The outputs forgetting `sel` would remove now.
pub(crate) fn plan(r: &StoreReader, sel: &SwapSelector) -> Result<Vec<SwapEntry>, StoreError> {
    let Some(entries) = db::open_ro(r.raw_tx(), SWAP_ENTRIES)? else {
        return Ok(Vec::new());
    };
    let blobs = db::open_ro(r.raw_tx(), SWAP_BLOBS)?;
    select_in(&entries, blobs.as_ref(), sel)
}

/// The tombstone of a forgotten output of one session: a text tombstone (a sha256, so export
/// files carry it as one) of the session and the content id, so that importing an export
/// taken before the forget does not store it again. Other sessions' copies are not named.
pub(crate) fn tombstone_key(session: &str, id: &str) -> String {
    super::content_id(&format!("memctl swap output\n{session}\n{id}"))
}

/// Remove the outputs `sel` names, in the forget's write transaction (a blob goes with the
/// last entry that refers to it), each leaving its [`tombstone_key`]. Returns the entries
/// removed.
pub(crate) fn apply(w: &StoreWriter, sel: &SwapSelector) -> Result<Vec<SwapEntry>, StoreError> {
    let tx = w.raw_tx();
    let now = crate::clock::unix_now();
    let chosen = {
        let entries = tx.open_table(SWAP_ENTRIES)?;
        let blobs = tx.open_table(SWAP_BLOBS)?;
        select_in(&entries, Some(&blobs), sel)?
    };
    let mut removed = Vec::with_capacity(chosen.len());
    for e in chosen {
        if let Some(e) = db::remove_entry(tx, &e.session_id, &e.id)? {
            w.put_tombstone(false, &tombstone_key(&e.session_id, &e.id), now)?;
            removed.push(e);
        }
    }
    Ok(removed)
}
