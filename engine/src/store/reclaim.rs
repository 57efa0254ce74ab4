//! Giving bytes back at a quiet moment: the hash vectors of chunks the model embedded, their
//! int8 block entries, and the file's free pages (a 5,000-turn store was once 41 %
//! unallocated pages).
//!
//! When: the background embedder (any `embed_pending`) calls [`Store::reclaim`] once it
//! leaves nothing pending: the model's burst of work is over, and the prompt path has nothing
//! to wait for from it.
//!
//! Free pages: redb's `Database::compact` cannot be used here. In multi-process mode it refuses
//! while any other process holds a read transaction (`TransactionInProgress`: hooks, the MCP
//! server and searches read at any time), and even when it runs it leaves freed bytes in the
//! file (`super::rewrite`'s measurement). So the file is rewritten instead ([`Store::rewrite`],
//! forget's machinery): every live row is copied into a new file under the store's write lock
//! and renamed over it; other processes move to the new file at their next transaction, and no
//! commit can be lost because none can happen on the old file meanwhile. A hook that wants to
//! write during the copy waits its own deadline and then spools its turns (archived later), so
//! the rewrite is only done when it pays: at least [`REWRITE_MIN_FREE_BYTES`] free, and at
//! least [`REWRITE_MIN_FREE_FRACTION`] of the file.

use super::rewrite::RewriteReport;
use super::schema::*;
use super::{Store, StoreError, StoreWriter};
use crate::embed::EmbedderId;
use redb::{ReadableTable, ReadableTableMetadata};

/// Rewrite the file only when at least this share of it is free pages.
pub const REWRITE_MIN_FREE_FRACTION: f64 = 0.25;
/// ... and at least this many bytes (a small store is not worth a rewrite).
pub const REWRITE_MIN_FREE_BYTES: u64 = 2 << 20;

/// What [`Store::reclaim`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ReclaimReport {
    /// Hash vectors dropped (their chunk has a model vector).
    pub hash_vectors_dropped: u64,
    /// Int8 block entries dropped (hash entries of model-embedded chunks, entries of deleted
    /// or replaced chunks).
    pub block_entries_dropped: u64,
    /// The file rewrite, when the free pages were worth one.
    pub rewrite: Option<RewriteReport>,
}

impl Store {
    /// Drop what the model made redundant and give free pages back (see the module doc). Does
    /// nothing while chunks are pending (they still need their hash vectors for search).
    pub fn reclaim(
        &self,
        model: &EmbedderId,
        hash: &EmbedderId,
    ) -> Result<ReclaimReport, StoreError> {
        let mut rep = ReclaimReport::default();
        let hash_key = hash.key();
        // Read first: most quiet moments have nothing to drop, and a write transaction that
        // changes nothing still costs a durable commit.
        let model_key = model.key();
        let (projects, model_projects) = {
            let r = self.read()?;
            if r.pending_count()? > 0 {
                return Ok(rep);
            }
            let tails = r.tx.open_table(VEC_TAILS)?;
            let (mut v, mut m, mut model_entries) = (Vec::new(), Vec::new(), 0u64);
            for row in tails.iter()? {
                let (k, t) = row?;
                let (p, key) = k.value();
                if key == hash_key && t.value() != (0, 0) {
                    v.push(p);
                } else if key == model_key {
                    let (b, c) = t.value();
                    model_entries += b * super::BLOCK_VECTORS as u64 + u64::from(c);
                    m.push(p);
                }
            }
            // Entries of replaced chunks (an open turn stored again) stay in the model's blocks
            // too; compacting them here keeps `status`'s index in step with its chunks. With
            // nothing pending a chunk has at most one model vector, so more entries than
            // chunks (a table length, no scan) means stale ones.
            if model_entries <= r.chunk_count()? {
                m.clear();
            }
            (v, m)
        };
        if !projects.is_empty() || !model_projects.is_empty() {
            let (dropped, entries) = self.write(|w| {
                if w.tx.open_table(PENDING)?.len()? > 0 {
                    return Ok((0, 0));
                }
                let dropped = w.drop_superseded(model, hash)?;
                let mut entries = 0;
                for &p in &projects {
                    entries += w.compact_space(p, &hash_key)?.vectors_dropped;
                }
                for &p in &model_projects {
                    entries += w.compact_space(p, &model_key)?.vectors_dropped;
                }
                Ok((dropped, entries))
            })?;
            rep.hash_vectors_dropped = dropped;
            rep.block_entries_dropped = entries;
        }
        if self.worth_rewriting()? {
            rep.rewrite = Some(self.rewrite()?);
        }
        Ok(rep)
    }

    /// True when the file's free pages pass both thresholds of the module doc.
    fn worth_rewriting(&self) -> Result<bool, StoreError> {
        Ok(self.free_at_least(REWRITE_MIN_FREE_FRACTION)?.is_some())
    }

    /// The file's size when at least [`REWRITE_MIN_FREE_BYTES`] and `fraction` of it are free
    /// pages; None otherwise.
    fn free_at_least(&self, fraction: f64) -> Result<Option<u64>, StoreError> {
        let file = self.file_len()?;
        let (_opened, tx) = self.begin_write()?;
        let stats = tx.stats()?;
        tx.abort()?;
        let free = file.saturating_sub(stats.allocated_pages() * stats.page_size() as u64);
        let enough = free >= REWRITE_MIN_FREE_BYTES && free as f64 >= fraction * file as f64;
        Ok(enough.then_some(file))
    }

    fn file_len(&self) -> Result<u64, StoreError> {
        std::fs::metadata(&self.path)
            .map(|m| m.len())
            .map_err(|source| StoreError::Io {
                path: self.path.clone(),
                source,
            })
    }

    /// After a bulk write (an import): move live pages down and cut the file's free tail, in
    /// place (redb's compaction). Why: redb grows the file ahead of its data and an import
    /// frees the posting segments each batch rewrote, so a large import leaves about a third
    /// of its file free (docs/perf/scale.md). Unlike a forget, nothing here must leave the
    /// disk, so in-place compaction fits and costs less than [`Store::rewrite`]'s full copy.
    /// Other processes wait while it runs; redb refuses while one of them is inside a
    /// transaction, and then the pages stay free for later writes ([`FileCompaction::Busy`]).
    pub fn compact_after_bulk(&self) -> Result<FileCompaction, StoreError> {
        let Some(before) = self.free_at_least(COMPACT_MIN_FREE_FRACTION)? else {
            return Ok(FileCompaction::NotNeeded);
        };
        let started = std::time::Instant::now();
        let mut slot = self
            .opened
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(super::Opened {
            db: super::Handle::ReadWrite(db),
            ..
        }) = std::sync::Arc::get_mut(&mut slot)
        else {
            return Ok(FileCompaction::Busy); // a transaction of this process, or read-only
        };
        loop {
            match db.compact() {
                Ok(true) => {}
                Ok(false) => break,
                Err(
                    redb::CompactionError::TransactionInProgress
                    | redb::CompactionError::PersistentSavepointExists
                    | redb::CompactionError::EphemeralSavepointExists,
                ) => return Ok(FileCompaction::Busy),
                Err(e) => return Err(e.into()),
            }
        }
        drop(slot);
        Ok(FileCompaction::Done {
            bytes_before: before,
            bytes_after: self.file_len()?,
            millis: started.elapsed().as_millis() as u64,
        })
    }
}

/// Compact after a bulk write only when at least this share of the file is free pages.
pub const COMPACT_MIN_FREE_FRACTION: f64 = 0.10;

/// What [`Store::compact_after_bulk`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
#[non_exhaustive]
pub enum FileCompaction {
    /// Too few free pages to be worth it.
    #[default]
    NotNeeded,
    /// Another transaction was open; the free pages stay for later writes.
    Busy,
    /// Compacted.
    Done {
        /// File size before.
        bytes_before: u64,
        /// File size after.
        bytes_after: u64,
        /// Wall time, lock waits included.
        millis: u64,
    },
}

impl StoreWriter {
    /// Drop the `hash` vector of every chunk that also has a `model` vector, and take the hash
    /// space out of its record (its int8 entry goes at the next compaction). Returns the
    /// vectors dropped.
    fn drop_superseded(
        &mut self,
        model: &EmbedderId,
        hash: &EmbedderId,
    ) -> Result<u64, StoreError> {
        let (model_key, hash_key) = (model.key(), hash.key());
        let ids: Vec<u64> = {
            let t = self.tx.open_table(VECTORS)?;
            let mut v = Vec::new();
            for row in t.iter()? {
                let (k, _) = row?;
                let (id, key) = k.value();
                if key == hash_key && t.get((id, model_key.as_str()))?.is_some() {
                    v.push(id);
                }
            }
            v
        };
        for &id in &ids {
            self.drop_vector(id, hash)?;
            if let Some(mut rec) = self.get_record(id)? {
                rec.embedders.retain(|k| *k != hash_key);
                self.update_record(id, &rec)?;
            }
        }
        Ok(ids.len() as u64)
    }
}

#[cfg(test)]
#[path = "reclaim_tests.rs"]
mod tests;
