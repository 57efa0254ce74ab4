//! The engine's internals (crate-private): the store, the embedders and the access log that
//! every operation module works with. The public surface is [`crate::Engine`].

use crate::clock::unix_now;
use crate::embed::{Embedded, Embedder, EmbedderId, HashEmbedder, OnnxConfig, OnnxEmbedder};
use crate::error::{EmbedError, EngineError, StoreError};
use crate::store::{ChunkId, Store, StoreReader};
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
    /// The resident query embedder ([`crate::resident`]): used for prompt-time recall when
    /// one answers.
    pub resident: crate::resident::ResidentConfig,
}

impl EngineOptions {
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

/// The engine's internals: one store, the hash embedder, one lazily loaded model, the access
/// log. Crate-private: the modules that implement operations (ingest, swap, restore, summary,
/// prune) receive a `&Core`, and the public surface is the [`crate::Engine`] facade, so
/// dependencies point one way: `engine` (facade) → operation modules → `core` → store/embed.
#[derive(Debug)]
pub(crate) struct Core {
    opts: EngineOptions,
    store: Store,
    hash: HashEmbedder,
    model: OnceLock<Result<Arc<OnnxEmbedder>, String>>,
    query_model: OnceLock<Result<Arc<OnnxEmbedder>, String>>,
    /// Int8 blocks kept in memory between searches (long-lived processes only).
    resident_blocks: Option<crate::store::ResidentBlocks>,
}

impl Core {
    /// Open the store (creating the data dir 0700 and the file 0600).
    pub(crate) fn open(opts: EngineOptions) -> Result<Self, EngineError> {
        crate::paths::ensure_private_dir(&opts.data_dir)?;
        let store = Store::open(opts.store_path())?;
        Ok(Self::with_store(opts, store))
    }

    /// Open an existing store for reading only (see [`crate::Engine::open_read_only`]).
    pub(crate) fn open_read_only(opts: EngineOptions) -> Result<Self, EngineError> {
        let store = Store::open_read_only(opts.store_path())?;
        Ok(Self::with_store(opts, store))
    }

    /// Internals over a store opened by the caller (the opens above; tests: a store over a
    /// storage backend with injected faults, `store::fault_inject`).
    pub(crate) fn with_store(opts: EngineOptions, store: Store) -> Self {
        Self {
            opts,
            store,
            hash: HashEmbedder::new(),
            model: OnceLock::new(),
            query_model: OnceLock::new(),
            resident_blocks: None,
        }
    }

    /// Keep the int8 vector blocks in memory between searches ([`crate::store::ResidentBlocks`]).
    pub(crate) fn keep_vectors_resident(&mut self) {
        self.resident_blocks
            .get_or_insert_with(crate::store::ResidentBlocks::default);
    }

    /// The resident blocks, when kept.
    pub(crate) fn resident_blocks(&self) -> Option<&crate::store::ResidentBlocks> {
        self.resident_blocks.as_ref()
    }

    /// The options the engine was opened with.
    pub(crate) fn options(&self) -> &EngineOptions {
        &self.opts
    }

    /// How long one write waits for another process's write transaction (default 2 s).
    pub(crate) fn set_write_timeout(&mut self, t: std::time::Duration) {
        self.store.set_write_timeout(t);
    }

    /// Bound every wait on the store by `deadline` (hooks pass their own deadline).
    pub(crate) fn set_deadline(&mut self, deadline: std::time::Instant) {
        self.store.set_deadline(deadline);
    }

    /// The store.
    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    /// The data directory.
    pub(crate) fn data_dir(&self) -> &Path {
        &self.opts.data_dir
    }

    /// The hash embedder (always available).
    pub(crate) fn hash_embedder(&self) -> &HashEmbedder {
        &self.hash
    }

    /// The ONNX model, loading it on first use; `Err` holds why it is unavailable.
    pub(crate) fn model(&self) -> Result<Arc<OnnxEmbedder>, String> {
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

    /// The model if it was loaded already (never loads it).
    pub(crate) fn loaded_model(&self) -> Option<Arc<OnnxEmbedder>> {
        self.model.get().and_then(|m| m.as_ref().ok().cloned())
    }

    /// The model for embedding one query in a short-lived process (prompt-time recall): the
    /// int8 file with a fast start, in the model's vector space
    /// ([`OnnxConfig::query_config`]); the full model when that fails.
    pub(crate) fn query_model(&self) -> Result<Arc<OnnxEmbedder>, String> {
        self.query_model
            .get_or_init(|| {
                if self.opts.model_disabled {
                    return Err("model disabled (MEMCTL_EMBEDDER=hash)".to_string());
                }
                match OnnxEmbedder::load(&self.opts.onnx.query_config()) {
                    Ok(m) => Ok(Arc::new(m)),
                    Err(e) => {
                        tracing::info!(error = %e, "fast query model unavailable; using the full model");
                        self.model()
                    }
                }
            })
            .clone()
    }

    /// Which embedder answers queries (loads the model when possible).
    pub(crate) fn active_embedder(&self) -> ActiveEmbedder {
        match self.model() {
            Ok(m) => ActiveEmbedder::Model(m.id().clone()),
            Err(reason) => ActiveEmbedder::Hash {
                id: self.hash.id().clone(),
                reason,
            },
        }
    }

    /// Embed texts with the active embedder (the model, else the hash embedder).
    pub(crate) fn embed_active(&self, texts: &[&str]) -> Result<Embedded, EmbedError> {
        let (embedder, vectors) = match self.model() {
            Ok(m) => (m.id().clone(), m.embed_batch(texts)?),
            Err(_) => (self.hash.id().clone(), self.hash.embed_batch(texts)?),
        };
        Ok(Embedded { embedder, vectors })
    }

    /// Project ids for a request (empty list = every project).
    pub(crate) fn project_ids(
        &self,
        r: &StoreReader,
        projects: &[String],
    ) -> Result<Vec<u32>, EngineError> {
        if projects.is_empty() {
            return Ok(r.project_ids()?);
        }
        let mut out = Vec::new();
        for p in projects {
            if let Some(id) = r.project_id(p)? {
                out.push(id);
            }
        }
        Ok(out)
    }
}

/// What an access-log line records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AccessKind {
    /// The chunk was used: boost and count.
    Used,
    /// The chunk was injected and not used: decay once.
    Unused,
}

/// One access-log entry: chunk, unix time, kind.
pub(crate) type Access = (ChunkId, i64, AccessKind);

/// The suffix of an unused line.
const UNUSED_MARK: &str = " unused";

/// `<id> <time>` (used) or `<id> <time> unused`; None for anything else.
fn parse_access(line: &str) -> Option<Access> {
    let (line, kind) = match line.strip_suffix(UNUSED_MARK) {
        Some(l) => (l, AccessKind::Unused),
        None => (line, AccessKind::Used),
    };
    let (a, b) = line.split_once(' ')?;
    Some((a.parse().ok()?, b.parse().ok()?, kind))
}

impl Core {
    fn access_log_path(&self) -> PathBuf {
        self.opts.data_dir.join("access.log")
    }

    /// Record that chunks were used (opened from search, or injected and then used by the agent:
    /// [`crate::rank::usage`]) without a write transaction: one appended line per chunk in
    /// `access.log`, folded into the store by the next write (`ingest_transcript` or
    /// `flush_access_log`). Why: a durable redb commit costs two fsyncs in multi-process mode,
    /// too much for a hook's budget.
    pub(crate) fn record_access(&self, ids: &[ChunkId]) -> Result<(), EngineError> {
        self.append_access(ids, AccessKind::Used)
    }

    /// Record that injected chunks went unused ([`crate::rank::usage::Verdict::Unused`]): the
    /// same log, lines `<id> <time> unused` (earlier releases skip such lines as unreadable,
    /// which only loses the decay).
    pub(crate) fn record_unused(&self, ids: &[ChunkId]) -> Result<(), EngineError> {
        self.append_access(ids, AccessKind::Unused)
    }

    fn append_access(&self, ids: &[ChunkId], kind: AccessKind) -> Result<(), EngineError> {
        use std::io::Write as _;
        let now = unix_now();
        let path = self.access_log_path();
        let suffix = match kind {
            AccessKind::Used => "",
            AccessKind::Unused => UNUSED_MARK,
        };
        let mut text = String::new();
        for id in ids {
            text.push_str(&format!("{id} {now}{suffix}\n"));
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
    /// ([`crate::claim`]). A claim that cannot be read is kept aside as `<claim>.bad` and left
    /// out of the returned claims: it once read as empty and was then deleted.
    pub(crate) fn claim_access_log(&self) -> (Vec<PathBuf>, Vec<Access>) {
        let mut claims = crate::claim::claim_all(&self.access_log_path(), "applying");
        let mut entries = Vec::new();
        claims.retain(|c| {
            match crate::paths::read_regular_string(c, crate::paths::SPOOL_MAX_BYTES) {
                Ok(text) => {
                    entries.extend(text.lines().filter_map(parse_access));
                    true
                }
                Err(e) => {
                    crate::claim::set_aside(c, &e);
                    false
                }
            }
        });
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

    /// Apply access entries inside a write transaction. Used: count, last access,
    /// decayed-then-boosted confidence. Unused: the unused decay on the confidence alone (no
    /// access, and the time decay since the last access is still applied by whoever reads it).
    pub(crate) fn apply_accesses(
        &self,
        w: &mut crate::store::StoreWriter,
        entries: &[Access],
        _now: i64,
    ) -> Result<(), StoreError> {
        use crate::rank::usage::{Verdict, reinforce};
        let p = crate::rank::RankParams::default();
        for &(id, at, kind) in entries {
            if let Some(mut rec) = w.get_record(id)? {
                match kind {
                    AccessKind::Used => {
                        let since = rec.last_access.unwrap_or(rec.ingested_at);
                        let hours = (at - since).max(0) as f32 / 3600.0;
                        let decayed = crate::rank::decay(rec.confidence, hours, &p);
                        rec.confidence = reinforce(decayed, Verdict::Used, &p);
                        rec.access_count = rec.access_count.saturating_add(1);
                        rec.last_access = Some(at);
                    }
                    AccessKind::Unused => {
                        rec.confidence = reinforce(rec.confidence, Verdict::Unused, &p);
                    }
                }
                w.update_record(id, &rec)?;
            }
        }
        Ok(())
    }

    /// Fold the access log into the store now (CLI, tests).
    pub(crate) fn flush_access_log(&self) -> Result<usize, EngineError> {
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

#[cfg(test)]
mod tests {
    use super::{AccessKind, parse_access};

    #[test]
    fn access_lines_of_both_kinds() {
        assert_eq!(
            parse_access("12 1700000000"),
            Some((12, 1_700_000_000, AccessKind::Used))
        );
        assert_eq!(
            parse_access("12 1700000000 unused"),
            Some((12, 1_700_000_000, AccessKind::Unused))
        );
        assert_eq!(parse_access("12 x unused"), None);
        assert_eq!(parse_access("12"), None);
    }

    /// `claim_access_log` read a failed read as an empty log, and the claim was then deleted
    /// with every access it recorded.
    #[test]
    fn unreadable_access_log_claim_is_kept_not_deleted() {
        use crate::claim::test_util::{names, unreadable_at};
        for as_dir in [true, false] {
            let (_dir, e) = crate::prune::tests::engine_with_fixture();
            let log = e.core().access_log_path();
            unreadable_at(&log, as_dir);

            let applied = e
                .flush_access_log()
                .unwrap_or_else(|e| panic!("flush: {e}"));
            assert_eq!(applied, 0, "nothing was readable");

            let kept = format!("access.applying-{}.bad", std::process::id());
            let left = names(e.data_dir());
            assert!(left.contains(&kept), "as_dir {as_dir}: {left:?}");
            assert!(!left.iter().any(|n| n == "access.log"), "{left:?}");
            let kept = e.data_dir().join(kept);
            let size_or_marker = if as_dir {
                std::fs::read_to_string(kept.join("marker")).ok()
            } else {
                std::fs::metadata(&kept).ok().map(|m| m.len().to_string())
            };
            let want = if as_dir {
                "kept".to_string()
            } else {
                (crate::paths::SPOOL_MAX_BYTES + 1).to_string()
            };
            assert_eq!(size_or_marker, Some(want));
        }
    }
}
