//! BM25 postings: per (project, term) packed lists of (chunk, term frequency, doc length), and
//! the per-project document statistics. Buffered by `put_chunk` (`super::chunks`), written at
//! commit ([`StoreWriter::flush_postings`]), read here.
//!
//! Why packed lists (schema 3): one multimap row per (term, chunk) made a first archive of
//! 5,000 turns make 110k page writes landing on 16k distinct pages (each rewritten ~7×) and
//! cost 2.6 KB per chunk, more than the chunk's text. Now a transaction's postings
//! are gathered per term and appended to the term's last *segment* once, at commit: a value of
//! delta-encoded LEB128 varints `(id - previous id, tf, doc_len)`. Segments are capped at
//! [`SEGMENT_BYTES`] so that an incremental hook appending one chunk rewrites a small value per
//! term, not a list as long as the project's history.
//!
//! Each segment starts with a header (schema 6): its entry count, max term frequency and min
//! document length. They bound the BM25 score of every entry, so search reads only the headers
//! of a common word's segments and decodes the few that can reach the top k
//! (`index::bm25_topk`); writes rewrite the segment they append to anyway, so the header costs
//! nothing extra, and the count makes df a header read.
//!
//! Layout invariant: a segment's key holds its *base* id, every id in the segment is ≥ base and
//! < the next segment's base; ids within a segment ascend. Chunk ids only grow, so writes are
//! appends to the last segment; an id below the last one (never in practice) rewrites the
//! term's whole list, which keeps the invariant without a special case.
//!
//! Tables: `posting_lists`, `lex_stats`.

use super::schema::*;
use super::{ChunkId, StoreError, StoreReader, StoreWriter};
use crate::codec::CodecError;
use redb::ReadableTable;

/// Soft cap of a segment's value: below a redb page (4 KiB), so an append rewrites at most one
/// leaf's worth of bytes per term.
pub(super) const SEGMENT_BYTES: usize = 2048;

/// Format byte of a segment value. 1 (schema 3–5): the entries only. 2 (schema 6): a header
/// of varints `(entries, max tf, min doc length)` before them, so a reader bounds the BM25
/// score of every entry of the segment without decoding it ([`SegmentHeader`]).
const SEGMENT_FORMAT: u8 = 2;
const SEGMENT_FORMAT_V1: u8 = 1;

/// What a segment's header says about its entries (exact: [`decode_segment`] refuses a
/// header that does not match them, and `memctl check` decodes every segment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SegmentHeader {
    /// Number of entries.
    pub count: u32,
    /// Largest term frequency among them.
    pub max_tf: u32,
    /// Smallest document length among them.
    pub min_len: u32,
}

impl SegmentHeader {
    fn of(entries: &[Entry]) -> Self {
        Self {
            count: entries.len() as u32,
            max_tf: entries.iter().map(|e| e.1).max().unwrap_or(0),
            min_len: entries.iter().map(|e| e.2).min().unwrap_or(0),
        }
    }
}

/// One posting as stored: (chunk id, term frequency, doc length).
pub(crate) type Entry = (ChunkId, u32, u32);

/// Postings buffered in a write transaction: (project, term) → entries in id order (a hash
/// map with a fast in-process hasher: the buffer is looked up once per term of every chunk;
/// sorted once at commit, so nothing persisted depends on the hasher).
pub(super) type Pending = foldhash::HashMap<(u32, String), Vec<Entry>>;

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A LEB128 varint at `*pos`. Gaps, term frequencies and lengths almost always fit in one or
/// two bytes: those are read inline, longer ones out of line.
#[inline(always)]
fn get_varint(b: &[u8], pos: &mut usize) -> Result<u64, CodecError> {
    if let Some(&b0) = b.get(*pos) {
        if b0 < 0x80 {
            *pos += 1;
            return Ok(u64::from(b0));
        }
        if let Some(&b1) = b.get(*pos + 1)
            && b1 < 0x80
        {
            *pos += 2;
            return Ok(u64::from(b0 & 0x7f) | (u64::from(b1) << 7));
        }
    }
    get_varint_long(b, pos)
}

#[cold]
#[inline(never)]
fn get_varint_long(b: &[u8], pos: &mut usize) -> Result<u64, CodecError> {
    let mut v: u64 = 0;
    let mut shift = 0;
    loop {
        let Some(&byte) = b.get(*pos) else {
            return Err(CodecError::Decode("posting list: truncated varint".into()));
        };
        *pos += 1;
        if shift >= 64 {
            return Err(CodecError::Decode("posting list: varint too long".into()));
        }
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
        shift += 7;
    }
}

/// Encode entries (ascending ids, all ≥ `base`) as a segment value.
pub(crate) fn encode_segment(base: ChunkId, entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + entries.len() * 4);
    out.push(SEGMENT_FORMAT);
    let h = SegmentHeader::of(entries);
    put_varint(&mut out, u64::from(h.count));
    put_varint(&mut out, u64::from(h.max_tf));
    put_varint(&mut out, u64::from(h.min_len));
    let mut prev = base;
    for &(id, tf, len) in entries {
        put_varint(&mut out, id - prev);
        put_varint(&mut out, u64::from(tf));
        put_varint(&mut out, u64::from(len));
        prev = id;
    }
    out
}

#[inline(always)]
fn varint_u32(b: &[u8], pos: &mut usize, what: &str) -> Result<u32, CodecError> {
    u32::try_from(get_varint(b, pos)?)
        .map_err(|_| CodecError::Decode(format!("posting list: {what} out of range")))
}

/// The header of a segment value and where its entries start. A format-1 segment (written
/// before schema 6, read only by the migration) has none: its entries are counted and its
/// bounds are the loosest there are.
pub(crate) fn segment_header(b: &[u8]) -> Result<(SegmentHeader, usize), CodecError> {
    match b.first() {
        Some(&SEGMENT_FORMAT) => {
            let mut pos = 1;
            let count = varint_u32(b, &mut pos, "entry count")?;
            let max_tf = varint_u32(b, &mut pos, "max tf")?;
            let min_len = varint_u32(b, &mut pos, "min length")?;
            let h = SegmentHeader {
                count,
                max_tf,
                min_len,
            };
            Ok((h, pos))
        }
        Some(&SEGMENT_FORMAT_V1) => {
            let count = b[1..].iter().filter(|&&x| x & 0x80 == 0).count() / 3;
            let h = SegmentHeader {
                count: count as u32,
                max_tf: u32::MAX,
                min_len: 0,
            };
            Ok((h, 1))
        }
        Some(&v) => Err(CodecError::Decode(format!(
            "posting list: unknown format {v}"
        ))),
        None => Err(CodecError::Decode("posting list: empty value".into())),
    }
}

/// Decode a segment value of base `base`; ids must ascend (equal ids are refused too), and
/// a header must match the entries.
pub(crate) fn decode_segment(base: ChunkId, b: &[u8]) -> Result<Vec<Entry>, CodecError> {
    let mut out = Vec::new();
    decode_segment_into(base, b, &mut out)?;
    Ok(out)
}

/// [`decode_segment`] appending to `out`.
pub(crate) fn decode_segment_into(
    base: ChunkId,
    b: &[u8],
    out: &mut Vec<Entry>,
) -> Result<(), CodecError> {
    decode_with(base, b, |id, tf, len| out.push((id, tf, len)))
}

/// Decode a segment in one pass, handing each entry `(id, tf, doc length)` to `push`; checks
/// as [`decode_segment`] does (on error, `push` may have seen some entries).
#[inline]
fn decode_with(
    base: ChunkId,
    b: &[u8],
    mut push: impl FnMut(ChunkId, u32, u32),
) -> Result<(), CodecError> {
    let (header, mut pos) = segment_header(b)?;
    let mut seen = SegmentHeader {
        count: 0,
        max_tf: 0,
        min_len: u32::MAX,
    };
    let mut prev = base;
    while pos < b.len() {
        let d = get_varint(b, &mut pos)?;
        if d == 0 && seen.count > 0 {
            return Err(CodecError::Decode("posting list: ids do not ascend".into()));
        }
        let id = prev
            .checked_add(d)
            .ok_or_else(|| CodecError::Decode("posting list: id overflow".into()))?;
        let tf = varint_u32(b, &mut pos, "tf")?;
        let len = varint_u32(b, &mut pos, "length")?;
        push(id, tf, len);
        seen.count += 1;
        seen.max_tf = seen.max_tf.max(tf);
        seen.min_len = seen.min_len.min(len);
        prev = id;
    }
    if seen.count == 0 {
        seen.min_len = 0;
    }
    if b[0] == SEGMENT_FORMAT && seen != header {
        return Err(CodecError::Decode(format!(
            "posting list: header {header:?} does not match its entries {seen:?}"
        )));
    }
    Ok(())
}

/// A format-1 segment (schema 3–5) in the current format: the same entries behind a header
/// (the migration to schema 6). `None` when it is current already.
pub(crate) fn upgrade_segment(b: &[u8]) -> Result<Option<Vec<u8>>, CodecError> {
    if b.first() != Some(&SEGMENT_FORMAT_V1) {
        segment_header(b)?;
        return Ok(None);
    }
    // The base only offsets the ids; tf and length (all the header needs) do not depend on it.
    let entries = decode_segment(0, b)?;
    let h = SegmentHeader::of(&entries);
    let mut out = Vec::with_capacity(b.len() + 16);
    out.push(SEGMENT_FORMAT);
    put_varint(&mut out, u64::from(h.count));
    put_varint(&mut out, u64::from(h.max_tf));
    put_varint(&mut out, u64::from(h.min_len));
    out.extend_from_slice(&b[1..]);
    Ok(Some(out))
}

/// Number of entries of a segment without decoding it (its header).
fn segment_len(b: &[u8]) -> Result<u64, StoreError> {
    Ok(u64::from(segment_header(b).map_err(corrupt)?.0.count))
}

fn corrupt(source: CodecError) -> StoreError {
    StoreError::Corrupt {
        what: "posting list",
        source,
    }
}

/// Split `entries` (ascending) into segments of about [`SEGMENT_BYTES`], each with its base:
/// `first_base` for the first (an existing segment keeps its key), the first id for the others.
pub(super) fn split(entries: &[Entry], first_base: Option<ChunkId>) -> Vec<(ChunkId, Vec<u8>)> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < entries.len() {
        let base = match first_base {
            Some(b) if start == 0 => b,
            _ => entries[start].0,
        };
        let mut end = start;
        // Format byte and header (at most three 5-byte varints).
        let mut size = 16;
        let mut prev = base;
        while end < entries.len() && (end == start || size < SEGMENT_BYTES) {
            let (id, tf, len) = entries[end];
            size += varint_len(id - prev) + varint_len(u64::from(tf)) + varint_len(u64::from(len));
            prev = id;
            end += 1;
        }
        out.push((base, encode_segment(base, &entries[start..end])));
        start = end;
    }
    out
}

fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Add chunk `id`'s postings to `pending` (see [`StoreWriter::buffer_postings`]).
pub(super) fn buffer_into(
    pending: &mut Pending,
    project_id: u32,
    id: ChunkId,
    tf: Vec<(String, u32)>,
    doc_len: u32,
) {
    for (term, n) in tf {
        pending
            .entry((project_id, term))
            .or_default()
            .push((id, n, doc_len));
    }
}

impl StoreWriter {
    /// Buffer the postings of a new chunk (written by [`Self::flush_postings`] at commit).
    pub(super) fn buffer_postings(
        &mut self,
        project_id: u32,
        id: ChunkId,
        tf: Vec<(String, u32)>,
        doc_len: u32,
    ) {
        buffer_into(&mut self.pending_postings, project_id, id, tf, doc_len);
    }

    /// Remove chunk `id`'s postings for `terms`, buffered or stored.
    pub(super) fn remove_postings<'t>(
        &mut self,
        project_id: u32,
        id: ChunkId,
        terms: impl IntoIterator<Item = &'t str>,
    ) -> Result<(), StoreError> {
        let mut t = self.tx.open_table(POSTING_LISTS)?;
        for term in terms {
            let key = (project_id, term.to_string());
            if let Some(v) = self.pending_postings.get_mut(&key) {
                v.retain(|e| e.0 != id);
                if v.is_empty() {
                    self.pending_postings.remove(&key);
                }
            }
            let found = t
                .range((project_id, term, 0)..=(project_id, term, id))?
                .next_back()
                .transpose()?
                .map(|(k, v)| (k.value().2, v.value().to_vec()));
            let Some((base, bytes)) = found else { continue };
            let mut entries = decode_segment(base, &bytes).map_err(corrupt)?;
            let before = entries.len();
            entries.retain(|e| e.0 != id);
            if entries.len() == before {
                continue;
            }
            if entries.is_empty() {
                t.remove((project_id, term, base))?;
            } else {
                t.insert(
                    (project_id, term, base),
                    encode_segment(base, &entries).as_slice(),
                )?;
            }
        }
        Ok(())
    }

    /// Write the buffered postings: per term, one append to its last segment (see the module
    /// doc). Called by `Store::write` before commit.
    pub(super) fn flush_postings(&mut self) -> Result<(), StoreError> {
        if self.pending_postings.is_empty() {
            return Ok(());
        }
        let mut pending: Vec<_> = std::mem::take(&mut self.pending_postings)
            .into_iter()
            .collect();
        // Key order: redb's pages are then visited once each, in order.
        pending.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut t = self.tx.open_table(POSTING_LISTS)?;
        for ((p, term), mut add) in pending {
            add.sort_unstable_by_key(|e| e.0);
            let term = term.as_str();
            let last = t
                .range((p, term, 0)..=(p, term, u64::MAX))?
                .next_back()
                .transpose()?
                .map(|(k, v)| (k.value().2, v.value().to_vec()));
            let (base, mut entries) = match last {
                Some((base, bytes)) => (base, decode_segment(base, &bytes).map_err(corrupt)?),
                None => (add[0].0, Vec::new()),
            };
            if entries.last().is_some_and(|l| l.0 >= add[0].0) || add[0].0 < base {
                // Out of order (never in practice): rewrite the whole list.
                let mut all = Vec::new();
                let mut keys = Vec::new();
                for row in t.range((p, term, 0)..=(p, term, u64::MAX))? {
                    let (k, v) = row?;
                    keys.push(k.value().2);
                    all.extend(decode_segment(k.value().2, v.value()).map_err(corrupt)?);
                }
                for k in keys {
                    t.remove((p, term, k))?;
                }
                all.extend(add);
                all.sort_unstable_by_key(|e| e.0);
                all.dedup_by_key(|e| e.0);
                for (b, v) in split(&all, None) {
                    t.insert((p, term, b), v.as_slice())?;
                }
                continue;
            }
            entries.extend(add);
            // The last segment keeps its base; what does not fit starts new segments.
            for (b, v) in split(&entries, Some(base)) {
                t.insert((p, term, b), v.as_slice())?;
            }
        }
        Ok(())
    }
}

/// Every posting of one (project, term), in id order.
pub(super) fn read_list(
    t: &impl ReadableTable<(u32, &'static str, u64), &'static [u8]>,
    project_id: u32,
    term: &str,
    out: &mut Vec<Entry>,
) -> Result<(), StoreError> {
    for row in t.range((project_id, term, 0)..=(project_id, term, u64::MAX))? {
        let (k, v) = row?;
        out.extend(decode_segment(k.value().2, v.value()).map_err(corrupt)?);
    }
    Ok(())
}

/// BM25 postings of some projects, read from the store: the [`Postings`] source that ships
/// (search, restore and recall all score through [`crate::index::lexical::bm25_search`] over it).
///
/// [`Postings`]: crate::index::Postings
#[derive(Debug)]
pub(crate) struct StoreLexical<'a> {
    reader: &'a StoreReader,
    project_ids: Vec<u32>,
    docs: u64,
    total: u64,
}

impl StoreLexical<'_> {
    /// Number of documents.
    pub fn docs(&self) -> u64 {
        self.docs
    }

    /// Document frequency of a term over the selected projects (counted, not decoded).
    pub fn df(&self, term: &str) -> Result<u64, StoreError> {
        let t = self.reader.tx.open_table(POSTING_LISTS)?;
        let mut n = 0;
        for &p in &self.project_ids {
            for row in t.range((p, term, 0)..=(p, term, u64::MAX))? {
                n += segment_len(row?.1.value())?;
            }
        }
        Ok(n)
    }
}

impl crate::index::Postings for StoreLexical<'_> {
    type Error = StoreError;
    /// The segment's value, as redb holds it (no copy).
    type Block = redb::AccessGuard<'static, &'static [u8]>;

    fn doc_count(&self) -> Result<u64, StoreError> {
        Ok(self.docs)
    }

    fn total_len(&self) -> Result<u64, StoreError> {
        Ok(self.total)
    }

    fn postings(&self, term: &str) -> Result<Vec<crate::index::Posting>, StoreError> {
        let t = self.reader.tx.open_table(POSTING_LISTS)?;
        let mut raw = Vec::new();
        for &p in &self.project_ids {
            read_list(&t, p, term, &mut raw)?;
        }
        Ok(raw
            .into_iter()
            .map(|(doc, tf, doc_len)| crate::index::Posting { doc, tf, doc_len })
            .collect())
    }

    /// One list per project (chunk ids are global: projects' lists interleave), one block per
    /// segment; only the headers are read here, a segment is decoded when the scorer needs it.
    fn blocks(
        &self,
        term: &str,
    ) -> Result<crate::index::lexical::BlockLists<Self::Block>, StoreError> {
        let t = self.reader.tx.open_table(POSTING_LISTS)?;
        let mut lists = Vec::with_capacity(self.project_ids.len());
        for &p in &self.project_ids {
            let mut list = Vec::new();
            for row in t.range((p, term, 0)..=(p, term, u64::MAX))? {
                let (k, v) = row?;
                let (h, _) = segment_header(v.value()).map_err(corrupt)?;
                list.push(crate::index::PostingBlock {
                    base: k.value().2,
                    count: h.count,
                    max_tf: h.max_tf,
                    min_len: h.min_len,
                    data: v,
                });
            }
            if !list.is_empty() {
                lists.push(list);
            }
        }
        Ok(lists)
    }

    fn decode_block(
        &self,
        block: &crate::index::PostingBlock<Self::Block>,
        out: &mut Vec<crate::index::Posting>,
    ) -> Result<(), StoreError> {
        out.reserve(block.count as usize);
        decode_with(block.base, block.data.value(), |doc, tf, doc_len| {
            out.push(crate::index::Posting { doc, tf, doc_len });
        })
        .map_err(corrupt)
    }
}

impl StoreReader {
    /// The id the next chunk will get: every chunk stored so far has a smaller one, and later
    /// chunks larger ones (a lexical search bounded to the newest chunks starts below it).
    pub fn next_chunk_id(&self) -> Result<ChunkId, StoreError> {
        super::bulk::read_next_chunk_id(&self.tx.open_table(super::schema::META)?)
    }

    /// A BM25 postings view over the given projects.
    pub fn lexical(&self, project_ids: &[u32]) -> Result<StoreLexical<'_>, StoreError> {
        // A project named twice would count its postings twice.
        let mut ids = project_ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        let stats = self.tx.open_table(LEX_STATS)?;
        let mut docs = 0;
        let mut total = 0;
        for &p in &ids {
            if let Some(v) = stats.get(p)? {
                let (d, t) = v.value();
                docs += d;
                total += t;
            }
        }
        Ok(StoreLexical {
            reader: self,
            project_ids: ids,
            docs,
            total,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_round_trip_and_split_below_the_cap() {
        let entries: Vec<Entry> = (0..3000u64)
            .map(|i| (10 + i * 7, (i % 5) as u32 + 1, 100 + (i % 300) as u32))
            .collect();
        let segs = split(&entries, None);
        assert!(segs.len() > 1, "3000 postings fit one segment");
        let mut back = Vec::new();
        for (i, (base, v)) in segs.iter().enumerate() {
            assert!(
                v.len() <= SEGMENT_BYTES + 16,
                "segment {i}: {} bytes",
                v.len()
            );
            assert_eq!(
                segment_len(v).unwrap() as usize,
                decode_segment(*base, v).unwrap().len()
            );
            back.extend(decode_segment(*base, v).unwrap());
        }
        assert_eq!(back, entries);
    }

    #[test]
    fn damaged_segments_are_errors() {
        let v = encode_segment(5, &[(5, 1, 2), (9, 1, 2)]);
        assert_eq!(decode_segment(5, &v).unwrap(), vec![(5, 1, 2), (9, 1, 2)]);
        assert!(decode_segment(5, &v[..v.len() - 1]).is_err(), "truncated");
        assert!(decode_segment(5, &[]).is_err());
        assert!(decode_segment(5, &[9, 0, 1, 1]).is_err());
        assert!(decode_segment(5, &[1, 0x80]).is_err());
        assert!(
            decode_segment(5, &[1, 0, 1, 1, 0, 1, 1]).is_err(),
            "repeated id"
        );
    }
}
