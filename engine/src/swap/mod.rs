//! Tool-output swap ("external memory swap").
//!
//! Compaction drops big tool outputs (a whole file Read, a long `cargo test` log). The
//! PostToolUse hook stores outputs above a per-tool size ([`SwapConfig::thresholds`]) whole,
//! so they can be fetched back byte for byte by id (`memctl swap show <id>`) and found by
//! meaning (`memctl swap search`), and the restore block after compaction lists them.
//!
//! An example of use is the test `tests::a_read_above_its_threshold_is_prepared_for_swap`.
//!
//! Design (measured on this 2-core machine, release build, store already open):
//! - **Where**: in the redb store (tables `swap_*`), not in files: the store is already
//!   multi-process safe, one write transaction covers blob + metadata + vector + eviction +
//!   expiry (no orphan files after a crash, no second locking scheme), and a hook pays exactly
//!   one commit. A PostToolUse call with a 100 kB Read output costs ~3.9 ms CPU (`perf stat -e
//!   task-clock`, p50) against ~1.0 ms for a call that swaps nothing; the commit adds two
//!   `fdatasync`s of wall time.
//! - **Content-addressed**: id = sha256 of the *redacted* output (first 12 hex chars shown);
//!   the same output in two sessions is stored once (refcounted by `swap_refs`).
//! - **Compression**: LZ4 block (`lz4_flex`, pure Rust, no dependencies) when it saves ≥ 10 %:
//!   ~0.1 ms per 100 kB; on real Rust source 0.44 blob bytes per output byte, and the store
//!   file grew 0.47 bytes per output byte (metadata, vectors and pages included). Deflate
//!   (miniz_oxide) saved another 15–40 % but cost 5–10× the CPU on the hook path.
//! - **Search without the model**: each entry has a hash-embedder vector of its summary,
//!   patterns and head; `swap search` scores cosine + word overlap with the description.
//! - **Limits and retention**: see [`SwapConfig`]; evictions and expiries are logged.

mod config;
mod db;
mod digest;
mod extract;
pub(crate) mod forget;
#[cfg(test)]
mod id_tests;
pub mod inplace;
#[cfg(test)]
mod inplace_tests;
pub(crate) mod port;
#[cfg(test)]
mod tests;

pub use config::{SWAPPED_TOOLS, SwapConfig};
pub use digest::digest;
pub use extract::{input_summary, output_text};

/// A swapped output's exact text and the entries (tool calls) that hold it.
#[derive(Debug, Clone)]
pub struct SwapContent {
    /// Every entry holding this content (one per tool call that produced it).
    pub entries: Vec<SwapEntry>,
    /// The output, byte for byte as the tool returned it.
    pub text: String,
}

use crate::core::Core;
use crate::embed::Embedder;
use crate::error::{EngineError, StoreError};
use crate::store::{SWAP_BLOBS, SWAP_ENTRIES, SWAP_REFS, SWAP_STATS, SWAP_VECTORS, StoreReader};
use serde::Serialize;
use sha2::{Digest as _, Sha256};

/// Length of the user-facing id (hex characters of the sha256).
pub const SHORT_ID_LEN: usize = 12;
/// Shortest id prefix accepted by [`Engine::swap_show`].
pub const MIN_ID_PREFIX: usize = 4;
/// Characters of the summary shown in an inventory line.
const INVENTORY_SUMMARY_CHARS: usize = 160;
/// Characters of the output's head that go into its vector.
pub(crate) const VECTOR_HEAD_CHARS: usize = 2000;

pub use crate::store::SwapEntry;

impl SwapEntry {
    /// The id users type (first [`SHORT_ID_LEN`] hex characters).
    pub fn short_id(&self) -> &str {
        short_id(&self.id)
    }

    /// The inventory line restored after compaction:
    /// `id · tool · input summary · size · summary`.
    pub fn inventory_line(&self) -> String {
        // The summary starts by naming the input ("`cmd`: ...", "grep pat: ..."): not twice.
        let summary = self
            .summary
            .find(self.input_summary.as_str())
            .filter(|&i| i <= 6 && !self.input_summary.is_empty())
            .map(|i| {
                self.summary[i + self.input_summary.len()..]
                    .trim_start_matches('`')
                    .trim_start_matches(':')
                    .trim()
            })
            .unwrap_or(&self.summary);
        format!(
            "{} · {} · {} · {} · {}",
            self.short_id(),
            self.tool,
            self.input_summary,
            human_bytes(self.bytes),
            crate::transcript::clip_line(summary, INVENTORY_SUMMARY_CHARS)
        )
    }
}

/// The first [`SHORT_ID_LEN`] bytes of a content id, or all of it when shorter or when the cut
/// would split a character. Why not `&id[..n]`: ids come from the store and from users, and a
/// short or non-ASCII one (a damaged store, a typo) made that slice panic.
pub fn short_id(id: &str) -> &str {
    id.get(..SHORT_ID_LEN).unwrap_or(id)
}

/// `12.3 kB` style size.
pub fn human_bytes(n: u64) -> String {
    if n < 1000 {
        format!("{n} B")
    } else if n < 1_000_000 {
        format!("{:.1} kB", n as f64 / 1e3)
    } else {
        format!("{:.1} MB", n as f64 / 1e6)
    }
}

/// sha256 hex of content: its id.
pub fn content_id(content: &str) -> String {
    hex::encode(Sha256::digest(content.as_bytes()))
}

/// A tool call as the PostToolUse hook sees it.
#[derive(Debug, Clone, Copy)]
pub struct ToolCall<'a> {
    /// Session id.
    pub session_id: &'a str,
    /// Project (cwd).
    pub project: &'a str,
    /// Tool name.
    pub tool_name: &'a str,
    /// `tool_input` JSON text.
    pub tool_input: &'a str,
    /// `tool_response` JSON text (the `error` for failures).
    pub tool_response: &'a str,
    /// Tool use id.
    pub tool_use_id: Option<&'a str>,
    /// PostToolUseFailure.
    pub failed: bool,
}

/// Why an output was not swapped.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkipReason {
    /// Swapping is disabled.
    Disabled,
    /// The tool has no threshold.
    ToolNotSwapped,
    /// Smaller than the tool's threshold (characters).
    BelowThreshold {
        /// Characters of the output.
        chars: usize,
        /// The tool's threshold.
        threshold: usize,
    },
    /// Larger than [`SwapConfig::max_entry_bytes`].
    TooLarge {
        /// Bytes of the (redacted) output.
        bytes: u64,
        /// The limit.
        max: u64,
    },
}

/// An output ready to store (everything computed outside the write transaction).
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The entry (times set to `now`).
    pub entry: SwapEntry,
    /// The encoded blob.
    pub blob: Vec<u8>,
    /// Hash-embedder vector.
    pub vector: Vec<f32>,
    /// The stored (redacted) text.
    pub content: String,
}

/// Why an entry left the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RemoveReason {
    /// The session had more than [`SwapConfig::max_entries_per_session`].
    SessionLimit,
    /// The store held more than [`SwapConfig::max_total_bytes`].
    TotalBytes,
    /// Retention expired.
    Expired,
}

/// An entry removed by eviction or expiry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Removed {
    /// Session.
    pub session_id: String,
    /// Content id.
    pub id: String,
    /// Tool.
    pub tool: String,
    /// Content bytes.
    pub bytes: u64,
    /// Why.
    pub reason: RemoveReason,
}

/// What storing one output did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreReport {
    /// Content id.
    pub id: String,
    /// Content bytes.
    pub bytes: u64,
    /// Blob bytes.
    pub stored_bytes: u64,
    /// The content was not stored before (by any session).
    pub new_blob: bool,
    /// The session already had this output; it was refreshed.
    pub refreshed: bool,
    /// Entries evicted to respect the limits.
    pub evicted: Vec<Removed>,
    /// Entries removed by the automatic expiry pass.
    pub expired: Vec<Removed>,
}

/// Result of [`Engine::swap_tool_output`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SwapOutcome {
    /// Not swapped.
    Skipped(SkipReason),
    /// Stored.
    Stored(StoreReport),
}

/// One search result.
#[derive(Debug, Clone, Serialize)]
pub struct SwapHit {
    /// Score (cosine of hash vectors + word overlap bonus).
    pub score: f32,
    /// The entry.
    pub entry: SwapEntry,
}

/// Decide whether to swap and compute everything to store (pure: no store access).
pub fn prepare(call: &ToolCall<'_>, cfg: &SwapConfig, now: i64) -> Result<Prepared, SkipReason> {
    if !cfg.enabled {
        return Err(SkipReason::Disabled);
    }
    let threshold = cfg
        .threshold(call.tool_name)
        .ok_or(SkipReason::ToolNotSwapped)?;
    // Cheap pre-check: the JSON text is at least as long as the output it holds.
    if call.tool_response.len() < threshold {
        return Err(SkipReason::BelowThreshold {
            chars: call.tool_response.chars().count(),
            threshold,
        });
    }
    let text = output_text(call.tool_name, call.tool_response);
    let chars = if text.len() < threshold {
        text.len()
    } else {
        text.chars().count()
    };
    if chars < threshold {
        return Err(SkipReason::BelowThreshold { chars, threshold });
    }
    prepare_content(call, &text, cfg, now)
}

/// Everything to store for the output `text` of `call` (redacted here), with no threshold or
/// switch check (the callers made them): [`prepare`], and the in-place swap with the whole
/// output it read ([`SwapConfig::in_place_threshold`] is off when swapping is).
pub(crate) fn prepare_content(
    call: &ToolCall<'_>,
    text: &str,
    cfg: &SwapConfig,
    now: i64,
) -> Result<Prepared, SkipReason> {
    let content = crate::redact::redact(text).into_owned();
    if content.len() as u64 > cfg.max_entry_bytes {
        return Err(SkipReason::TooLarge {
            bytes: content.len() as u64,
            max: cfg.max_entry_bytes,
        });
    }
    let input = crate::redact::redact(&input_summary(call.tool_name, call.tool_input)).into_owned();
    let d = digest(call.tool_name, &input, &content);
    let vector = port::entry_vector(call.tool_name, &input, &d.summary, &d.patterns, &content);
    let blob = db::encode_blob(content.as_bytes());
    let entry = SwapEntry {
        id: content_id(&content),
        session_id: call.session_id.to_string(),
        project: call.project.to_string(),
        tool: call.tool_name.to_string(),
        tool_use_id: call.tool_use_id.map(str::to_string),
        input_summary: input,
        failed: call.failed,
        bytes: content.len() as u64,
        stored_bytes: blob.len() as u64,
        lines: d.lines,
        created_at: now,
        last_access: None,
        access_count: 0,
        summary: d.summary,
        patterns: d.patterns,
        first_error: d.first_error,
        in_place: false,
    };
    Ok(Prepared {
        entry,
        blob,
        vector,
        content,
    })
}

/// Swapped outputs of `session`, newest first (for the restore inventory).
pub(crate) fn inventory(r: &StoreReader, session: &str) -> Result<Vec<SwapEntry>, StoreError> {
    let Some(t) = db::open_ro(r.raw_tx(), SWAP_ENTRIES)? else {
        return Ok(Vec::new());
    };
    let mut v = db::session_entries(&t, session)?;
    v.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(a.id.cmp(&b.id)));
    Ok(v)
}

/// Totals of the swap store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SwapStats {
    /// Original bytes of distinct stored outputs.
    pub bytes: u64,
    /// Distinct stored outputs.
    pub blobs: u64,
}

/// Report of [`Engine::swap_prune`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PruneReport {
    /// Entries removed (or that would be, with `dry_run`).
    pub removed: Vec<Removed>,
    /// Nothing was removed.
    pub dry_run: bool,
}

fn lower_hex_prefix(prefix: &str) -> Result<String, EngineError> {
    let p = prefix.trim().to_ascii_lowercase();
    if p.len() < MIN_ID_PREFIX || p.len() > 64 || !p.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(EngineError::Invalid(format!(
            "not a swap id: {prefix:?} (expected {MIN_ID_PREFIX}-64 hex characters, as listed by `memctl swap list`)"
        )));
    }
    Ok(p)
}

fn word_set(s: &str) -> Vec<String> {
    let mut v: Vec<String> = s
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| w.chars().count() > 2)
        .map(str::to_lowercase)
        .collect();
    v.sort();
    v.dedup();
    v
}

impl Core {
    /// PostToolUse: swap the output when it qualifies (one write transaction when it does,
    /// none when it does not). Evictions and expiries are logged.
    pub fn swap_tool_output(
        &self,
        call: &ToolCall<'_>,
        cfg: &SwapConfig,
        now: i64,
    ) -> Result<SwapOutcome, EngineError> {
        let p = match prepare(call, cfg, now) {
            Ok(p) => p,
            Err(r) => return Ok(SwapOutcome::Skipped(r)),
        };
        let report = self
            .store()
            .write(|w| db::put(w, cfg, &p.entry, &p.blob, &p.vector, now))?;
        for r in report.evicted.iter().chain(&report.expired) {
            tracing::info!(
                session = %r.session_id, id = %short_id(&r.id),
                tool = %r.tool, bytes = r.bytes, reason = ?r.reason,
                "swap entry removed"
            );
        }
        Ok(SwapOutcome::Stored(report))
    }

    /// Swapped outputs (one session, or all), newest first.
    pub fn swap_list(&self, session: Option<&str>) -> Result<Vec<SwapEntry>, EngineError> {
        let r = self.store().read()?;
        let Some(t) = db::open_ro(r.raw_tx(), SWAP_ENTRIES)? else {
            return Ok(Vec::new());
        };
        let mut v = match session {
            Some(s) => db::session_entries(&t, s)?,
            None => db::all_entries(&t)?,
        };
        v.sort_by(|a, b| {
            b.created_at
                .cmp(&a.created_at)
                .then(a.session_id.cmp(&b.session_id))
                .then(a.id.cmp(&b.id))
        });
        Ok(v)
    }

    /// Totals (distinct outputs, their bytes).
    pub fn swap_stats(&self) -> Result<SwapStats, EngineError> {
        let r = self.store().read()?;
        let Some(t) = db::open_ro(r.raw_tx(), SWAP_STATS)? else {
            return Ok(SwapStats::default());
        };
        let (bytes, blobs) = db::stats(&t)?;
        Ok(SwapStats { bytes, blobs })
    }

    /// The full id for an id or prefix (≥ [`MIN_ID_PREFIX`] hex characters).
    pub fn swap_resolve(&self, prefix: &str) -> Result<String, EngineError> {
        let p = lower_hex_prefix(prefix)?;
        let r = self.store().read()?;
        let Some(t) = db::open_ro(r.raw_tx(), SWAP_BLOBS)? else {
            return Err(EngineError::Invalid(format!(
                "no swapped output with id {p}"
            )));
        };
        match db::resolve(&t, &p)? {
            db::Resolve::Found(id) => Ok(id),
            db::Resolve::Missing => Err(EngineError::Invalid(format!(
                "no swapped output with id {p} (expired or evicted? see `memctl swap list`)"
            ))),
            db::Resolve::Ambiguous(ids) => Err(EngineError::Invalid(format!(
                "swap id {p} is ambiguous: {}",
                ids.iter()
                    .map(|i| short_id(i))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// The exact stored content of an id (prefix) and its entries, without counting an access.
    pub fn swap_content(&self, prefix: &str) -> Result<SwapContent, EngineError> {
        let id = self.swap_resolve(prefix)?;
        let r = self.store().read()?;
        let blobs = db::open_ro(r.raw_tx(), SWAP_BLOBS)?;
        let text = match blobs {
            Some(t) => db::content(&t, &id)?,
            None => None,
        }
        .ok_or_else(|| EngineError::Invalid(format!("no swapped output with id {id}")))?;
        let mut entries = Vec::new();
        if let (Some(refs), Some(ents)) = (
            db::open_ro(r.raw_tx(), SWAP_REFS)?,
            db::open_ro(r.raw_tx(), SWAP_ENTRIES)?,
        ) {
            for s in db::refs_of(&refs, &id)? {
                if let Some(e) = db::get_entry(&ents, &s, &id)? {
                    entries.push(e);
                }
            }
        }
        Ok(SwapContent { entries, text })
    }

    /// `memctl swap show`: the exact content; counts as an access of every entry holding it.
    pub fn swap_show(&self, prefix: &str, now: i64) -> Result<SwapContent, EngineError> {
        let text = self.swap_content(prefix)?.text;
        let id = content_id(&text);
        let entries = self.store().write(|w| db::touch(w, &id, now))?;
        Ok(SwapContent { entries, text })
    }

    /// Find swapped outputs by meaning (hash vectors: no model) and words.
    pub fn swap_search(
        &self,
        query: &str,
        k: usize,
        session: Option<&str>,
        project: Option<&str>,
    ) -> Result<Vec<SwapHit>, EngineError> {
        let r = self.store().read()?;
        let (Some(vt), Some(et)) = (
            db::open_ro(r.raw_tx(), SWAP_VECTORS)?,
            db::open_ro(r.raw_tx(), SWAP_ENTRIES)?,
        ) else {
            return Ok(Vec::new());
        };
        let q = self.hash_embedder().embed(query)?;
        let q_words = word_set(query);
        let mut scored: Vec<(f32, (String, String))> = db::vectors(&vt, session)?
            .into_iter()
            .map(|(key, v)| (crate::embed::dot(&q, &v), key))
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut hits: Vec<SwapHit> = Vec::new();
        // Re-score the best candidates with word overlap against the entry's description.
        for (cos, (s, i)) in scored.into_iter().take((k * 8).max(64)) {
            let Some(e) = db::get_entry(&et, &s, &i)? else {
                continue;
            };
            if project.is_some_and(|p| p != e.project) {
                continue;
            }
            let desc = word_set(&format!(
                "{} {} {} {}",
                e.tool,
                e.input_summary,
                e.summary,
                e.patterns.join(" ")
            ));
            let overlap = if q_words.is_empty() {
                0.0
            } else {
                q_words
                    .iter()
                    .filter(|w| desc.binary_search(w).is_ok())
                    .count() as f32
                    / q_words.len() as f32
            };
            let score = cos + 0.5 * overlap;
            match hits.iter_mut().find(|h| h.entry.id == e.id) {
                Some(h) if h.score >= score => {}
                Some(h) => {
                    h.score = score;
                    h.entry = e;
                }
                None => hits.push(SwapHit { score, entry: e }),
            }
        }
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(a.entry.id.cmp(&b.entry.id))
        });
        hits.truncate(k.max(1));
        Ok(hits)
    }

    /// Remove expired entries (all of them; `dry_run`: only report).
    pub fn swap_prune(
        &self,
        cfg: &SwapConfig,
        now: i64,
        dry_run: bool,
    ) -> Result<PruneReport, EngineError> {
        self.swap_prune_bounded(cfg, now, dry_run, None)
    }

    /// Remove expired entries, at most `limit` (looking at the `limit` oldest of each tier),
    /// for automatic passes with a bounded cost.
    pub fn swap_prune_bounded(
        &self,
        cfg: &SwapConfig,
        now: i64,
        dry_run: bool,
        limit: Option<usize>,
    ) -> Result<PruneReport, EngineError> {
        let removed = self
            .store()
            .write(|w| db::prune(w, cfg, now, limit, dry_run, None))?;
        if !dry_run {
            for r in &removed {
                tracing::info!(session = %r.session_id, id = %r.id, reason = ?r.reason, "swap entry expired");
            }
        }
        Ok(PruneReport { removed, dry_run })
    }
}
