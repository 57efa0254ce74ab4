//! The import's second pass, reading side: a helper thread reads the file in batches, parses
//! and prepares every record of a batch on rayon's pool (JSON, redaction, text hashes, vector
//! decoding, term counts, hash vectors), and hands the batches in file order to the writer
//! through a rendezvous channel.
//!
//! Why: the write transaction is one thread's work (one redb writer); preparing the next batch
//! while the writer stores this one keeps the other core busy. What depends on earlier records
//! (a turn link names a chunk text as the file wrote it; memory files are placed and reported
//! in file order) is done after the parallel step, in file order. Memory stays bounded: one
//! batch is being written while the next one is prepared, and no more.

use super::format::{ChunkRec, MemoryFileRec, Record};
use super::import::{ImportReport, Ready};
use super::memory::MemoryTarget;
use super::read::{Reader, parse_line};
use super::scrub::{opt as scrub_opt, text as scrub};
use super::{ExportError, Phase};
use crate::chunk::Chunk;
use crate::embed::{Embedder as _, EmbedderId, HashEmbedder};
use crate::index::lexical::term_frequencies;
use crate::redact::RedactionCounts;
use crate::store::RecordMeta;
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::mpsc::SyncSender;

/// Lines per batch: the unit prepared on the pool while the writer stores the previous one
/// (a write transaction takes several, `import::TX_RECORDS`); a batch's text is capped by
/// [`BATCH_BYTES`].
pub(super) const BATCH_RECORDS: usize = 8192;
/// Bytes of lines per batch (tool outputs can be megabytes each). Two batches are in memory
/// at most: the one being written and the next one, prepared.
const BATCH_BYTES: usize = 32 << 20;

/// One batch, prepared, with the file bytes read when it was complete (progress).
pub(super) struct Batch {
    pub items: Vec<Ready>,
    pub done: u64,
}

/// The reading side's state across batches.
pub(super) struct Prep<'a> {
    /// The model's space when the file's vectors are in it.
    pub reuse: Option<EmbedderId>,
    pub hash: &'a HashEmbedder,
    pub memory: MemoryTarget,
    pub dry_run: bool,
    /// sha256 of a chunk text as written in the file → as stored here, for the few texts the
    /// import's redaction changed (turn links name the file's hash).
    pub rehashed: HashMap<String, String>,
    /// The memory files' part of the report.
    pub report: ImportReport,
    pub redactions: RedactionCounts,
}

/// A record after the parallel step: ready to write, a memory file to place, or nothing.
#[allow(clippy::large_enum_variant)] // short-lived, one per line of a batch, as `Record`
enum Prepared {
    Ready(Ready),
    Memory(MemoryFileRec),
    Nothing,
}

/// What the parallel step made of one line; `rehash`: (hash as the file wrote the text, hash
/// once redacted here) when they differ.
struct Item {
    prepared: Prepared,
    rehash: Option<(String, String)>,
    redactions: RedactionCounts,
}

impl Prep<'_> {
    /// Read `rd` to its end and send each batch to `tx`; stops at the first error (sent too)
    /// or when the writer hangs up.
    pub(super) fn run(&mut self, rd: &mut Reader, tx: &SyncSender<Result<Batch, ExportError>>) {
        loop {
            let batch = self.next_batch(rd);
            let last = !matches!(&batch, Ok(Some(_)));
            let msg = match batch {
                Ok(Some(b)) => Ok(b),
                Ok(None) => return,
                Err(e) => Err(e),
            };
            if tx.send(msg).is_err() || last {
                return;
            }
        }
    }

    /// The next batch, prepared; `None` at the end of the file.
    fn next_batch(&mut self, rd: &mut Reader) -> Result<Option<Batch>, ExportError> {
        let mut lines = Vec::new();
        let mut bytes = 0usize;
        while lines.len() < BATCH_RECORDS && bytes < BATCH_BYTES {
            let Some((n, buf)) = rd.next_raw()? else {
                break;
            };
            bytes += buf.len();
            lines.push((n, buf));
        }
        if lines.is_empty() {
            return Ok(None);
        }
        let done = rd.progress(Phase::Import).done;
        let (reuse, hash) = (self.reuse.as_ref(), self.hash);
        let items: Vec<Item> = lines
            .into_par_iter()
            .map(|(n, buf)| prepare(parse_line(n, &buf)?, reuse, hash))
            .collect::<Result<_, _>>()?;
        let mut ready = Vec::with_capacity(items.len());
        for item in items {
            self.redactions.merge(&item.redactions);
            if let Some((before, after)) = item.rehash {
                self.rehashed.insert(before, after);
            }
            match item.prepared {
                Prepared::Ready(Ready::Link(mut l)) => {
                    if let Some(h) = self.rehashed.get(&l.text_sha256) {
                        l.text_sha256.clone_from(h);
                    }
                    ready.push(Ready::Link(l));
                }
                Prepared::Ready(r) => ready.push(r),
                Prepared::Memory(m) => self.memory_file(&m)?,
                Prepared::Nothing => {}
            }
        }
        Ok(Some(Batch { items: ready, done }))
    }

    /// Place one memory file ([`MemoryTarget`]) and list it in the report.
    fn memory_file(&mut self, m: &MemoryFileRec) -> Result<(), ExportError> {
        let dir = self.memory.dir_for(&m.project);
        let (written, path) = super::memory::write_file(m, &m.text, &dir, self.dry_run)?;
        self.report
            .place_memory_file(m, written, path, &self.memory);
        Ok(())
    }
}

/// Redact, hash and derive one record (any thread; see the module doc for what is left to
/// the ordered step).
fn prepare(
    r: Record,
    reuse: Option<&EmbedderId>,
    hash: &HashEmbedder,
) -> Result<Item, ExportError> {
    let mut n = RedactionCounts::default();
    let mut rehash = None;
    let prepared = match r {
        Record::Project(p) => Prepared::Ready(Ready::Project(p.path)),
        Record::Tombstone(t) => Prepared::Ready(Ready::Tombstone(
            t.what == super::format::TombstoneKind::Turn,
            t.key,
            t.forgotten_at,
        )),
        Record::Chunk(c) => {
            let (ready, before) = chunk(c, reuse, hash, &mut n);
            rehash = before;
            Prepared::Ready(ready)
        }
        Record::TurnLink(l) => Prepared::Ready(Ready::Link(l)),
        Record::Session(mut s) => {
            scrub_opt(&mut s.transcript_path, &mut n);
            scrub_opt(&mut s.summary, &mut n);
            scrub_opt(&mut s.compact_summary, &mut n);
            if let Some(st) = &s.structured_summary {
                let json =
                    serde_json::to_string(st).map_err(|e| ExportError::Encode(e.to_string()))?;
                if let Some(clean) = crate::redact::redact_json(&json)
                    && clean != json
                {
                    s.structured_summary = Some(serde_json::from_str(&clean).map_err(|e| {
                        ExportError::Encode(format!("redacted session summary: {e}"))
                    })?);
                }
            }
            Prepared::Ready(Ready::Session(s))
        }
        Record::SwapOutput(mut s) => {
            scrub(&mut s.content, &mut n);
            let e = &mut s.entry;
            scrub(&mut e.tool, &mut n);
            scrub_opt(&mut e.tool_use_id, &mut n);
            scrub(&mut e.input_summary, &mut n);
            // Everything derived from the content is computed again, never taken from the
            // file: a claimed size drives eviction for every later stored output.
            let d = crate::swap::digest(&e.tool, &e.input_summary, &s.content);
            e.id = crate::swap::content_id(&s.content);
            e.bytes = s.content.len() as u64;
            e.summary = d.summary;
            e.patterns = d.patterns;
            e.lines = d.lines;
            e.first_error = d.first_error;
            scrub(&mut e.summary, &mut n);
            e.patterns.iter_mut().for_each(|p| scrub(p, &mut n));
            scrub_opt(&mut e.first_error, &mut n);
            Prepared::Ready(Ready::Swap(s))
        }
        Record::MemoryFile(mut m) => {
            scrub(&mut m.text, &mut n);
            Prepared::Memory(m)
        }
        Record::Header(_) | Record::Trailer(_) => Prepared::Nothing,
    };
    Ok(Item {
        prepared,
        rehash,
        redactions: n,
    })
}

/// A chunk record redacted, hashed, with its one vector (the file's model vector when it is
/// in this store's model space, else the hash vector until the resident service replaces it)
/// and its term counts; with (the file's text hash, this one) when redaction changed the text.
fn chunk(
    mut c: ChunkRec,
    reuse: Option<&EmbedderId>,
    hash: &HashEmbedder,
    n: &mut RedactionCounts,
) -> (Ready, Option<(String, String)>) {
    let before = Chunk::hash_text(&c.text);
    scrub(&mut c.text, n);
    scrub(&mut c.summary, n);
    scrub(&mut c.turn_uuid, n);
    c.files.iter_mut().for_each(|f| scrub(f, n));
    c.tools.iter_mut().for_each(|t| scrub(t, n));
    c.line_uuids.iter_mut().for_each(|u| scrub(u, n));
    let sha256 = Chunk::hash_text(&c.text);
    let rehash = (sha256 != before).then(|| (before, sha256.clone()));
    let model = reuse.and_then(|emb| {
        c.vectors
            .iter()
            .find(|v| v.embedder == emb.key())
            .and_then(|v| v.values().ok())
            .filter(|v| v.len() == emb.dims)
            .map(|v| (emb.clone(), v))
    });
    let reused = model.is_some();
    let vector = model.unwrap_or_else(|| (hash.id().clone(), hash.embed_one(&c.text)));
    let terms = term_frequencies(&c.text);
    let meta = RecordMeta {
        ingested_at: c.ingested_at,
        access_count: c.access_count,
        last_access: c.last_access,
        confidence: c.confidence,
        pinned: c.pinned,
    };
    let chunk = Chunk {
        session_id: c.session,
        project: c.project,
        turn_index: c.turn,
        part: c.part,
        parts: c.parts,
        turn_uuid: c.turn_uuid,
        line_uuids: c.line_uuids,
        started_at: c.started_at,
        ended_at: c.ended_at,
        text: c.text,
        tools: c.tools,
        files: c.files,
        summary: c.summary,
        is_compact_summary: c.is_compact_summary,
        sha256,
    };
    let ready = Ready::Chunk(Box::new(super::import::ChunkReady {
        chunk,
        meta,
        vector,
        reused,
        terms,
    }));
    (ready, rehash)
}
