//! The `Engine` facade: one store, one lazily loaded model, the operations binaries call.

use crate::embed::{Embedder, EmbedderId, HashEmbedder, OnnxConfig, OnnxEmbedder};
use crate::error::{EmbedError, EngineError, StoreError};
use crate::index::Hit;
use crate::search::{FusedHit, FusionParams, SearchMode, fuse};
use crate::store::{ChunkId, ChunkRecord, Store, StoreReader};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// How the engine is opened.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// Data directory (store file, logs, spool).
    pub data_dir: PathBuf,
    /// Where the model and runtime are.
    pub onnx: OnnxConfig,
    /// Never load the model (hook critical path, tests of the fallback).
    pub model_disabled: bool,
}

impl EngineOptions {
    /// The engine's part of the settings: data dir, runtime and model
    /// ([`OnnxConfig::from_settings`]); `MEMCTL_EMBEDDER=hash` disables the model.
    pub fn from_settings(s: &crate::Settings) -> Self {
        Self {
            data_dir: s.data_dir.clone(),
            onnx: OnnxConfig::from_settings(s),
            model_disabled: s.embed.embedder == crate::settings::EmbedderChoice::Hash,
        }
    }

    /// The store file inside the data dir.
    pub fn store_path(&self) -> PathBuf {
        self.data_dir.join("memctl.redb")
    }
}

/// Which embedder answers queries, and why.
#[derive(Debug, Clone)]
pub enum ActiveEmbedder {
    /// The ONNX model loaded.
    Model(EmbedderId),
    /// The hash fallback, with the reason the model is not in use.
    Hash { id: EmbedderId, reason: String },
}

impl ActiveEmbedder {
    /// The id of the active embedding space.
    pub fn id(&self) -> &EmbedderId {
        match self {
            Self::Model(id) | Self::Hash { id, .. } => id,
        }
    }
}

/// The engine. Cheap to open (no model load until a query needs it).
#[derive(Debug)]
pub struct Engine {
    opts: EngineOptions,
    store: Store,
    hash: HashEmbedder,
    model: OnceLock<Result<Arc<OnnxEmbedder>, String>>,
}

/// A search request.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    /// Query text.
    pub query: String,
    /// Results wanted.
    pub k: usize,
    /// Projects to search; empty = all projects.
    pub projects: Vec<String>,
    /// Only this session.
    pub session: Option<String>,
    /// Only chunks that used this tool.
    pub tool: Option<String>,
    /// Only chunks that touched a path containing this string.
    pub file: Option<String>,
    /// Only chunks that started at or after this RFC 3339 timestamp (string compare).
    pub since: Option<String>,
    /// Only chunks that started before this RFC 3339 timestamp.
    pub until: Option<String>,
    /// Retrievers to use.
    pub mode: SearchMode,
    /// Fusion weights.
    pub fusion: FusionParams,
}

impl SearchRequest {
    /// A hybrid query over all projects with default parameters.
    pub fn new(query: impl Into<String>, k: usize) -> Self {
        Self {
            query: query.into(),
            k,
            projects: Vec::new(),
            session: None,
            tool: None,
            file: None,
            since: None,
            until: None,
            mode: SearchMode::Hybrid,
            fusion: FusionParams::default(),
        }
    }

    fn has_filters(&self) -> bool {
        self.session.is_some()
            || self.tool.is_some()
            || self.file.is_some()
            || self.since.is_some()
            || self.until.is_some()
    }

    fn accepts(&self, r: &ChunkRecord) -> bool {
        let c = &r.chunk;
        self.session.as_ref().is_none_or(|s| &c.session_id == s)
            && self
                .tool
                .as_ref()
                .is_none_or(|t| c.tools.iter().any(|x| x == t))
            && self
                .file
                .as_ref()
                .is_none_or(|f| c.files.iter().any(|x| x.contains(f.as_str())))
            && self
                .since
                .as_ref()
                .is_none_or(|s| c.started_at.as_deref().is_some_and(|t| t >= s.as_str()))
            && self
                .until
                .as_ref()
                .is_none_or(|u| c.started_at.as_deref().is_some_and(|t| t < u.as_str()))
    }
}

/// One search result with provenance.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SearchResult {
    /// Chunk id.
    pub id: ChunkId,
    /// Fused score and the raw scores behind it.
    #[serde(flatten)]
    pub scores: FusedHit,
    /// The stored chunk.
    pub record: ChunkRecord,
}

/// Results plus how they were obtained.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SearchOutcome {
    /// Best first.
    pub results: Vec<SearchResult>,
    /// Embedding space used for the dense part (None when dense was not used).
    pub embedder: Option<String>,
    /// Set when search ran degraded (no model): the reason.
    pub degraded: Option<String>,
}

impl Engine {
    /// Open the store (creating the data dir 0700 and the file 0600).
    pub fn open(opts: EngineOptions) -> Result<Self, EngineError> {
        crate::paths::ensure_private_dir(&opts.data_dir)?;
        let store = Store::open(opts.store_path())?;
        Ok(Self {
            opts,
            store,
            hash: HashEmbedder::new(),
            model: OnceLock::new(),
        })
    }

    /// The options the engine was opened with.
    pub fn options(&self) -> &EngineOptions {
        &self.opts
    }

    /// How long one write waits for another process's write transaction (default 2 s).
    pub fn set_write_timeout(&mut self, t: std::time::Duration) {
        self.store.set_write_timeout(t);
    }

    /// Bound every wait on the store by `deadline` (hooks pass their own deadline).
    pub fn set_deadline(&mut self, deadline: std::time::Instant) {
        self.store.set_deadline(deadline);
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.opts.data_dir
    }

    /// The hash embedder (always available).
    pub fn hash_embedder(&self) -> &HashEmbedder {
        &self.hash
    }

    /// The ONNX model, loading it on first use; `Err` holds why it is unavailable.
    pub fn model(&self) -> Result<Arc<OnnxEmbedder>, String> {
        self.model
            .get_or_init(|| {
                if self.opts.model_disabled {
                    return Err("model disabled (MEMCTL_EMBEDDER=hash)".to_string());
                }
                match OnnxEmbedder::load(&self.opts.onnx) {
                    Ok(m) => Ok(Arc::new(m)),
                    Err(e) => {
                        tracing::warn!(error = %e, "ONNX embedder unavailable; falling back to hash embeddings");
                        Err(e.to_string())
                    }
                }
            })
            .clone()
    }

    /// Which embedder answers queries (loads the model when possible).
    pub fn active_embedder(&self) -> ActiveEmbedder {
        match self.model() {
            Ok(m) => ActiveEmbedder::Model(m.id().clone()),
            Err(reason) => ActiveEmbedder::Hash {
                id: self.hash.id().clone(),
                reason,
            },
        }
    }

    /// Embed texts with the active embedder; returns the space and vectors.
    pub fn embed_active(&self, texts: &[&str]) -> Result<(EmbedderId, Vec<Vec<f32>>), EmbedError> {
        match self.model() {
            Ok(m) => Ok((m.id().clone(), m.embed_batch(texts)?)),
            Err(_) => Ok((self.hash.id().clone(), self.hash.embed_batch(texts)?)),
        }
    }

    /// Project ids for a request (empty list = every project).
    fn project_ids(&self, r: &StoreReader, projects: &[String]) -> Result<Vec<u32>, EngineError> {
        if projects.is_empty() {
            return Ok(r.projects()?.into_iter().map(|(_, id)| id).collect());
        }
        let mut out = Vec::new();
        for p in projects {
            if let Some(id) = r.project_id(p)? {
                out.push(id);
            }
        }
        Ok(out)
    }

    /// Hybrid / dense / lexical search with filters.
    pub fn search(&self, req: &SearchRequest) -> Result<SearchOutcome, EngineError> {
        let reader = self.store.read()?;
        let pids = self.project_ids(&reader, &req.projects)?;
        let k = req.k.max(1);
        // Over-fetch so filters and tombstones still leave k results.
        let fetch = if req.has_filters() {
            (k * 20).max(200)
        } else {
            (k * 4).max(50)
        };
        let mut degraded = None;
        let mut embedder = None;
        let dense: Vec<Hit> = if req.mode == SearchMode::Lexical || pids.is_empty() {
            Vec::new()
        } else {
            let (emb, mut vecs) = self.embed_active(&[req.query.as_str()])?;
            if emb.model != crate::embed::onnx::MINILM_NAME {
                degraded = Some(match self.model() {
                    Err(reason) => {
                        format!("semantic model unavailable ({reason}): lexical + hash search")
                    }
                    Ok(_) => "hash embeddings".to_string(),
                });
            }
            let q = vecs.pop().unwrap_or_default();
            embedder = Some(emb.key());
            let cand = reader.scan_vectors(&pids, &emb, &q, fetch.max(50))?;
            let mut rescored = Vec::with_capacity(cand.len());
            for h in cand {
                if let Some(v) = reader.vector(h.id, &emb)? {
                    rescored.push(Hit {
                        id: h.id,
                        score: crate::embed::dot(&q, &v),
                    });
                }
            }
            rescored.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
            rescored.truncate(fetch);
            rescored
        };
        let (lex, coverage) = if req.mode == SearchMode::Dense || pids.is_empty() {
            (Vec::new(), 0.0)
        } else {
            let view = reader.lexical(&pids)?;
            crate::search::bm25_store(&view, &req.query, fetch)?
        };
        let fused = match req.mode {
            SearchMode::Hybrid => fuse(&dense, &lex, coverage, &req.fusion),
            SearchMode::Dense => fuse(&dense, &[], 0.0, &req.fusion),
            SearchMode::Lexical => fuse(&[], &lex, 1.0, &req.fusion),
        };
        let mut results = Vec::with_capacity(k);
        let mut seen_turns: HashMap<(String, u32), ()> = HashMap::new();
        for h in fused {
            if results.len() >= k {
                break;
            }
            let Some(rec) = reader.chunk(h.id)? else {
                continue;
            };
            if !req.accepts(&rec) {
                continue;
            }
            let turn = (rec.chunk.session_id.clone(), rec.chunk.turn_index);
            if seen_turns.insert(turn, ()).is_some() && rec.chunk.parts > 1 {
                // Keep the best part of a long turn only.
                continue;
            }
            results.push(SearchResult {
                id: h.id,
                scores: h,
                record: rec,
            });
        }
        Ok(SearchOutcome {
            results,
            embedder,
            degraded,
        })
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
    /// Vectors per embedding space.
    pub vectors: Vec<(String, u64)>,
}

impl Engine {
    /// Store-wide counts.
    pub fn status(&self) -> Result<StoreStatus, EngineError> {
        let r = self.store.read()?;
        let projects = r.projects()?;
        let mut vectors = Vec::new();
        let model_id = EmbedderId::new(
            crate::embed::onnx::MINILM_NAME,
            self.opts.onnx.variant.clone(),
            crate::embed::onnx::MINILM_DIMS,
        );
        for emb in [model_id, self.hash.id().clone()] {
            let mut n = 0;
            for (_, pid) in &projects {
                n += r.vector_count(*pid, &emb)?;
            }
            vectors.push((emb.key(), n));
        }
        Ok(StoreStatus {
            chunks: r.chunk_count()?,
            sessions: r.sessions()?.len() as u64,
            projects: projects.len() as u64,
            pending: r.pending_count()?,
            file_bytes: std::fs::metadata(self.store.path()).map_or(0, |m| m.len()),
            vectors,
        })
    }

    /// Embed up to `limit` chunks that were stored without a model vector. Returns how many
    /// were embedded. Fails when the model is unavailable (the chunks stay pending).
    pub fn embed_pending(&self, limit: usize) -> Result<usize, EngineError> {
        let model = self
            .model()
            .map_err(|reason| EngineError::Invalid(format!("model unavailable: {reason}")))?;
        let mut done = 0;
        while done < limit {
            let (batch, gone) = {
                let r = self.store.read()?;
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
            let emb = model.id().clone();
            self.store.write(|w| {
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
                        w.update_record(*id, &cur)?;
                    }
                    w.clear_pending(*id)?;
                }
                Ok(())
            })?;
            done += batch.len() + gone.len();
        }
        Ok(done)
    }
}

impl Engine {
    fn access_log_path(&self) -> PathBuf {
        self.opts.data_dir.join("access.log")
    }

    /// Record that chunks were used (restored, or opened from search) without a write
    /// transaction: one appended line per chunk in `access.log`, folded into the store by the
    /// next write ([`Engine::ingest_transcript`] or [`Engine::flush_access_log`]). Why: a durable
    /// redb commit costs two fsyncs in multi-process mode, too much for SessionStart's budget.
    pub fn record_access(&self, ids: &[ChunkId]) -> Result<(), EngineError> {
        use std::io::Write as _;
        let now = unix_now();
        let path = self.access_log_path();
        let mut text = String::new();
        for id in ids {
            text.push_str(&format!("{id} {now}\n"));
        }
        let mut f = crate::paths::append_private(&path).map_err(|source| StoreError::Io {
            path: path.clone(),
            source,
        })?;
        // One write call: O_APPEND keeps concurrent appenders' lines whole.
        f.write_all(text.as_bytes())
            .map_err(|source| StoreError::Io { path, source })?;
        Ok(())
    }

    /// Take the pending access log (renamed aside so concurrent appenders start a new one).
    /// Claims left by processes that died while applying are taken over too
    /// ([`crate::paths::claim_orphans`]).
    pub(crate) fn claim_access_log(&self) -> (Vec<PathBuf>, Vec<(ChunkId, i64)>) {
        let path = self.access_log_path();
        let mut claims = crate::paths::claim_orphans(&path, "applying");
        let own = path.with_extension(format!("applying-{}", std::process::id()));
        if path.exists() && std::fs::rename(&path, &own).is_ok() {
            claims.push(own);
        }
        let mut entries = Vec::new();
        for c in &claims {
            let text = crate::paths::read_regular_string(c, crate::paths::SPOOL_MAX_BYTES)
                .unwrap_or_else(|e| {
                    tracing::warn!(file = %c.display(), error = %e, "access log unreadable; dropped");
                    String::new()
                });
            entries.extend(text.lines().filter_map(|l| {
                let (a, b) = l.split_once(' ')?;
                Some((a.parse().ok()?, b.parse().ok()?))
            }));
        }
        (claims, entries)
    }

    /// After the write transaction: delete the claimed log when applied, else put it back.
    pub(crate) fn release_access_log(&self, claimed: Vec<PathBuf>, applied: bool) {
        for c in claimed {
            let res = if applied {
                std::fs::remove_file(&c)
            } else {
                crate::paths::read_regular(&c, crate::paths::SPOOL_MAX_BYTES).and_then(|b| {
                    use std::io::Write as _;
                    crate::paths::append_private(&self.access_log_path())?.write_all(&b)?;
                    std::fs::remove_file(&c)
                })
            };
            if let Err(e) = res {
                tracing::warn!(error = %e, path = %c.display(), "access log cleanup failed");
            }
        }
    }

    /// Apply access entries inside a write transaction: count, last access, decayed+boosted
    /// confidence.
    pub(crate) fn apply_accesses(
        &self,
        w: &mut crate::store::StoreWriter,
        entries: &[(ChunkId, i64)],
        _now: i64,
    ) -> Result<(), StoreError> {
        let p = crate::rank::RankParams::default();
        for &(id, at) in entries {
            if let Some(mut rec) = w.get_record(id)? {
                let since = rec.last_access.unwrap_or(rec.ingested_at);
                let hours = (at - since).max(0) as f32 / 3600.0;
                rec.confidence =
                    crate::rank::boost(crate::rank::decay(rec.confidence, hours, &p), &p);
                rec.access_count = rec.access_count.saturating_add(1);
                rec.last_access = Some(at);
                w.update_record(id, &rec)?;
            }
        }
        Ok(())
    }

    /// Fold the access log into the store now (CLI, tests).
    pub fn flush_access_log(&self) -> Result<usize, EngineError> {
        let (claimed, entries) = self.claim_access_log();
        let n = entries.len();
        let res = self
            .store
            .write(|w| self.apply_accesses(w, &entries, unix_now()));
        self.release_access_log(claimed, res.is_ok());
        res?;
        Ok(n)
    }
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}
