//! Stored tool outputs for `memctl export` / `import` ([`crate::export`]): every entry with
//! its exact content, streamed; an imported entry stored with its own times and access counts.

use super::db::{self, add_stats, write_entry};
use super::{SwapEntry, VECTOR_HEAD_CHARS};
use crate::embed::HashEmbedder;
use crate::error::StoreError;
use crate::store::{SWAP_BLOBS, SWAP_ENTRIES, SWAP_REFS, SWAP_VECTORS, StoreReader, StoreWriter};
use redb::ReadableTable;

/// The hash-embedder vector of an entry (its tool, input, digest and the head of its content):
/// derived data, so an import computes it again instead of carrying it.
pub(crate) fn entry_vector(
    tool: &str,
    input: &str,
    summary: &str,
    patterns: &[String],
    content: &str,
) -> Vec<f32> {
    let head: String = content.chars().take(VECTOR_HEAD_CHARS).collect();
    HashEmbedder::new().embed_one(&format!(
        "{tool} {input}\n{summary}\n{}\n{head}",
        patterns.join(" "),
    ))
}

/// Every stored entry with its content, in (session, id) order, streamed. An entry whose blob
/// is missing is an error (the store is inconsistent; an export must not drop it silently).
pub(crate) fn for_each_output<E: From<StoreError>>(
    r: &StoreReader,
    mut f: impl FnMut(SwapEntry, String) -> Result<(), E>,
) -> Result<(), E> {
    let (Some(entries), Some(blobs)) = (
        db::open_ro(r.raw_tx(), SWAP_ENTRIES)?,
        db::open_ro(r.raw_tx(), SWAP_BLOBS)?,
    ) else {
        return Ok(());
    };
    for row in entries.iter().map_err(StoreError::from)? {
        let (_, v) = row.map_err(StoreError::from)?;
        let e: SwapEntry = crate::codec::decode_record(v.value()).map_err(StoreError::from)?;
        let Some(content) = db::content(&blobs, &e.id)? else {
            return Err(StoreError::Decode(format!(
                "swap entry {} of session {} has no stored content",
                e.id, e.session_id
            ))
            .into());
        };
        f(e, content)?;
    }
    Ok(())
}

/// Store an imported output: `entry.id` must be the sha256 of `content` (the caller checks).
/// Returns false when the session already holds it (nothing changes). No limits or expiry
/// pass run here: the next stored output of a hook applies them as usual, on sizes taken
/// from the bytes stored here (the totals must add up to what the blobs hold).
pub(crate) fn import_output(
    w: &StoreWriter,
    entry: &SwapEntry,
    content: &str,
) -> Result<bool, StoreError> {
    let blob = db::encode_blob(content.as_bytes());
    let entry = &SwapEntry {
        bytes: content.len() as u64,
        stored_bytes: blob.len() as u64,
        ..entry.clone()
    };
    let tx = w.raw_tx();
    let (s, id) = (entry.session_id.as_str(), entry.id.as_str());
    if tx.open_table(SWAP_ENTRIES)?.get((s, id))?.is_some() {
        return Ok(false);
    }
    let new_blob = {
        let mut b = tx.open_table(SWAP_BLOBS)?;
        let exists = b.get(id)?.is_some();
        if !exists {
            b.insert(id, blob.as_slice())?;
        }
        !exists
    };
    if new_blob {
        add_stats(tx, entry.bytes as i64, 1)?;
    }
    tx.open_table(SWAP_REFS)?.insert((id, s), ())?;
    write_entry(tx, entry, None)?;
    let v = entry_vector(
        &entry.tool,
        &entry.input_summary,
        &entry.summary,
        &entry.patterns,
        content,
    );
    tx.open_table(SWAP_VECTORS)?
        .insert((s, id), crate::codec::f32s_to_bytes(&v).as_slice())?;
    Ok(true)
}
