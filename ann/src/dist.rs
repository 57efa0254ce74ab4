//! The graph's points and distance: a store int8 entry as it is (384 components), followed by
//! the four little-endian bytes of its scale, so one `&[i8]` carries everything the distance
//! needs and the graph holds ~388 bytes of vector per point (a quarter of f32).

use hnsw_rs::prelude::Distance;

/// Bytes of a point after its components: the scale, `f32` little-endian.
const SCALE_BYTES: usize = 4;

/// A point from an entry's int8 `codes` (raw bytes, as the store keeps them) and `scale`.
pub fn point(codes: &[u8], scale: f32) -> Vec<i8> {
    let mut p: Vec<i8> = codes.iter().map(|&b| b as i8).collect();
    p.extend(scale.to_le_bytes().map(|b| b as i8));
    p
}

/// A query as a point (quantized the way the store quantizes entries).
pub fn query_point(query: &[f32]) -> Vec<i8> {
    let (q, scale) = memctl_engine::quantize(query);
    let mut p = q;
    p.extend(scale.to_le_bytes().map(|b| b as i8));
    p
}

fn split(p: &[i8]) -> (&[i8], f32) {
    // A fixed-size split: a variable-length copy of the scale compiled to a libc `memcpy`
    // call per point, a third of a graph search's time.
    match p.split_last_chunk::<SCALE_BYTES>() {
        Some((codes, scale)) => (codes, f32::from_le_bytes(scale.map(|b| b as u8))),
        None => (p, 0.0),
    }
}

/// Approximate cosine of two points (`dot_i8 × scale_a × scale_b`, clamped to [-1, 1]).
pub fn cosine(a: &[i8], b: &[i8]) -> f32 {
    let (ca, sa) = split(a);
    let (cb, sb) = split(b);
    (memctl_engine::dot_i8(ca, cb) as f32 * sa * sb).clamp(-1.0, 1.0)
}

/// `1 − cosine`, never negative (hnsw_rs orders by it and asserts on nothing else).
#[derive(Debug, Default, Clone, Copy)]
pub struct DotI8;

impl Distance<i8> for DotI8 {
    fn eval(&self, a: &[i8], b: &[i8]) -> f32 {
        1.0 - cosine(a, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_keeps_its_scale_and_scores_like_the_store() {
        let v: Vec<f32> = (0..384)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 50.0)
            .collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        let v: Vec<f32> = v.iter().map(|x| x / n).collect();
        let (codes, scale) = memctl_engine::quantize(&v);
        let raw: Vec<u8> = codes.iter().map(|&c| c as u8).collect();
        let p = point(&raw, scale);
        assert_eq!(p.len(), 388);
        assert!((cosine(&p, &query_point(&v)) - 1.0).abs() < 0.01);
        assert!(DotI8.eval(&p, &p) >= 0.0);
    }
}
