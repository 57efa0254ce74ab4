//! Reading an export and merging it into the store.
//!
//! Two passes over the file: the first checks it whole (header, every line, the trailer's
//! counts) and writes nothing, so a truncated or damaged file imports nothing; the second
//! applies it in batches of [`super::ahead::BATCH_RECORDS`] lines, read and prepared ahead on a
//! helper thread ([`super::ahead`]), several batches to a write transaction ([`TX_RECORDS`]). A run of chunks goes to the store's
//! bulk lane (`put_chunks_with`), each with the outcome the one-at-a-time path gives it.
//!
//! An import file is input like any other: every text is redacted again before it is stored,
//! every number is bounded by the check pass ([`super::bounds`]), derived sizes (a tool
//! output's bytes, lines, blob size) are computed again from the bytes written, every record
//! kind is checked against this store's tombstones, and memory files go into a project only
//! when the user names it ([`MemoryTarget`]).

use super::ahead::{Batch, Prep};
use super::format::{MemoryFileRec, SessionRec, SwapOutputRec, TurnLinkRec};
use super::memory::{MemoryTarget, Written};
use super::read::{Checked, Reader, check_file};
use super::{ExportError, ImportOptions, Phase, Progress};
use crate::chunk::Chunk;
use crate::clock::unix_now;
use crate::core::Core;
use crate::embed::{Embedder as _, EmbedderId};
use crate::error::StoreError;
use crate::redact::RedactionCounts;
use crate::store::{
    BulkOptions, ChunkToPut, Put, PutOutcome, RecordMeta, SessionRecord, StoreWriter, TurnState,
};
use redb::ReadableTable as _;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;

/// Records per write transaction (several prepared batches). Each commit rewrites the last
/// posting segment of every term its chunks use and writes out every page it touched, so
/// fewer, larger transactions write far less: importing 1e6 chunks took 217 s at 8,192
/// records a transaction and 116 s at 131,072 (docs/perf/scale.md). The price is memory
/// (the transaction's postings and vectors wait for its commit: ~1 GB peak at 1e6) and the
/// write lock held for the whole transaction (~15 s at that size): a hook that needs the store
/// meanwhile spools its work, as for any busy store.
const TX_RECORDS: u64 = 131_072;

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
    /// The store file's compaction after the import.
    pub store_file: crate::store::FileCompaction,
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

/// A record ready to write (redacted, hashed, its vector and term counts derived).
pub(super) enum Ready {
    Project(String),
    Tombstone(bool, String, i64),
    Chunk(Box<ChunkReady>),
    Link(TurnLinkRec),
    Session(SessionRec),
    Swap(SwapOutputRec),
}

/// A chunk ready to write.
pub(super) struct ChunkReady {
    pub chunk: Chunk,
    /// The file's ranking metadata, kept when the chunk is new here.
    pub meta: RecordMeta,
    /// Its one vector: the file's model vector, or the hash vector.
    pub vector: (EmbedderId, Vec<f32>),
    /// `vector` is the file's model vector (else the chunk waits for the model: pending).
    pub reused: bool,
    /// Its term counts.
    pub terms: Vec<(String, u32)>,
}

impl ImportReport {
    /// List one placed memory file (`target`: where memory files go) and count it.
    pub(super) fn place_memory_file(
        &mut self,
        m: &MemoryFileRec,
        written: Written,
        path: PathBuf,
        target: &MemoryTarget,
    ) {
        let keep = matches!(target, MemoryTarget::Keep(_));
        let c = &mut self.memory_files;
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
                self.memory_beside.push(p);
            }
        }
        if let MemoryTarget::Keep(root) = target {
            self.memory_kept_in = Some(root.clone());
        }
        self.memory_placed.push(PlacedMemoryFile {
            project: m.project.clone(),
            name: m.name.clone(),
            path,
            outcome,
        });
    }
}

/// The importer's state across batches.
struct Importer<'a> {
    core: &'a Core,
    opts: &'a ImportOptions,
    /// Sessions in the store before the import (merged, not replaced).
    existing: HashSet<String>,
    report: ImportReport,
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
    /// Write `first` and the batches that follow it on `rx` in one transaction (rolled back
    /// in a dry run), until it holds [`Self::transaction_records`] or `rx` ends; `on_batch` gets
    /// each batch's file position. An error the reading side sends ends the transaction: what
    /// it holds is committed (as a batch boundary would have) and the error returned as
    /// `Ok(Some(e))`. `Ok(None)` when `rx` may hold more.
    fn flush_tx(
        &mut self,
        first: Batch,
        rx: &Receiver<Result<Batch, ExportError>>,
        on_batch: &mut dyn FnMut(u64),
    ) -> Result<Option<ExportError>, ExportError> {
        let now = unix_now();
        let mut dry = std::mem::take(&mut self.dry);
        let mut rep = self.report.clone();
        let mut records = 0u64;
        let mut stopped = None;
        let this = &*self;
        let run = |w: &mut StoreWriter| -> Result<(), StoreError> {
            let mut batch = first;
            loop {
                records += batch.items.len() as u64;
                this.apply_batch(w, &mut batch.items, now, &mut rep, &mut dry)?;
                on_batch(batch.done);
                if records >= this.transaction_records() {
                    return Ok(());
                }
                match rx.recv() {
                    Ok(Ok(next)) => batch = next,
                    Ok(Err(e)) => {
                        stopped = Some(e);
                        return Ok(());
                    }
                    Err(_) => return Ok(()), // the reading side is done
                }
            }
        };
        if self.opts.dry_run {
            self.core.store().write_rolled_back(run)?;
        } else {
            self.core.store().write(run)?;
        }
        rep.records += records;
        self.report = rep;
        self.dry = dry;
        Ok(stopped)
    }

    /// Records per write transaction ([`ImportOptions::transaction_records`]).
    fn transaction_records(&self) -> u64 {
        match self.opts.transaction_records {
            0 => TX_RECORDS,
            n => n as u64,
        }
    }

    /// Apply one batch's records in file order: runs of consecutive chunks go to
    /// [`Self::apply_chunks`]; every other record is applied on its own (tombstones before
    /// the chunks they name, links and sessions after).
    fn apply_batch(
        &self,
        w: &mut StoreWriter,
        items: &mut [Ready],
        now: i64,
        rep: &mut ImportReport,
        dry: &mut DryRun,
    ) -> Result<(), StoreError> {
        let mut rest = items;
        while !rest.is_empty() {
            let len = rest
                .iter()
                .position(|r| !matches!(r, Ready::Chunk(_)))
                .unwrap_or(rest.len());
            if len == 0 {
                self.apply(w, &rest[0], now, rep, dry)?;
                rest = &mut rest[1..];
                continue;
            }
            let (chunks, after) = rest.split_at_mut(len);
            let run = chunks
                .iter_mut()
                .filter_map(|r| match r {
                    Ready::Chunk(c) => Some(&mut **c),
                    _ => None,
                })
                .collect();
            self.apply_chunks(w, run, now, rep, dry)?;
            rest = after;
        }
        Ok(())
    }

    /// Store a run of chunks with the outcomes storing them one at a time gives: a forgotten
    /// one is skipped, one whose turn part is taken is counted (same text: a duplicate, else
    /// a conflict), the rest go through the store's bulk lane (a text the project has is
    /// linked, a new one stored with the file's metadata; without a model vector it waits
    /// for the model).
    fn apply_chunks(
        &self,
        w: &mut StoreWriter,
        mut run: Vec<&mut ChunkReady>,
        now: i64,
        rep: &mut ImportReport,
        dry: &mut DryRun,
    ) -> Result<(), StoreError> {
        let states = w.turn_states(&run.iter().map(|r| &r.chunk).collect::<Vec<_>>())?;
        // Turn parts this run gives a chunk, with its text hash: `turn_states` read the store
        // before any of them was put.
        let mut given: HashMap<(String, u32, u16), String> = HashMap::new();
        let c = &mut rep.chunks;
        let mut put = Vec::new();
        for (r, state) in run.iter_mut().zip(states) {
            let ch = &r.chunk;
            match state {
                TurnState::Forgotten => {
                    c.forgotten += 1;
                    dry.forgot(ch);
                }
                TurnState::Taken { same_text: true } => c.duplicates += 1,
                TurnState::Taken { same_text: false } => c.conflicts += 1,
                TurnState::Free => {
                    let key = (ch.session_id.clone(), ch.turn_index, ch.part);
                    match given.get(&key) {
                        Some(h) if *h == ch.sha256 => c.duplicates += 1,
                        Some(_) => c.conflicts += 1,
                        None => {
                            given.insert(key, ch.sha256.clone());
                            put.push(&mut **r);
                        }
                    }
                }
            }
        }
        let items = put
            .iter_mut()
            .map(|r| ChunkToPut {
                chunk: &r.chunk,
                vectors: vec![(r.vector.0.clone(), std::mem::take(&mut r.vector.1))],
                terms: Some(std::mem::take(&mut r.terms)),
                meta: Some(r.meta),
            })
            .collect();
        let opts = BulkOptions {
            pending: false,
            drop_stale_parts: false,
        };
        let outcomes = w.put_chunks_with(items, now, opts)?;
        for (r, out) in put.iter().zip(outcomes) {
            let c = &mut rep.chunks;
            match out {
                Put::Stored(PutOutcome::Inserted(id) | PutOutcome::Replaced(id)) => {
                    c.imported += 1;
                    if self.opts.dry_run {
                        dry.hashes.insert(r.chunk.sha256.clone());
                        dry.sessions.insert(r.chunk.session_id.clone());
                    }
                    if r.reused {
                        rep.vectors_reused += 1;
                    } else {
                        w.mark_pending(id)?;
                        rep.vectors_queued += 1;
                    }
                }
                Put::Stored(PutOutcome::Unchanged(_) | PutOutcome::Duplicate(_)) => {
                    c.duplicates += 1;
                }
                Put::Forgotten => {
                    c.forgotten += 1;
                    dry.forgot(&r.chunk);
                }
            }
        }
        Ok(())
    }

    /// Apply one record other than a chunk.
    fn apply(
        &self,
        w: &mut StoreWriter,
        item: &Ready,
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
            // Runs of chunks are applied by `apply_chunks`.
            Ready::Chunk(_) => {}
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
                    agent: s.agent,
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
        existing,
        report: ImportReport {
            dry_run: opts.dry_run,
            version: header.version,
            written_by: header.memctl.clone(),
            ..ImportReport::default()
        },
        dry: DryRun::default(),
    };
    let prep = Prep {
        reuse,
        hash: core.hash_embedder(),
        memory,
        dry_run: opts.dry_run,
        rehashed: HashMap::new(),
        report: ImportReport::default(),
        redactions: RedactionCounts::default(),
    };
    let (res, prep) = write_batches(&mut im, prep, Reader::open(path)?, progress);
    let placed = prep.report;
    im.report.memory_files = placed.memory_files;
    im.report.memory_beside = placed.memory_beside;
    im.report.memory_placed = placed.memory_placed;
    im.report.memory_kept_in = placed.memory_kept_in;
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
    im.report.redactions = u64::from(prep.redactions.total());
    if !opts.dry_run && im.report.records > 0 {
        im.report.store_file = core.store().compact_after_bulk()?;
    }
    Ok(im.report)
}

/// The second pass: `prep` reads and prepares batches on a helper thread while this thread
/// writes them, in order; the first error of either ends it. Returns the outcome and the
/// reading side's state (the memory files placed, the redactions counted).
fn write_batches<'a>(
    im: &mut Importer<'_>,
    mut prep: Prep<'a>,
    mut rd: Reader,
    progress: &mut dyn FnMut(Progress),
) -> (Result<(), ExportError>, Prep<'a>) {
    let total = rd.progress(Phase::Import).total;
    let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Batch, ExportError>>(0);
    std::thread::scope(|scope| {
        let helper = scope.spawn(move || {
            prep.run(&mut rd, &tx);
            (prep, rd.progress(Phase::Import))
        });
        let res = (|| {
            // Ends when the helper hangs up: at the end of the file or after sending an error.
            while let Ok(first) = rx.recv() {
                let mut on_batch = |done| {
                    progress(Progress {
                        phase: Phase::Import,
                        done,
                        total,
                    });
                };
                if let Some(e) = im.flush_tx(first?, &rx, &mut on_batch)? {
                    return Err(e);
                }
            }
            Ok(())
        })();
        // A writer that stopped early hangs up, so the helper stops at its next batch.
        drop(rx);
        let (prep, last) = helper
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        if res.is_ok() {
            progress(last);
        }
        (res, prep)
    })
}
