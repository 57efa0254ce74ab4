//! Incremental transcript ingest: O(new lines), never O(history).
//!
//! A per-transcript cursor (in the store) keeps the chunker state: the byte offset where the
//! last still-open turn starts, the next turn index, and the file identity (device, inode,
//! sha256 of the first bytes). The next ingest reads from that offset only; the open turn is
//! re-emitted and replaced by (session, turn, part) when its text changed. A file whose identity
//! or head changed, or that shrank below the cursor, was rewritten: it is parsed from the start
//! and every turn is upserted by key (unchanged turns cost a hash compare, nothing is lost).

use crate::chunk::Chunk;
use crate::clock::unix_now;
use crate::core::Core;
use crate::embed::{Embedder, EmbedderId};
use crate::error::EngineError;
use crate::store::{ChunkToPut, CursorRecord, Put, PutOutcome};
use crate::transcript::{Chunker, ChunkerConfig, ChunkerState};

mod ahead;
mod derived;
use serde::Serialize;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// How many head bytes identify a transcript file.
const HEAD_BYTES: u64 = 4096;

/// The most new bytes one pass reads (one commit each), whatever `commit_bytes` says. Why: a
/// pass holds its bytes, their turns and their chunks in memory, and in a fresh process every
/// new page costs its zeroing: a 5,000-turn first archive in one 82 MB pass peaked at 252 MB
/// and spent a fifth of its CPU in the kernel zeroing pages; in 16 MiB passes it peaks at
/// about 118 MB and was faster, two fsyncs per pass included.
const MAX_PASS_BYTES: u64 = 16 << 20;

/// Chunks handed to the store at a time ([`crate::store`]'s `put_chunks`): as many as the
/// derive thread hands out per block.
const PUT_BLOCK: usize = 64;

/// How to ingest.
#[derive(Debug, Clone)]
pub struct IngestOptions {
    /// Embed new chunks with the ONNX model now (CLI). When false, or when the model is
    /// unavailable, chunks get hash vectors and are marked pending for `embed-pending`.
    pub embed_with_model: bool,
    /// Chunking limits.
    pub chunker: ChunkerConfig,
    /// Commit after at most this many new bytes, then go on from the cursor (`None`: passes
    /// of [`MAX_PASS_BYTES`], the most a pass ever reads). Why: the store has one writer at a time, and a 1,500-turn first archive in one
    /// transaction held the lock for seconds while every hook of every session waited behind
    /// it. The CLI ingests in bounded passes; hooks read little and commit once.
    pub commit_bytes: Option<u64>,
    /// Told the transcript bytes each committed pass consumed (`memctl ingest`'s progress bar
    /// moves within a large file, not only per file).
    pub progress: Option<IngestProgress>,
}

/// A callback told the bytes of each committed pass of [`Core::ingest_transcript`].
#[derive(Clone)]
pub struct IngestProgress(pub std::sync::Arc<dyn Fn(u64) + Send + Sync>);

impl std::fmt::Debug for IngestProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IngestProgress(..)")
    }
}

impl Default for IngestOptions {
    fn default() -> Self {
        Self {
            embed_with_model: true,
            chunker: ChunkerConfig::default(),
            commit_bytes: None,
            progress: None,
        }
    }
}

/// What an ingest did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct IngestReport {
    /// Transcripts processed.
    pub transcripts: u64,
    /// Bytes read from disk.
    pub bytes_read: u64,
    /// Transcript lines read for the first time, blank ones included; a last line without
    /// `\n` counts once it is complete (it may be half-written until then).
    pub lines: u64,
    /// Malformed lines skipped (counted, never fatal).
    pub malformed: u64,
    /// Turns seen (closed + open).
    pub turns: u64,
    /// Chunks stored for the first time (a turn still open across passes of one run counts
    /// once, here).
    pub inserted: u64,
    /// Chunks stored by an earlier run whose turn grew or changed and were replaced.
    pub replaced: u64,
    /// Chunks stored by an earlier run with the same text.
    pub unchanged: u64,
    /// Chunks whose text the project already holds (another turn or session): stored once,
    /// linked.
    pub duplicates: u64,
    /// Secrets redacted.
    pub redactions: u64,
    /// Chunks not stored because their turn or text was forgotten (`memctl forget`).
    pub forgotten: u64,
    /// Chunks left waiting for a model embedding.
    pub pending: u64,
    /// (session, turn) of the newest compaction summary each transcript stored for the first
    /// time (the agent compacted since the last archive of it).
    pub compacted: Vec<(String, u32)>,
    /// True when the file was found rewritten and re-read from the start.
    pub rewritten: bool,
    /// Embedding space of the dense vectors written (model or hash); `None` when none was.
    pub embedder: Option<String>,
    /// Session ids touched.
    pub sessions: Vec<String>,
}

impl IngestReport {
    /// Add another report's counts into this one.
    pub fn merge(&mut self, o: &IngestReport) {
        self.transcripts += o.transcripts;
        self.bytes_read += o.bytes_read;
        self.lines += o.lines;
        self.malformed += o.malformed;
        self.turns += o.turns;
        self.inserted += o.inserted;
        self.replaced += o.replaced;
        self.unchanged += o.unchanged;
        self.duplicates += o.duplicates;
        self.redactions += o.redactions;
        self.forgotten += o.forgotten;
        self.pending += o.pending;
        self.compacted.extend(o.compacted.iter().cloned());
        self.rewritten |= o.rewritten;
        if o.embedder.is_some() {
            self.embedder.clone_from(&o.embedder);
        }
        for s in &o.sessions {
            if !self.sessions.contains(s) {
                self.sessions.push(s.clone());
            }
        }
    }
}

#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn identity(_meta: &std::fs::Metadata) -> (u64, u64) {
    (0, 0)
}

fn head_sha(file: &mut std::fs::File, len: u64) -> std::io::Result<String> {
    let mut buf = vec![0u8; len as usize];
    file.seek(SeekFrom::Start(0))?;
    file.read_exact(&mut buf)?;
    Ok(Chunk::hash_text(&String::from_utf8_lossy(&buf)))
}

/// A pass's counts of stored chunks.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    inserted: u64,
    replaced: u64,
    unchanged: u64,
    duplicates: u64,
    pending: u64,
    forgotten: u64,
    /// Turn of the newest compaction summary stored for the first time.
    compacted_turn: Option<u32>,
}

/// Count one stored chunk; true when it is new to the store. `this_run`: an earlier pass of
/// this run stored its turn first, so it stays new, not replaced or unchanged (the open turn
/// is fed again on every pass).
fn tally(put: &Put, this_run: bool, pending: bool, c: &mut Counts) -> bool {
    let stored = match put {
        Put::Forgotten => {
            c.forgotten += 1;
            return false;
        }
        Put::Stored(o) => o,
    };
    if this_run {
        return false;
    }
    match stored {
        PutOutcome::Inserted(_) => c.inserted += 1,
        PutOutcome::Replaced(_) => c.replaced += 1,
        PutOutcome::Unchanged(_) => c.unchanged += 1,
        PutOutcome::Duplicate(_) => c.duplicates += 1,
    }
    if pending && matches!(stored, PutOutcome::Inserted(_) | PutOutcome::Replaced(_)) {
        c.pending += 1;
    }
    matches!(stored, PutOutcome::Inserted(_))
}

impl Counts {
    /// Into `r`, a newly stored compaction summary as one of `session`.
    fn into_report(self, r: &mut IngestReport, session: &str) {
        if let Some(turn) = self.compacted_turn {
            r.compacted.push((session.to_string(), turn));
        }
        r.inserted = self.inserted;
        r.replaced = self.replaced;
        r.unchanged = self.unchanged;
        r.duplicates = self.duplicates;
        r.pending = self.pending;
        r.forgotten = self.forgotten;
    }
}

/// One pass's result, for [`Core::ingest_transcript`].
struct Pass {
    report: IngestReport,
    /// Bytes are left after this pass.
    more: bool,
    /// (session, index) of the first and of the last turn the pass saw.
    first_turn: Option<(String, u32)>,
    last_turn: Option<(String, u32)>,
    /// The next pass's parse, started ahead ([`ahead`]).
    next: Option<ahead::Parsing>,
}

/// The transcript a pass reads, and where reading resumes.
struct Source {
    /// The canonical path: the cursor's key.
    key: String,
    file: std::fs::File,
    dev: u64,
    ino: u64,
    len: u64,
    cursor: Option<CursorRecord>,
    /// Set up to resume where the cursor (or an adopted session cursor) left off.
    chunker: Chunker,
    /// The file is not the one the cursor describes: re-read from the start.
    rewritten: bool,
}

/// The model's vectors of a pass's changed chunks, in order.
struct ModelVectors {
    id: EmbedderId,
    vectors: Vec<Vec<f32>>,
}

/// What a pass writes in its one transaction.
struct ToWrite<'a> {
    chunks: &'a [Chunk],
    /// Per chunk: new or changed (embedded and stored), forgotten (neither).
    changed: &'a [bool],
    forgotten: &'a [bool],
    /// The texts of the changed chunks, in order.
    to_embed: &'a [&'a str],
    model_vecs: Option<ModelVectors>,
    cursor: CursorRecord,
    project: String,
    /// The agent whose transcript this is (kept in the session record).
    agent: crate::agent::Agent,
    rewritten: bool,
    now: i64,
}

/// The (session, turn, part) keys one `ingest_transcript` run stored for the first time.
#[derive(Debug, Default)]
struct NewKeys(std::collections::HashSet<(String, u32, u16)>);

impl NewKeys {
    fn key(c: &Chunk) -> (String, u32, u16) {
        (c.session_id.clone(), c.turn_index, c.part)
    }

    fn contains(&self, k: &(String, u32, u16)) -> bool {
        self.0.contains(k)
    }
}

impl Core {
    /// Ingest one transcript incrementally (see the module doc), in passes of at most
    /// [`IngestOptions::commit_bytes`] new bytes, one commit each.
    pub fn ingest_transcript(
        &self,
        path: &Path,
        opts: &IngestOptions,
    ) -> Result<IngestReport, EngineError> {
        let limit = opts
            .commit_bytes
            .unwrap_or(MAX_PASS_BYTES)
            .clamp(1, MAX_PASS_BYTES);
        let mut total = IngestReport::default();
        let mut last_turn: Option<(String, u32)> = None;
        let mut parsing: Option<ahead::Parsing> = None;
        let mut new_keys = NewKeys::default();
        loop {
            let Pass {
                report: mut r,
                more,
                first_turn,
                last_turn: last,
                next,
            } = self.ingest_pass(path, opts, limit, parsing, &mut new_keys)?;
            parsing = next;
            if let Some(p) = &opts.progress {
                (p.0)(r.bytes_read);
            }
            // A turn still open at the end of one pass is seen again by the next: count once.
            if first_turn.is_some() && first_turn == last_turn {
                r.turns = r.turns.saturating_sub(1);
            }
            if last.is_some() {
                last_turn = last;
            }
            let transcripts = total.transcripts.max(1);
            total.merge(&r);
            total.transcripts = transcripts;
            if !more {
                return Ok(total);
            }
        }
    }

    /// One pass: at most `max_bytes` new bytes, one commit. `parsing`: this pass's parse,
    /// started ahead by the last pass.
    fn ingest_pass(
        &self,
        path: &Path,
        opts: &IngestOptions,
        max_bytes: u64,
        parsing: Option<ahead::Parsing>,
        new_keys: &mut NewKeys,
    ) -> Result<Pass, EngineError> {
        let io = transcript_error(path);
        let t0 = std::time::Instant::now();
        let mut src = self.open_source(path, opts)?;
        let mut report = IngestReport {
            transcripts: 1,
            rewritten: src.rewritten,
            ..IngestReport::default()
        };
        let (dev, ino, len) = (src.dev, src.ino, src.len);
        let start = src.chunker.state().resume_offset.min(len);
        let (batch, more) = read_batch(&mut src, start, parsing, max_bytes, &mut report, &io)?;
        let t_feed = t0.elapsed();
        report.lines = batch.stats.new_lines;
        report.malformed = batch.stats.malformed;
        report.turns = batch.turns.len() as u64;
        let turn_key =
            |t: &crate::transcript::Turn| (t.session_id.clone().unwrap_or_default(), t.index);
        let first_turn = batch.turns.first().map(turn_key);
        let last_turn = batch.turns.last().map(turn_key);
        // The resume point stays at the start of the turn still open, so a pass that ends
        // inside a turn (or a line) longer than `max_bytes` would read the same bytes again
        // for ever: read more in one pass until the resume point moves.
        if more && src.chunker.state().resume_offset <= start {
            return self.ingest_pass(path, opts, max_bytes.saturating_mul(4), None, new_keys);
        }
        let state_bytes = encode_state(src.chunker.state());
        let next = more
            .then(|| parse_ahead(&src, &state_bytes, max_bytes))
            .flatten();
        report.redactions = u64::from(batch.redactions.total());
        let consumed_to = start + batch.consumed as u64;
        let head_len = len.min(HEAD_BYTES).min(consumed_to.max(1));
        let head_sha = if head_len > 0 && len > 0 {
            self::head_sha(&mut src.file, head_len).map_err(&io)?
        } else {
            String::new()
        };
        let chunks: Vec<Chunk> = batch.chunks.into_iter().map(|e| e.chunk).collect();
        let (changed, forgotten) = self.classify(&chunks)?;
        let to_embed: Vec<&str> = chunks
            .iter()
            .zip(&changed)
            .filter(|(_, ch)| **ch)
            .map(|(c, _)| c.text.as_str())
            .collect();
        let model_vecs = self.embed_changed(opts, &to_embed)?;
        // The space of the vectors this pass writes; none written, none named.
        report.embedder = (!to_embed.is_empty()).then(|| match &model_vecs {
            Some(m) => m.id.key(),
            None => self.hash_embedder().id().key(),
        });
        let (session_id, project) = session_and_project(&chunks, src.chunker.state());

        // Nothing new to store and the resume point did not move: no write transaction at all
        // (a durable commit costs two fsyncs in multi-process mode).
        let same_state = src.cursor.as_ref().is_some_and(|c| {
            c.dev == dev && c.ino == ino && c.state == state_bytes && !report.rewritten
        });
        if same_state && !changed.iter().any(|c| *c) {
            report.forgotten = forgotten.iter().filter(|f| **f).count() as u64;
            report.unchanged = chunks
                .iter()
                .zip(&forgotten)
                .filter(|(c, gone)| !**gone && !new_keys.contains(&NewKeys::key(c)))
                .count() as u64;
        } else {
            let t_pre = t0.elapsed();
            let counts = self.write_pass(
                ToWrite {
                    chunks: &chunks,
                    changed: &changed,
                    forgotten: &forgotten,
                    to_embed: &to_embed,
                    model_vecs,
                    cursor: CursorRecord {
                        offset: consumed_to,
                        dev,
                        ino,
                        head_sha,
                        head_len,
                        state: state_bytes,
                        session_id: session_id.clone(),
                    },
                    project,
                    agent: src.chunker.state().agent.unwrap_or_default(),
                    rewritten: report.rewritten,
                    now: unix_now(),
                },
                &src.key,
                new_keys,
            )?;
            tracing::debug!(
                feed_ms = t_feed.as_millis(),
                changed_and_embed_ms = (t_pre - t_feed).as_millis(),
                derive_and_write_ms = (t0.elapsed() - t_pre).as_millis(),
                total_ms = t0.elapsed().as_millis(),
                "ingest pass phases"
            );
            counts.into_report(&mut report, &session_id);
        }
        if !session_id.is_empty() {
            report.sessions.push(session_id);
        }
        Ok(Pass {
            report,
            more,
            first_turn,
            last_turn,
            next,
        })
    }

    /// Open the transcript and find where reading resumes: its cursor when the file is the
    /// one the cursor describes (same identity, not shorter, same head bytes), else another
    /// file's cursor of the same session ([`Self::adopt_session_cursor`]), else the start.
    fn open_source(&self, path: &Path, opts: &IngestOptions) -> Result<Source, EngineError> {
        let io = transcript_error(path);
        let key = std::fs::canonicalize(path)
            .map_err(&io)?
            .to_string_lossy()
            .into_owned();
        // Not `File::open`: a FIFO named like a transcript would block this process forever.
        let mut file = crate::paths::open_regular(path).map_err(&io)?;
        let meta = file.metadata().map_err(&io)?;
        let (dev, ino) = identity(&meta);
        let len = meta.len();
        let fallback_session = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let cursor = self.store().read()?.cursor(&key)?;
        let state: Option<ChunkerState> = match &cursor {
            Some(c) if c.dev == dev && c.ino == ino && len >= c.offset && c.head_len <= len => {
                let same_head =
                    c.head_len == 0 || head_sha(&mut file, c.head_len).map_err(&io)? == c.head_sha;
                if same_head {
                    decode_state(&c.state)
                } else {
                    None
                }
            }
            _ => None,
        };
        let rewritten = cursor.is_some() && state.is_none();
        if rewritten {
            tracing::info!(path = %path.display(), "transcript rewritten or replaced; re-reading from the start");
        }
        // Lines before the cursor's offset were counted by the run that consumed them.
        let counted_to = match (&state, &cursor) {
            (Some(_), Some(c)) => c.offset,
            _ => 0,
        };
        // A transcript we have not seen under this path may be a moved or copied file of a
        // session we already archived: resume from that session's cursor when the bytes before
        // its resume point are identical, instead of re-reading the whole history.
        let state = match (state, &cursor) {
            (None, None) => self.adopt_session_cursor(&mut file, len).map_err(&io)?,
            (s, _) => s,
        };
        let mut chunker =
            Chunker::new(opts.chunker.clone(), fallback_session).count_lines_from(counted_to);
        if let Some(s) = state {
            chunker = chunker.with_state(s);
        }
        chunker = chunker.with_project_hint(|| gemini_project_root(path));
        Ok(Source {
            key,
            file,
            dev,
            ino,
            len,
            cursor,
            chunker,
            rewritten,
        })
    }

    /// Which chunks are new or changed, and which are forgotten. Only changed ones are
    /// embedded (the open turn is re-emitted on every pass; re-embedding it unchanged would
    /// make work proportional to turn size); forgotten turns are neither embedded nor stored
    /// (checked again when writing).
    fn classify(&self, chunks: &[Chunk]) -> Result<(Vec<bool>, Vec<bool>), EngineError> {
        let r = self.store().read()?;
        let mut v = Vec::with_capacity(chunks.len());
        for c in chunks {
            if r.is_forgotten(c)? {
                v.push((false, true));
                continue;
            }
            let same = match r.turn_chunk(&c.session_id, c.turn_index, c.part)? {
                Some(id) => r.chunk(id)?.is_some_and(|rec| rec.chunk.sha256 == c.sha256),
                None => false,
            };
            v.push((!same, false));
        }
        Ok(v.into_iter().unzip())
    }

    /// Model vectors of `texts` when the options ask for them and the model loads; `None`
    /// leaves the chunks to the hash embedder, pending for the model.
    fn embed_changed(
        &self,
        opts: &IngestOptions,
        texts: &[&str],
    ) -> Result<Option<ModelVectors>, EngineError> {
        if !opts.embed_with_model || texts.is_empty() {
            return Ok(None);
        }
        match self.model() {
            Ok(m) => Ok(Some(ModelVectors {
                id: m.id().clone(),
                vectors: m.embed_batch(texts)?,
            })),
            Err(_) => Ok(None),
        }
    }

    /// The pass's one write transaction: access log, chunks, cursor, session record. Hash
    /// vectors and term counts (tokenize + stem) of the chunks to store are computed on the
    /// other cores while this thread writes the ones before them ([`derived`]).
    fn write_pass(
        &self,
        t: ToWrite<'_>,
        key: &str,
        new_keys: &mut NewKeys,
    ) -> Result<Counts, EngineError> {
        let accesses = self.claim_access_log();
        let hash = self.hash_embedder();
        let hash_id = hash.id().clone();
        let pending = t.model_vecs.is_none();
        let outcome = derived::with_derived(hash, t.to_embed, |derived| {
            self.store().write(|w| {
                self.apply_accesses(w, &accesses.1, t.now)?;
                let mut counts = Counts::default();
                let mut inserted = Vec::new();
                let mut vi = 0usize;
                let mut rows = t.chunks.iter().zip(t.changed).zip(t.forgotten).peekable();
                while rows.peek().is_some() {
                    let mut items = Vec::with_capacity(PUT_BLOCK);
                    for ((c, ch), gone) in rows.by_ref().take(PUT_BLOCK) {
                        let mut vectors: Vec<(EmbedderId, Vec<f32>)> = Vec::with_capacity(1);
                        let mut terms = None;
                        if *ch {
                            let (hash_vec, tf) = derived.next(&c.text);
                            terms = Some(tf);
                            // One space per chunk: the hash vector only until the model's exists.
                            match &t.model_vecs {
                                Some(m) => vectors.push((m.id.clone(), m.vectors[vi].clone())),
                                None => vectors.push((hash_id.clone(), hash_vec)),
                            }
                            vi += 1;
                        }
                        if *gone {
                            counts.forgotten += 1;
                            continue;
                        }
                        items.push(ChunkToPut {
                            chunk: c,
                            vectors,
                            terms,
                            meta: None,
                        });
                    }
                    // Forgotten here too: by a forget that committed since the read above.
                    let keys: Vec<_> = items
                        .iter()
                        .map(|i| {
                            let c = i.chunk;
                            let summary = c.is_compact_summary && c.part == 0;
                            (NewKeys::key(c), summary.then_some(c.turn_index))
                        })
                        .collect();
                    let puts = w.put_chunks(items, t.now, pending)?;
                    for (put, (k, summary)) in puts.into_iter().zip(keys) {
                        if tally(&put, new_keys.contains(&k), pending, &mut counts) {
                            counts.compacted_turn = summary.max(counts.compacted_turn);
                            inserted.push(k);
                        }
                    }
                }
                // Move the cursor forward only (a concurrent ingest may already be further on).
                let keep_existing = w.cursor(key)?.is_some_and(|cur| {
                    cur.dev == t.cursor.dev
                        && cur.ino == t.cursor.ino
                        && cur.offset > t.cursor.offset
                        && !t.rewritten
                });
                if !keep_existing {
                    w.set_cursor(key, &t.cursor)?;
                }
                // Not for a forgotten session whose turns were all skipped: an empty record would
                // bring its name back to `memctl sessions`.
                let session_id = &t.cursor.session_id;
                let stored =
                    counts.inserted + counts.replaced + counts.unchanged + counts.duplicates;
                let only_forgotten = counts.forgotten > 0 && stored == 0;
                if !session_id.is_empty() && (!only_forgotten || w.session(session_id)?.is_some()) {
                    w.update_session(session_id, &t.project, |s| {
                        s.transcript_path = Some(key.to_string());
                        s.agent = t.agent;
                    })?;
                }
                Ok((counts, inserted))
            })
        });
        self.release_access_log(accesses.0, outcome.is_ok());
        let (counts, inserted) = outcome?;
        new_keys.0.extend(inserted);
        Ok(counts)
    }
}

/// Feed the pass's bytes (at most `max_bytes` from `start`) to the chunker, or take the
/// batch the last pass parsed ahead when it started from this very state. Returns the batch
/// and whether bytes are left.
fn read_batch(
    src: &mut Source,
    start: u64,
    parsing: Option<ahead::Parsing>,
    max_bytes: u64,
    report: &mut IngestReport,
    io: &impl Fn(std::io::Error) -> EngineError,
) -> Result<(crate::transcript::Batch, bool), EngineError> {
    let state = encode_state(src.chunker.state());
    if let Some(a) = parsing.and_then(|p| p.take(start, &state, (src.dev, src.ino))) {
        src.chunker = a.chunker;
        report.bytes_read = a.bytes_read;
        return Ok((a.batch, start + a.bytes_read < src.len));
    }
    src.file.seek(SeekFrom::Start(start)).map_err(io)?;
    let want = (src.len - start).min(max_bytes);
    let mut bytes = Vec::with_capacity(want as usize);
    (&mut src.file)
        .take(want)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    report.bytes_read = bytes.len() as u64;
    Ok((src.chunker.feed(&bytes), want < src.len - start))
}

/// Start parsing the next pass's bytes on another thread (see [`ahead`]).
fn parse_ahead(src: &Source, state_bytes: &[u8], max_bytes: u64) -> Option<ahead::Parsing> {
    let from = src.chunker.state().resume_offset.min(src.len);
    let want = (src.len - from).min(max_bytes);
    ahead::Parsing::spawn(
        &src.file,
        (src.dev, src.ino),
        &src.chunker,
        state_bytes.to_vec(),
        want,
    )
}

/// The session and project of a pass: its first chunk's, else the chunker's (a pass may emit
/// no chunk).
fn session_and_project(chunks: &[Chunk], state: &ChunkerState) -> (String, String) {
    match chunks.first() {
        Some(c) => (c.session_id.clone(), c.project.clone()),
        None => (
            state.session_id.clone().unwrap_or_default(),
            state.project.clone().unwrap_or_default(),
        ),
    }
}

/// The error of an I/O failure on transcript `path`.
fn transcript_error(path: &Path) -> impl Fn(std::io::Error) -> EngineError + '_ {
    |source| EngineError::Transcript {
        path: path.to_path_buf(),
        source,
    }
}

impl Core {
    /// The chunker state of another transcript file of the same session (found through the
    /// session record) when `file` holds the same bytes up to that state's resume offset
    /// (checked on the head and on the 4 KiB before the resume offset, in both files).
    fn adopt_session_cursor(
        &self,
        file: &mut std::fs::File,
        len: u64,
    ) -> std::io::Result<Option<ChunkerState>> {
        let mut head = vec![0u8; len.min(HEAD_BYTES) as usize];
        file.seek(SeekFrom::Start(0))?;
        file.read_exact(&mut head)?;
        let Some(session) = session_id_in(&head) else {
            return Ok(None);
        };
        let Ok(reader) = self.store().read() else {
            return Ok(None);
        };
        let Some(other) = reader
            .session(&session)
            .ok()
            .flatten()
            .and_then(|s| s.transcript_path)
        else {
            return Ok(None);
        };
        let Some(cur) = reader.cursor(&other).ok().flatten() else {
            return Ok(None);
        };
        let Some(state) = decode_state(&cur.state) else {
            return Ok(None);
        };
        let resume = state.resume_offset;
        if resume == 0 || resume > len {
            return Ok(None);
        }
        let Ok(mut old) = crate::paths::open_regular(Path::new(&other)) else {
            return Ok(None);
        };
        let window = resume.min(4096);
        let same = |f: &mut std::fs::File, at: u64, n: u64| -> std::io::Result<Vec<u8>> {
            let mut b = vec![0u8; n as usize];
            f.seek(SeekFrom::Start(at))?;
            f.read_exact(&mut b)?;
            Ok(b)
        };
        let head_len = (head.len() as u64).min(resume);
        if same(file, 0, head_len)? != same(&mut old, 0, head_len)?
            || same(file, resume - window, window)? != same(&mut old, resume - window, window)?
        {
            return Ok(None);
        }
        tracing::info!(session = %session, from = %other, "resuming from the session's cursor of another transcript file");
        Ok(Some(state))
    }
}

/// The project of a Gemini CLI chat (`~/.gemini/tmp/<name>/chats/session-*.jsonl`), which
/// names no directory in its lines: Gemini CLI writes the project's path into
/// `<name>/.project_root`. `None` for any other layout, or a file that is not one absolute path.
fn gemini_project_root(transcript: &Path) -> Option<String> {
    let chats = transcript.parent()?;
    if chats.file_name()? != "chats" {
        return None;
    }
    let marker = chats.parent()?.join(".project_root");
    let mut text = String::new();
    crate::paths::open_regular(&marker)
        .ok()?
        .take(4096)
        .read_to_string(&mut text)
        .ok()?;
    let root = text.trim();
    (Path::new(root).is_absolute() && !root.contains('\n')).then(|| root.to_string())
}

/// The first `"sessionId":"…"` value in some transcript bytes.
fn session_id_in(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let i = text.find("\"sessionId\":\"")? + 13;
    let rest = &text[i..];
    let end = rest.find('"')?;
    let id = &rest[..end];
    (!id.is_empty() && id.len() <= 128).then(|| id.to_string())
}

fn encode_state(s: &ChunkerState) -> Vec<u8> {
    serde_json::to_vec(s).unwrap_or_default()
}

fn decode_state(b: &[u8]) -> Option<ChunkerState> {
    serde_json::from_slice(b).ok()
}
