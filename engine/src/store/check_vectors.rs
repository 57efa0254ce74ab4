//! The checker's rules for vectors (f16 re-scoring rows, int8 blocks, pending marks) and for stored tool
//! outputs (see [`super::check`]).

use super::check::{CheckCounts, FULL_BLOCK, Findings, Rule, add, is_model_key, open_table};
use super::schema::*;
use super::{ChunkId, ChunkRecord};
use crate::error::StoreError;
use redb::{ReadTransaction, ReadableTable};
use std::collections::{BTreeMap, BTreeSet};

/// Re-scoring vectors (f16, schema 4) and their counts per space (schema 5), pending marks and
/// int8 blocks against the chunks.
pub(super) fn check(
    tx: &ReadTransaction,
    chunks: &BTreeMap<ChunkId, ChunkRecord>,
    found: &mut Findings,
    counts: &mut CheckCounts,
) -> Result<(), StoreError> {
    let mut stored: BTreeSet<(ChunkId, String)> = BTreeSet::new();
    let mut dims: BTreeMap<String, usize> = BTreeMap::new();
    if let Some(t) = open_table(tx, VECTORS)? {
        for row in t.iter()? {
            let (k, v) = row?;
            let (id, key) = k.value();
            counts.vectors += 1;
            let bytes = v.value().len();
            // The space key ends in its dimensions (`name@variant/dims`, `EmbedderId::key`).
            let declared = key
                .rsplit_once('/')
                .and_then(|(_, d)| d.parse::<usize>().ok());
            if bytes % 2 != 0 {
                add(
                    found,
                    Rule::Decode,
                    format!("f16 vector ({id}, {key}): {bytes} bytes"),
                );
            } else if declared.is_some_and(|d| d != bytes / 2) {
                add(
                    found,
                    Rule::Vector,
                    format!(
                        "f16 vector ({id}, {key}): {} dimensions, the space has {declared:?}",
                        bytes / 2
                    ),
                );
            } else if *dims.entry(key.to_string()).or_insert(bytes / 2) != bytes / 2 {
                add(
                    found,
                    Rule::Vector,
                    format!(
                        "f16 vector ({id}, {key}): {} dimensions, others of this space {}",
                        bytes / 2,
                        dims[key]
                    ),
                );
            }
            match chunks.get(&id) {
                None => add(
                    found,
                    Rule::Vector,
                    format!("f16 vector ({id}, {key}) of a missing chunk"),
                ),
                Some(rec) if !rec.embedders.iter().any(|e| e == key) => add(
                    found,
                    Rule::Vector,
                    format!("f16 vector ({id}, {key}): the chunk does not list this space"),
                ),
                Some(_) => {}
            }
            stored.insert((id, key.to_string()));
        }
    }
    check_counts(tx, &stored, found)?;
    let mut pending: BTreeSet<ChunkId> = BTreeSet::new();
    if let Some(t) = open_table(tx, PENDING)? {
        for row in t.iter()? {
            let id = row?.0.value();
            pending.insert(id);
            if !chunks.contains_key(&id) {
                add(
                    found,
                    Rule::Pending,
                    format!("pending mark of missing chunk {id}"),
                );
            }
        }
    }
    // (project, space) → live chunk ids expected in its int8 blocks.
    let mut expected: BTreeMap<(u32, String), BTreeSet<ChunkId>> = BTreeMap::new();
    for (id, rec) in chunks {
        let distinct: BTreeSet<&String> = rec.embedders.iter().collect();
        if distinct.len() != rec.embedders.len() {
            add(
                found,
                Rule::Vector,
                format!("chunk {id} lists a space twice: {:?}", rec.embedders),
            );
        }
        if rec.embedders.is_empty() {
            add(
                found,
                Rule::Vector,
                format!("chunk {id} has no vector at all"),
            );
        }
        for key in &rec.embedders {
            if !stored.contains(&(*id, key.clone())) {
                add(
                    found,
                    Rule::Vector,
                    format!("chunk {id} lists space {key} without its f16 vector"),
                );
            }
            expected
                .entry((rec.project_id, key.clone()))
                .or_default()
                .insert(*id);
        }
        if !pending.contains(id) && !rec.embedders.iter().any(|k| is_model_key(k)) {
            add(
                found,
                Rule::Pending,
                format!("chunk {id} is neither pending nor embedded by the model"),
            );
        }
    }
    check_blocks(tx, chunks, &expected, found, counts)
}

/// The kept counts (`vec_counts`) against the rows of `vectors` per space (`stored`): a count
/// that disagrees would make `status` report vectors that are not there, or hide some.
fn check_counts(
    tx: &ReadTransaction,
    stored: &BTreeSet<(ChunkId, String)>,
    found: &mut Findings,
) -> Result<(), StoreError> {
    let mut rows: BTreeMap<&str, u64> = BTreeMap::new();
    for (_, key) in stored {
        *rows.entry(key.as_str()).or_default() += 1;
    }
    let mut kept: BTreeMap<String, u64> = BTreeMap::new();
    if let Some(t) = open_table(tx, VEC_COUNTS)? {
        for row in t.iter()? {
            let (k, v) = row?;
            kept.insert(k.value().to_string(), v.value());
        }
    }
    let spaces: BTreeSet<&str> = rows
        .keys()
        .copied()
        .chain(kept.keys().map(String::as_str))
        .collect();
    for key in spaces {
        let n = rows.get(key).copied().unwrap_or(0);
        let c = kept.get(key).copied().unwrap_or(0);
        if n != c {
            add(
                found,
                Rule::Vector,
                format!("space {key}: {n} f16 vectors, the kept count says {c}"),
            );
        }
    }
    Ok(())
}

/// One int8 block: its number and the chunk ids it holds.
type Block = (u64, Vec<ChunkId>);

/// Int8 blocks: contiguous numbers, full blocks before the tail, the tail entry, and every live
/// vector exactly once (dead ids wait for a compaction and are allowed, and so does the hash
/// entry of a chunk the model embedded since: its hash vector was dropped, `store::vectors`).
fn check_blocks(
    tx: &ReadTransaction,
    chunks: &BTreeMap<ChunkId, ChunkRecord>,
    expected: &BTreeMap<(u32, String), BTreeSet<ChunkId>>,
    found: &mut Findings,
    counts: &mut CheckCounts,
) -> Result<(), StoreError> {
    let mut spaces: BTreeMap<(u32, String), Vec<Block>> = BTreeMap::new();
    if let Some(t) = open_table(tx, VEC_BLOCKS)? {
        for row in t.iter()? {
            let (k, v) = row?;
            let (p, key, no) = k.value();
            let Some(view) = super::check::parse_block(found, (p, key, no), v.value()) else {
                continue;
            };
            let ids: Vec<ChunkId> = view.ids().collect();
            counts.block_vectors += ids.len() as u64;
            spaces
                .entry((p, key.to_string()))
                .or_default()
                .push((no, ids));
        }
    }
    let mut tails: BTreeMap<(u32, String), (u64, u32)> = BTreeMap::new();
    if let Some(t) = open_table(tx, VEC_TAILS)? {
        for row in t.iter()? {
            let (k, v) = row?;
            let (p, key) = k.value();
            tails.insert((p, key.to_string()), v.value());
        }
    }
    let all: BTreeSet<&(u32, String)> = spaces.keys().chain(tails.keys()).collect();
    for sk @ (p, key) in all {
        let blocks = spaces.get(sk).map(Vec::as_slice).unwrap_or_default();
        let last = blocks.last().map(|(no, ids)| (*no, ids.len() as u32));
        match (last, tails.get(sk)) {
            (Some(l), Some(&t)) if l == t => {}
            (l, t) => add(
                found,
                Rule::Block,
                format!("space ({p}, {key}): last block (no, vectors) {l:?}, tail entry {t:?}"),
            ),
        }
        for (i, (no, ids)) in blocks.iter().enumerate() {
            if *no != i as u64 {
                add(
                    found,
                    Rule::Block,
                    format!("space ({p}, {key}): block {no} in place {i} (numbers not contiguous)"),
                );
            }
            if i + 1 < blocks.len() && ids.len() != FULL_BLOCK {
                add(
                    found,
                    Rule::Block,
                    format!(
                        "space ({p}, {key}): block {no} holds {} vectors before the tail",
                        ids.len()
                    ),
                );
            }
        }
        let mut seen: BTreeMap<ChunkId, u32> = BTreeMap::new();
        for id in blocks.iter().flat_map(|(_, ids)| ids) {
            let Some(rec) = chunks.get(id) else { continue };
            let superseded = !is_model_key(key) && rec.embedders.iter().any(|k| is_model_key(k));
            if rec.project_id != *p || (!superseded && !rec.embedders.iter().any(|e| e == key)) {
                add(
                    found,
                    Rule::Block,
                    format!("space ({p}, {key}) holds chunk {id}, which has no vector there"),
                );
            }
            *seen.entry(*id).or_default() += 1;
        }
        for (id, n) in &seen {
            if *n > 1 {
                add(
                    found,
                    Rule::Block,
                    format!("space ({p}, {key}) holds chunk {id} {n} times"),
                );
            }
        }
        for id in expected.get(sk).into_iter().flatten() {
            if !seen.contains_key(id) {
                add(
                    found,
                    Rule::Block,
                    format!("chunk {id} has a vector of space ({p}, {key}) but is in no block"),
                );
            }
        }
    }
    for sk @ (p, key) in expected.keys() {
        if !spaces.contains_key(sk) && !tails.contains_key(sk) {
            add(
                found,
                Rule::Block,
                format!("space ({p}, {key}) has vectors but no int8 block"),
            );
        }
    }
    Ok(())
}

/// Stored tool outputs: every entry has its blob, ref, order key and vector; every ref, order
/// key and vector its entry; every blob a ref; the totals are the blobs'.
pub(super) fn check_swap(
    tx: &ReadTransaction,
    found: &mut Findings,
    counts: &mut CheckCounts,
) -> Result<(), StoreError> {
    let entries = swap_entries(tx, found)?;
    counts.swap_entries = entries.len() as u64;
    let rows = SwapRows {
        blobs: swap_blobs(tx, found)?,
        refs: swap_refs(tx, &entries, found)?,
        order: swap_order(tx, &entries, found)?,
        vectors: swap_vectors(tx, &entries, found)?,
    };
    let blob_bytes = entries_have_their_rows(&entries, &rows, found);
    for id in &rows.blobs {
        if !blob_bytes.contains_key(id.as_str()) {
            add(
                found,
                Rule::Swap,
                format!("blob {id} that no entry refers to"),
            );
        }
    }
    swap_totals(tx, &rows.blobs, &blob_bytes, found)
}

/// Entries by (session, id).
type SwapEntries = BTreeMap<(String, String), super::SwapEntry>;

/// The keys of the tables that hang off the swap entries.
struct SwapRows {
    blobs: BTreeSet<String>,
    /// (id, session)
    refs: BTreeSet<(String, String)>,
    /// (tier, at, session, id)
    order: BTreeSet<(u8, i64, String, String)>,
    /// (session, id)
    vectors: BTreeSet<(String, String)>,
}

fn swap_entries(tx: &ReadTransaction, found: &mut Findings) -> Result<SwapEntries, StoreError> {
    let mut entries = SwapEntries::new();
    let Some(t) = open_table(tx, SWAP_ENTRIES)? else {
        return Ok(entries);
    };
    for row in t.iter()? {
        let (k, v) = row?;
        let (s, id) = k.value();
        match crate::codec::decode_record::<super::SwapEntry>(v.value()) {
            Ok(e) => {
                if e.session_id != s || e.id != id {
                    add(
                        found,
                        Rule::Swap,
                        format!("entry ({s}, {id}) holds ({}, {})", e.session_id, e.id),
                    );
                }
                entries.insert((s.to_string(), id.to_string()), e);
            }
            Err(e) => add(found, Rule::Decode, format!("swap entry ({s}, {id}): {e}")),
        }
    }
    Ok(entries)
}

fn swap_blobs(tx: &ReadTransaction, found: &mut Findings) -> Result<BTreeSet<String>, StoreError> {
    let mut blobs = BTreeSet::new();
    if let Some(t) = open_table(tx, SWAP_BLOBS)? {
        for row in t.iter()? {
            let (k, v) = row?;
            if v.value().is_empty() {
                add(found, Rule::Swap, format!("blob {} is empty", k.value()));
            }
            blobs.insert(k.value().to_string());
        }
    }
    Ok(blobs)
}

fn swap_refs(
    tx: &ReadTransaction,
    entries: &SwapEntries,
    found: &mut Findings,
) -> Result<BTreeSet<(String, String)>, StoreError> {
    let mut refs = BTreeSet::new();
    if let Some(t) = open_table(tx, SWAP_REFS)? {
        for row in t.iter()? {
            let (k, _) = row?;
            let (id, s) = k.value();
            refs.insert((id.to_string(), s.to_string()));
            if !entries.contains_key(&(s.to_string(), id.to_string())) {
                add(
                    found,
                    Rule::Swap,
                    format!("ref ({id}, {s}) without its entry"),
                );
            }
        }
    }
    Ok(refs)
}

fn swap_order(
    tx: &ReadTransaction,
    entries: &SwapEntries,
    found: &mut Findings,
) -> Result<BTreeSet<(u8, i64, String, String)>, StoreError> {
    let mut order = BTreeSet::new();
    if let Some(t) = open_table(tx, SWAP_ORDER)? {
        for row in t.iter()? {
            let (k, _) = row?;
            let (tier, at, s, id) = k.value();
            order.insert((tier, at, s.to_string(), id.to_string()));
            let matches = entries
                .get(&(s.to_string(), id.to_string()))
                .is_some_and(|e| e.order_key() == (tier, at));
            if !matches {
                add(
                    found,
                    Rule::Swap,
                    format!("order key ({tier}, {at}, {s}, {id}) names no such entry"),
                );
            }
        }
    }
    Ok(order)
}

fn swap_vectors(
    tx: &ReadTransaction,
    entries: &SwapEntries,
    found: &mut Findings,
) -> Result<BTreeSet<(String, String)>, StoreError> {
    let mut vectors = BTreeSet::new();
    if let Some(t) = open_table(tx, SWAP_VECTORS)? {
        for row in t.iter()? {
            let (k, _) = row?;
            let (s, id) = k.value();
            vectors.insert((s.to_string(), id.to_string()));
            if !entries.contains_key(&(s.to_string(), id.to_string())) {
                add(
                    found,
                    Rule::Swap,
                    format!("vector ({s}, {id}) without its entry"),
                );
            }
        }
    }
    Ok(vectors)
}

/// Every entry has its blob, ref, order key and vector. Returns the bytes of each blob an
/// entry refers to.
fn entries_have_their_rows<'e>(
    entries: &'e SwapEntries,
    rows: &SwapRows,
    found: &mut Findings,
) -> BTreeMap<&'e str, u64> {
    let mut blob_bytes = BTreeMap::new();
    for ((s, id), e) in entries {
        let (tier, at) = e.order_key();
        let missing = [
            (!rows.blobs.contains(id), "blob"),
            (!rows.refs.contains(&(id.clone(), s.clone())), "ref"),
            (
                !rows.order.contains(&(tier, at, s.clone(), id.clone())),
                "order key",
            ),
            (!rows.vectors.contains(&(s.clone(), id.clone())), "vector"),
        ];
        for (_, what) in missing.iter().filter(|(m, _)| *m) {
            add(
                found,
                Rule::Swap,
                format!("entry ({s}, {id}) without its {what}"),
            );
        }
        blob_bytes.insert(id.as_str(), e.bytes);
    }
    blob_bytes
}

/// The stored totals are the blobs' count and bytes.
fn swap_totals(
    tx: &ReadTransaction,
    blobs: &BTreeSet<String>,
    blob_bytes: &BTreeMap<&str, u64>,
    found: &mut Findings,
) -> Result<(), StoreError> {
    let Some(t) = open_table(tx, SWAP_STATS)? else {
        return Ok(());
    };
    let get = |k: &str| -> Result<u64, StoreError> { Ok(t.get(k)?.map_or(0, |v| v.value())) };
    let (bytes, n) = (get("bytes")?, get("blobs")?);
    let want_bytes: u64 = blobs
        .iter()
        .filter_map(|id| blob_bytes.get(id.as_str()))
        .sum();
    if n != blobs.len() as u64 || bytes != want_bytes {
        add(
            found,
            Rule::Swap,
            format!(
                "totals say {n} blobs / {bytes} bytes, the blobs are {} / {want_bytes}",
                blobs.len()
            ),
        );
    }
    Ok(())
}
