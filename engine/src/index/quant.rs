//! Int8 quantization and *encoded blocks*: the scan layer on its own.
//!
//! Why blocks: a redb row read costs ~7 µs, so one row per vector would make a
//! 50k-vector scan cost 350 ms. Packing a few hundred or thousand quantized vectors into one value
//! makes the scan a handful of reads plus an int8 dot-product loop over contiguous bytes
//! (~4 ms at 50k), with no index to build or reload — what short-lived hook processes need.
//!
//! Quantization is symmetric per vector: `q[i] = round(v[i] * 127 / max|v|)`, `scale = max|v| /
//! 127`, so `dot(a, b) ≈ dot_i8(qa, qb) * scale_a * scale_b`. On 384-d text embeddings the int8
//! top-10 agrees with f32 at recall ≈ 0.96–0.99; re-scoring the top ~50 in f32 ([`rescore`])
//! closes the gap.
//!
//! # Block layout (version 1, all integers little-endian)
//!
//! | offset            | size          | field                                                |
//! |-------------------|---------------|------------------------------------------------------|
//! | 0                 | 4             | magic `b"MQB1"`                                      |
//! | 4                 | 4             | `dims: u32`                                          |
//! | 8                 | 4             | `count: u32`                                         |
//! | 12                | 8             | `embedder: u64` ([`embedder_fingerprint`])           |
//! | 20                | 8 × count     | ids, `u64` each                                      |
//! | 20 + 8c           | 4 × count     | scales, `f32` each                                   |
//! | 20 + 12c          | dims × count  | int8 components, vector after vector                 |
//!
//! Total length is exactly `20 + count × (12 + dims)`; any other length is
//! [`IndexError::Corrupt`]. The fingerprint makes a block from another embedding space an
//! [`IndexError::EmbedderMismatch`] rather than garbage scores.

use super::{Hit, TopK, check_dims_finite};
use crate::embed::{EmbedderId, dot, l2_normalize};
use crate::error::IndexError;

/// Block magic (format version 1).
pub const BLOCK_MAGIC: [u8; 4] = *b"MQB1";
/// Header length in bytes.
pub const BLOCK_HEADER_LEN: usize = 20;

/// Quantize `v` into `out` (same length); returns the scale (`max|v| / 127`, 0 for a zero vector).
pub fn quantize_into(v: &[f32], out: &mut [i8]) -> f32 {
    let max = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if max == 0.0 || !max.is_finite() {
        out.fill(0);
        return 0.0;
    }
    let inv = 127.0 / max;
    for (o, x) in out.iter_mut().zip(v) {
        // Clamp guards the rounding of the max element; the cast is exact after it.
        *o = (x * inv).round().clamp(-127.0, 127.0) as i8;
    }
    max / 127.0
}

/// Quantize `v`; returns `(components, scale)`.
pub fn quantize(v: &[f32]) -> (Vec<i8>, f32) {
    let mut out = vec![0i8; v.len()];
    let s = quantize_into(v, &mut out);
    (out, s)
}

/// A byte that reads as a signed int8 component: lets one kernel serve both an index's
/// `Vec<i8>` and a block's raw `&[u8]` (no unsafe cast needed), monomorphized for each.
pub trait I8Lane: Copy {
    /// The component value.
    fn lane(self) -> i32;
}
impl I8Lane for i8 {
    #[inline(always)]
    fn lane(self) -> i32 {
        i32::from(self)
    }
}
impl I8Lane for u8 {
    #[inline(always)]
    fn lane(self) -> i32 {
        i32::from(self as i8)
    }
}

/// Int8 dot product with i32 accumulation.
///
/// Written for auto-vectorization: fixed 32-wide chunks with 32 independent i32 accumulators
/// (no loop-carried dependency across lanes), widening i8→i32 per lane; the unrolled chunk body
/// is SLP-vectorized into packed multiply-adds. Measured (384-d, x86-64 baseline target): 19 ns
/// per vector vs 41 ns for the plain iterator `zip().map().sum()`.
///
/// Compiled for each of the listed CPU feature sets and picked at run time (`multiversion`):
/// the baseline x86-64 build has only SSE2. With AVX-512 a graph search at 1e5 points took
/// 1.19 ms instead of 1.89 ms at a beam of 1,000 (`graph_recall`, docs/perf/scale.md).
///
/// `#[inline(never)]`: SLP vectorization is fragile; inlined into a scan loop with a heap push
/// it silently fell back to scalar code (6× slower, seen with perf). Kept out of line, the
/// kernel compiles the same everywhere, for ~1 ns of call overhead. Overflow is impossible below
/// 2¹⁷ dims (127² × 2¹⁷ < 2³¹).
#[inline(never)]
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512vl",
    "x86_64+avx2+fma",
    "aarch64+neon"
))]
pub fn dot_i8<A: I8Lane, B: I8Lane>(a: &[A], b: &[B]) -> i32 {
    const W: usize = 32;
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0i32; W];
    let mut ca = a.chunks_exact(W);
    let mut cb = b.chunks_exact(W);
    for (x, y) in (&mut ca).zip(&mut cb) {
        for i in 0..W {
            acc[i] += x[i].lane() * y[i].lane();
        }
    }
    let mut tail = 0i32;
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        tail += x.lane() * y.lane();
    }
    acc.iter().sum::<i32>() + tail
}

/// 64-bit fingerprint of an embedding space (FNV-1a of [`EmbedderId::key`]), stored in block
/// headers.
pub fn embedder_fingerprint(embedder: &EmbedderId) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for b in embedder.key().bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Encode vectors (normalized on the way in) into one block; see the module doc for the layout.
///
/// Errors: `ids` and `vectors` of different lengths ([`IndexError::Corrupt`] — a caller bug that
/// must not write a half block), a vector of the wrong dimension, a non-finite value.
pub fn encode_block(
    embedder: &EmbedderId,
    ids: &[u64],
    vectors: &[&[f32]],
) -> Result<Vec<u8>, IndexError> {
    if ids.len() != vectors.len() {
        return Err(IndexError::Corrupt(format!(
            "encode_block: {} ids for {} vectors",
            ids.len(),
            vectors.len()
        )));
    }
    let dims = embedder.dims;
    if dims == 0 && !ids.is_empty() {
        return Err(IndexError::DimensionMismatch {
            expected: 0,
            got: vectors.first().map_or(0, |v| v.len()),
        });
    }
    let mut data = vec![0i8; ids.len() * dims];
    let mut norm = vec![0.0f32; dims];
    let mut scales = Vec::with_capacity(ids.len());
    for (v, q) in vectors.iter().zip(data.chunks_exact_mut(dims.max(1))) {
        check_dims_finite(dims, v)?;
        norm.copy_from_slice(v);
        l2_normalize(&mut norm);
        scales.push(quantize_into(&norm, q));
    }
    let bytes: Vec<u8> = data.iter().map(|&x| x as u8).collect();
    let entries: Vec<(u64, f32, &[u8])> = ids
        .iter()
        .zip(&scales)
        .zip(bytes.chunks_exact(dims.max(1)))
        .map(|((&id, &s), d)| (id, s, d))
        .collect();
    write_block(dims, embedder_fingerprint(embedder), &entries)
}

/// A validated, zero-copy view of one encoded block.
#[derive(Debug, Clone, Copy)]
pub struct BlockView<'a> {
    dims: usize,
    count: usize,
    fingerprint: u64,
    ids: &'a [u8],
    scales: &'a [u8],
    data: &'a [u8],
}

impl<'a> BlockView<'a> {
    /// Parse and validate a block. Any short, long or mis-tagged input is
    /// [`IndexError::Corrupt`]; nothing here can panic on arbitrary bytes.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, IndexError> {
        let corrupt = |what: String| IndexError::Corrupt(format!("vector block: {what}"));
        if bytes.len() < BLOCK_HEADER_LEN {
            return Err(corrupt(format!(
                "{} bytes, shorter than the header",
                bytes.len()
            )));
        }
        let (header, body) = bytes.split_at(BLOCK_HEADER_LEN);
        if header[0..4] != BLOCK_MAGIC {
            return Err(corrupt(format!("bad magic {:02x?}", &header[0..4])));
        }
        let dims = u32_at(header, 4) as usize;
        let count = u32_at(header, 8) as usize;
        let fingerprint = u64_at(header, 12);
        if dims == 0 && count > 0 {
            return Err(corrupt("zero dims".into()));
        }
        let expected = (12usize + dims)
            .checked_mul(count)
            .ok_or_else(|| corrupt("size overflow".into()))?;
        if body.len() != expected {
            return Err(corrupt(format!(
                "body is {} bytes, header says {count} × (12 + {dims}) = {expected}",
                body.len()
            )));
        }
        let (ids, rest) = body.split_at(8 * count);
        let (scales, data) = rest.split_at(4 * count);
        Ok(Self {
            dims,
            count,
            fingerprint,
            ids,
            scales,
            data,
        })
    }

    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Error unless the block belongs to `embedder`'s space.
    pub fn ensure_embedder(&self, embedder: &EmbedderId) -> Result<(), IndexError> {
        let want = embedder_fingerprint(embedder);
        if self.fingerprint != want || self.dims != embedder.dims {
            return Err(IndexError::EmbedderMismatch {
                expected: embedder.key(),
                got: format!("block fingerprint {:016x}/{}", self.fingerprint, self.dims),
            });
        }
        Ok(())
    }

    /// All ids in block order.
    pub fn ids(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        self.ids.chunks_exact(8).map(|c| u64_at(c, 0))
    }

    /// `(id, scale, int8 components as raw bytes)` for every vector.
    pub fn entries(&self) -> impl Iterator<Item = (u64, f32, &'a [u8])> + 'a {
        let ids = self.ids.chunks_exact(8).map(|c| u64_at(c, 0));
        let scales = self.scales.chunks_exact(4).map(|c| f32_at(c, 0));
        ids.zip(scales)
            .zip(self.data.chunks_exact(self.dims.max(1)))
            .map(|((i, s), d)| (i, s, d))
    }

    /// A new block holding only the vectors whose id passes `keep` (compaction after deletes),
    /// without re-quantizing.
    pub fn retain(&self, keep: impl Fn(u64) -> bool) -> Vec<u8> {
        let kept: Vec<(u64, f32, &[u8])> = self.entries().filter(|(id, _, _)| keep(*id)).collect();
        // Cannot fail: fewer entries than a valid block already had.
        write_block(self.dims, self.fingerprint, &kept).unwrap_or_default()
    }
}

/// Append the vectors of block `b` after those of block `a` (same embedder and dims), without
/// re-quantizing: the store appends one vector at a time to its tail block.
pub fn concat_blocks(a: &[u8], b: &[u8]) -> Result<Vec<u8>, IndexError> {
    let va = BlockView::parse(a)?;
    let vb = BlockView::parse(b)?;
    if va.fingerprint != vb.fingerprint || va.dims != vb.dims {
        return Err(IndexError::Corrupt(
            "concat_blocks: blocks of different embedders or dims".into(),
        ));
    }
    let entries: Vec<(u64, f32, &[u8])> = va.entries().chain(vb.entries()).collect();
    write_block(va.dims, va.fingerprint, &entries)
}

/// Serialize already-quantized entries (see the module doc for the layout).
fn write_block(
    dims: usize,
    fingerprint: u64,
    entries: &[(u64, f32, &[u8])],
) -> Result<Vec<u8>, IndexError> {
    let count = u32::try_from(entries.len())
        .map_err(|_| IndexError::Corrupt("vector block: more than u32::MAX vectors".into()))?;
    let dims32 = u32::try_from(dims)
        .map_err(|_| IndexError::Corrupt("vector block: dims above u32::MAX".into()))?;
    let mut out = Vec::with_capacity(BLOCK_HEADER_LEN + entries.len() * (12 + dims));
    out.extend_from_slice(&BLOCK_MAGIC);
    out.extend_from_slice(&dims32.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&fingerprint.to_le_bytes());
    for (id, _, _) in entries {
        out.extend_from_slice(&id.to_le_bytes());
    }
    for (_, s, _) in entries {
        out.extend_from_slice(&s.to_le_bytes());
    }
    for (_, _, d) in entries {
        if d.len() != dims {
            return Err(IndexError::DimensionMismatch {
                expected: dims,
                got: d.len(),
            });
        }
        out.extend_from_slice(d);
    }
    Ok(out)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

fn f32_at(b: &[u8], at: usize) -> f32 {
    f32::from_bits(u32_at(b, at))
}

/// A query prepared for int8 scanning: normalized f32 copy plus its quantized form.
#[derive(Debug, Clone)]
pub struct QuantQuery {
    /// The normalized query.
    pub f32: Vec<f32>,
    /// Its int8 components.
    pub q: Vec<i8>,
    /// Its scale.
    pub scale: f32,
}

impl QuantQuery {
    /// Validate (dims, finiteness), normalize and quantize.
    pub fn new(dims: usize, query: &[f32]) -> Result<Self, IndexError> {
        check_dims_finite(dims, query)?;
        let mut f = query.to_vec();
        l2_normalize(&mut f);
        let (q, scale) = quantize(&f);
        Ok(Self { f32: f, q, scale })
    }

    /// Approximate cosine with a stored entry (`dot_i8 × scale_q × scale_v`, clamped to
    /// [-1, 1]).
    #[inline]
    pub fn approx(&self, scale: f32, codes: &[u8]) -> f32 {
        (dot_i8(&self.q, codes) as f32 * scale * self.scale).clamp(-1.0, 1.0)
    }
}

/// Scan encoded blocks with an int8 dot product and keep the `n` best (approximate cosine
/// scores: `dot_i8 × scale_q × scale_v`, clamped to [-1, 1]). Use it to pick candidates, then [`rescore`] them with
/// their f32 vectors.
///
/// Every block is validated first: a corrupt block is [`IndexError::Corrupt`], a block from
/// another embedder is [`IndexError::EmbedderMismatch`].
pub fn scan_blocks<'a>(
    blocks: impl IntoIterator<Item = &'a [u8]>,
    embedder: &EmbedderId,
    query: &[f32],
    n: usize,
) -> Result<Vec<Hit>, IndexError> {
    scan_blocks_filtered(blocks, embedder, query, n, |_| true)
}

/// [`scan_blocks`] keeping only ids for which `keep` is true (deleted chunks, project scope).
pub fn scan_blocks_filtered<'a>(
    blocks: impl IntoIterator<Item = &'a [u8]>,
    embedder: &EmbedderId,
    query: &[f32],
    n: usize,
    keep: impl Fn(u64) -> bool,
) -> Result<Vec<Hit>, IndexError> {
    let qq = QuantQuery::new(embedder.dims, query)?;
    let mut top = TopK::new(n);
    for bytes in blocks {
        let view = BlockView::parse(bytes)?;
        view.ensure_embedder(embedder)?;
        for (id, scale, data) in view.entries() {
            if keep(id) {
                top.push(id, qq.approx(scale, data));
            }
        }
    }
    Ok(top.into_sorted())
}

/// Exact f32 re-scoring of candidates (typically the top ~50 of a scan): the `k` best by cosine.
///
/// The query is normalized here; candidate vectors are taken as stored (normalized at ingest).
/// A candidate of the wrong dimension is [`IndexError::DimensionMismatch`].
pub fn rescore<'v>(
    query: &[f32],
    candidates: impl IntoIterator<Item = (u64, &'v [f32])>,
    k: usize,
) -> Result<Vec<Hit>, IndexError> {
    let dims = query.len();
    check_dims_finite(dims, query)?;
    let mut q = query.to_vec();
    l2_normalize(&mut q);
    let mut top = TopK::new(k);
    for (id, v) in candidates {
        if v.len() != dims {
            return Err(IndexError::DimensionMismatch {
                expected: dims,
                got: v.len(),
            });
        }
        top.push(id, dot(&q, v));
    }
    Ok(top.into_sorted())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::HashEmbedder;
    use proptest::prelude::*;

    fn eid() -> EmbedderId {
        EmbedderId::new("test", "v1", 8)
    }

    fn naive(a: &[i8], b: &[i8]) -> i32 {
        a.iter()
            .zip(b)
            .map(|(x, y)| i32::from(*x) * i32::from(*y))
            .sum()
    }

    proptest! {
        #[test]
        fn dot_i8_matches_naive(v in proptest::collection::vec((any::<i8>(), any::<i8>()), 0..300)) {
            let a: Vec<i8> = v.iter().map(|p| p.0).collect();
            let b: Vec<i8> = v.iter().map(|p| p.1).collect();
            let bu: Vec<u8> = b.iter().map(|x| *x as u8).collect();
            prop_assert_eq!(dot_i8(&a, &b), naive(&a, &b));
            prop_assert_eq!(dot_i8(&a, &bu), naive(&a, &b));
        }

        #[test]
        fn quantized_dot_approximates_f32(seed in 0u64..10_000) {
            let e = HashEmbedder::new();
            let mut g = crate::index::synth::TextGen::new(seed);
            let a = e.embed_one(&g.sentence());
            let b = e.embed_one(&g.sentence());
            let (qa, sa) = quantize(&a);
            let (qb, sb) = quantize(&b);
            let approx = dot_i8(&qa, &qb) as f32 * sa * sb;
            prop_assert!((approx - dot(&a, &b)).abs() < 0.02, "{} vs {}", approx, dot(&a, &b));
        }

        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = BlockView::parse(&bytes);
        }

        #[test]
        fn parse_never_panics_with_valid_header(
            dims in 0u32..6, count in 0u32..6, body in proptest::collection::vec(any::<u8>(), 0..120)
        ) {
            let mut b = BLOCK_MAGIC.to_vec();
            b.extend_from_slice(&dims.to_le_bytes());
            b.extend_from_slice(&count.to_le_bytes());
            b.extend_from_slice(&0u64.to_le_bytes());
            b.extend_from_slice(&body);
            if let Ok(v) = BlockView::parse(&b) {
                prop_assert_eq!(v.entries().count(), count as usize);
            }
        }
    }

    #[test]
    fn block_round_trip_and_scan() {
        let e = eid();
        let vs: Vec<Vec<f32>> = (0..5)
            .map(|i| (0..8).map(|j| ((i * 8 + j) as f32).sin()).collect())
            .collect();
        let refs: Vec<&[f32]> = vs.iter().map(Vec::as_slice).collect();
        let block = encode_block(&e, &[10, 11, 12, 13, 14], &refs).unwrap();
        assert_eq!(block.len(), BLOCK_HEADER_LEN + 5 * (12 + 8));
        let view = BlockView::parse(&block).unwrap();
        assert_eq!(view.ids().collect::<Vec<_>>(), vec![10, 11, 12, 13, 14]);
        view.ensure_embedder(&e).unwrap();

        // Split across two blocks: the scan result must not depend on the split.
        let b1 = encode_block(&e, &[10, 11], &refs[..2]).unwrap();
        let b2 = encode_block(&e, &[12, 13, 14], &refs[2..]).unwrap();
        for (i, q) in vs.iter().enumerate() {
            let one = scan_blocks([block.as_slice()], &e, q, 3).unwrap();
            let two = scan_blocks([b1.as_slice(), b2.as_slice()], &e, q, 3).unwrap();
            assert_eq!(one, two);
            assert_eq!(one[0].id, 10 + i as u64, "self first: {one:?}");
            let cands: Vec<(u64, &[f32])> = one
                .iter()
                .map(|h| (h.id, refs[(h.id - 10) as usize]))
                .collect();
            // Stored vectors must be normalized for rescore; these are not, so normalize.
            let normed: Vec<Vec<f32>> = cands
                .iter()
                .map(|(_, v)| {
                    let mut v = v.to_vec();
                    l2_normalize(&mut v);
                    v
                })
                .collect();
            let r = rescore(
                q,
                cands
                    .iter()
                    .zip(&normed)
                    .map(|((id, _), v)| (*id, v.as_slice())),
                1,
            )
            .unwrap();
            assert_eq!(r[0].id, 10 + i as u64);
            assert!((r[0].score - 1.0).abs() < 1e-5);
        }

        let filtered =
            scan_blocks_filtered([block.as_slice()], &e, &vs[0], 5, |id| id != 10).unwrap();
        assert!(filtered.iter().all(|h| h.id != 10));
        assert_eq!(filtered.len(), 4);

        let compact = view.retain(|id| id % 2 == 0);
        let cv = BlockView::parse(&compact).unwrap();
        assert_eq!(cv.ids().collect::<Vec<_>>(), vec![10, 12, 14]);
        let full: Vec<_> = view.entries().filter(|(id, _, _)| id % 2 == 0).collect();
        assert_eq!(cv.entries().collect::<Vec<_>>(), full);

        // Appending block by block gives the same bytes as encoding all at once.
        let mut grown = encode_block(&e, &[], &[]).unwrap();
        for (i, v) in refs.iter().enumerate() {
            let single = encode_block(&e, &[10 + i as u64], &[v]).unwrap();
            grown = concat_blocks(&grown, &single).unwrap();
        }
        assert_eq!(grown, block);
        let other = encode_block(&EmbedderId::new("other", "v1", 8), &[1], &refs[..1]).unwrap();
        assert!(matches!(
            concat_blocks(&block, &other),
            Err(IndexError::Corrupt(_))
        ));
    }

    #[test]
    fn corrupt_and_foreign_blocks_are_errors() {
        let e = eid();
        let v = [1.0f32; 8];
        let block = encode_block(&e, &[1], &[&v]).unwrap();
        for cut in 0..block.len() {
            let r = scan_blocks([&block[..cut]], &e, &v, 1);
            assert!(matches!(r, Err(IndexError::Corrupt(_))), "cut {cut}: {r:?}");
        }
        let mut long = block.clone();
        long.push(0);
        assert!(matches!(
            scan_blocks([long.as_slice()], &e, &v, 1),
            Err(IndexError::Corrupt(_))
        ));
        let mut bad_magic = block.clone();
        bad_magic[0] = b'X';
        assert!(matches!(
            scan_blocks([bad_magic.as_slice()], &e, &v, 1),
            Err(IndexError::Corrupt(_))
        ));
        // Huge count in the header must not allocate or overflow.
        let mut huge = block.clone();
        huge[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            scan_blocks([huge.as_slice()], &e, &v, 1),
            Err(IndexError::Corrupt(_))
        ));

        let other = EmbedderId::new("other", "v1", 8);
        assert!(matches!(
            scan_blocks([block.as_slice()], &other, &v, 1),
            Err(IndexError::EmbedderMismatch { .. })
        ));
        assert!(matches!(
            scan_blocks([block.as_slice()], &e, &[1.0; 7], 1),
            Err(IndexError::DimensionMismatch {
                expected: 8,
                got: 7
            })
        ));
        assert!(matches!(
            encode_block(&e, &[1, 2], &[&v]),
            Err(IndexError::Corrupt(_))
        ));
        assert!(matches!(
            encode_block(&e, &[1], &[&[f32::NAN; 8]]),
            Err(IndexError::InvalidVector(_))
        ));
    }

    #[test]
    fn zero_vector_quantizes_to_zero_scale() {
        let (q, s) = quantize(&[0.0; 4]);
        assert_eq!(q, vec![0; 4]);
        assert_eq!(s, 0.0);
    }
}
