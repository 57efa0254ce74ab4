//! The one retrieval pipeline: every caller that looks for chunks (`memctl search`, every
//! restore, prompt-time recall, the agent's own tools) goes through [`Retriever`], so what the
//! tests measure is what ships.
//!
//! ```text
//! query vector ─► int8 block scan (candidates) ─► f16 re-score ─┐
//!                                                                ├─► fusion ─► load + filter
//! query text ──► BM25 over the store's postings (+ coverage) ───┘   (search::fuse)   (one part per turn)
//! ```
//!
//! Why a block scan and not HNSW here: the callers are short-lived processes (hooks, one-shot
//! CLI). Reloading an HNSW graph costs 8–17 µs per vector, scanning int8 blocks ~25 ns
//! (docs/perf/search.md), so there is no crossover up to 200k vectors for a fresh process. HNSW
//! (`memctl_benches::index::HnswIndex`, benches only) is for a long-lived process that keeps it warm.
//!
//! The query vector is the caller's: the facade embeds the query text with the active embedder
//! ([`crate::Engine::search`]); a restore uses the mean of stored vectors of the latest turns
//! (no model on the hook path). Vectors carry their embedder id and are only compared within one
//! space.

mod event;
pub mod explain;
pub mod supersede;
pub mod when;

use crate::embed::EmbedderId;
use crate::error::StoreError;
use crate::evidence::Evidence;
use crate::fold::Copies;
use crate::index::{Bm25Params, Hit, bm25_search_since};
use crate::search::{FusedHit, FusionParams, SearchMode, fuse, fuse_completed};
use crate::store::{ChunkId, ChunkRecord, StoreReader};
use explain::{hit_confidence, identifiers_held, is_confident};
use std::collections::HashSet;

/// The int8 scan keeps at least this many candidates for the f16 re-score: int8 recall@10 is
/// 0.96–0.99 before re-scoring and 1.0 after re-scoring the top 50 (index tests).
const MIN_RESCORE: usize = 50;

/// One retrieval: what to look for, where, and how to fuse.
#[derive(Debug, Clone)]
pub(crate) struct Retrieval<'a> {
    /// Text for the lexical side (BM25). Empty = no lexical list.
    pub text: &'a str,
    /// Query vector and its space for the dense side. `None` = no dense list.
    pub vector: Option<(&'a EmbedderId, &'a [f32])>,
    /// Projects searched.
    pub project_ids: &'a [u32],
    /// Candidates taken from each retriever before fusion.
    pub candidates: usize,
    /// Which retrievers the fusion uses.
    pub mode: SearchMode,
    /// Fusion weights.
    pub fusion: FusionParams,
    /// The lexical side when the caller already has it ([`Retriever::lexical_beside`]).
    pub lexical: Option<&'a crate::index::Bm25Hits>,
}

/// The fused ranking and the evidence behind it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ranked {
    /// Best first.
    pub hits: Vec<FusedHit>,
    /// Lexical coverage of each BM25 hit: the share of the query's idf mass it holds.
    pub coverage: std::collections::HashMap<u64, f32>,
    /// The lexical side as BM25 returned it (its query terms score any document's coverage).
    pub lexical: crate::index::Bm25Hits,
    /// Set when no vector index answered and the dense side scanned only the newest vectors.
    pub cold: Option<ColdScan>,
    /// Whether the dense candidates came from the resident service's index.
    pub indexed: bool,
}

/// How much the dense side searched when no vector index answered and the archive was too
/// big to scan whole: the newest `scanned` of `total` vectors (the lexical side searched all).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ColdScan {
    /// Vectors scanned (the newest of each project).
    pub scanned: u64,
    /// Vectors in the projects searched.
    pub total: u64,
}

/// The dense side of one retrieval: its hits, best first, and where they came from.
#[derive(Debug, Clone, Default)]
pub(crate) struct DenseSide {
    /// Best first.
    pub hits: Vec<Hit>,
    /// Set when only the newest vectors were scanned.
    pub cold: Option<ColdScan>,
    /// Whether the resident service's index gave the candidates.
    pub indexed: bool,
}

/// Vectors a dense side scans at most without a vector index: ~0.5 µs each in a fresh
/// process, so about a tenth of a second (a search over more waits for the resident service).
pub(crate) const COLD_SCAN_VECTORS: u64 = 200_000;

/// [`COLD_SCAN_VECTORS`] for a hook (prompt-time recall, restores): a few tens of ms.
pub(crate) const HOOK_COLD_SCAN_VECTORS: u64 = 65_536;

/// The newest chunks a hook's lexical side searches: its BM25 work is bounded by them, not by
/// the archive (a common word has a posting in most of a million chunks). About ten weeks of
/// heavy use; the dense side, from the service's index, still covers every chunk.
pub(crate) const HOOK_LEXICAL_CHUNKS: u64 = 200_000;

/// Retrieval over one read transaction of the store.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Retriever<'r> {
    reader: &'r StoreReader,
    /// Int8 blocks kept in memory by a long-lived process (the MCP server).
    resident: Option<&'r crate::store::ResidentBlocks>,
    /// The resident service index's answer for this query ([`crate::ann`]).
    ann: Option<&'r crate::ann::AnnAnswer>,
    /// Without a usable index answer, the dense side scans at most this many vectors.
    cold_cap: u64,
    /// The lexical side searches only the newest this many chunks (None: all).
    lexical_window: Option<u64>,
}

impl<'r> Retriever<'r> {
    /// A retriever reading through `reader` (one consistent snapshot).
    pub(crate) fn new(reader: &'r StoreReader) -> Self {
        Self {
            reader,
            resident: None,
            ann: None,
            cold_cap: COLD_SCAN_VECTORS,
            lexical_window: None,
        }
    }

    /// A retriever for a hook: bounded work on both sides ([`HOOK_COLD_SCAN_VECTORS`],
    /// [`HOOK_LEXICAL_CHUNKS`]).
    pub(crate) fn for_hook(reader: &'r StoreReader) -> Self {
        Self {
            cold_cap: HOOK_COLD_SCAN_VECTORS,
            lexical_window: Some(HOOK_LEXICAL_CHUNKS),
            ..Self::new(reader)
        }
    }

    /// Take the dense candidates from the service index's answer (plus an exact scan of what
    /// it does not cover) when it reflects this snapshot's block epoch.
    pub(crate) fn with_ann(mut self, ann: Option<&'r crate::ann::AnnAnswer>) -> Self {
        self.ann = ann;
        self
    }

    /// Scan the resident copy of the int8 blocks (brought up to date with the snapshot)
    /// instead of reading them out of the store.
    pub(crate) fn with_resident(mut self, cache: Option<&'r crate::store::ResidentBlocks>) -> Self {
        self.resident = cache;
        self
    }

    /// Dense candidates: int8 scan of the projects' vector blocks, then the best are re-scored
    /// with their f16 vectors (cosine within ~1e-4 of f32). Best first, at most `n`.
    pub(crate) fn dense(
        &self,
        project_ids: &[u32],
        space: &EmbedderId,
        query: &[f32],
        n: usize,
    ) -> Result<DenseSide, StoreError> {
        let wanted = n.max(MIN_RESCORE);
        let mut side = self.dense_candidates(project_ids, space, query, wanted)?;
        let mut out = Vec::with_capacity(side.hits.len());
        for h in std::mem::take(&mut side.hits) {
            if let Some(v) = self.reader.vector(h.id, space)? {
                out.push(Hit {
                    id: h.id,
                    score: crate::embed::dot(query, &v),
                });
            }
        }
        out.sort_by(Hit::rank_cmp);
        out.truncate(n);
        side.hits = out;
        Ok(side)
    }

    /// Int8 candidates: the service index's hits and an exact scan of the entries it does not
    /// cover, when its answer is for this space and block epoch; else an exact scan of
    /// everything (from the resident copy when there is one).
    fn dense_candidates(
        &self,
        project_ids: &[u32],
        space: &EmbedderId,
        query: &[f32],
        wanted: usize,
    ) -> Result<DenseSide, StoreError> {
        let usable = self.ann_usable(space)?;
        let Some(ann) = self.ann.filter(|_| usable) else {
            let newest = self
                .reader
                .newest_vectors(project_ids, space, self.cold_cap)?;
            if newest.scanned == newest.total {
                let all =
                    self.reader
                        .scan_vectors(project_ids, space, query, wanted, self.resident)?;
                return Ok(DenseSide {
                    hits: all,
                    ..DenseSide::default()
                });
            }
            let some =
                self.reader
                    .scan_vectors_after(project_ids, space, query, &newest.from, wanted)?;
            let cold = ColdScan {
                scanned: newest.scanned,
                total: newest.total,
            };
            return Ok(DenseSide {
                hits: some,
                cold: Some(cold),
                indexed: false,
            });
        };
        // Projects the index did not search are scanned whole; the others from its cursor.
        let mut hits =
            self.reader
                .scan_vectors_after(project_ids, space, query, &ann.covered, wanted)?;
        hits.extend(ann.hits.iter().map(|h| Hit {
            id: h.id,
            score: h.score,
        }));
        hits.sort_by(Hit::rank_cmp);
        let mut seen = HashSet::with_capacity(hits.len());
        hits.retain(|h| seen.insert(h.id));
        hits.truncate(wanted);
        Ok(DenseSide {
            hits,
            cold: None,
            indexed: true,
        })
    }

    /// Whether the service index's answer is for `space` and this snapshot's block epoch.
    fn ann_usable(&self, space: &EmbedderId) -> Result<bool, StoreError> {
        Ok(match self.ann {
            Some(a) if a.space == space.key() && !a.covered.is_empty() => {
                a.epoch == self.reader.vector_block_epoch()?
            }
            _ => false,
        })
    }

    /// BM25 over the projects' postings with its coverage.
    pub(crate) fn lexical(
        &self,
        project_ids: &[u32],
        text: &str,
        n: usize,
    ) -> Result<crate::index::Bm25Hits, StoreError> {
        let view = self.reader.lexical(project_ids)?;
        let since = match self.lexical_window {
            Some(newest) => self.reader.next_chunk_id()?.saturating_sub(newest),
            None => 0,
        };
        bm25_search_since(&view, text, n, Bm25Params::default(), since, |_| true)
    }

    /// The lexical side of `text` (when `wanted`) computed on this thread while `other` runs on
    /// a scoped one. Why: a search waits on the resident service for its query vector and the
    /// index's dense hits (or loads the model), and BM25 needs none of that; with both in
    /// sequence a search at a million chunks pays the sum of the two. A panic in `other`
    /// resumes here, as it would have without the thread.
    pub(crate) fn lexical_beside<T: Send>(
        &self,
        project_ids: &[u32],
        text: &str,
        n: usize,
        wanted: bool,
        other: impl FnOnce() -> T + Send,
    ) -> (T, Result<Option<crate::index::Bm25Hits>, StoreError>) {
        if !wanted || project_ids.is_empty() || text.trim().is_empty() {
            return (other(), Ok(None)); // nothing to overlap: no thread
        }
        std::thread::scope(|s| {
            let job = s.spawn(other);
            let lex = self.lexical(project_ids, text, n).map(Some);
            match job.join() {
                Ok(t) => (t, lex),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        })
    }

    /// Both retrievers, fused.
    pub(crate) fn rank(&self, q: &Retrieval<'_>) -> Result<Ranked, StoreError> {
        if q.project_ids.is_empty() {
            return Ok(Ranked::default());
        }
        let side = match (q.mode, q.vector) {
            (SearchMode::Lexical, _) | (_, None) => DenseSide::default(),
            (_, Some((space, v))) => self.dense(q.project_ids, space, v, q.candidates)?,
        };
        let dense = &side.hits;
        let lex = if q.mode == SearchMode::Dense || q.text.trim().is_empty() {
            crate::index::Bm25Hits::default()
        } else if let Some(given) = q.lexical {
            given.clone()
        } else {
            self.lexical(q.project_ids, q.text, q.candidates)?
        };
        let completed = match (q.mode, q.vector) {
            (SearchMode::Hybrid, Some((space, v))) => {
                self.complete_dense(dense, &lex.hits, space, v)?
            }
            _ => Vec::new(),
        };
        let hits = match q.mode {
            SearchMode::Hybrid => {
                fuse_completed(dense, &completed, &lex.hits, lex.coverage, &q.fusion)
            }
            SearchMode::Dense => fuse(dense, &[], 0.0, &q.fusion),
            SearchMode::Lexical => fuse(&[], &lex.hits, 1.0, &q.fusion),
        };
        let coverage = lex
            .hits
            .iter()
            .map(|h| h.id)
            .zip(lex.hit_coverage.iter().copied())
            .collect();
        Ok(Ranked {
            hits,
            coverage,
            lexical: lex,
            cold: side.cold,
            indexed: side.indexed,
        })
    }

    /// The cosines of the lexical candidates missing from `dense`, read from their stored
    /// vectors (those with one in `space`) for [`fuse_completed`]: one f16 vector read each.
    fn complete_dense(
        &self,
        dense: &[Hit],
        lexical: &[Hit],
        space: &EmbedderId,
        query: &[f32],
    ) -> Result<Vec<Hit>, StoreError> {
        let seen: HashSet<u64> = dense.iter().map(|h| h.id).collect();
        let mut out = Vec::new();
        for h in lexical.iter().filter(|h| !seen.contains(&h.id)) {
            if let Some(v) = self.reader.vector(h.id, space)? {
                out.push(Hit {
                    id: h.id,
                    score: crate::embed::dot(query, &v),
                });
            }
        }
        Ok(out)
    }

    /// Load ranked hits in order, keep those `accept` takes, one part per long turn, until `k`.
    /// Hits whose chunk is gone (pruned since the scan) are skipped. With `fold`, see
    /// [`Self::load_folded`]. `memctl show` lists every copy ([`Self::copies_of`]).
    pub(crate) fn load(
        &self,
        hits: &[FusedHit],
        k: usize,
        fold: bool,
        mut accept: impl FnMut(ChunkId, &ChunkRecord) -> bool,
    ) -> Result<Vec<SearchResult>, StoreError> {
        if fold {
            return self.load_folded(hits, k, accept);
        }
        let mut out: Vec<SearchResult> = Vec::with_capacity(k.min(hits.len()));
        let mut turns: HashSet<(String, u32)> = HashSet::new();
        for h in hits {
            if out.len() >= k {
                break;
            }
            if let Some(rec) = self.read_hit(h.id, &mut accept, &mut turns)? {
                out.push(SearchResult::of(h, rec));
            }
        }
        Ok(out)
    }

    /// The record of hit `id` when [`Self::load`] keeps it: still stored, taken by `accept`,
    /// and the first (best-ranked) part of its turn seen in `turns`.
    fn read_hit(
        &self,
        id: ChunkId,
        accept: &mut impl FnMut(ChunkId, &ChunkRecord) -> bool,
        turns: &mut HashSet<(String, u32)>,
    ) -> Result<Option<ChunkRecord>, StoreError> {
        let Some(rec) = self.reader.chunk(id)? else {
            return Ok(None);
        };
        if !accept(id, &rec) {
            return Ok(None);
        }
        let turn = (rec.chunk.session_id.clone(), rec.chunk.turn_index);
        if rec.chunk.parts > 1 && !turns.insert(turn) {
            return Ok(None); // the best part of a long turn only
        }
        Ok(Some(rec))
    }

    /// [`Self::load`] with near-duplicates folded ([`crate::fold::Groups`]): the accepted hits
    /// are grouped as they are read, each group shown once, at its best-ranked member, with the
    /// others as its copies. Reading stops `k` (at least [`FOLD_TAIL_MIN`]) hits after the
    /// groups reach `k`: a near-identical turn ranks next to its twin, and reading every
    /// candidate tripled a search's time.
    fn load_folded(
        &self,
        hits: &[FusedHit],
        k: usize,
        mut accept: impl FnMut(ChunkId, &ChunkRecord) -> bool,
    ) -> Result<Vec<SearchResult>, StoreError> {
        let mut groups = crate::fold::Groups::default();
        let mut read: Vec<(&FusedHit, ChunkRecord)> = Vec::new();
        let mut turns: HashSet<(String, u32)> = HashSet::new();
        let mut tail = 0;
        for h in hits {
            if groups.count() >= k {
                tail += 1;
                if tail > k.max(FOLD_TAIL_MIN) {
                    break;
                }
            }
            let Some(rec) = self.read_hit(h.id, &mut accept, &mut turns)? else {
                continue;
            };
            groups.push(fold_sig(self.reader, h.id, &rec)?);
            read.push((h, rec));
        }
        let reps: Vec<usize> = (0..read.len()).map(|i| groups.representative(i)).collect();
        let mut slot: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
        let mut out: Vec<SearchResult> = Vec::with_capacity(k);
        for (i, (h, rec)) in read.into_iter().enumerate() {
            let rep = reps[i];
            if rep == i {
                if out.len() < k {
                    slot.insert(i, out.len());
                    out.push(SearchResult::of(h, rec));
                }
            } else if let Some(&at) = slot.get(&rep) {
                out[at].copies.add(h.id, rec.chunk.started_at.as_deref());
            }
        }
        Ok(out)
    }

    /// Put the hits whose chunk holds more of the query's exact identifiers `ids` first, among
    /// the first [`PROMOTE_SCAN`] hits; the fused order stays within each group (stable). Why:
    /// a `path:line` or an error code names one turn, while the fusion weighs it like any word
    /// and a turn sharing its parts (`billing`, `test`) can outrank the turn that holds it.
    pub(crate) fn promote_exact(
        &self,
        hits: &mut [FusedHit],
        ids: &[String],
    ) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        let n = hits.len().min(PROMOTE_SCAN);
        let mut keyed: Vec<(usize, FusedHit)> = Vec::with_capacity(n);
        for h in &hits[..n] {
            let held = self
                .reader
                .chunk(h.id)?
                .map_or(0, |rec| identifiers_held(&rec.chunk.text, ids));
            keyed.push((held, *h));
        }
        keyed.sort_by_key(|(held, _)| std::cmp::Reverse(*held));
        for (slot, (_, h)) in hits[..n].iter_mut().zip(keyed) {
            *slot = h;
        }
        Ok(())
    }

    /// The chunks of `rec`'s project that fold with it ([`crate::fold::near`]: the same fold
    /// key, or near-identical on text and vector), oldest first, chunk `id` itself left out.
    /// Candidates: its session's turns and the best BM25 hits of its own text (a copy shares
    /// its words, so it ranks at the top of that list).
    pub(crate) fn copies_of(
        &self,
        id: ChunkId,
        rec: &ChunkRecord,
    ) -> Result<Vec<(ChunkId, ChunkRecord)>, StoreError> {
        let sig = fold_sig(self.reader, id, rec)?;
        let query: String = rec.chunk.text.chars().take(COPY_QUERY_CHARS).collect();
        let lex = self.lexical(&[rec.project_id], &query, COPY_CANDIDATES)?;
        let mut ids: std::collections::BTreeSet<ChunkId> = lex.hits.iter().map(|h| h.id).collect();
        ids.extend(
            self.reader
                .session_turns(&rec.chunk.session_id)?
                .into_iter()
                .map(|(_, cid)| cid),
        );
        ids.remove(&id);
        let mut out = Vec::new();
        for cid in ids {
            let Some(c) = self.reader.chunk(cid)? else {
                continue;
            };
            if c.project_id == rec.project_id
                && crate::fold::near(&sig, &fold_sig(self.reader, cid, &c)?)
            {
                out.push((cid, c));
            }
        }
        out.sort_by(|a, b| a.1.chunk.started_at.cmp(&b.1.chunk.started_at));
        Ok(out)
    }

    /// Fill each result's evidence and confidence from its own chunk: the query's cosine with
    /// its vector (model space only: hash cosines are not calibrated) and its lexical coverage.
    /// Both are read for the chunk itself, not taken from the candidate lists, so a hit's
    /// confidence is the same whatever `k`, the filters or the other candidates.
    pub(crate) fn explain(
        &self,
        results: &mut [SearchResult],
        lexical: &crate::index::Bm25Hits,
        model_vector: Option<(&EmbedderId, &[f32])>,
    ) -> Result<(), StoreError> {
        for r in results {
            let dense = match (r.scores.dense, model_vector) {
                (_, None) => None,
                (Some(d), Some(_)) => Some(d),
                (None, Some((space, q))) => self
                    .reader
                    .vector(r.id, space)?
                    .map(|v| crate::embed::dot(q, &v)),
            };
            r.evidence = Evidence {
                dense,
                coverage: lexical.coverage_of(&r.record.chunk.text),
            };
            r.confidence = hit_confidence(&r.evidence);
            r.confident = is_confident(r.confidence);
        }
        Ok(())
    }
}

/// The fold signature ([`crate::fold::Sig`]) of stored chunk `id`: its text and its vector in
/// the model space (the first `all-MiniLM-L6-v2` space its record lists), read from the store.
pub(crate) fn fold_sig(
    r: &StoreReader,
    id: ChunkId,
    rec: &ChunkRecord,
) -> Result<crate::fold::Sig, StoreError> {
    let prefix = format!("{}@", crate::embed::onnx::MINILM_NAME);
    let vector = match rec.embedders.iter().find(|k| k.starts_with(&prefix)) {
        Some(space) => r.vector_by_key(id, space)?.map(|v| (space.clone(), v)),
        None => None,
    };
    Ok(crate::fold::Sig::new(
        rec.project_id,
        &rec.chunk.text,
        vector,
    ))
}

/// [`Retriever::load`] reads at least this many hits after the `k`th result for copies.
const FOLD_TAIL_MIN: usize = 10;

/// [`Retriever::copies_of`]: BM25 hits of a chunk's own text read for copies, and how much of
/// its text is the query (its opening holds the prompt and the command that was repeated).
const COPY_CANDIDATES: usize = 200;
const COPY_QUERY_CHARS: usize = 1_000;

/// [`Retriever::promote_exact`] looks this far down the fused list.
const PROMOTE_SCAN: usize = 200;

/// A hit is relevant enough for a query's time phrase to move it when its fused score is at
/// least this share of the best one's: a turn of last week that only shares a word with the
/// question must not jump above an older turn that answers it.
const TIME_RELEVANT_SHARE: f32 = 0.5;
/// "The first time" reorders only hits this close to the best one: an old turn that is merely
/// related must not come before the ones about the subject.
const TIME_ORDER_SHARE: f32 = 0.8;

impl Retriever<'_> {
    /// Order the first [`PROMOTE_SCAN`] hits by what the query's time phrase asks: the
    /// relevant hits inside its window first, or the relevant hits oldest / newest first
    /// ([`when::TimeScope`]). Stable: everything else keeps the fused order, after them.
    pub(crate) fn promote_in_time(
        &self,
        hits: &mut [FusedHit],
        scope: &when::TimeScope,
    ) -> Result<(), StoreError> {
        let n = hits.len().min(PROMOTE_SCAN);
        let best = hits[..n].iter().map(|h| h.score).fold(0.0f32, f32::max);
        let mut keyed: Vec<(bool, String, FusedHit)> = Vec::with_capacity(n);
        for h in &hits[..n] {
            let started = self
                .reader
                .chunk(h.id)?
                .and_then(|rec| rec.chunk.started_at)
                .unwrap_or_default();
            let inside = scope.since.as_deref().is_none_or(|s| started.as_str() >= s)
                && scope.until.as_deref().is_none_or(|u| started.as_str() < u);
            let share = match scope.order {
                Some(_) => TIME_ORDER_SHARE,
                None => TIME_RELEVANT_SHARE,
            };
            let first = inside && !started.is_empty() && h.score >= share * best;
            keyed.push((first, started, *h));
        }
        keyed.sort_by(|a, b| {
            let by_time = match (a.0 && b.0, scope.order) {
                (true, Some(when::TimeOrder::Earliest)) => a.1.cmp(&b.1),
                (true, Some(when::TimeOrder::Latest)) => b.1.cmp(&a.1),
                _ => std::cmp::Ordering::Equal,
            };
            b.0.cmp(&a.0).then(by_time)
        });
        for (slot, (_, _, h)) in hits[..n].iter_mut().zip(keyed) {
            *slot = h;
        }
        Ok(())
    }
}

/// A search request (the CLI's and the agent's).
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
    /// Only sessions of this agent.
    pub agent: Option<crate::agent::Agent>,
    /// Retrievers to use.
    pub mode: SearchMode,
    /// Fusion weights.
    pub fusion: FusionParams,
    /// The query's own time (Unix seconds), what its time phrases are relative to ("last
    /// week"); `None` = now.
    pub now: Option<i64>,
    /// Fold near-identical turns into one result with a count (default); `false` lists every
    /// copy in its own slot.
    pub fold: bool,
    /// Read the query's time phrase ([`when`], default); `false` searches it as plain words.
    pub read_time: bool,
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
            agent: None,
            mode: SearchMode::Hybrid,
            fusion: FusionParams::default(),
            now: None,
            fold: true,
            read_time: true,
        }
    }

    /// Candidates per retriever: over-fetch so that filters and tombstones still leave `k`.
    /// Saturating: `k` comes from users (`memctl search -k 18446744073709551615` overflowed
    /// here and panicked; found by fuzzing).
    pub(crate) fn candidates(&self) -> usize {
        let k = self.k.max(1);
        if self.has_filters() {
            k.saturating_mul(20).max(200)
        } else {
            k.saturating_mul(4).max(50)
        }
    }

    /// For matches that the filters rejected: which filter rejected how many of them.
    pub(crate) fn explain_exclusions(
        &self,
        matches: &[&ChunkRecord],
        agent_sessions: &AgentSessions,
    ) -> Vec<String> {
        let alone = |f: &dyn Fn(&mut SearchRequest)| {
            let mut one = SearchRequest::new(String::new(), 1);
            f(&mut one);
            matches.iter().filter(|r| !one.accepts(r)).count()
        };
        let mut out = Vec::new();
        let mut note = |name: &str, n: usize| {
            if n > 0 {
                out.push(format!("--{name}: {n} of {}", matches.len()));
            }
        };
        note("session", alone(&|r| r.session = self.session.clone()));
        note("tool", alone(&|r| r.tool = self.tool.clone()));
        note("file", alone(&|r| r.file = self.file.clone()));
        note("since", alone(&|r| r.since = self.since.clone()));
        note("until", alone(&|r| r.until = self.until.clone()));
        if let Some(agent) = self.agent {
            let n = matches
                .iter()
                .filter(|r| !agent_sessions.accepts(r))
                .count();
            if n > 0 {
                out.push(format!("--agent {agent}: {n} of {}", matches.len()));
            }
        }
        out
    }

    pub(crate) fn has_filters(&self) -> bool {
        self.session.is_some()
            || self.tool.is_some()
            || self.file.is_some()
            || self.since.is_some()
            || self.until.is_some()
            || self.agent.is_some()
    }

    /// Whether a chunk passes the request's filters.
    pub(crate) fn accepts(&self, r: &ChunkRecord) -> bool {
        let c = &r.chunk;
        self.session.as_ref().is_none_or(|s| &c.session_id == s)
            && self
                .tool
                .as_ref()
                .is_none_or(|t| c.tools.iter().any(|x| x.eq_ignore_ascii_case(t)))
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

/// The sessions an `--agent` filter keeps, read once per search from the sessions table (a
/// chunk record does not name its agent; its session does).
#[derive(Debug, Default)]
pub(crate) struct AgentSessions(Option<std::collections::HashSet<String>>);

impl AgentSessions {
    /// The sessions of `agent` (no filter when `None`).
    pub(crate) fn read(
        reader: &crate::store::StoreReader,
        agent: Option<crate::agent::Agent>,
    ) -> Result<Self, crate::error::StoreError> {
        let Some(agent) = agent else {
            return Ok(Self(None));
        };
        let ids = reader
            .sessions()?
            .into_iter()
            .filter(|(_, rec)| rec.agent == agent)
            .map(|(id, _)| id)
            .collect();
        Ok(Self(Some(ids)))
    }

    /// Whether the chunk's session passes.
    pub(crate) fn accepts(&self, r: &ChunkRecord) -> bool {
        self.0
            .as_ref()
            .is_none_or(|ids| ids.contains(&r.chunk.session_id))
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
    /// The hit's own evidence: its cosine with the query (model space only) and its lexical
    /// coverage.
    pub evidence: Evidence,
    /// Absolute confidence in 0..=1 from `evidence` alone ([`crate::retrieve::explain::hit_confidence`]):
    /// unlike the fused score, the same whatever `k`, the filters or the other hits.
    pub confidence: f32,
    /// Whether `confidence` clears the recall gate's calibrated threshold.
    pub confident: bool,
    /// A later hit of these results that decides about the same subject
    /// ([`supersede`]): this hit's decision is no longer the current one.
    pub superseded_by: Option<ChunkId>,
    /// The agent whose session the chunk is from.
    pub agent: crate::agent::Agent,
    /// Near-identical turns folded into this one (none unless the search folds).
    pub copies: Copies,
}

impl SearchResult {
    /// A loaded hit, not explained yet and with no copies.
    fn of(h: &FusedHit, record: ChunkRecord) -> Self {
        Self {
            id: h.id,
            scores: *h,
            copies: Copies::of(record.chunk.started_at.as_deref()),
            record,
            evidence: Evidence::default(),
            confidence: 0.0,
            confident: false,
            agent: crate::agent::Agent::default(),
            superseded_by: None,
        }
    }
}

/// Mark each result a later result supersedes ([`supersede`]) and, unless `keep_order` (the
/// query asked for an order by time), put the newer decision before the ones it replaces.
pub(crate) fn mark_superseded(results: &mut Vec<SearchResult>, keep_order: bool) {
    let marks = {
        let hits: Vec<supersede::DecisionHit<'_>> = results
            .iter()
            .map(|r| supersede::DecisionHit {
                project: &r.record.chunk.project,
                started_at: r.record.chunk.started_at.as_deref(),
                text: &r.record.chunk.text,
            })
            .collect();
        supersede::superseded_by(&hits)
    };
    if marks.iter().all(Option::is_none) {
        return;
    }
    let ids: Vec<ChunkId> = results.iter().map(|r| r.id).collect();
    for (r, m) in results.iter_mut().zip(&marks) {
        r.superseded_by = m.map(|j| ids[j]);
    }
    if !keep_order {
        let mut slots: Vec<Option<SearchResult>> = results.drain(..).map(Some).collect();
        for i in supersede::order(&marks) {
            if let Some(r) = slots[i].take() {
                results.push(r);
            }
        }
    }
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
    /// When filters left nothing although the query matched: each filter that excluded the
    /// matches, with how many of them it excluded (`"--since: 7 of 10"`), so that an empty
    /// answer is never silent about why.
    pub excluded_by: Vec<String>,
    /// Set when no vector index answered and the archive was too big for the dense side to
    /// scan whole: what it covered.
    pub cold: Option<ColdScan>,
    /// Whether the resident service's vector index gave the dense candidates.
    pub indexed: bool,
    /// The query's time phrase and what it was read as, when it had one; an event phrase whose
    /// event was not found is here with `event.turn` unset and no window (no time effect).
    pub time: Option<when::TimeScope>,
}

#[cfg(test)]
mod fuzz_regressions {
    use super::SearchRequest;

    /// `scripts/fuzz.sh --secs 75 --seed 20261125`, target cli search filters, minimal input
    /// `memctl search -k=18446744073709551615 -- 0`: "attempt to multiply with overflow".
    #[test]
    fn the_largest_k_does_not_overflow_the_candidate_count() {
        let mut req = SearchRequest::new("0", usize::MAX);
        assert_eq!(req.candidates(), usize::MAX);
        req.tool = Some("Bash".into());
        assert_eq!(req.candidates(), usize::MAX);
        assert_eq!(SearchRequest::new("0", 0).candidates(), 50);
    }
}

#[cfg(test)]
mod age_tests;
#[cfg(test)]
mod fold_tests;
