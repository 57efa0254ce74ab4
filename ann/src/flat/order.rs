//! Points laid out in the order a search meets them.
//!
//! hnsw_rs numbers points in insertion order, so a point's layer-0 neighbours sit anywhere in
//! the vector buffer: at 1e6 points (388 MB) nearly every distance a search computes starts
//! with a cache and TLB miss. Renumbering the points breadth first from the entry point over
//! layer 0 puts most of a point's neighbours close to it and to each other. Only the numbering
//! changes: every point keeps its vector, chunk, tombstone and edges (as chunks).

use super::{FlatGraph, Upper, to_u32, upper_of};
use crate::AnnError;
use crate::graph::Ids;
use std::collections::VecDeque;

/// New data id → old, breadth first over layer 0 from `start`, then every point it did not
/// reach in id order (a permutation of `0..n`).
pub(super) fn breadth_first(offsets: &[u32], nbrs: &[u32], start: Option<u32>) -> Vec<u32> {
    let n = offsets.len().saturating_sub(1);
    let mut seen = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut queue = VecDeque::new();
    let roots = start.into_iter().chain(0..n as u32);
    for root in roots {
        if (root as usize) >= n || std::mem::replace(&mut seen[root as usize], true) {
            continue;
        }
        queue.push_back(root);
        while let Some(p) = queue.pop_front() {
            order.push(p);
            let (a, b) = (
                offsets[p as usize] as usize,
                offsets[p as usize + 1] as usize,
            );
            for &q in &nbrs[a..b] {
                if !std::mem::replace(&mut seen[q as usize], true) {
                    queue.push_back(q);
                }
            }
        }
    }
    order
}

impl FlatGraph {
    /// The same graph with its points renumbered breadth first from the entry point over
    /// layer 0 ([`FlatGraph::freeze`] does it; a base saved before keeps its order until it is
    /// rebuilt). The vectors move in place: the copy made is of the edges only.
    pub fn in_search_order(self) -> Result<Self, AnnError> {
        let order = breadth_first(&self.offsets, &self.nbrs, self.entry.map(|e| e.0));
        let mut pos = vec![0u32; order.len()];
        for (new, &old) in order.iter().enumerate() {
            pos[old as usize] = to_u32(new, "points")?;
        }
        let ids = renumber_ids(&self.ids(), &order, &pos);
        let FlatGraph {
            params,
            dim,
            mut vectors,
            offsets: old_offsets,
            nbrs: old_nbrs,
            upper,
            entry,
            ..
        } = self;
        permute_rows(&mut vectors, dim, &order);
        let mut offsets = Vec::with_capacity(old_offsets.len());
        let mut nbrs = Vec::with_capacity(old_nbrs.len());
        offsets.push(0u32);
        for &old in &order {
            let o = old as usize;
            let row = &old_nbrs[old_offsets[o] as usize..old_offsets[o + 1] as usize];
            nbrs.extend(row.iter().map(|&x| pos[x as usize]));
            offsets.push(to_u32(nbrs.len(), "layer-0 edges")?);
        }
        drop(old_nbrs);
        let upper = renumber_upper(&upper, &pos)?;
        let entry = entry.map(|(e, level)| (pos[e as usize], level));
        Ok(Self::from_parts(
            params,
            dim,
            vectors,
            (offsets, nbrs),
            upper,
            entry,
            ids,
        ))
    }
}

/// Rows of `dim` values: row `i` becomes the old row `order[i]` (`order` a permutation),
/// moved along the permutation's cycles with one row of scratch.
fn permute_rows(buf: &mut [i8], dim: usize, order: &[u32]) {
    let mut done = vec![false; order.len()];
    let mut first = vec![0i8; dim];
    for start in 0..order.len() {
        if done[start] {
            continue;
        }
        first.copy_from_slice(&buf[start * dim..(start + 1) * dim]);
        let mut i = start;
        loop {
            done[i] = true;
            let from = order[i] as usize;
            if from == start {
                buf[i * dim..(i + 1) * dim].copy_from_slice(&first);
                break;
            }
            buf.copy_within(from * dim..(from + 1) * dim, i * dim);
            i = from;
        }
    }
}

fn renumber_upper(up: &Upper, pos: &[u32]) -> Result<Upper, AnnError> {
    let points = up
        .ids
        .iter()
        .enumerate()
        .map(|(j, &id)| {
            let rows = (up.first[j] as usize..up.first[j + 1] as usize)
                .map(|r| {
                    let (a, b) = (up.offsets[r] as usize, up.offsets[r + 1] as usize);
                    up.nbrs[a..b].iter().map(|&x| pos[x as usize]).collect()
                })
                .collect();
            (pos[id as usize], rows)
        })
        .collect();
    upper_of(points, pos.len())
}

fn renumber_ids(ids: &Ids, order: &[u32], pos: &[u32]) -> Ids {
    Ids {
        chunk: order.iter().map(|&o| ids.chunk[o as usize]).collect(),
        dead: order.iter().map(|&o| ids.dead[o as usize]).collect(),
        n_dead: ids.n_dead,
        live: ids
            .live
            .iter()
            .map(|(&chunk, &id)| (chunk, pos[id] as usize))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::query_point;
    use crate::tests::{Rng, golden, graph_of, model_like};
    use std::collections::BTreeMap;

    /// One point as chunks: its vector, tombstone, layer-0 neighbours and upper rows.
    type Point = (Vec<i8>, bool, Vec<u64>, Vec<Vec<u64>>);

    /// The graph seen through chunk ids (which the renumbering must not change), and the
    /// entry's chunk and level.
    fn by_chunk(f: &FlatGraph) -> (BTreeMap<u64, Point>, Option<(u64, u8)>) {
        let ids = f.ids();
        let chunks = |row: &[u32]| row.iter().map(|&x| ids.chunk[x as usize]).collect();
        let top = f.entry.map_or(0, |e| e.1);
        let points = (0..ids.chunk.len())
            .map(|i| {
                let row = &f.nbrs[f.offsets[i] as usize..f.offsets[i + 1] as usize];
                let upper = (1..=top)
                    .map(|l| chunks(f.upper.neighbours(i as u32, l)))
                    .collect();
                let vector = f.vectors[i * f.dim..(i + 1) * f.dim].to_vec();
                (ids.chunk[i], (vector, ids.dead[i], chunks(row), upper))
            })
            .collect();
        let entry = f.entry.map(|(e, l)| (ids.chunk[e as usize], l));
        (points, entry)
    }

    /// Rows move to where the permutation says, whatever its cycles (seeded shuffles).
    #[test]
    fn rows_follow_the_permutation() {
        let mut rng = Rng(0x9e37_79b9);
        for n in [0usize, 1, 2, 7, 100] {
            let mut order: Vec<u32> = (0..n as u32).collect();
            for i in (1..n).rev() {
                order.swap(i, (rng.next().abs() * (i + 1) as f32) as usize % (i + 1));
            }
            let rows: Vec<i8> = (0..n * 3).map(|x| (x % 251) as i8).collect();
            let mut moved = rows.clone();
            permute_rows(&mut moved, 3, &order);
            for (i, &o) in order.iter().enumerate() {
                let o = o as usize;
                assert_eq!(
                    moved[i * 3..i * 3 + 3],
                    rows[o * 3..o * 3 + 3],
                    "n {n} order {order:?}"
                );
            }
        }
    }

    /// Renumbering keeps every point, tombstone and edge (as chunks) and every answer, and
    /// brings a point's layer-0 neighbours closer to it in the buffer.
    #[test]
    fn renumbering_keeps_the_graph_and_its_answers() {
        let seed = 0x0bde_0f5e_u64;
        println!("seed {seed:#x}");
        let mut rng = Rng(seed);
        let base = golden();
        let data = model_like(&mut rng, &base, 3000);
        let g = graph_of(&data);
        let keep: std::collections::HashSet<u64> = (0..3000u64).filter(|c| c % 7 != 3).collect();
        g.retain(&keep);
        let plain = FlatGraph::freeze_unordered(&g).expect("freeze");
        let ordered = FlatGraph::freeze(&g).expect("freeze");
        ordered
            .check()
            .expect("a renumbered graph passes the load check");
        assert_eq!(by_chunk(&plain), by_chunk(&ordered));
        assert_eq!(
            ordered.entry.map(|e| e.0),
            Some(0),
            "the entry point comes first"
        );
        assert_eq!((plain.len(), plain.dead()), (ordered.len(), ordered.dead()));
        for q in model_like(&mut rng, &base, 50) {
            let q = query_point(&q);
            let scores = |f: &FlatGraph| -> Vec<f32> {
                f.search_ef(&q, 10, 200).iter().map(|h| h.score).collect()
            };
            assert_eq!(scores(&plain), scores(&ordered));
        }
        let spread = |f: &FlatGraph| -> f64 {
            let mut sum = 0.0;
            for i in 0..f.offsets.len() - 1 {
                for &x in &f.nbrs[f.offsets[i] as usize..f.offsets[i + 1] as usize] {
                    sum += (i as f64 - f64::from(x)).abs();
                }
            }
            sum / f.nbrs.len() as f64
        };
        let (before, after) = (spread(&plain), spread(&ordered));
        println!("mean distance between a point and its neighbours' ids: {before:.0} → {after:.0}");
        assert!(after < before, "{before} → {after}");
    }
}
