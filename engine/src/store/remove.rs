//! Removing chunks: the one deletion path of prune and forget ([`StoreWriter::remove_chunks`]),
//! and what forget adds around it: the chunks a [`Selector`] names, as whole turns
//! ([`Plan`]); tombstones, so that forgotten turns are not archived again; session records
//! fixed up or removed.
//!
//! Why whole turns: a turn is one prompt and the loop that answered it. When one part of a
//! long turn mentions what the user wants forgotten, the prompt that asked about it and the
//! rest of the answer are about it too; keeping them would keep half of what was said.
//!
//! Why a forgotten chunk goes with every reference to it: identical text in another session (a
//! forked or resumed transcript) is stored once and shared ([`ChunkRecord::shared_with`]).
//! Forgetting removes the text, so those sessions lose their copy too (the report counts them).

use super::schema::*;
use super::{ChunkId, ChunkRecord, StoreReader, StoreWriter, session_from};
use crate::chunk::Chunk;
use crate::codec;
use crate::error::StoreError;
use redb::ReadableTable;
use std::collections::{BTreeMap, BTreeSet};

/// Meta key: bumped by every forget. Work that read the store before a forget and writes after
/// it (a session summary built from chunks that are now forgotten) compares it and drops its
/// write ([`crate::summary`]).
pub(crate) const META_FORGET_EPOCH: &str = "forget.epoch";

/// Meta key: the stored tool outputs (blob ids) a forget removed, until the rewrite that
/// follows it has run and the backups in the data dir were checked for them
/// ([`StoreReader::backup_holds_forgotten`]). Outputs have no tombstone (they are never
/// re-archived), so a forget killed before that check finds them here. Ids separated by `\n`;
/// the rewritten file never holds it.
pub(crate) const META_FORGOTTEN_OUTPUTS: &str = "forget.pending_outputs";

/// What to forget, resolved against the store: every criterion given must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Selector {
    /// These chunks.
    pub ids: Option<BTreeSet<ChunkId>>,
    /// Chunks a turn of this session resolves to (its own and the copies it shares).
    pub session: Option<String>,
    /// Chunks of this project.
    pub project_id: Option<u32>,
    /// Turns started at or after this time (the stored form, see [`crate::filter::parse_time`]).
    pub since: Option<String>,
    /// Turns started before this time.
    pub until: Option<String>,
    /// Chunks whose text contains this, lowercase (compared with the lowercased text).
    pub text: Option<String>,
}

impl Selector {
    /// No criterion at all (never "everything": callers refuse it).
    pub fn is_empty(&self) -> bool {
        self.ids.is_none()
            && self.session.is_none()
            && self.project_id.is_none()
            && self.since.is_none()
            && self.until.is_none()
            && self.text.is_none()
    }

    /// Does chunk `id` meet every criterion? The text, the costly one, is compared last.
    pub fn accepts(&self, id: ChunkId, rec: &ChunkRecord) -> bool {
        let c = &rec.chunk;
        let at = c.started_at.as_deref();
        self.ids.as_ref().is_none_or(|ids| ids.contains(&id))
            && self
                .session
                .as_ref()
                .is_none_or(|s| &c.session_id == s || rec.shared_with.contains(s))
            && self.project_id.is_none_or(|p| rec.project_id == p)
            && self
                .since
                .as_ref()
                .is_none_or(|s| at.is_some_and(|t| t >= s.as_str()))
            && self
                .until
                .as_ref()
                .is_none_or(|u| at.is_some_and(|t| t < u.as_str()))
            && self
                .text
                .as_ref()
                .is_none_or(|t| c.text.to_lowercase().contains(t.as_str()))
    }
}

/// The chunks a selector names, as whole turns, and the sessions they touch.
#[derive(Debug, Clone, Default)]
pub(crate) struct Plan {
    /// Chunks to delete, in (session, turn, part) order.
    pub chunks: Vec<(ChunkId, ChunkRecord)>,
    /// Every session with a turn that resolves to one of them → true when nothing of the
    /// session would be left.
    pub sessions: BTreeMap<String, bool>,
}

impl Plan {
    /// Sessions of which nothing is left.
    pub fn gone(&self) -> impl Iterator<Item = &str> {
        self.sessions
            .iter()
            .filter(|(_, gone)| **gone)
            .map(|(s, _)| s.as_str())
    }
}

type TurnKey = (&'static str, u32, u16);

fn record(
    chunks: &impl ReadableTable<u64, &'static [u8]>,
    id: ChunkId,
) -> Result<Option<ChunkRecord>, StoreError> {
    Ok(chunks
        .get(id)?
        .map(|v| codec::decode_record(v.value()))
        .transpose()?)
}

/// The chunk ids of a session's turns in `turn_from..=turn_to`.
fn turn_ids(
    turns: &impl ReadableTable<TurnKey, u64>,
    session: &str,
    turn_from: u32,
    turn_to: u32,
) -> Result<Vec<ChunkId>, StoreError> {
    let mut out = Vec::new();
    for row in turns.range((session, turn_from, 0u16)..=(session, turn_to, u16::MAX))? {
        out.push(row?.1.value());
    }
    Ok(out)
}

/// [`Plan`] over a read or a write transaction's tables (one code for the dry run and the
/// real one, so the dry run shows exactly what a run at the same moment removes).
fn plan_in(
    chunks: &impl ReadableTable<u64, &'static [u8]>,
    turns: &impl ReadableTable<TurnKey, u64>,
    sel: &Selector,
) -> Result<Plan, StoreError> {
    let mut hits: BTreeMap<ChunkId, ChunkRecord> = BTreeMap::new();
    if let Some(ids) = &sel.ids {
        for &id in ids {
            if let Some(rec) = record(chunks, id)?
                && sel.accepts(id, &rec)
            {
                hits.insert(id, rec);
            }
        }
    } else if let Some(s) = &sel.session {
        for id in turn_ids(turns, s, 0, u32::MAX)? {
            if let Some(rec) = record(chunks, id)?
                && sel.accepts(id, &rec)
            {
                hits.insert(id, rec);
            }
        }
    } else {
        for row in chunks.iter()? {
            let (k, v) = row?;
            let rec: ChunkRecord = codec::decode_record(v.value())?;
            if sel.accepts(k.value(), &rec) {
                hits.insert(k.value(), rec);
            }
        }
    }
    // Whole turns: every part of each hit's turn in its owner session.
    let owner_turns: BTreeSet<(String, u32)> = hits
        .values()
        .map(|r| (r.chunk.session_id.clone(), r.chunk.turn_index))
        .collect();
    let mut doomed = hits;
    for (s, t) in &owner_turns {
        for id in turn_ids(turns, s, *t, *t)? {
            if !doomed.contains_key(&id)
                && let Some(rec) = record(chunks, id)?
            {
                doomed.insert(id, rec);
            }
        }
    }
    let mut sessions: BTreeMap<String, bool> = BTreeMap::new();
    for rec in doomed.values() {
        sessions.insert(rec.chunk.session_id.clone(), false);
        for s in &rec.shared_with {
            sessions.insert(s.clone(), false);
        }
    }
    for (s, gone) in sessions.iter_mut() {
        *gone = turn_ids(turns, s, 0, u32::MAX)?
            .iter()
            .all(|id| doomed.contains_key(id));
    }
    let mut chunks: Vec<(ChunkId, ChunkRecord)> = doomed.into_iter().collect();
    chunks.sort_by(|a, b| {
        let (x, y) = (&a.1.chunk, &b.1.chunk);
        (&x.session_id, x.turn_index, x.part, a.0).cmp(&(&y.session_id, y.turn_index, y.part, b.0))
    });
    Ok(Plan { chunks, sessions })
}

/// Is this chunk's turn (by uuid) or text (by sha256) forgotten?
pub(super) fn forgotten_in(
    t: &impl ReadableTable<(u8, &'static str), i64>,
    chunk: &Chunk,
) -> Result<bool, StoreError> {
    if !chunk.turn_uuid.is_empty() && t.get((TOMBSTONE_TURN, chunk.turn_uuid.as_str()))?.is_some() {
        return Ok(true);
    }
    Ok(t.get((TOMBSTONE_TEXT, chunk.sha256.as_str()))?.is_some())
}

/// The stored epoch (0 before the first forget). A value of the wrong length is
/// [`StoreError::Corrupt`], like the other bookkeeping values of the meta table.
fn epoch_of(v: Option<Vec<u8>>) -> Result<u64, StoreError> {
    match v {
        None => Ok(0),
        Some(b) => Ok(u64::from_le_bytes(
            codec::le_bytes::<8>(&b, "forget epoch").map_err(|source| StoreError::Corrupt {
                what: "meta table",
                source,
            })?,
        )),
    }
}

impl StoreReader {
    /// What forgetting `sel` would remove now.
    pub fn forget_plan(&self, sel: &Selector) -> Result<Plan, StoreError> {
        plan_in(
            &self.tx.open_table(CHUNKS)?,
            &self.tx.open_table(TURNS)?,
            sel,
        )
    }

    /// Was this chunk's turn or text forgotten (it must not be archived again)?
    pub fn is_forgotten(&self, chunk: &Chunk) -> Result<bool, StoreError> {
        match self.tx.open_table(FORGOTTEN) {
            Ok(t) => forgotten_in(&t, chunk),
            Err(redb::TableError::TableDoesNotExist(_)) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Number of tombstones (turns and texts that will not be archived again).
    #[cfg(test)]
    pub fn tombstone_count(&self) -> Result<u64, StoreError> {
        use redb::ReadableTableMetadata;
        match self.tx.open_table(FORGOTTEN) {
            Ok(t) => Ok(t.len()?),
            Err(redb::TableError::TableDoesNotExist(_)) => Ok(0),
            Err(e) => Err(e.into()),
        }
    }

    /// How many forgets this store has seen ([`META_FORGET_EPOCH`]).
    pub fn forget_epoch(&self) -> Result<u64, StoreError> {
        epoch_of(self.meta_value(META_FORGET_EPOCH)?)
    }

    /// Does the store file at `path` (a backup of this store) hold what a forget removed: a
    /// chunk whose turn or text this store tombstoned, or a tool output named by
    /// [`META_FORGOTTEN_OUTPUTS`]? Read-only; a file that is not a store this memctl can read
    /// (a schema 1 record, a damaged file) is an error: the caller cannot tell.
    pub fn backup_holds_forgotten(&self, path: &std::path::Path) -> Result<bool, StoreError> {
        use redb::ReadableDatabase as _;
        let outputs = self
            .meta_value(META_FORGOTTEN_OUTPUTS)?
            .map(|v| String::from_utf8_lossy(&v).into_owned())
            .unwrap_or_default();
        let db = super::create::builder()
            .open_read_only(path)
            .map_err(|e| super::create::open_err(path, e))?;
        let tx = db.begin_read()?;
        let missing = |e: &redb::TableError| matches!(e, redb::TableError::TableDoesNotExist(_));
        if !outputs.is_empty() {
            match tx.open_table(SWAP_BLOBS) {
                Ok(blobs) => {
                    for id in outputs.lines() {
                        if blobs.get(id)?.is_some() {
                            return Ok(true);
                        }
                    }
                }
                Err(e) if missing(&e) => {}
                Err(e) => return Err(e.into()),
            }
        }
        let tombs = match self.tx.open_table(FORGOTTEN) {
            Ok(t) => t,
            Err(e) if missing(&e) => return Ok(false),
            Err(e) => return Err(e.into()),
        };
        let chunks = match tx.open_table(CHUNKS) {
            Ok(t) => t,
            Err(e) if missing(&e) => return Ok(false),
            Err(e) => return Err(e.into()),
        };
        for row in chunks.iter()? {
            let (_, v) = row?;
            let rec: ChunkRecord = codec::decode_record(v.value())?;
            if forgotten_in(&tombs, &rec.chunk)? {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// What [`StoreWriter::forget_apply`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Applied {
    /// Chunks deleted.
    pub chunks: u64,
    /// Turn entries removed (the owners' and the sharing sessions').
    pub turn_entries: u64,
    /// Tombstones written (turn uuids and text hashes not seen before).
    pub tombstones: u64,
    /// Sessions whose record was removed (nothing left).
    pub sessions_removed: Vec<String>,
    /// Sessions kept, with their counts fixed and their summaries dropped.
    pub sessions_fixed: Vec<String>,
    /// Int8 vector ids dropped by the block compaction.
    pub vectors_dropped: u64,
}

impl StoreWriter {
    /// Delete the chunks of `batch` with every reference to them: every turn entry and session
    /// link naming one of them, in its owner session and in the sessions sharing it, then the
    /// records, postings, lexical stats, f32 vectors, dedup hashes and pending marks
    /// ([`Self::delete_chunk`]). Their int8 block entries stay until [`Self::compact_vectors`].
    /// Returns the turn entries removed.
    ///
    /// Every turn of each session is looked at, not only the chunk's own (turn, part): a turn
    /// repeated within a session is stored as a second turn entry naming the first one's chunk,
    /// and an entry left behind would name a deleted chunk (and keep its session alive). Each
    /// session is scanned once per batch.
    ///
    /// The one deletion path: prune and forget both delete through it.
    pub fn remove_chunks(&mut self, batch: &[(ChunkId, ChunkRecord)]) -> Result<u64, StoreError> {
        let ids: BTreeSet<ChunkId> = batch.iter().map(|(id, _)| *id).collect();
        let mut by_session: BTreeMap<&str, Vec<ChunkId>> = BTreeMap::new();
        for (id, rec) in batch {
            for s in std::iter::once(&rec.chunk.session_id).chain(&rec.shared_with) {
                by_session.entry(s.as_str()).or_default().push(*id);
            }
        }
        let mut removed = 0;
        for (session, linked) in by_session {
            removed += self.unlink_session(session, &ids, &linked)?;
        }
        for (id, rec) in batch {
            self.delete_chunk(*id, rec)?;
        }
        Ok(removed)
    }

    /// Remove every turn entry of `session` naming one of `ids`, and its links to `linked`.
    fn unlink_session(
        &mut self,
        session: &str,
        ids: &BTreeSet<ChunkId>,
        linked: &[ChunkId],
    ) -> Result<u64, StoreError> {
        let mut t = self.tx.open_table(TURNS)?;
        let mut keys = Vec::new();
        for row in t.range((session, 0u32, 0u16)..=(session, u32::MAX, u16::MAX))? {
            let (k, id) = row?;
            if ids.contains(&id.value()) {
                let (_, turn, part) = k.value();
                keys.push((turn, part));
            }
        }
        for &(turn, part) in &keys {
            t.remove((session, turn, part))?;
        }
        drop(t);
        let mut links = self.tx.open_multimap_table(SESSION_CHUNKS)?;
        for &id in linked {
            links.remove(session, id)?;
        }
        Ok(keys.len() as u64)
    }

    /// What forgetting `sel` removes, read inside this transaction.
    pub fn forget_plan(&self, sel: &Selector) -> Result<Plan, StoreError> {
        plan_in(
            &self.tx.open_table(CHUNKS)?,
            &self.tx.open_table(TURNS)?,
            sel,
        )
    }

    /// Was this chunk's turn or text forgotten?
    pub fn is_forgotten(&self, chunk: &Chunk) -> Result<bool, StoreError> {
        forgotten_in(&self.tx.open_table(FORGOTTEN)?, chunk)
    }

    /// A value of the meta table, read inside this transaction.
    pub fn meta_value(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        super::meta_get(&self.tx.open_table(META)?, key)
    }

    /// The forget epoch as this transaction sees it ([`META_FORGET_EPOCH`]).
    pub fn forget_epoch(&self) -> Result<u64, StoreError> {
        epoch_of(self.meta_value(META_FORGET_EPOCH)?)
    }

    /// Remove what `plan` names (made in this transaction by [`Self::forget_plan`]): chunks with
    /// every index entry, tombstones for their turns and texts, session records fixed or
    /// removed, int8 blocks compacted; bumps the forget epoch.
    pub fn forget_apply(&mut self, plan: &Plan, now: i64) -> Result<Applied, StoreError> {
        let mut out = Applied::default();
        let mut compactions_lost: BTreeMap<&str, u32> = BTreeMap::new();
        let mut projects: BTreeSet<u32> = BTreeSet::new();
        out.turn_entries += self.remove_chunks(&plan.chunks)?;
        for (_, rec) in &plan.chunks {
            out.chunks += 1;
            out.tombstones += self.tombstone(&rec.chunk, now)?;
            projects.insert(rec.project_id);
            if rec.chunk.is_compact_summary && rec.chunk.part == 0 {
                *compactions_lost.entry(&rec.chunk.session_id).or_default() += 1;
            }
        }
        for s in plan.sessions.keys() {
            let lost = compactions_lost.get(s.as_str()).copied().unwrap_or(0);
            if self.fix_session(s, lost)? {
                out.sessions_fixed.push(s.clone());
            } else {
                out.sessions_removed.push(s.clone());
            }
        }
        for p in projects {
            out.vectors_dropped += self.compact_vectors(p)?.vectors_dropped;
        }
        let epoch = self.forget_epoch()? + 1;
        self.set_meta_value(META_FORGET_EPOCH, &epoch.to_le_bytes())?;
        Ok(out)
    }

    /// Add the blob ids of stored tool outputs a forget removed to [`META_FORGOTTEN_OUTPUTS`].
    pub fn note_forgotten_outputs<'a>(
        &mut self,
        ids: impl IntoIterator<Item = &'a str>,
    ) -> Result<(), StoreError> {
        let mut all: BTreeSet<String> = self
            .meta_value(META_FORGOTTEN_OUTPUTS)?
            .map(|v| {
                String::from_utf8_lossy(&v)
                    .lines()
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let before = all.len();
        all.extend(ids.into_iter().map(str::to_string));
        if all.len() > before {
            let joined = all.into_iter().collect::<Vec<_>>().join("\n");
            self.set_meta_value(META_FORGOTTEN_OUTPUTS, joined.as_bytes())?;
        }
        Ok(())
    }

    /// Tombstones for a forgotten chunk's turn and text; returns how many were new.
    fn tombstone(&mut self, chunk: &Chunk, now: i64) -> Result<u64, StoreError> {
        let mut t = self.tx.open_table(FORGOTTEN)?;
        let mut new = 0;
        for key in [
            (TOMBSTONE_TURN, chunk.turn_uuid.as_str()),
            (TOMBSTONE_TEXT, chunk.sha256.as_str()),
        ] {
            if !key.1.is_empty() && t.insert(key, now)?.is_none() {
                new += 1;
            }
        }
        Ok(new)
    }

    /// After its chunks were removed: drop the session when none of its turns is left (false),
    /// else fix its first/last times, turn count and compactions and drop its summaries, which
    /// may quote what was forgotten (true; the caller rebuilds the extractive one).
    fn fix_session(&mut self, session: &str, compactions_lost: u32) -> Result<bool, StoreError> {
        let (first, last) = {
            let t = self.tx.open_table(TURNS)?;
            let mut range = t.range((session, 0u32, 0u16)..=(session, u32::MAX, u16::MAX))?;
            let first = range
                .next()
                .transpose()?
                .map(|(k, v)| (k.value().1, v.value()));
            let last = range
                .next_back()
                .transpose()?
                .map(|(k, v)| (k.value().1, v.value()));
            (first, last.or(first))
        };
        let (Some((_, first_id)), Some((last_turn, last_id))) = (first, last) else {
            self.tx.open_table(SESSIONS)?.remove(session)?;
            self.tx
                .open_multimap_table(SESSION_CHUNKS)?
                .remove_all(session)?;
            return Ok(false);
        };
        let first_ts = self.get_record(first_id)?.and_then(|r| r.chunk.started_at);
        let last_ts = self
            .get_record(last_id)?
            .and_then(|r| r.chunk.ended_at.or(r.chunk.started_at));
        let mut t = self.tx.open_table(SESSIONS)?;
        let Some(mut rec) = t
            .get(session)?
            .map(|v| session_from(v.value()))
            .transpose()?
        else {
            return Ok(true);
        };
        if first_ts.is_some() {
            rec.first_ts = first_ts;
        }
        if last_ts.is_some() {
            rec.last_ts = last_ts;
        }
        rec.turns = last_turn + 1;
        rec.compactions = rec.compactions.saturating_sub(compactions_lost);
        rec.summary = None;
        rec.compact_summary = None;
        t.insert(session, codec::encode_record(&rec)?.as_slice())?;
        Ok(true)
    }
}

#[cfg(test)]
impl StoreReader {
    /// Every index agrees with the chunks table: turn entries, session links, postings, lexical
    /// stats, re-scoring vectors, int8 block ids, hashes and pending marks name live chunks only,
    /// every live chunk is indexed, and the kept vector counts are the rows. Returns what
    /// disagrees (empty: consistent).
    pub fn audit(&self) -> Result<Vec<String>, StoreError> {
        use redb::ReadableMultimapTable;
        let mut bad = Vec::new();
        let mut live: BTreeMap<ChunkId, ChunkRecord> = BTreeMap::new();
        self.for_each_chunk(|id, rec| {
            live.insert(id, rec);
            Ok(())
        })?;
        for row in self.tx.open_table(TURNS)?.iter()? {
            let (k, v) = row?;
            if !live.contains_key(&v.value()) {
                bad.push(format!("turn {:?} → dead chunk {}", k.value(), v.value()));
            }
        }
        for row in self.tx.open_multimap_table(SESSION_CHUNKS)?.iter()? {
            let (k, vs) = row?;
            for v in vs {
                let id = v?.value();
                if !live.contains_key(&id) {
                    bad.push(format!("session link {} → dead chunk {id}", k.value()));
                }
            }
        }
        let mut docs: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
        for rec in live.values() {
            let d = docs.entry(rec.project_id).or_default();
            d.0 += 1;
            d.1 += u64::from(rec.doc_len);
        }
        let mut posted: BTreeMap<ChunkId, u32> = BTreeMap::new();
        for row in self.tx.open_table(POSTING_LISTS)?.iter()? {
            let (k, v) = row?;
            for (id, tf, _) in super::postings::decode_segment(k.value().2, v.value())? {
                if !live.contains_key(&id) {
                    bad.push(format!("posting → dead chunk {id}"));
                }
                *posted.entry(id).or_default() += tf;
            }
        }
        for (id, rec) in &live {
            if posted.get(id).copied().unwrap_or(0) != rec.doc_len {
                bad.push(format!("chunk {id}: postings do not add up to its length"));
            }
        }
        for row in self.tx.open_table(LEX_STATS)?.iter()? {
            let (p, v) = row?;
            let want = docs.get(&p.value()).copied().unwrap_or((0, 0));
            if v.value() != want {
                bad.push(format!(
                    "lex stats of project {}: {:?}, live {want:?}",
                    p.value(),
                    v.value()
                ));
            }
        }
        for row in self.tx.open_table(VECTORS)?.iter()? {
            let (k, _) = row?;
            let (id, emb) = k.value();
            if !live
                .get(&id)
                .is_some_and(|r| r.embedders.iter().any(|e| e == emb))
            {
                bad.push(format!("re-scoring vector of dead chunk {id}"));
            }
        }
        // Block entries per chunk in the spaces it lists; the hash entry of a chunk the model
        // embedded since waits for a compaction (`store::vectors`) and is not counted.
        let mut in_blocks: BTreeMap<ChunkId, u32> = BTreeMap::new();
        for row in self.tx.open_table(VEC_BLOCKS)?.iter()? {
            let (k, b) = row?;
            let space = k.value().1.to_string();
            for id in crate::index::quant::BlockView::parse(b.value())?.ids() {
                match live.get(&id) {
                    None => bad.push(format!("int8 block holds dead chunk {id}")),
                    Some(r) if r.embedders.contains(&space) => {
                        *in_blocks.entry(id).or_default() += 1;
                    }
                    Some(_) => {}
                }
            }
        }
        for (id, n) in &in_blocks {
            if let Some(r) = live.get(id)
                && *n as usize != r.embedders.len()
            {
                bad.push(format!(
                    "chunk {id}: {n} block entries for {} spaces",
                    r.embedders.len()
                ));
            }
        }
        for id in live.keys() {
            if !in_blocks.contains_key(id) {
                bad.push(format!("chunk {id} is in no int8 block"));
            }
        }
        for row in self.tx.open_table(HASHES)?.iter()? {
            let (_, v) = row?;
            if !live.contains_key(&v.value()) {
                bad.push(format!("hash → dead chunk {}", v.value()));
            }
        }
        for row in self.tx.open_table(PENDING)?.iter()? {
            let (k, _) = row?;
            if !live.contains_key(&k.value()) {
                bad.push(format!("pending mark of dead chunk {}", k.value()));
            }
        }
        let (kept, rows) = (self.live_vector_counts()?, self.scan_vector_counts()?);
        if kept != rows {
            bad.push(format!("vector counts {kept:?}, rows {rows:?}"));
        }
        Ok(bad)
    }
}
