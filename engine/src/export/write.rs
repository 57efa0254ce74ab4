//! Writing an export: one read transaction (a consistent snapshot while hooks keep writing),
//! every table streamed row by row into a buffered writer, so memory stays bounded by the
//! largest single record whatever the size of the store.

use super::format::{
    ChunkRec, Counts, FORMAT, Header, MemoryFileRec, ProjectRec, Record, SessionRec, SwapOutputRec,
    TombstoneKind, TombstoneRec, Trailer, TurnLinkRec, VERSION, VectorRec,
};
use super::{ExportError, ExportOptions, ExportReport, Phase, Progress};
use crate::chunk::Chunk;
use crate::core::Core;
use crate::embed::{Embedder as _, EmbedderId};
use crate::redact::RedactionCounts;
use crate::store::{ChunkRecord, StoreReader};
use std::collections::{BTreeSet, HashMap};
use std::io::Write;

/// Serializes records, one per line, counting them; every record goes through the redaction
/// pass first (a store written under older rules, or memory files, may hold secrets).
struct Lines<'w> {
    out: &'w mut dyn Write,
    counts: Counts,
    bytes: u64,
    redactions: RedactionCounts,
    /// sha256 of a chunk text as stored → as written, for the texts redaction changed (a turn
    /// link names the chunk by the hash of its text as written in the file).
    rehashed: HashMap<String, String>,
}

impl Lines<'_> {
    fn put(&mut self, mut r: Record) -> Result<(), ExportError> {
        let before = match &r {
            Record::Chunk(c) => Some(Chunk::hash_text(&c.text)),
            _ => None,
        };
        super::scrub::record(&mut r, &mut self.redactions)?;
        match &mut r {
            Record::Chunk(c) => {
                let after = Chunk::hash_text(&c.text);
                if let Some(before) = before.filter(|b| *b != after) {
                    self.rehashed.insert(before, after);
                }
            }
            Record::TurnLink(l) => {
                if let Some(h) = self.rehashed.get(&l.text_sha256) {
                    l.text_sha256.clone_from(h);
                }
            }
            _ => {}
        }
        let r = &r;
        let mut line = serde_json::to_vec(r).map_err(|e| ExportError::Encode(e.to_string()))?;
        line.push(b'\n');
        self.out.write_all(&line).map_err(ExportError::Write)?;
        self.bytes += line.len() as u64;
        self.counts.add(r);
        Ok(())
    }
}

/// Does the export take this chunk (by project, session and start time)?
fn selected(opts: &ExportOptions, projects: &BTreeSet<String>, rec: &ChunkRecord) -> bool {
    let c = &rec.chunk;
    (opts.projects.is_empty() || projects.contains(&c.project))
        && opts
            .since
            .as_deref()
            .is_none_or(|s| c.started_at.as_deref().is_some_and(|t| t >= s))
}

/// The chunk as a record, seen as turn (session, turn, part) (a session export writes shared
/// chunks as its own turns).
fn chunk_rec(rec: ChunkRecord, vectors: Vec<VectorRec>, at: Option<(&str, u32, u16)>) -> ChunkRec {
    let ChunkRecord {
        chunk: c,
        ingested_at,
        access_count,
        last_access,
        confidence,
        pinned,
        ..
    } = rec;
    let (session, turn, part) = match at {
        Some((s, t, p)) => (s.to_string(), t, p),
        None => (c.session_id, c.turn_index, c.part),
    };
    ChunkRec {
        session,
        project: c.project,
        turn,
        part,
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
        ingested_at,
        access_count,
        last_access,
        confidence,
        pinned,
        vectors,
    }
}

/// Model vectors of a chunk in the space `emb` (none when not embedded yet).
fn vectors_of(
    r: &StoreReader,
    id: u64,
    rec: &ChunkRecord,
    emb: Option<&EmbedderId>,
) -> Result<Vec<VectorRec>, ExportError> {
    let Some(emb) = emb else {
        return Ok(Vec::new());
    };
    let key = emb.key();
    if !rec.embedders.contains(&key) {
        return Ok(Vec::new());
    }
    Ok(r.vector(id, emb)?
        .map(|v| vec![VectorRec::new(key, &v)])
        .unwrap_or_default())
}

/// Write the whole export to `out` (see [`crate::Engine::export`]): header, projects,
/// tombstones, chunks and turn links, sessions, tool outputs, memory files, trailer.
pub(super) fn export(
    core: &Core,
    opts: &ExportOptions,
    out: &mut dyn Write,
    progress: &mut dyn FnMut(Progress),
) -> Result<ExportReport, ExportError> {
    // The model's space, for `--vectors`: the space its vectors were stored in. Loading the
    // model is the only way to learn its id; without it there are no model vectors to export.
    let emb = if opts.vectors {
        Some(core.model().map_err(ExportError::NoModel)?.id().clone())
    } else {
        None
    };
    let r = core.store().read()?;
    let mut run = Run {
        opts,
        projects: opts.projects.iter().cloned().collect(),
        emb,
        total: r.chunk_count()?,
        r,
        w: Lines {
            out,
            counts: Counts::default(),
            bytes: 0,
            redactions: RedactionCounts::default(),
            rehashed: HashMap::new(),
        },
        sessions: BTreeSet::new(),
        done: 0,
        progress,
    };
    run.header()?;
    match &opts.session {
        Some(only) => run.one_session(only)?,
        None => {
            run.every_chunk()?;
            run.turn_links()?;
        }
    }
    run.session_records()?;
    run.tool_outputs()?;
    if opts.session.is_none() {
        run.memory_files()?;
    }
    run.finish()
}

/// One export in progress: the snapshot it reads, what it selects, and what it wrote so far.
struct Run<'a, 'w> {
    opts: &'a ExportOptions,
    r: StoreReader,
    /// `opts.projects` as a set (empty: every project).
    projects: BTreeSet<String>,
    /// The model's space when vectors are exported.
    emb: Option<EmbedderId>,
    w: Lines<'w>,
    /// Sessions whose turns went into the file (their session records follow the chunks).
    sessions: BTreeSet<String>,
    done: u64,
    total: u64,
    progress: &'a mut dyn FnMut(Progress),
}

impl Run<'_, '_> {
    fn tick(&mut self) {
        (self.progress)(Progress {
            phase: Phase::Export,
            done: self.done,
            total: self.total,
        });
    }

    fn takes_project(&self, project: &str) -> bool {
        self.projects.is_empty() || self.projects.contains(project)
    }

    /// The header, the projects, and every tombstone. Tombstones carry no project (a uuid or
    /// a hash, never text): all of them go, so that an import anywhere does not bring back
    /// what was forgotten here.
    fn header(&mut self) -> Result<(), ExportError> {
        let opts = self.opts;
        let mut scope = Vec::new();
        if !opts.projects.is_empty() {
            scope.push(format!("projects: {}", opts.projects.join(", ")));
        }
        if let Some(s) = &opts.session {
            scope.push(format!("session: {s}"));
        }
        if let Some(s) = &opts.since {
            scope.push(format!("since: {s}"));
        }
        self.w.put(Record::Header(Header {
            format: FORMAT.to_string(),
            version: VERSION,
            memctl: env!("CARGO_PKG_VERSION").to_string(),
            created: jiff::Timestamp::now().to_string(),
            embedder: self.emb.as_ref().map(EmbedderId::key),
            scope,
        }))?;
        for (path, _) in self.r.projects()? {
            if self.takes_project(&path) {
                self.w.put(Record::Project(ProjectRec { path }))?;
            }
        }
        let w = &mut self.w;
        self.r.for_each_tombstone(|turn, key, at| {
            w.put(Record::Tombstone(TombstoneRec {
                what: if turn {
                    TombstoneKind::Turn
                } else {
                    TombstoneKind::Text
                },
                key: key.to_string(),
                forgotten_at: at,
            }))
        })
    }

    /// One session: its turns in order, shared chunks written as its own turns (their owners
    /// are not in the file).
    fn one_session(&mut self, only: &str) -> Result<(), ExportError> {
        for ((turn, part), id) in self.r.session_turns(only)? {
            let Some(rec) = self.r.chunk(id)? else {
                continue;
            };
            if !selected(self.opts, &self.projects, &rec) {
                continue;
            }
            let v = vectors_of(&self.r, id, &rec, self.emb.as_ref())?;
            self.w
                .put(Record::Chunk(chunk_rec(rec, v, Some((only, turn, part)))))?;
            self.sessions.insert(only.to_string());
            self.done += 1;
            self.tick();
        }
        Ok(())
    }

    /// Every selected chunk, in id order.
    fn every_chunk(&mut self) -> Result<(), ExportError> {
        let Self {
            opts,
            r,
            projects,
            emb,
            w,
            sessions,
            done,
            total,
            progress,
        } = self;
        r.for_each_chunk_with(|id, rec| {
            *done += 1;
            if done.is_multiple_of(64) {
                progress(Progress {
                    phase: Phase::Export,
                    done: *done,
                    total: *total,
                });
            }
            if !selected(opts, projects, &rec) {
                return Ok(());
            }
            sessions.insert(rec.chunk.session_id.clone());
            let v = vectors_of(r, id, &rec, emb.as_ref())?;
            w.put(Record::Chunk(chunk_rec(rec, v, None)))
        })?;
        self.tick();
        Ok(())
    }

    /// Turns that resolve to another turn's chunk (identical text in a fork): links, after
    /// every chunk, so the importer finds the chunk by its hash.
    fn turn_links(&mut self) -> Result<(), ExportError> {
        let mut links = Vec::new();
        self.r.for_each_turn(|e| {
            if !e.own {
                links.push((e.session.to_string(), e.turn, e.part, e.chunk));
            }
            Ok::<(), ExportError>(())
        })?;
        for (session, turn, part, id) in links {
            let Some(rec) = self.r.chunk(id)? else {
                continue;
            };
            if !selected(self.opts, &self.projects, &rec) {
                continue;
            }
            self.sessions.insert(session.clone());
            self.w.put(Record::TurnLink(TurnLinkRec {
                session,
                project: rec.chunk.project,
                turn,
                part,
                text_sha256: rec.chunk.sha256,
            }))?;
        }
        Ok(())
    }

    /// The session records: of the sessions written when the export is filtered, else of
    /// every selected project.
    fn session_records(&mut self) -> Result<(), ExportError> {
        let filtered = self.opts.session.is_some() || self.opts.since.is_some();
        for (id, s) in self.r.sessions()? {
            let take = if filtered {
                self.sessions.contains(&id)
            } else {
                self.takes_project(&s.project)
            };
            if !take {
                continue;
            }
            let structured = crate::summary::stored(&self.r, &id)?;
            self.w.put(Record::Session(SessionRec {
                id,
                project: s.project,
                transcript_path: s.transcript_path,
                first_ts: s.first_ts,
                last_ts: s.last_ts,
                turns: s.turns,
                updated_at: s.updated_at,
                summary: s.summary,
                compact_summary: s.compact_summary,
                compactions: s.compactions,
                agent: s.agent,
                structured_summary: structured,
            }))?;
        }
        Ok(())
    }

    /// The stored tool outputs of the selected projects, session and time.
    fn tool_outputs(&mut self) -> Result<(), ExportError> {
        let opts = self.opts;
        let since_unix = match &opts.since {
            Some(s) => Some(
                s.parse::<jiff::Timestamp>()
                    .map_err(|e| ExportError::Invalid(format!("since {s:?}: {e}")))?
                    .as_second(),
            ),
            None => None,
        };
        let (projects, w) = (&self.projects, &mut self.w);
        crate::swap::port::for_each_output(&self.r, |entry, content| {
            let take = (projects.is_empty() || projects.contains(&entry.project))
                && opts.session.as_ref().is_none_or(|s| *s == entry.session_id)
                && since_unix.is_none_or(|t| entry.created_at >= t);
            if take {
                w.put(Record::SwapOutput(SwapOutputRec { entry, content }))?;
            }
            Ok::<(), ExportError>(())
        })
    }

    /// The memory files of the selected projects. One directory may serve every project
    /// (`MEMCTL_MEMORY_DIR`): its files go once.
    fn memory_files(&mut self) -> Result<(), ExportError> {
        let memory_projects: Vec<String> = if self.projects.is_empty() {
            self.r.projects()?.into_iter().map(|(p, _)| p).collect()
        } else {
            self.projects.iter().cloned().collect()
        };
        let mut dirs_seen = BTreeSet::new();
        for project in memory_projects {
            let Some(dir) = crate::memory::find_dir(&project, &self.opts.memory) else {
                continue;
            };
            if !dirs_seen.insert(dir) {
                continue;
            }
            for (name, text) in super::memory::read_files(&project, &self.opts.memory)? {
                self.w.put(Record::MemoryFile(MemoryFileRec {
                    project: project.clone(),
                    name,
                    text,
                }))?;
            }
        }
        Ok(())
    }

    /// The trailer (the counts of every record before it), flushed.
    fn finish(mut self) -> Result<ExportReport, ExportError> {
        if !self.w.redactions.is_empty() {
            tracing::info!(
                secrets = self.w.redactions.total(),
                "export: redacted secrets the store held from before the current rules"
            );
        }
        let counts = self.w.counts;
        self.w.put(Record::Trailer(Trailer { counts }))?;
        self.w.out.flush().map_err(ExportError::Write)?;
        Ok(ExportReport {
            counts,
            bytes: self.w.bytes,
            embedder: self.emb.map(|e| e.key()),
        })
    }
}
