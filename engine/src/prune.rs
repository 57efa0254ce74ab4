//! Pruning: apply [`rank::decay`](crate::rank::decay) and
//! [`rank::should_prune`](crate::rank::should_prune) to stored chunks and delete the pruned ones
//! through the store, keeping every index consistent (turn entries, session links, postings,
//! re-scoring vectors; int8 blocks are compacted afterwards so no tombstone id stays behind).
//!
//! Why decay is computed here and not stored: the stored confidence is the value at the last
//! access (see `Engine::apply_accesses`); the current value is a pure function of it and the
//! hours since the last access (or since ingest), so a read-only dry run sees exactly what a
//! real run would delete.
//!
//! `memctl prune` examines everything; the automatic pass from SessionEnd
//! ([`auto_pass`], opt-in with `MEMCTL_AUTO_PRUNE=1`) examines at most [`AutoPruneConfig::max_examined`]
//! chunks per run, resuming where the previous run stopped, at most once per
//! [`AutoPruneConfig::min_interval_secs`], and skips compaction.

use crate::clock::unix_now;
use crate::core::Core;
use crate::error::{EngineError, StoreError};
use crate::rank::{PruneInput, RankParams, decay, should_prune};
use crate::store::{ChunkId, ChunkRecord, CompactReport};
use serde::Serialize;
use std::time::{Duration, Instant};

/// Meta key: unix seconds of the last automatic pass.
const META_LAST_AUTO: &str = "prune.last_auto";
/// Meta key: last chunk id examined by the automatic pass.
const META_CURSOR: &str = "prune.cursor";
/// Chunks deleted per write transaction in a full run.
const BATCH: usize = 512;

/// What a prune run did (or, dry-run, would do).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PruneReport {
    /// Dry run: nothing was written.
    pub dry_run: bool,
    /// Chunks examined.
    pub examined: u64,
    /// Chunks pruned (dry run: that would be).
    pub pruned: u64,
    /// Pinned chunks the rule would otherwise have pruned.
    pub pinned_kept: u64,
    /// Turn entries removed.
    pub turns_unlinked: u64,
    /// Int8 blocks before / after compaction.
    pub blocks_before: u64,
    /// See `blocks_before`.
    pub blocks_after: u64,
    /// Vector ids of deleted chunks dropped from int8 blocks (dry run: currently dead).
    pub vectors_dropped: u64,
}

/// Decide for one record at `now` (unix seconds).
pub fn verdict(rec: &ChunkRecord, now: i64, p: &RankParams) -> (bool, PruneInput) {
    let since = rec.last_access.unwrap_or(rec.ingested_at);
    let hours = (now - since).max(0) as f32 / 3600.0;
    let input = PruneInput {
        confidence: decay(rec.confidence, hours, p),
        access_count: rec.access_count,
        age_days: (now - rec.ingested_at).max(0) as f32 / 86_400.0,
        pinned: rec.pinned,
    };
    (should_prune(&input, p), input)
}

/// Delete `ids` (re-checked inside the transaction) with their turn entries and session links
/// ([`crate::store::StoreWriter::remove_chunks`]).
fn delete_batch(
    w: &mut crate::store::StoreWriter,
    ids: &[ChunkId],
    now: i64,
    p: &RankParams,
    rep: &mut PruneReport,
) -> Result<Vec<u32>, StoreError> {
    let mut projects = Vec::new();
    let mut batch = Vec::new();
    for &id in ids {
        let Some(rec) = w.get_record(id)? else {
            continue;
        };
        if !verdict(&rec, now, p).0 {
            continue; // accessed or pinned since the scan
        }
        if !projects.contains(&rec.project_id) {
            projects.push(rec.project_id);
        }
        batch.push((id, rec));
    }
    // The one deletion path (forget removes through it too).
    rep.turns_unlinked += w.remove_chunks(&batch)?;
    rep.pruned += batch.len() as u64;
    Ok(projects)
}

/// Full prune (`memctl prune`): examine every chunk, delete pruned ones (unless `dry_run`),
/// then compact the int8 blocks of every project.
pub(crate) fn prune_all(
    engine: &Core,
    p: &RankParams,
    dry_run: bool,
    now: Option<i64>,
) -> Result<PruneReport, EngineError> {
    let now = now.unwrap_or_else(unix_now);
    let mut rep = PruneReport {
        dry_run,
        ..PruneReport::default()
    };
    let mut doomed = Vec::new();
    let projects: Vec<u32> = {
        let r = engine.store().read()?;
        r.for_each_chunk(|id, rec| {
            rep.examined += 1;
            let would = verdict(&rec, now, p).0;
            let unpinned = verdict(
                &ChunkRecord {
                    pinned: false,
                    ..rec.clone()
                },
                now,
                p,
            )
            .0;
            if would {
                doomed.push(id);
            } else if rec.pinned && unpinned {
                rep.pinned_kept += 1;
            }
            Ok(())
        })?;
        if dry_run {
            rep.pruned = doomed.len() as u64;
            for pid in r.project_ids()? {
                rep.vectors_dropped += r.dead_vector_ids(pid)?;
            }
            return Ok(rep);
        }
        r.project_ids()?
    };
    for batch in doomed.chunks(BATCH) {
        engine
            .store()
            .write(|w| delete_batch(w, batch, now, p, &mut rep).map(|_| ()))?;
    }
    for pid in projects {
        let c: CompactReport = engine.store().write(|w| w.compact_vectors(pid))?;
        rep.blocks_before += c.blocks_before;
        rep.blocks_after += c.blocks_after;
        rep.vectors_dropped += c.vectors_dropped;
    }
    Ok(rep)
}

/// Settings of the automatic pass.
#[derive(Debug, Clone, PartialEq)]
pub struct AutoPruneConfig {
    /// Run at all (default off; `MEMCTL_AUTO_PRUNE=1`).
    pub enabled: bool,
    /// Chunks examined per pass (default 200).
    pub max_examined: usize,
    /// Seconds between passes (default 3600).
    pub min_interval_secs: i64,
    /// Stop examining after this long (default 5 ms).
    pub max_time: Duration,
    /// Ranking parameters.
    pub rank: RankParams,
}

impl Default for AutoPruneConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            max_examined: 200,
            min_interval_secs: 3600,
            max_time: Duration::from_millis(5),
            rank: RankParams::default(),
        }
    }
}

fn meta_i64(v: Option<Vec<u8>>) -> Option<i64> {
    v.and_then(|b| b.try_into().ok()).map(i64::from_le_bytes)
}

/// The bounded automatic pass (SessionEnd). Returns None when it did not run (disabled, or
/// the last pass was less than `min_interval_secs` ago).
pub(crate) fn auto_pass(
    engine: &Core,
    cfg: &AutoPruneConfig,
    now: Option<i64>,
) -> Result<Option<PruneReport>, EngineError> {
    if !cfg.enabled {
        return Ok(None);
    }
    let started = Instant::now();
    let now = now.unwrap_or_else(unix_now);
    let (doomed, next_cursor, examined) = {
        let r = engine.store().read()?;
        if let Some(last) = meta_i64(r.meta_value(META_LAST_AUTO)?)
            && now - last < cfg.min_interval_secs
        {
            return Ok(None);
        }
        let cursor = meta_i64(r.meta_value(META_CURSOR)?).unwrap_or(0).max(0) as u64;
        let mut batch = r.chunks_after(cursor, cfg.max_examined)?;
        if batch.is_empty() && cursor > 0 {
            batch = r.chunks_after(0, cfg.max_examined)?; // wrap around
        }
        let mut doomed = Vec::new();
        let mut last = 0;
        let mut examined = 0u64;
        for (id, rec) in &batch {
            if started.elapsed() >= cfg.max_time {
                break;
            }
            examined += 1;
            last = *id;
            if verdict(rec, now, &cfg.rank).0 {
                doomed.push(*id);
            }
        }
        (doomed, last, examined)
    };
    let mut rep = PruneReport {
        examined,
        ..PruneReport::default()
    };
    engine.store().write(|w| {
        delete_batch(w, &doomed, now, &cfg.rank, &mut rep)?;
        w.set_meta_value(META_LAST_AUTO, &now.to_le_bytes())?;
        w.set_meta_value(META_CURSOR, &(next_cursor as i64).to_le_bytes())?;
        Ok(())
    })?;
    Ok(Some(rep))
}

/// Pin or unpin a chunk. Returns false when no chunk has this id.
pub(crate) fn set_pinned(engine: &Core, id: ChunkId, pinned: bool) -> Result<bool, EngineError> {
    Ok(engine.store().write(|w| {
        let Some(mut rec) = w.get_record(id)? else {
            return Ok(false);
        };
        if rec.pinned != pinned {
            rec.pinned = pinned;
            w.update_record(id, &rec)?;
        }
        Ok(true)
    })?)
}

/// Hook step (SessionEnd): the bounded automatic pass; failures are logged, never returned.
pub(crate) fn on_hook(engine: &Core, cfg: &AutoPruneConfig, deadline: Instant) {
    if !cfg.enabled || Instant::now() >= deadline {
        return;
    }
    match auto_pass(engine, cfg, None) {
        Ok(Some(r)) if r.pruned > 0 => {
            tracing::info!(
                examined = r.examined,
                pruned = r.pruned,
                "automatic prune pass"
            );
        }
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "automatic prune pass failed"),
    }
}

#[cfg(test)]
pub(crate) mod tests;
