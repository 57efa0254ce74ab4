//! Swap tables in the redb store (definitions in `store/schema.rs`): blobs by content id,
//! entries per (session, id), refcounts, the eviction/expiry order, vectors, totals.
//!
//! Every mutation of one hook call happens inside the caller's single write transaction.

use super::{RemoveReason, Removed, StoreReport, SwapConfig, SwapEntry};
use crate::error::StoreError;
use crate::store::{
    SWAP_BLOBS, SWAP_ENTRIES, SWAP_ORDER, SWAP_REFS, SWAP_STATS, SWAP_VECTORS, StoreWriter,
};
use redb::{ReadTransaction, ReadableTable, TableDefinition, WriteTransaction};
use std::collections::HashMap;

/// Blob codec byte: stored as is.
const CODEC_RAW: u8 = 0;
/// Blob codec byte: LZ4 block, uncompressed size prepended (`lz4_flex::compress_prepend_size`).
const CODEC_LZ4: u8 = 1;

const STAT_BYTES: &str = "bytes";
const STAT_BLOBS: &str = "blobs";

/// Upper bound for ranges over the second &str of a key (ids are lowercase hex).
const HEX_END: &str = "~";

/// Encode content for storage: LZ4 when it saves at least 10 %, else raw.
pub(crate) fn encode_blob(content: &[u8]) -> Vec<u8> {
    let packed = lz4_flex::compress_prepend_size(content);
    let mut out;
    if packed.len() + 1 < content.len() - content.len() / 10 {
        out = Vec::with_capacity(packed.len() + 1);
        out.push(CODEC_LZ4);
        out.extend_from_slice(&packed);
    } else {
        out = Vec::with_capacity(content.len() + 1);
        out.push(CODEC_RAW);
        out.extend_from_slice(content);
    }
    out
}

/// Decode a stored blob.
pub(crate) fn decode_blob(blob: &[u8]) -> Result<Vec<u8>, StoreError> {
    match blob.split_first() {
        Some((&CODEC_RAW, rest)) => Ok(rest.to_vec()),
        Some((&CODEC_LZ4, rest)) => lz4_flex::decompress_size_prepended(rest)
            .map_err(|e| StoreError::Decode(format!("swap blob: {e}"))),
        Some((c, _)) => Err(StoreError::Decode(format!("swap blob: unknown codec {c}"))),
        None => Err(StoreError::Decode("swap blob: empty".into())),
    }
}

fn dec(b: &[u8]) -> Result<SwapEntry, StoreError> {
    Ok(crate::codec::decode_record(b)?)
}

/// Open a table for reading; a table that does not exist yet (store created before swap
/// existed, nothing swapped since) reads as absent.
pub(crate) fn open_ro<K: redb::Key + 'static, V: redb::Value + 'static>(
    tx: &ReadTransaction,
    def: TableDefinition<'static, K, V>,
) -> Result<Option<redb::ReadOnlyTable<K, V>>, StoreError> {
    match tx.open_table(def) {
        Ok(t) => Ok(Some(t)),
        Err(redb::TableError::TableDoesNotExist(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// One entry.
pub(crate) fn get_entry(
    t: &impl ReadableTable<(&'static str, &'static str), &'static [u8]>,
    session: &str,
    id: &str,
) -> Result<Option<SwapEntry>, StoreError> {
    match t.get((session, id))? {
        Some(v) => Ok(Some(dec(v.value())?)),
        None => Ok(None),
    }
}

/// Every entry of a session (id order).
pub(crate) fn session_entries(
    t: &impl ReadableTable<(&'static str, &'static str), &'static [u8]>,
    session: &str,
) -> Result<Vec<SwapEntry>, StoreError> {
    let mut out = Vec::new();
    for row in t.range((session, "")..(session, HEX_END))? {
        let (_, v) = row?;
        out.push(dec(v.value())?);
    }
    Ok(out)
}

/// Every entry.
pub(crate) fn all_entries(
    t: &impl ReadableTable<(&'static str, &'static str), &'static [u8]>,
) -> Result<Vec<SwapEntry>, StoreError> {
    let mut out = Vec::new();
    for row in t.iter()? {
        let (_, v) = row?;
        out.push(dec(v.value())?);
    }
    Ok(out)
}

/// Sessions that hold content `id`.
pub(crate) fn refs_of(
    t: &impl ReadableTable<(&'static str, &'static str), ()>,
    id: &str,
) -> Result<Vec<String>, StoreError> {
    let mut out = Vec::new();
    for row in t.range((id, "")..)? {
        let (k, _) = row?;
        let (i, s) = k.value();
        if i != id {
            break;
        }
        out.push(s.to_string());
    }
    Ok(out)
}

/// Why an id prefix did not resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resolve {
    Found(String),
    Missing,
    Ambiguous(Vec<String>),
}

/// Full content id for a (lowercase hex) prefix.
pub(crate) fn resolve(
    t: &impl ReadableTable<&'static str, &'static [u8]>,
    prefix: &str,
) -> Result<Resolve, StoreError> {
    let mut found = Vec::new();
    for row in t.range(prefix..)? {
        let (k, _) = row?;
        let k = k.value();
        if !k.starts_with(prefix) {
            break;
        }
        found.push(k.to_string());
        if found.len() > 4 {
            break;
        }
    }
    Ok(match found.len() {
        0 => Resolve::Missing,
        1 => Resolve::Found(found.remove(0)),
        _ => Resolve::Ambiguous(found),
    })
}

pub(super) fn add_stats(tx: &WriteTransaction, bytes: i64, blobs: i64) -> Result<(), StoreError> {
    let mut t = tx.open_table(SWAP_STATS)?;
    for (k, d) in [(STAT_BYTES, bytes), (STAT_BLOBS, blobs)] {
        let cur = t.get(k)?.map_or(0, |v| v.value());
        let next = cur.saturating_add_signed(d);
        t.insert(k, next)?;
    }
    Ok(())
}

/// (total original bytes of stored blobs, number of blobs).
pub(crate) fn stats(t: &impl ReadableTable<&'static str, u64>) -> Result<(u64, u64), StoreError> {
    let get = |k: &str| -> Result<u64, StoreError> { Ok(t.get(k)?.map_or(0, |v| v.value())) };
    Ok((get(STAT_BYTES)?, get(STAT_BLOBS)?))
}

/// Write `e` (replacing `old`, whose order key is removed).
pub(super) fn write_entry(
    tx: &WriteTransaction,
    e: &SwapEntry,
    old: Option<&SwapEntry>,
) -> Result<(), StoreError> {
    let s = e.session_id.as_str();
    let id = e.id.as_str();
    {
        let mut order = tx.open_table(SWAP_ORDER)?;
        if let Some(o) = old {
            let (tier, t) = o.order_key();
            order.remove((tier, t, s, id))?;
        }
        let (tier, t) = e.order_key();
        order.insert((tier, t, s, id), ())?;
    }
    tx.open_table(SWAP_ENTRIES)?
        .insert((s, id), crate::codec::encode_record(e)?.as_slice())?;
    Ok(())
}

/// Remove one entry; its blob goes with the last entry that refers to it.
pub(crate) fn remove_entry(
    tx: &WriteTransaction,
    session: &str,
    id: &str,
) -> Result<Option<SwapEntry>, StoreError> {
    let e = {
        let mut t = tx.open_table(SWAP_ENTRIES)?;
        let removed = t.remove((session, id))?;
        match removed {
            Some(v) => dec(v.value())?,
            None => return Ok(None),
        }
    };
    let (tier, t) = e.order_key();
    tx.open_table(SWAP_ORDER)?.remove((tier, t, session, id))?;
    tx.open_table(SWAP_VECTORS)?.remove((session, id))?;
    let still_used = {
        let mut refs = tx.open_table(SWAP_REFS)?;
        refs.remove((id, session))?;
        !refs_of(&refs, id)?.is_empty()
    };
    if !still_used {
        let gone = tx.open_table(SWAP_BLOBS)?.remove(id)?.is_some();
        if gone {
            add_stats(tx, -(e.bytes as i64), -1)?;
        }
    }
    Ok(Some(e))
}

fn removed(e: &SwapEntry, reason: RemoveReason) -> Removed {
    Removed {
        session_id: e.session_id.clone(),
        id: e.id.clone(),
        tool: e.tool.clone(),
        bytes: e.bytes,
        reason,
    }
}

/// Store one prepared output in the caller's write transaction, then enforce the limits
/// (entries per session, total bytes) and run a bounded expiry pass.
pub(crate) fn put(
    w: &StoreWriter,
    cfg: &SwapConfig,
    entry: &SwapEntry,
    blob: &[u8],
    vector: &[f32],
    now: i64,
) -> Result<StoreReport, StoreError> {
    let tx = w.raw_tx();
    let s = entry.session_id.as_str();
    let id = entry.id.as_str();
    let old = get_entry(&tx.open_table(SWAP_ENTRIES)?, s, id)?;
    let mut report = StoreReport {
        id: entry.id.clone(),
        bytes: entry.bytes,
        stored_bytes: entry.stored_bytes,
        new_blob: false,
        refreshed: false,
        evicted: Vec::new(),
        expired: Vec::new(),
    };
    match old {
        Some(old) => {
            // The same output again in this session: it is the newest again; access stats stay.
            let mut e = entry.clone();
            e.access_count = old.access_count;
            e.last_access = old.last_access;
            // Once its digest is in a context, it stays pinned.
            e.in_place |= old.in_place;
            write_entry(tx, &e, Some(&old))?;
            report.refreshed = true;
        }
        None => {
            let new_blob = {
                let mut b = tx.open_table(SWAP_BLOBS)?;
                let exists = b.get(id)?.is_some();
                if !exists {
                    b.insert(id, blob)?;
                }
                !exists
            };
            if new_blob {
                add_stats(tx, entry.bytes as i64, 1)?;
            }
            tx.open_table(SWAP_REFS)?.insert((id, s), ())?;
            write_entry(tx, entry, None)?;
            report.new_blob = new_blob;
        }
    }
    tx.open_table(SWAP_VECTORS)?
        .insert((s, id), crate::codec::f32s_to_bytes(vector).as_slice())?;

    evict_over_session_limit(tx, cfg, s, id, &mut report.evicted)?;
    evict_over_total_bytes(tx, cfg, s, id, &mut report.evicted)?;

    report.expired = prune(
        w,
        cfg,
        now,
        Some(cfg.auto_prune_batch),
        false,
        Some((s, id)),
    )?;
    Ok(report)
}

/// Entries of session `s` beyond its limit go, oldest never-accessed first, then least recently
/// accessed; never `id` (the entry just written) nor an output swapped in place.
fn evict_over_session_limit(
    tx: &WriteTransaction,
    cfg: &SwapConfig,
    s: &str,
    id: &str,
    evicted: &mut Vec<Removed>,
) -> Result<(), StoreError> {
    let mine = session_entries(&tx.open_table(SWAP_ENTRIES)?, s)?;
    if mine.len() > cfg.max_entries_per_session {
        // Never an output swapped in place: its digest in a live context names it.
        let mut victims: Vec<&SwapEntry> =
            mine.iter().filter(|e| e.id != id && !e.in_place).collect();
        victims.sort_by(|a, b| a.order_key().cmp(&b.order_key()).then(a.id.cmp(&b.id)));
        for v in victims
            .into_iter()
            .take(mine.len() - cfg.max_entries_per_session)
        {
            if let Some(e) = remove_entry(tx, s, &v.id)? {
                evicted.push(removed(&e, RemoveReason::SessionLimit));
            }
        }
    }
    Ok(())
}

/// Entries go in the global order (never accessed, oldest first) until the total is within
/// its limit; never `id` (the entry just written).
fn evict_over_total_bytes(
    tx: &WriteTransaction,
    cfg: &SwapConfig,
    s: &str,
    id: &str,
    evicted: &mut Vec<Removed>,
) -> Result<(), StoreError> {
    loop {
        let (total, _) = stats(&tx.open_table(SWAP_STATS)?)?;
        if total <= cfg.max_total_bytes {
            break;
        }
        let victim = {
            let order = tx.open_table(SWAP_ORDER)?;
            let mut found = None;
            for row in order.iter()? {
                let (k, _) = row?;
                let (tier, t, vs, vi) = k.value();
                if tier >= 2 {
                    // Only outputs swapped in place are left: they stay (their digests are
                    // the contexts' only way back to the bytes); retention removes them.
                    tracing::warn!(
                        total,
                        max = cfg.max_total_bytes,
                        "swap store over its byte limit with outputs swapped in place only"
                    );
                    break;
                }
                if vs != s || vi != id {
                    found = Some((tier, t, vs.to_string(), vi.to_string()));
                    break;
                }
            }
            found
        };
        let Some((tier, t, vs, vi)) = victim else {
            break;
        };
        match remove_entry(tx, &vs, &vi)? {
            Some(e) => evicted.push(removed(&e, RemoveReason::TotalBytes)),
            None => {
                // An order key without its entry (should not happen): drop the stale key.
                tx.open_table(SWAP_ORDER)?
                    .remove((tier, t, vs.as_str(), vi.as_str()))?;
            }
        }
    }
    Ok(())
}

/// Last activity of a session: its archive record's update time and its swap entries' times.
fn session_activity(w: &StoreWriter, session: &str) -> Result<i64, StoreError> {
    let mut t = w.session(session)?.map_or(0, |r| r.updated_at);
    for e in session_entries(&w.raw_tx().open_table(SWAP_ENTRIES)?, session)? {
        t = t.max(e.created_at).max(e.last_access.unwrap_or(0));
    }
    Ok(t)
}

/// Remove expired entries. `batch`: look at only the first `batch` entries of each tier of
/// the expiry order and remove at most that many (the automatic pass); `None`: everything.
/// `keep`: an entry never removed (the one just stored).
pub(crate) fn prune(
    w: &StoreWriter,
    cfg: &SwapConfig,
    now: i64,
    batch: Option<usize>,
    dry_run: bool,
    keep: Option<(&str, &str)>,
) -> Result<Vec<Removed>, StoreError> {
    let tx = w.raw_tx();
    let candidates: Vec<(String, String)> = {
        let order = tx.open_table(SWAP_ORDER)?;
        let mut out = Vec::new();
        for tier in [0u8, 1u8, 2u8] {
            let lo = (tier, i64::MIN, "", "");
            let hi = (tier + 1, i64::MIN, "", "");
            for row in order.range(lo..hi)?.take(batch.unwrap_or(usize::MAX)) {
                let (k, _) = row?;
                let (_, _, s, i) = k.value();
                out.push((s.to_string(), i.to_string()));
            }
        }
        out
    };
    let mut activity: HashMap<String, i64> = HashMap::new();
    let mut out = Vec::new();
    for (s, i) in candidates {
        if batch.is_some_and(|b| out.len() >= b) {
            break;
        }
        if keep.is_some_and(|(ks, ki)| ks == s && ki == i) {
            continue;
        }
        let Some(e) = get_entry(&tx.open_table(SWAP_ENTRIES)?, &s, &i)? else {
            continue;
        };
        let act = match activity.get(&s) {
            Some(a) => *a,
            None => {
                let a = session_activity(w, &s)?;
                activity.insert(s.clone(), a);
                a
            }
        };
        if cfg.expires_at(&e, act) > now {
            continue;
        }
        if dry_run {
            out.push(removed(&e, RemoveReason::Expired));
        } else if let Some(e) = remove_entry(tx, &s, &i)? {
            out.push(removed(&e, RemoveReason::Expired));
        }
    }
    Ok(out)
}

/// Record an access to content `id` in every session that holds it.
pub(crate) fn touch(w: &StoreWriter, id: &str, now: i64) -> Result<Vec<SwapEntry>, StoreError> {
    let tx = w.raw_tx();
    let sessions = refs_of(&tx.open_table(SWAP_REFS)?, id)?;
    let mut out = Vec::new();
    for s in sessions {
        let Some(old) = get_entry(&tx.open_table(SWAP_ENTRIES)?, &s, id)? else {
            continue;
        };
        let mut e = old.clone();
        e.access_count = e.access_count.saturating_add(1);
        e.last_access = Some(now);
        write_entry(tx, &e, Some(&old))?;
        out.push(e);
    }
    Ok(out)
}

/// The stored content of `id`, verified against its id (sha256).
pub(crate) fn content(
    t: &impl ReadableTable<&'static str, &'static [u8]>,
    id: &str,
) -> Result<Option<String>, StoreError> {
    let Some(v) = t.get(id)? else {
        return Ok(None);
    };
    let raw = decode_blob(v.value())?;
    let text =
        String::from_utf8(raw).map_err(|_| StoreError::Decode("swap blob: not UTF-8".into()))?;
    if super::content_id(&text) != id {
        return Err(StoreError::Decode(format!(
            "swap blob {id}: content does not match its id (corrupt)"
        )));
    }
    Ok(Some(text))
}

/// (session, content id) of an entry.
pub(crate) type EntryKey = (String, String);

/// Entries' vectors (`session` filter optional).
pub(crate) fn vectors(
    t: &impl ReadableTable<(&'static str, &'static str), &'static [u8]>,
    session: Option<&str>,
) -> Result<Vec<(EntryKey, Vec<f32>)>, StoreError> {
    let mut out = Vec::new();
    let iter = match session {
        Some(s) => t.range((s, "")..(s, HEX_END))?,
        None => t.range::<(&str, &str)>(..)?,
    };
    for row in iter {
        let (k, v) = row?;
        let (s, i) = k.value();
        let v = crate::codec::bytes_to_f32s(v.value())?;
        out.push(((s.to_string(), i.to_string()), v));
    }
    Ok(out)
}
