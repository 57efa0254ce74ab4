//! The `Engine` facade: every operation a binary calls, in one place.
//!
//! The work is done by the operation modules ([`crate::ingest`], [`crate::retrieve`],
//! [`crate::restore`], [`crate::summary`], [`crate::prune`], [`crate::swap`],
//! [`crate::memory`]) over the crate-private [`Core`] (store, embedders, access log);
//! dependencies point one way: this facade → operation modules → core → store / embed / index.
//! The store itself is not public: a binary never opens a transaction.

use crate::core::Core;
pub use crate::core::{ActiveEmbedder, EngineOptions};
use crate::embed::{Embedder, EmbedderId, OnnxEmbedder};
use crate::error::EmbedError;
use crate::error::EngineError;
use crate::ingest::{IngestOptions, IngestReport};
use crate::prune::{AutoPruneConfig, PruneReport};
use crate::rank::RankParams;
use crate::recall::{ContextState, QuerySource, QueryVector, RecallConfig, Recalled};
use crate::restore::{RestoreConfig, RestoreKind, Restored};
use crate::retrieve::{Retrieval, Retriever, SearchOutcome, SearchRequest};
use crate::search::SearchMode;
use crate::store::{ChunkId, ChunkRecord, SessionRecord, TurnRef};
use crate::summary::{SessionSummary, SummaryConfig, external::ExternalConfig};
use crate::swap::{
    PruneReport as SwapPruneReport, SwapConfig, SwapEntry, SwapHit, SwapOutcome, SwapStats,
    ToolCall,
};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The engine. Cheap to open (no model load until a query needs it).
#[derive(Debug)]
pub struct Engine {
    core: Core,
}

impl Engine {
    /// Open the store (creating the data dir 0700 and the file 0600).
    pub fn open(opts: EngineOptions) -> Result<Self, EngineError> {
        Ok(Self {
            core: Core::open(opts)?,
        })
    }

    /// Open an existing store for reading only: what a caller that never writes uses (a
    /// SessionStart restore, `memctl status`). A read-only handle joins the other processes'
    /// handles without touching the file: no recovery flag set on open and cleared on close,
    /// so none of the durable header writes a read-write open and close cost. Fails (and the
    /// caller opens with [`Engine::open`]) when there is no store yet, when it needs a
    /// migration, or when a writer that died left it to repair. Every write through it is
    /// [`crate::StoreError::ReadOnly`].
    pub fn open_read_only(opts: EngineOptions) -> Result<Self, EngineError> {
        Ok(Self {
            core: Core::open_read_only(opts)?,
        })
    }

    /// [`Engine::open`], migrating a store written by an earlier memctl first ([`Engine::migrate`]):
    /// what commands and the MCP server do (hooks never migrate: they start `memctl migrate`).
    /// Returns the migration's report when one ran.
    pub fn open_migrating(
        opts: EngineOptions,
    ) -> Result<(Self, Option<crate::MigrateReport>), EngineError> {
        match Self::open(opts.clone()) {
            Err(EngineError::Store(crate::StoreError::NeedsMigration { .. })) => {
                let rep = Self::migrate(&opts)?;
                Ok((Self::open(opts)?, Some(rep)))
            }
            other => other.map(|e| (e, None)),
        }
    }

    /// Migrate the store of `opts` to this memctl's schema (see `store::migrate`): the old
    /// file is kept under `<data dir>/backups/`. A current store is left alone (the report
    /// says `from == to`).
    pub fn migrate(opts: &EngineOptions) -> Result<crate::MigrateReport, EngineError> {
        Ok(crate::store::Store::migrate(
            &opts.store_path(),
            &opts.data_dir.join("backups"),
        )?)
    }

    /// A consistent copy of the store at `out` (a new file), taken from one read
    /// transaction while hooks keep writing. `None`: `<data dir>/backups/memctl-backup-<UTC
    /// time>.redb`.
    pub fn backup(&self, out: Option<&Path>) -> Result<crate::BackupReport, EngineError> {
        let out = match out {
            Some(p) => p.to_path_buf(),
            None => {
                let dir = self.core.data_dir().join("backups");
                crate::paths::ensure_private_dir(&dir)?;
                crate::store::migrate::backup_name(&dir, "backup")
            }
        };
        // A forget that commits while the copy is made checks the backups before this one is
        // in place: a copy from before its commit that holds what it removed is deleted here
        // and made again, so no backup outlives a forget with its text.
        for _ in 0..3 {
            let epoch = self.core.store().read()?.forget_epoch()?;
            let rep = self.core.store().backup(&out)?;
            let r = self.core.store().read()?;
            if r.forget_epoch()? == epoch || !r.backup_holds_forgotten(&out)? {
                return Ok(rep);
            }
            std::fs::remove_file(&out).map_err(|source| crate::StoreError::Io {
                path: out.clone(),
                source,
            })?;
        }
        Err(crate::StoreError::Io {
            path: out,
            source: std::io::Error::other(
                "forgets kept removing what each copy held while it was written: run it again",
            ),
        }
        .into())
    }

    /// Keep the int8 vector blocks in memory between searches: for a long-lived process (the
    /// MCP server). Each search still reads the block epoch and the tails of the spaces it
    /// scans and rereads what changed, so results are those of a fresh process.
    pub fn keep_vectors_resident(&mut self) {
        self.core.keep_vectors_resident();
    }

    /// An engine over a store opened by the caller (tests with injected storage faults).
    #[cfg(test)]
    pub(crate) fn with_store(opts: EngineOptions, store: crate::store::Store) -> Self {
        Self {
            core: Core::with_store(opts, store),
        }
    }

    /// The internals, for the crate's own hook adapter and tests.
    pub(crate) fn core(&self) -> &Core {
        &self.core
    }

    /// The store, for the crate's own hook adapter and tests.
    pub(crate) fn store(&self) -> &crate::store::Store {
        self.core.store()
    }

    /// The options the engine was opened with.
    pub fn options(&self) -> &EngineOptions {
        self.core.options()
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        self.core.data_dir()
    }

    /// The store file.
    pub fn store_path(&self) -> PathBuf {
        self.core.store().path().to_path_buf()
    }

    /// Whether the store was opened read-only (the file cannot be written, or
    /// [`Engine::open_read_only`]).
    pub fn is_read_only(&self) -> bool {
        self.core.store().is_read_only()
    }

    /// How long one write waits for another process's write transaction (default 2 s).
    pub fn set_write_timeout(&mut self, t: Duration) {
        self.core.set_write_timeout(t);
    }

    /// Bound every wait on the store by `deadline` (hooks pass their own deadline).
    pub fn set_deadline(&mut self, deadline: Instant) {
        self.core.set_deadline(deadline);
    }

    /// The ONNX model, loading it on first use; `Err` holds why it is unavailable.
    pub fn model(&self) -> Result<Arc<OnnxEmbedder>, String> {
        self.core.model()
    }

    /// The model if this process loaded it already (never loads it): its load time and what
    /// it computed ([`OnnxEmbedder::stats`]) for `memctl embed-pending --json`.
    pub fn loaded_model(&self) -> Option<Arc<OnnxEmbedder>> {
        self.core.loaded_model()
    }

    /// Which embedder answers queries (loads the model when possible).
    pub fn active_embedder(&self) -> ActiveEmbedder {
        self.core.active_embedder()
    }

    /// Embed texts with the active embedder; returns the space and vectors.
    pub fn embed_active(&self, texts: &[&str]) -> Result<crate::embed::Embedded, EmbedError> {
        self.core.embed_active(texts)
    }

    // ---- Archive ----

    /// Ingest one transcript incrementally (O(new bytes); see [`crate::ingest`]).
    pub fn ingest_transcript(
        &self,
        path: &Path,
        opts: &IngestOptions,
    ) -> Result<IngestReport, EngineError> {
        self.core.ingest_transcript(path, opts)
    }

    /// PostToolUse: store a tool output whole when it qualifies ([`crate::swap`]).
    pub fn swap_tool_output(
        &self,
        call: &ToolCall<'_>,
        cfg: &SwapConfig,
        now: i64,
    ) -> Result<SwapOutcome, EngineError> {
        self.core.swap_tool_output(call, cfg, now)
    }

    /// PostToolUse: swap the output in place when it qualifies ([`crate::swap::inplace`]).
    pub fn swap_in_place(
        &self,
        call: &ToolCall<'_>,
        transcript: Option<&Path>,
        cfg: &SwapConfig,
        now: i64,
    ) -> Result<Result<crate::swap::inplace::InPlace, crate::swap::inplace::NotInPlace>, EngineError>
    {
        self.core.swap_in_place(call, transcript, cfg, now)
    }

    /// Record that chunks were used (opened from search): appended to the access log, folded
    /// into the store by the next write. Injected chunks are not recorded here: they wait for
    /// the agent to use them ([`Self::judge_usage`]).
    pub fn record_access(&self, ids: &[ChunkId]) -> Result<(), EngineError> {
        self.core.record_access(ids)
    }

    /// The first turn of `session` that counts as later than an injection made now
    /// ([`crate::recall::ContextState::await_use`]).
    pub fn next_agent_turn(&self, session: &str) -> Result<u32, EngineError> {
        crate::recall::next_agent_turn(&self.core, session)
    }

    /// Judge the injected chunks waiting in `state` against the archived turns of `session`
    /// (usage-aware reinforcement, [`crate::rank::usage`]): used ones are boosted, ones unused
    /// within the window decayed, both through the access log. The caller saves `state`.
    pub fn judge_usage(
        &self,
        session: &str,
        state: &mut crate::recall::ContextState,
    ) -> Result<crate::recall::UsageReport, EngineError> {
        crate::recall::judge(
            &self.core,
            session,
            state,
            &crate::rank::RankParams::default(),
        )
    }

    /// Fold the access log into the store now (CLI, tests).
    pub fn flush_access_log(&self) -> Result<usize, EngineError> {
        self.core.flush_access_log()
    }

    // ---- Retrieve ----

    /// Hybrid / dense / lexical search with filters, through the one pipeline
    /// ([`crate::retrieve::Retriever`]).
    pub fn search(&self, req: &SearchRequest) -> Result<SearchOutcome, EngineError> {
        let reader = self.core.store().read()?;
        let pids = self.core.project_ids(&reader, &req.projects)?;
        let mut degraded = None;
        let mut embedder = None;
        let dense_wanted = req.mode != SearchMode::Lexical && !pids.is_empty();
        let retriever = Retriever::new(&reader);
        // A time phrase ("last week") says when, not what: the retrievers search without it,
        // over more candidates, and the hits inside its window come first.
        let time = self.read_time(&retriever, &pids, req)?;
        let moving = time.as_ref().filter(|t| t.moves());
        let text = time
            .as_ref()
            .map_or(req.query.as_str(), |t| t.text.as_str());
        let candidates = match moving {
            Some(_) => req
                .candidates()
                .max(req.k.max(1).saturating_mul(20))
                .max(200),
            None => req.candidates(),
        };
        // The query vector (service or model) is made while this thread runs BM25.
        let (queried, lexical) = retriever.lexical_beside(
            &pids,
            text,
            candidates,
            req.mode != SearchMode::Dense,
            || dense_wanted.then(|| self.query_embedding(text, &pids, candidates)),
        );
        let lexical = lexical?;
        let (query_vector, ann) = match queried.transpose()? {
            None => (None, None),
            Some(q) => {
                if q.embedder.model != crate::embed::onnx::MINILM_NAME {
                    degraded = Some(match self.core.model() {
                        Err(reason) => {
                            format!("semantic model unavailable ({reason}): lexical + hash search")
                        }
                        Ok(_) => "hash embeddings".to_string(),
                    });
                }
                embedder = Some(q.embedder.key());
                (Some((q.embedder, q.vector)), q.ann)
            }
        };
        let retriever = retriever
            .with_resident(self.core.resident_blocks())
            .with_ann(ann.as_ref());
        let vector = query_vector.as_ref().map(|(e, v)| (e, v.as_slice()));
        let mut ranked = retriever.rank(&Retrieval {
            text,
            vector,
            project_ids: &pids,
            candidates,
            mode: req.mode,
            fusion: req.fusion,
            lexical: lexical.as_ref(),
        })?;
        if let Some(t) = moving {
            retriever.promote_in_time(&mut ranked.hits, t)?;
        }
        let ids = crate::retrieve::explain::query_identifiers(&req.query);
        retriever.promote_exact(&mut ranked.hits, &ids)?;
        let by_agent = crate::retrieve::AgentSessions::read(&reader, req.agent)?;
        let mut results = retriever.load(&ranked.hits, req.k.max(1), req.fold, |_, rec| {
            req.accepts(rec) && by_agent.accepts(rec)
        })?;
        for r in &mut results {
            if let Some(s) = reader.session(&r.record.chunk.session_id)? {
                r.agent = s.agent;
            }
        }
        let model_vector = vector.filter(|(e, _)| e.model == crate::embed::onnx::MINILM_NAME);
        retriever.explain(&mut results, &ranked.lexical, model_vector)?;
        crate::retrieve::mark_superseded(&mut results, moving.is_some());
        let excluded_by = if results.is_empty() && req.has_filters() {
            let unfiltered = retriever.load(&ranked.hits, req.candidates(), false, |_, _| true)?;
            let recs: Vec<&ChunkRecord> = unfiltered.iter().map(|r| &r.record).collect();
            req.explain_exclusions(&recs, &by_agent)
        } else {
            Vec::new()
        };
        Ok(SearchOutcome {
            results,
            embedder,
            degraded,
            excluded_by,
            cold: ranked.cold,
            indexed: ranked.indexed,
            time,
        })
    }

    /// The query's time phrase read at the request's own time, its event ("before the
    /// migration") looked up in `pids` ([`Retriever::event_turn`]); `None` when the request
    /// reads no time, the query has no phrase or nothing but the phrase.
    fn read_time(
        &self,
        retriever: &Retriever<'_>,
        pids: &[u32],
        req: &SearchRequest,
    ) -> Result<Option<crate::retrieve::when::TimeScope>, EngineError> {
        if !req.read_time {
            return Ok(None);
        }
        // The engine's one clock; an out-of-range `now` reads as the epoch (no phrase matches
        // a turn then, and nothing is reordered).
        let now = jiff::Timestamp::from_second(req.now.unwrap_or_else(crate::clock::unix_now))
            .unwrap_or(jiff::Timestamp::UNIX_EPOCH);
        let Some(scope) = crate::retrieve::when::time_scope(&req.query, now)
            .filter(|t| !t.text.trim().is_empty())
        else {
            return Ok(None);
        };
        let Some(words) = scope.event.as_ref().map(|e| e.words.clone()) else {
            return Ok(Some(scope));
        };
        let asked_at = crate::retrieve::when::stored_form(now);
        let turn = retriever.event_turn(pids, &words, &asked_at)?;
        Ok(Some(scope.at_event(turn, &req.query)))
    }

    /// The SessionStart restore block for `session_id` in `project` ([`crate::restore`]).
    pub fn restore(
        &self,
        session_id: &str,
        project: &str,
        kind: RestoreKind,
        cfg: &RestoreConfig,
    ) -> Result<Restored, EngineError> {
        self.restore_excluding(session_id, project, kind, cfg, &HashSet::new())
    }

    /// [`Self::restore`] without the chunks in `exclude` (already in the live context: what
    /// earlier blocks injected since the last boundary, so resumes do not stack blocks).
    pub fn restore_excluding(
        &self,
        session_id: &str,
        project: &str,
        kind: RestoreKind,
        cfg: &RestoreConfig,
        exclude: &HashSet<ChunkId>,
    ) -> Result<Restored, EngineError> {
        crate::restore::restore_block(&self.core, session_id, project, kind, cfg, exclude)
    }

    /// Prompt-time recall ([`crate::recall`]): the archived turns that answer `prompt` and are
    /// not in the live context `state` describes. Embeds the prompt with the model when it is
    /// available (hybrid), else recalls on lexical evidence alone.
    pub fn recall(
        &self,
        session: &str,
        project: &str,
        prompt: &str,
        state: &ContextState,
        cfg: &RecallConfig,
    ) -> Result<Recalled, EngineError> {
        if !crate::recall::worth_searching(prompt, cfg) {
            return Ok(Recalled::default());
        }
        crate::recall::recall(
            &self.core,
            crate::recall::Ask {
                session,
                project,
                prompt,
            },
            || self.query_vector(prompt, project, cfg),
            state,
            cfg,
        )
    }

    /// `text`'s vector from the resident service (with its index's nearest chunks in
    /// `projects` when it keeps one), else from the active embedder in this process.
    fn query_embedding(
        &self,
        text: &str,
        projects: &[u32],
        k: usize,
    ) -> Result<crate::resident::Served, EngineError> {
        if let Some(s) = self.resident_query(text, projects, k) {
            return Ok(s);
        }
        let mut e = self.core.embed_active(&[text])?;
        Ok(crate::resident::Served {
            vector: e.vectors.pop().unwrap_or_default(),
            embedder: e.embedder,
            ann: None,
        })
    }

    /// A query vector from the resident service ([`crate::resident`]) when it is on and answers
    /// (the agent's own `memctl search` gets it too), with its index's `k` nearest chunks in
    /// `projects` when it keeps one; None otherwise.
    fn resident_query(
        &self,
        text: &str,
        projects: &[u32],
        k: usize,
    ) -> Option<crate::resident::Served> {
        let opts = self.core.options();
        if opts.model_disabled || !opts.resident.enabled {
            return None;
        }
        match crate::resident::search_query(
            &opts.data_dir,
            text,
            projects,
            k,
            opts.resident.timeout,
        ) {
            Ok(found) => Some(found),
            Err(crate::resident::ResidentError::NotRunning { .. }) => None,
            Err(e) => {
                tracing::info!(error = %e, "resident embedder did not answer; embedding here");
                None
            }
        }
    }

    /// The prompt's vector for recall: from the resident embedder when one answers (a few ms),
    /// else from the fast-start query model in this process (~150–190 ms), else none (lexical
    /// recall). The model is never loaded when the resident embedder answered.
    fn query_vector(
        &self,
        prompt: &str,
        project: &str,
        cfg: &RecallConfig,
    ) -> Result<(QueryVector, QuerySource), EngineError> {
        if self.core.options().model_disabled {
            return Ok((QueryVector::None, QuerySource::None));
        }
        let pids: Vec<u32> = self
            .core
            .store()
            .read()?
            .project_id(project)?
            .into_iter()
            .collect();
        if let Some(s) = self.resident_query(prompt, &pids, cfg.candidates) {
            let q = match s.ann {
                Some(ann) => QueryVector::Served {
                    embedder: s.embedder,
                    vector: s.vector,
                    ann: Box::new(ann),
                },
                None => QueryVector::Given(s.embedder, s.vector),
            };
            return Ok((q, QuerySource::Resident));
        }
        Ok(match self.core.query_model() {
            Ok(m) => {
                let mut v = m.embed_batch(&[prompt])?;
                (
                    QueryVector::Given(m.id().clone(), v.pop().unwrap_or_default()),
                    QuerySource::InProcess,
                )
            }
            Err(_) => (QueryVector::None, QuerySource::None),
        })
    }

    /// The turn index of the newest compaction summary archived for a session (looked for
    /// among its latest 500 turns).
    pub fn latest_compact_turn(&self, session: &str) -> Result<Option<u32>, EngineError> {
        let r = self.core.store().read()?;
        for ((turn, _), id) in r.session_turns_rev(session, 500)? {
            if r.chunk(id)?.is_some_and(|c| c.chunk.is_compact_summary) {
                return Ok(Some(turn));
            }
        }
        Ok(None)
    }

    /// The highest turn index archived for a session (None when it has no turn).
    pub fn last_turn(&self, session: &str) -> Result<Option<u32>, EngineError> {
        let r = self.core.store().read()?;
        Ok(r.session_turns_rev(session, 1)?
            .first()
            .map(|((t, _), _)| *t))
    }

    /// PreCompact's plain-text instructions for Claude's summariser ([`crate::restore`]).
    pub fn compaction_instructions(
        &self,
        session_id: &str,
        custom: Option<&str>,
        cfg: &RestoreConfig,
    ) -> Result<String, EngineError> {
        crate::restore::compaction_instructions(&self.core, session_id, custom, cfg)
    }

    // ---- Browse ----

    /// Every archived session, unordered.
    pub fn sessions(&self) -> Result<Vec<(String, SessionRecord)>, EngineError> {
        Ok(self.core.store().read()?.sessions()?)
    }

    /// One session's record.
    pub fn session(&self, id: &str) -> Result<Option<SessionRecord>, EngineError> {
        Ok(self.core.store().read()?.session(id)?)
    }

    /// One chunk.
    pub fn chunk(&self, id: ChunkId) -> Result<Option<ChunkRecord>, EngineError> {
        Ok(self.core.store().read()?.chunk(id)?)
    }

    /// The near-identical copies of chunk `id` that search, recall and restore fold into it
    /// ([`crate::fold`]), oldest first; none when the chunk is gone.
    pub fn chunk_copies(&self, id: ChunkId) -> Result<Vec<(ChunkId, ChunkRecord)>, EngineError> {
        let r = self.core.store().read()?;
        let Some(rec) = r.chunk(id)? else {
            return Ok(Vec::new());
        };
        Ok(Retriever::new(&r).copies_of(id, &rec)?)
    }

    /// A session's chunks in turn order, read in one snapshot (chunks pruned meanwhile are left
    /// out).
    pub fn session_chunks(
        &self,
        session: &str,
    ) -> Result<Vec<(TurnRef, ChunkRecord)>, EngineError> {
        let r = self.core.store().read()?;
        let mut out = Vec::new();
        for (turn, id) in r.session_turns(session)? {
            if let Some(rec) = r.chunk(id)? {
                out.push(((turn, id), rec));
            }
        }
        Ok(out)
    }

    /// A session's chunks whose turn lies in `from..=to`, in turn order, read in one snapshot:
    /// the neighbourhood of one hit without loading a whole (possibly 5,000-turn) session.
    pub fn session_window(
        &self,
        session: &str,
        from: u32,
        to: u32,
    ) -> Result<Vec<(TurnRef, ChunkRecord)>, EngineError> {
        let r = self.core.store().read()?;
        let mut out = Vec::new();
        for (turn, id) in r.session_turn_range(session, from, to)? {
            if let Some(rec) = r.chunk(id)? {
                out.push(((turn, id), rec));
            }
        }
        Ok(out)
    }

    /// A chunk's vector from the ONNX model (None while it waits for `embed-pending`): what
    /// `memctl sync` pushes to the team store, so that teammates search the same space.
    pub fn model_vector(&self, id: ChunkId) -> Result<Option<Vec<f32>>, EngineError> {
        let model_id = EmbedderId::new(
            crate::embed::onnx::MINILM_NAME,
            self.core.options().onnx.variant.clone(),
            crate::embed::onnx::MINILM_DIMS,
        );
        Ok(self.core.store().read()?.vector(id, &model_id)?)
    }

    /// Up to `n` chunks with ids above `after`, in id order (paging through the archive).
    pub fn chunks_after(
        &self,
        after: ChunkId,
        n: usize,
    ) -> Result<Vec<(ChunkId, ChunkRecord)>, EngineError> {
        Ok(self.core.store().read()?.chunks_after(after, n)?)
    }

    // ---- Maintain ----

    /// Store-wide counts.
    pub fn status(&self) -> Result<StoreStatus, EngineError> {
        let r = self.core.store().read()?;
        let projects = r.projects()?;
        let mut vectors = Vec::new();
        let model_id = EmbedderId::new(
            crate::embed::onnx::MINILM_NAME,
            self.core.options().onnx.variant.clone(),
            crate::embed::onnx::MINILM_DIMS,
        );
        let live = r.live_vector_counts()?;
        let mut stale_index_entries = Vec::new();
        for emb in [model_id, self.core.hash_embedder().id().clone()] {
            let mut entries = 0;
            for (_, pid) in &projects {
                entries += r.vector_count(*pid, &emb)?;
            }
            let n = live.get(&emb.key()).copied().unwrap_or(0);
            vectors.push((emb.key(), n));
            stale_index_entries.push((emb.key(), entries.saturating_sub(n)));
        }
        Ok(StoreStatus {
            chunks: r.chunk_count()?,
            sessions: r.sessions()?.len() as u64,
            projects: projects.len() as u64,
            pending: r.pending_count()?,
            file_bytes: std::fs::metadata(self.core.store().path()).map_or(0, |m| m.len()),
            vectors,
            stale_index_entries,
        })
    }

    /// Chunks waiting for a model vector (cheaper than [`Self::status`]).
    pub fn pending_count(&self) -> Result<u64, EngineError> {
        Ok(self.core.store().read()?.pending_count()?)
    }

    /// Embed up to `limit` chunks that were stored without a model vector. Returns how many
    /// were embedded. Fails when the model is unavailable (the chunks stay pending).
    pub fn embed_pending(&self, limit: usize) -> Result<usize, EngineError> {
        // Nothing pending: no model load (210–250 ms of CPU and 164 MB).
        if limit == 0 || self.core.store().read()?.pending(1)?.is_empty() {
            return Ok(0);
        }
        let model = self
            .core
            .model()
            .map_err(|reason| EngineError::Invalid(format!("model unavailable: {reason}")))?;
        let emb = model.id().clone();
        let hash = self.core.hash_embedder().id().clone();
        let mut done = 0;
        while done < limit {
            let (batch, gone) = {
                let r = self.core.store().read()?;
                let ids = r.pending(64.min(limit - done))?;
                let mut batch: Vec<(ChunkId, ChunkRecord)> = Vec::with_capacity(ids.len());
                let mut gone = Vec::new();
                for id in ids {
                    match r.chunk(id)? {
                        Some(rec) => batch.push((id, rec)),
                        None => gone.push(id),
                    }
                }
                (batch, gone)
            };
            if batch.is_empty() && gone.is_empty() {
                break;
            }
            let texts: Vec<&str> = batch.iter().map(|(_, r)| r.chunk.text.as_str()).collect();
            let vecs = model.embed_batch(&texts)?;
            self.core.store().write(|w| {
                for id in &gone {
                    w.clear_pending(*id)?;
                }
                for ((id, _), v) in batch.iter().zip(&vecs) {
                    // Re-read inside the transaction: the chunk may have changed since.
                    if let Some(mut cur) = w.get_record(*id)?
                        && !cur.embedders.contains(&emb.key())
                    {
                        w.put_vector(cur.project_id, *id, &emb, v)?;
                        cur.embedders.push(emb.key());
                        // The hash vector was only there until the model's came (bytes);
                        // its int8 entry goes at the quiet moment (`Store::reclaim`).
                        if cur.embedders.contains(&hash.key()) {
                            w.drop_vector(*id, &hash)?;
                            cur.embedders.retain(|k| *k != hash.key());
                        }
                        w.update_record(*id, &cur)?;
                    }
                    w.clear_pending(*id)?;
                }
                Ok(())
            })?;
            done += batch.len() + gone.len();
        }
        if self.core.store().read()?.pending_count()? == 0 {
            // A quiet moment: the burst of embedding is over (see `store::reclaim`).
            let rep = self.core.store().reclaim(&emb, &hash)?;
            tracing::info!(?rep, "reclaimed store bytes");
        }
        Ok(done)
    }

    /// Drop what the model made redundant once nothing is pending ([`crate::store::Store::reclaim`]):
    /// for a bulk command that embedded with the model itself (`memctl ingest`), whose replaced
    /// open turns leave stale index entries. Loads no model; does nothing while chunks wait.
    pub fn reclaim(&self) -> Result<crate::store::ReclaimReport, EngineError> {
        let model = EmbedderId::new(
            crate::embed::onnx::MINILM_NAME,
            self.core.options().onnx.variant.clone(),
            crate::embed::onnx::MINILM_DIMS,
        );
        Ok(self
            .core
            .store()
            .reclaim(&model, self.core.hash_embedder().id())?)
    }

    /// Build and store a session's extractive summary ([`crate::summary`]).
    pub fn summarize(
        &self,
        session: &str,
        cfg: &SummaryConfig,
    ) -> Result<Option<SessionSummary>, EngineError> {
        crate::summary::summarize_session(&self.core, session, cfg)
    }

    /// `memctl summarize`: the extractive summary plus the external summariser's abstract.
    pub fn summarize_with_external(
        &self,
        session: &str,
        cfg: &SummaryConfig,
        ext: &ExternalConfig,
    ) -> Result<Option<SessionSummary>, EngineError> {
        crate::summary::summarize_with_external(&self.core, session, cfg, ext)
    }

    /// Full prune (`memctl prune`, [`crate::prune`]).
    pub fn prune(
        &self,
        p: &RankParams,
        dry_run: bool,
        now: Option<i64>,
    ) -> Result<PruneReport, EngineError> {
        crate::prune::prune_all(&self.core, p, dry_run, now)
    }

    /// The bounded automatic prune pass (SessionEnd); None when it did not run.
    pub fn auto_prune(
        &self,
        cfg: &AutoPruneConfig,
        now: Option<i64>,
    ) -> Result<Option<PruneReport>, EngineError> {
        crate::prune::auto_pass(&self.core, cfg, now)
    }

    /// Forget what `req` names, everywhere memctl keeps it, and rewrite the store file so no
    /// byte of it is left ([`crate::forget`]); `dry_run`: only report what would go.
    pub fn forget(
        &self,
        req: &crate::forget::ForgetRequest,
        dry_run: bool,
    ) -> Result<crate::forget::ForgetReport, EngineError> {
        crate::forget::forget(&self.core, req, dry_run)
    }

    /// Did a forget commit a removal whose store file was not rewritten yet (killed, or its
    /// rewrite failed)? One meta read: what hooks check before starting `memctl forget
    /// --finish` ([`crate::forget::finish`]).
    pub fn forget_pending(&self) -> Result<bool, EngineError> {
        crate::forget::finish::pending(&self.core)
    }

    /// Finish what killed operations left: a forget whose rewrite had not run (backups
    /// checked, store file rewritten) and the temporary files of processes that died. What
    /// every CLI command does when it opens the store; the report says what was done.
    pub fn finish_interrupted(&self) -> Result<crate::forget::Interrupted, EngineError> {
        let leftovers = crate::forget::finish::remove_leftovers(&self.core);
        let forget = if self.is_read_only() {
            None
        } else {
            crate::forget::finish::finish(&self.core)?
        };
        Ok(crate::forget::Interrupted { forget, leftovers })
    }

    /// Pin or unpin a chunk. Returns false when no chunk has this id.
    pub fn set_pinned(&self, id: ChunkId, pinned: bool) -> Result<bool, EngineError> {
        crate::prune::set_pinned(&self.core, id, pinned)
    }

    // ---- Swapped tool outputs ----

    /// Swapped outputs of one session (or all), newest first.
    pub fn swap_list(&self, session: Option<&str>) -> Result<Vec<SwapEntry>, EngineError> {
        self.core.swap_list(session)
    }

    /// Total bytes and blobs of swapped outputs.
    pub fn swap_stats(&self) -> Result<SwapStats, EngineError> {
        self.core.swap_stats()
    }

    /// The exact output by id or unique id prefix (records the access).
    pub fn swap_show(
        &self,
        prefix: &str,
        now: i64,
    ) -> Result<crate::swap::SwapContent, EngineError> {
        self.core.swap_show(prefix, now)
    }

    /// The exact output by id or unique id prefix, with its entries, without recording the
    /// access: a read transaction only (the viewer, `memctl ui`, looks without writing).
    pub fn swap_content(&self, prefix: &str) -> Result<crate::swap::SwapContent, EngineError> {
        self.core.swap_content(prefix)
    }

    /// Swapped outputs by meaning and by their key patterns.
    pub fn swap_search(
        &self,
        query: &str,
        k: usize,
        session: Option<&str>,
        project: Option<&str>,
    ) -> Result<Vec<SwapHit>, EngineError> {
        self.core.swap_search(query, k, session, project)
    }

    /// Apply the swap limits and retention now.
    pub fn swap_prune(
        &self,
        cfg: &SwapConfig,
        now: i64,
        dry_run: bool,
    ) -> Result<SwapPruneReport, EngineError> {
        self.core.swap_prune(cfg, now, dry_run)
    }
}

/// Store-wide counts for `memctl status` / `doctor`.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct StoreStatus {
    /// Stored chunks.
    pub chunks: u64,
    /// Sessions.
    pub sessions: u64,
    /// Projects.
    pub projects: u64,
    /// Chunks without a model vector.
    pub pending: u64,
    /// Size of the store file.
    pub file_bytes: u64,
    /// Vectors per embedding space: one per chunk that has a vector in that space.
    pub vectors: Vec<(String, u64)>,
    /// Per space, int8 index entries of chunks that were replaced, deleted or re-embedded in
    /// another space: skipped by search, dropped at the next compaction.
    pub stale_index_entries: Vec<(String, u64)>,
}

/// What the resident service's vector index reads ([`crate::ann`]).
impl Engine {
    /// Visit the int8 entries of space `emb` appended since `from` (see
    /// [`crate::store::StoreReader::follow_vectors`]), in one read transaction.
    pub fn follow_vectors(
        &self,
        emb: &EmbedderId,
        from: &[crate::ann::BlockCursor],
        epoch: Option<u64>,
        limit: u64,
        visit: &mut dyn FnMut(crate::ann::FeedEntry<'_>),
    ) -> Result<crate::ann::Followed, EngineError> {
        let r = self.core().store().read()?;
        Ok(r.follow_vectors(emb, from, epoch, limit, visit)?)
    }

    /// The store's forget count: a writer of files that may quote archived text reads it
    /// before and after, and removes what it wrote when it moved.
    pub fn forget_epoch(&self) -> Result<u64, EngineError> {
        Ok(self.core().store().read()?.forget_epoch()?)
    }
}
