//! Reading an export and merging it into the store.
//!
//! Two passes over the file: the first checks it whole (header, every line, the trailer's
//! counts) and writes nothing, so a truncated or damaged file imports nothing; the second
//! applies it in batches of [`BATCH_RECORDS`] records, one write transaction each.
//!
//! An import file is input like any other: every text is redacted again before it is stored,
//! every number is bounded by the check pass ([`super::bounds`]), derived sizes (a tool
//! output's bytes, lines, blob size) are computed again from the bytes written, every record
//! kind is checked against this store's tombstones, and memory files go into a project only
//! when the user names it ([`MemoryTarget`]).

use super::format::{ChunkRec, Record, SessionRec, SwapOutputRec, TombstoneKind, TurnLinkRec};
use super::memory::{self, MemoryTarget, Written};
use super::read::{Checked, Reader, check_file};
use super::{ExportError, ImportOptions, Phase, Progress};
use crate::chunk::Chunk;
use crate::clock::unix_now;
use crate::core::Core;
use crate::embed::{Embedder, EmbedderId};
use crate::error::StoreError;
use crate::redact::RedactionCounts;
use crate::store::{PutOutcome, SessionRecord, StoreWriter};
use redb::ReadableTable as _;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Records per write transaction: hooks wait at most one batch for the write lock.
pub(super) const BATCH_RECORDS: usize = 500;
/// Bytes of record text per batch (tool outputs can be megabytes each).
const BATCH_BYTES: usize = 32 << 20;

/// What happened to the records of one kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct KindCounts {
    /// Added to the store.
    pub imported: u64,
    /// Already present (identical content, or a session with nothing new): skipped.
    pub duplicates: u64,
    /// Present with new facts and merged (sessions).
    pub merged: u64,
    /// Forgotten here (a tombstone names the turn or the text): skipped.
    pub forgotten: u64,
    /// A different local version exists and was kept (a turn with other text; a memory file:
    /// the imported one was written beside it as `<name>.imported.md`).
    pub conflicts: u64,
    /// Could not be placed (a memory file of a project directory absent here; a turn link
    /// whose chunk is not in the store).
    pub skipped: u64,
}

/// What an import did (or, dry run, would do).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ImportReport {
    /// Nothing was written.
    pub dry_run: bool,
    /// Format version of the file.
    pub version: u32,
    /// memctl version that wrote it.
    pub written_by: String,
    /// Records committed.
    pub records: u64,
    /// Projects.
    pub projects: KindCounts,
    /// Tombstones.
    pub tombstones: KindCounts,
    /// Chunks.
    pub chunks: KindCounts,
    /// Turns resolving to another turn's chunk.
    pub turn_links: KindCounts,
    /// Sessions.
    pub sessions: KindCounts,
    /// Stored tool outputs.
    pub swap_outputs: KindCounts,
    /// Project memory files.
    pub memory_files: KindCounts,
    /// Model vectors stored from the file (same embedding space as this store's model).
    pub vectors_reused: u64,
    /// Chunks queued for the background embedder (no usable vector in the file).
    pub vectors_queued: u64,
    /// Secrets redacted from the file's texts.
    pub redactions: u64,
    /// Memory files written beside a different local one.
    pub memory_beside: Vec<PathBuf>,
    /// Every memory file of the file and where it went (or, dry run, would go).
    pub memory_placed: Vec<PlacedMemoryFile>,
    /// Without `--memory-into`: the data dir folder memory files were kept in (written into
    /// no project, injected nowhere).
    pub memory_kept_in: Option<PathBuf>,
}

/// One imported memory file and where it went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlacedMemoryFile {
    /// The project the file names.
    pub project: String,
    /// Its name.
    pub name: String,
    /// The path written (or that would be).
    pub path: PathBuf,
    /// `new`, `same` (already there) or `beside` (a different file has the name).
    pub outcome: &'static str,
}

// The one field redaction of export and import (`scrub.rs`).
use super::scrub::{opt as scrub_opt, text as scrub};

/// A record ready to write (redacted, hashed, embedded with the hash embedder).
enum Ready {
    Project(String),
    Tombstone(bool, String, i64),
    Chunk {
        chunk: Chunk,
        meta: ChunkRec,
        model: Option<Vec<f32>>,
    },
    Link(TurnLinkRec),
    Session(SessionRec),
    Swap(SwapOutputRec),
}

/// The importer's state across batches.
struct Importer<'a> {
    core: &'a Core,
    opts: &'a ImportOptions,
    memory: MemoryTarget,
    /// The model's space when the file's vectors are in it.
    reuse: Option<EmbedderId>,
    /// Sessions in the store before the import (merged, not replaced).
    existing: HashSet<String>,
    /// sha256 of a chunk text as written in the file → as stored here, for the few texts the
    /// import's redaction changed (turn links name the file's hash).
    rehashed: HashMap<String, String>,
    report: ImportReport,
    redactions: RedactionCounts,
    dry: DryRun,
}

/// What earlier batches learned that later ones need. `hashes` and `sessions`: what a dry
/// run's rolled-back batches would have added, so later batches count as if they had been
/// committed (dry runs only). `forgotten`: the file's turns this store has forgotten, by
/// session, with their time windows, so the tool outputs stored during them and the
/// summaries that may quote them stay forgotten too (grows with the forgotten chunks only).
#[derive(Debug, Default)]
struct DryRun {
    /// Text hashes of chunks counted as imported.
    hashes: HashSet<String>,
    /// Sessions that gained a turn.
    sessions: HashSet<String>,
    /// Session → (from, to) unix seconds of its forgotten turns (none when a turn has no
    /// times).
    forgotten: HashMap<String, Vec<(i64, i64)>>,
}

impl DryRun {
    /// A chunk of the file was skipped as forgotten: remember its session and window.
    fn forgot(&mut self, c: &Chunk) {
        let secs = |t: &Option<String>| {
            t.as_deref()
                .and_then(|t| t.parse::<jiff::Timestamp>().ok())
                .map(|t| t.as_second())
        };
        let windows = self.forgotten.entry(c.session_id.clone()).or_default();
        if let Some(start) = secs(&c.started_at) {
            let end = secs(&c.ended_at).unwrap_or(start).max(start);
            // As forget matches outputs: the hook stores one while its turn runs, a second
            // on each side for rounding.
            windows.push((start - 1, end + 1));
        }
    }
}

/// The structured summary stored for a session, read in the write transaction.
fn structured_in(w: &StoreWriter, session: &str) -> Result<Option<Vec<u8>>, StoreError> {
    let t = w
        .raw_tx()
        .open_table(crate::summary::SUMMARIES)
        .map_err(redb::Error::from)?;
    let v = t.get(session).map_err(redb::Error::from)?;
    Ok(v.map(|g| g.value().to_vec()))
}

/// Store a structured summary as is (its rendered text is the session record's `summary`).
fn put_structured(w: &StoreWriter, s: &crate::summary::SessionSummary) -> Result<(), StoreError> {
    let bytes = crate::codec::encode_record(s)?;
    w.raw_tx()
        .open_table(crate::summary::SUMMARIES)
        .map_err(redb::Error::from)?
        .insert(s.session_id.as_str(), bytes.as_slice())
        .map_err(redb::Error::from)?;
    Ok(())
}

impl Importer<'_> {
    /// Redact and hash one record.
    fn prepare(&mut self, r: Record) -> Result<Option<Ready>, ExportError> {
        let n = &mut self.redactions;
        Ok(Some(match r {
            Record::Project(p) => Ready::Project(p.path),
            Record::Tombstone(t) => {
                Ready::Tombstone(t.what == TombstoneKind::Turn, t.key, t.forgotten_at)
            }
            Record::Chunk(mut c) => {
                let before = Chunk::hash_text(&c.text);
                scrub(&mut c.text, n);
                scrub(&mut c.summary, n);
                scrub(&mut c.turn_uuid, n);
                c.files.iter_mut().for_each(|f| scrub(f, n));
                c.tools.iter_mut().for_each(|t| scrub(t, n));
                c.line_uuids.iter_mut().for_each(|u| scrub(u, n));
                let sha256 = Chunk::hash_text(&c.text);
                if sha256 != before {
                    self.rehashed.insert(before, sha256.clone());
                }
                let model = match &self.reuse {
                    Some(emb) => c
                        .vectors
                        .iter()
                        .find(|v| v.embedder == emb.key())
                        .and_then(|v| v.values().ok())
                        .filter(|v| v.len() == emb.dims),
                    None => None,
                };
                let chunk = Chunk {
                    session_id: c.session.clone(),
                    project: c.project.clone(),
                    turn_index: c.turn,
                    part: c.part,
                    parts: c.parts,
                    turn_uuid: c.turn_uuid.clone(),
                    line_uuids: std::mem::take(&mut c.line_uuids),
                    started_at: c.started_at.clone(),
                    ended_at: c.ended_at.clone(),
                    text: std::mem::take(&mut c.text),
                    tools: std::mem::take(&mut c.tools),
                    files: std::mem::take(&mut c.files),
                    summary: std::mem::take(&mut c.summary),
                    is_compact_summary: c.is_compact_summary,
                    sha256,
                };
                c.vectors.clear();
                Ready::Chunk {
                    chunk,
                    meta: c,
                    model,
                }
            }
            Record::TurnLink(mut l) => {
                if let Some(h) = self.rehashed.get(&l.text_sha256) {
                    l.text_sha256.clone_from(h);
                }
                Ready::Link(l)
            }
            Record::Session(mut s) => {
                scrub_opt(&mut s.transcript_path, n);
                scrub_opt(&mut s.summary, n);
                scrub_opt(&mut s.compact_summary, n);
                if let Some(st) = &s.structured_summary {
                    let json = serde_json::to_string(st)
                        .map_err(|e| ExportError::Encode(e.to_string()))?;
                    if let Some(clean) = crate::redact::redact_json(&json)
                        && clean != json
                    {
                        s.structured_summary = Some(serde_json::from_str(&clean).map_err(|e| {
                            ExportError::Encode(format!("redacted session summary: {e}"))
                        })?);
                    }
                }
                Ready::Session(s)
            }
            Record::SwapOutput(mut s) => {
                scrub(&mut s.content, n);
                let e = &mut s.entry;
                scrub(&mut e.tool, n);
                scrub_opt(&mut e.tool_use_id, n);
                scrub(&mut e.input_summary, n);
                // Everything derived from the content is computed again, never taken from the
                // file: a claimed size drives eviction for every later stored output.
                let d = crate::swap::digest(&e.tool, &e.input_summary, &s.content);
                e.id = crate::swap::content_id(&s.content);
                e.bytes = s.content.len() as u64;
                e.summary = d.summary;
                e.patterns = d.patterns;
                e.lines = d.lines;
                e.first_error = d.first_error;
                scrub(&mut e.summary, n);
                e.patterns.iter_mut().for_each(|p| scrub(p, n));
                scrub_opt(&mut e.first_error, n);
                Ready::Swap(s)
            }
            Record::MemoryFile(mut m) => {
                scrub(&mut m.text, n);
                let text = std::mem::take(&mut m.text);
                self.memory_file(&m, &text)?;
                return Ok(None);
            }
            Record::Header(_) | Record::Trailer(_) => return Ok(None),
        }))
    }

    /// Write one batch in one transaction (rolled back in a dry run).
    fn flush(&mut self, batch: &mut Vec<Ready>) -> Result<(), ExportError> {
        if batch.is_empty() {
            return Ok(());
        }
        let texts: Vec<&str> = batch
            .iter()
            .filter_map(|r| match r {
                Ready::Chunk { chunk, .. } => Some(chunk.text.as_str()),
                _ => None,
            })
            .collect();
        let hash = self.core.hash_embedder();
        let hash_vecs = hash.embed_batch(&texts)?;
        let hash_id = hash.id().clone();
        let now = unix_now();
        let items = std::mem::take(batch);
        let mut dry = std::mem::take(&mut self.dry);
        let mut rep = self.report.clone();
        let this = &*self;
        let run = |w: &mut StoreWriter| -> Result<(), StoreError> {
            let mut hv = hash_vecs.into_iter();
            for item in &items {
                this.apply(w, item, &mut hv, &hash_id, now, &mut rep, &mut dry)?;
            }
            Ok(())
        };
        if self.opts.dry_run {
            self.core.store().write_rolled_back(run)?;
        } else {
            self.core.store().write(run)?;
        }
        rep.records += items.len() as u64;
        self.report = rep;
        self.dry = dry;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn apply(
        &self,
        w: &mut StoreWriter,
        item: &Ready,
        hash_vecs: &mut impl Iterator<Item = Vec<f32>>,
        hash_id: &EmbedderId,
        now: i64,
        rep: &mut ImportReport,
        dry: &mut DryRun,
    ) -> Result<(), StoreError> {
        match item {
            Ready::Project(p) => {
                let before = w.projects_len()?;
                w.project_id(p)?;
                if w.projects_len()? > before {
                    rep.projects.imported += 1;
                } else {
                    rep.projects.duplicates += 1;
                }
            }
            Ready::Tombstone(turn, key, at) => {
                if w.put_tombstone(*turn, key, *at)? {
                    rep.tombstones.imported += 1;
                } else {
                    rep.tombstones.duplicates += 1;
                }
            }
            Ready::Chunk { chunk, meta, model } => {
                let hv = hash_vecs.next().unwrap_or_default();
                let c = &mut rep.chunks;
                if w.is_forgotten(chunk)? {
                    c.forgotten += 1;
                    dry.forgot(chunk);
                    return Ok(());
                }
                if let Some(id) = w.turn_chunk(&chunk.session_id, chunk.turn_index, chunk.part)? {
                    match w.get_record(id)? {
                        Some(r) if r.chunk.sha256 == chunk.sha256 => c.duplicates += 1,
                        _ => c.conflicts += 1,
                    }
                    return Ok(());
                }
                // One space per chunk, as ingest stores it: the file's model vector when it is
                // in this store's space, else the hash vector until `embed_pending` replaces it.
                let (vectors, reused) = match (&self.reuse, model) {
                    (Some(emb), Some(v)) => (vec![(emb.clone(), v.clone())], true),
                    _ => (vec![(hash_id.clone(), hv)], false),
                };
                match w.put_chunk(chunk, &vectors, now)? {
                    PutOutcome::Inserted(id) | PutOutcome::Replaced(id) => {
                        c.imported += 1;
                        if self.opts.dry_run {
                            dry.hashes.insert(chunk.sha256.clone());
                            dry.sessions.insert(chunk.session_id.clone());
                        }
                        if let Some(mut rec) = w.get_record(id)? {
                            rec.ingested_at = meta.ingested_at;
                            rec.access_count = meta.access_count;
                            rec.last_access = meta.last_access;
                            rec.confidence = meta.confidence;
                            rec.pinned = meta.pinned;
                            w.update_record(id, &rec)?;
                        }
                        if reused {
                            rep.vectors_reused += 1;
                        } else {
                            w.mark_pending(id)?;
                            rep.vectors_queued += 1;
                        }
                    }
                    PutOutcome::Unchanged(_) | PutOutcome::Duplicate(_) => c.duplicates += 1,
                }
            }
            Ready::Link(l) => {
                let c = &mut rep.turn_links;
                let pid = w.project_id(&l.project)?;
                let Some((_, rec)) = w.chunk_by_hash(pid, &l.text_sha256)? else {
                    // A dry run rolled back the batch that brought the chunk: it would be there.
                    if dry.hashes.contains(&l.text_sha256) {
                        c.imported += 1;
                        dry.sessions.insert(l.session.clone());
                    } else {
                        c.skipped += 1;
                    }
                    return Ok(());
                };
                let mut chunk = rec.chunk;
                chunk.session_id.clone_from(&l.session);
                chunk.turn_index = l.turn;
                chunk.part = l.part;
                if w.is_forgotten(&chunk)? {
                    c.forgotten += 1;
                    dry.forgot(&chunk);
                    return Ok(());
                }
                if let Some(id) = w.turn_chunk(&l.session, l.turn, l.part)? {
                    match w.get_record(id)? {
                        Some(r) if r.chunk.sha256 == chunk.sha256 => c.duplicates += 1,
                        _ => c.conflicts += 1,
                    }
                    return Ok(());
                }
                w.put_chunk(&chunk, &[], now)?;
                c.imported += 1;
            }
            Ready::Session(s) => self.apply_session(w, s, rep, dry)?,
            Ready::Swap(s) => {
                if self.output_forgotten(w, &s.entry, dry)? {
                    rep.swap_outputs.forgotten += 1;
                } else if crate::swap::port::import_output(w, &s.entry, &s.content)? {
                    rep.swap_outputs.imported += 1;
                } else {
                    rep.swap_outputs.duplicates += 1;
                }
            }
        }
        Ok(())
    }

    /// Was this stored output forgotten here? Its own tombstone (written by forget), or it was
    /// stored during a turn of the file this store has forgotten, or its session had turns
    /// forgotten here and none is left (forget removed the session with its outputs).
    fn output_forgotten(
        &self,
        w: &StoreWriter,
        e: &crate::swap::SwapEntry,
        dry: &DryRun,
    ) -> Result<bool, StoreError> {
        let key = crate::swap::forget::tombstone_key(&e.session_id, &e.id);
        if w.text_tombstoned(&key)? {
            return Ok(true);
        }
        let Some(windows) = dry.forgotten.get(&e.session_id) else {
            return Ok(false);
        };
        if windows
            .iter()
            .any(|(from, to)| (*from..=*to).contains(&e.created_at))
        {
            return Ok(true);
        }
        Ok(!w.session_has_turns(&e.session_id)? && !dry.sessions.contains(&e.session_id))
    }

    /// Place one memory file ([`MemoryTarget`]) and list it in the report.
    fn memory_file(
        &mut self,
        m: &super::format::MemoryFileRec,
        text: &str,
    ) -> Result<(), ExportError> {
        let dir = self.memory.dir_for(&m.project);
        let (written, path) = memory::write_file(m, text, &dir, self.opts.dry_run)?;
        let keep = matches!(self.memory, MemoryTarget::Keep(_));
        let c = &mut self.report.memory_files;
        let outcome = match written {
            Written::New => "new",
            Written::Same => "same",
            Written::Beside(_) => "beside",
        };
        match written {
            // Kept in the data dir: in no project yet, counted apart from the ones placed.
            _ if keep => c.skipped += 1,
            Written::New => c.imported += 1,
            Written::Same => c.duplicates += 1,
            Written::Beside(p) => {
                c.conflicts += 1;
                self.report.memory_beside.push(p);
            }
        }
        if let MemoryTarget::Keep(root) = &self.memory {
            self.report.memory_kept_in = Some(root.clone());
        }
        self.report.memory_placed.push(PlacedMemoryFile {
            project: m.project.clone(),
            name: m.name.clone(),
            path,
            outcome,
        });
        Ok(())
    }

    /// A session new to this store takes the file's record as is; one that was here keeps its
    /// own facts and gains what it lacked (summaries, a wider time span, more turns).
    fn apply_session(
        &self,
        w: &mut StoreWriter,
        s: &SessionRec,
        rep: &mut ImportReport,
        dry: &DryRun,
    ) -> Result<(), StoreError> {
        let c = &mut rep.sessions;
        // Summaries of a session with forgotten turns may quote them: not brought back.
        let stripped;
        let s = if dry.forgotten.contains_key(&s.id) {
            stripped = SessionRec {
                summary: None,
                compact_summary: None,
                structured_summary: None,
                ..s.clone()
            };
            &stripped
        } else {
            s
        };
        let project_id = w.project_id(&s.project)?;
        let local_summary = structured_in(w, &s.id)?;
        if !self.existing.contains(&s.id) {
            if s.turns > 0 && !w.session_has_turns(&s.id)? && !dry.sessions.contains(&s.id) {
                // Every turn was forgotten here: the name must not come back either.
                c.forgotten += 1;
                return Ok(());
            }
            // The record the imported chunks built counts every turn stored: `check` wants
            // the count above the highest one, whatever the file's record says.
            let built = w.session(&s.id)?.map_or(0, |r| r.turns);
            w.put_session(
                &s.id,
                &SessionRecord {
                    project: s.project.clone(),
                    project_id,
                    transcript_path: s.transcript_path.clone(),
                    first_ts: s.first_ts.clone(),
                    last_ts: s.last_ts.clone(),
                    turns: s.turns.max(built),
                    updated_at: s.updated_at,
                    summary: s.summary.clone(),
                    compact_summary: s.compact_summary.clone(),
                    compactions: s.compactions,
                },
            )?;
            if let Some(st) = &s.structured_summary {
                put_structured(w, st)?;
            }
            c.imported += 1;
            return Ok(());
        }
        let Some(before) = w.session(&s.id)? else {
            c.forgotten += 1;
            return Ok(());
        };
        let mut rec = before.clone();
        rec.turns = rec.turns.max(s.turns);
        rec.first_ts = match (rec.first_ts.take(), s.first_ts.clone()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        rec.last_ts = rec.last_ts.take().max(s.last_ts.clone());
        rec.updated_at = rec.updated_at.max(s.updated_at);
        rec.compactions = rec.compactions.max(s.compactions);
        if rec.summary.is_none() {
            rec.summary.clone_from(&s.summary);
        }
        if rec.compact_summary.is_none() {
            rec.compact_summary.clone_from(&s.compact_summary);
        }
        if rec.transcript_path.is_none() {
            rec.transcript_path.clone_from(&s.transcript_path);
        }
        let mut changed = rec != before;
        if rec != before {
            w.put_session(&s.id, &rec)?;
        }
        if local_summary.is_none()
            && let Some(st) = &s.structured_summary
        {
            put_structured(w, st)?;
            changed = true;
        }
        if changed {
            c.merged += 1;
        } else {
            c.duplicates += 1;
        }
        Ok(())
    }
}

/// Import `path` (see [`crate::Engine::import_file`]).
pub(super) fn import(
    core: &Core,
    path: &Path,
    opts: &ImportOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<ImportReport, ExportError> {
    let now = unix_now();
    let Checked {
        header,
        memory_projects,
    } = check_file(path, now, progress)?;
    if opts.memory_into.is_some() && memory_projects.len() > 1 {
        return Err(ExportError::Invalid(format!(
            "the file holds memory files of {} projects ({}); --memory-into takes those of one: \
             import without it (they are kept in the data dir) or export one project",
            memory_projects.len(),
            memory_projects.into_iter().collect::<Vec<_>>().join(", ")
        )));
    }
    let memory = MemoryTarget::resolve(opts.memory_into.as_deref(), &opts.memory, core.data_dir())?;
    // The file's vectors are reused only in the model's own space; loading the model is the
    // only way to know it, and only worth it when the file has vectors.
    let reuse = match &header.embedder {
        Some(key) => core
            .model()
            .ok()
            .map(|m| m.id().clone())
            .filter(|id| id.key() == *key),
        None => None,
    };
    let existing: HashSet<String> = core
        .store()
        .read()?
        .sessions()?
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    let mut im = Importer {
        core,
        opts,
        memory,
        reuse,
        existing,
        rehashed: HashMap::new(),
        report: ImportReport {
            dry_run: opts.dry_run,
            version: header.version,
            written_by: header.memctl.clone(),
            ..ImportReport::default()
        },
        redactions: RedactionCounts::default(),
        dry: DryRun::default(),
    };
    let mut rd = Reader::open(path)?;
    let mut batch: Vec<Ready> = Vec::new();
    let mut bytes = 0usize;
    let res = (|| {
        while let Some((line, r)) = rd.next()? {
            if line.is_multiple_of(256) {
                progress(rd.progress(Phase::Import));
            }
            let size = rd.buf.len();
            if let Some(ready) = im.prepare(r)? {
                batch.push(ready);
                bytes += size;
            }
            if batch.len() >= BATCH_RECORDS || bytes >= BATCH_BYTES {
                im.flush(&mut batch)?;
                bytes = 0;
            }
        }
        im.flush(&mut batch)?;
        progress(rd.progress(Phase::Import));
        Ok::<(), ExportError>(())
    })();
    if let Err(e) = res {
        return Err(if im.report.records > 0 && !opts.dry_run {
            ExportError::Stopped {
                committed: im.report.records,
                source: Box::new(e),
            }
        } else {
            e
        });
    }
    im.report.redactions = u64::from(im.redactions.total());
    Ok(im.report)
}
