//! The flat copy against the graph it was frozen from and against the exact scan (the
//! oracle): the same answers, tombstones, its file (round trip, damage), concurrent searches.

use crate::dist::{cosine, query_point};
use crate::tests::{Rng, exact_top, golden, graph_of, model_like, stored_point};
use crate::{AnnError, FlatGraph, Graph};
use memctl_engine::AnnHit;
use std::collections::HashSet;

/// Recall@10 of `search` against the exact f32 scan: 50 candidates re-scored with the stored
/// vectors, as the retrieval does.
fn recall(data: &[Vec<f32>], queries: &[Vec<f32>], search: impl Fn(&[i8]) -> Vec<AnnHit>) -> f64 {
    let (mut found, mut total) = (0usize, 0usize);
    for q in queries {
        let truth = exact_top(data, q, 10);
        let mut cand: Vec<(f32, u64)> = search(&query_point(q))
            .iter()
            .map(|h| (memctl_engine::dot(&data[h.id as usize], q), h.id))
            .collect();
        cand.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let got: Vec<u64> = cand.into_iter().take(10).map(|x| x.1).collect();
        found += truth.iter().filter(|t| got.contains(t)).count();
        total += truth.len();
    }
    found as f64 / total as f64
}

/// Share of the hits two searches have in common.
fn agreement(a: &[Vec<AnnHit>], b: &[Vec<AnnHit>]) -> f64 {
    let (mut same, mut total) = (0usize, 0usize);
    for (x, y) in a.iter().zip(b) {
        let ys: HashSet<u64> = y.iter().map(|h| h.id).collect();
        same += x.iter().filter(|h| ys.contains(&h.id)).count();
        total += x.len().max(y.len());
    }
    same as f64 / total.max(1) as f64
}

fn frozen(g: &Graph) -> FlatGraph {
    let f = FlatGraph::freeze(g).expect("freeze");
    f.check().expect("a frozen graph passes the load check");
    f
}

#[test]
fn the_flat_copy_finds_what_the_graph_and_the_exact_scan_find() {
    let seed = 0x05ee_da11_u64;
    println!("seed {seed:#x}");
    let mut rng = Rng(seed);
    let base = golden();
    let data = model_like(&mut rng, &base, 4000);
    let queries = model_like(&mut rng, &base, 100);
    // A beam of the caller's `ef` alone (the default's 3,000 would cover every point here).
    let g = graph_of(&data).with_ef_search(0);
    let f = frozen(&g);
    assert_eq!((f.len(), f.dead()), (g.len(), g.dead()));
    for ef in [100, 3000] {
        let rg = recall(&data, &queries, |q| g.search_ef(q, 50, ef));
        let rf = recall(&data, &queries, |q| f.search_ef(q, 50, ef));
        println!("beam {ef}: recall@10 graph {rg:.4}, flat {rf:.4}");
        assert!(rf >= 0.95, "flat recall@10 {rf} (seed {seed:#x})");
        assert!(
            rf >= rg - 0.01,
            "flat {rf} below graph {rg} (seed {seed:#x})"
        );
    }
    for ef in [20, 50, 200] {
        let a: Vec<_> = queries
            .iter()
            .map(|q| g.search_ef(&query_point(q), 10, ef))
            .collect();
        let b: Vec<_> = queries
            .iter()
            .map(|q| f.search_ef(&query_point(q), 10, ef))
            .collect();
        let same = agreement(&a, &b);
        println!("beam {ef}: {same:.4} of the hits in common");
        assert!(same >= 0.95, "beam {ef}: {same} in common (seed {seed:#x})");
    }
    // A point's own vector finds it first, or a copy of it at the same cosine (the data holds
    // near-copies, and hnsw_rs's parallel inserts make a different graph each run).
    for (i, v) in data.iter().enumerate().take(20) {
        let p = stored_point(v);
        let top = f.search_ef(&p, 1, 200)[0];
        let own = cosine(&p, &p);
        assert!(
            top.id == i as u64 || top.score >= own - 1e-6,
            "point {i}: {top:?}, own cosine {own} (seed {seed:#x})"
        );
    }
}

/// `n` uniformly random points of 384 components.
fn random_points(rng: &mut Rng, n: usize) -> Vec<Vec<i8>> {
    (0..n)
        .map(|_| {
            let v: Vec<f32> = (0..384).map(|_| rng.next() - 0.5).collect();
            let mut v = v;
            memctl_engine::l2_normalize(&mut v);
            stored_point(&v)
        })
        .collect()
}

#[test]
fn on_random_points_the_flat_copy_recalls_the_exact_int8_scan() {
    let seed = 0xf1a7_u64;
    println!("seed {seed:#x}");
    let mut rng = Rng(seed);
    let pts = random_points(&mut rng, 2000);
    let g = Graph::new(crate::GraphParams::default(), pts.len());
    let batch: Vec<(u64, Vec<i8>)> = (0u64..).zip(pts.iter().cloned()).collect();
    g.insert(&batch);
    let f = frozen(&g);
    let (mut found, mut total) = (0usize, 0usize);
    for q in random_points(&mut rng, 50) {
        let mut exact: Vec<(f32, u64)> = (0u64..)
            .zip(&pts)
            .map(|(i, p)| (cosine(&q, p), i))
            .collect();
        exact.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let hits = f.search_ef(&q, 10, 200);
        assert!(
            hits.windows(2).all(|w| w[0].score >= w[1].score),
            "not best first"
        );
        found += exact
            .iter()
            .take(10)
            .filter(|e| hits.iter().any(|h| h.id == e.1))
            .count();
        total += 10;
    }
    let r = found as f64 / total as f64;
    println!("recall@10 at beam 200: {r:.4}");
    assert!(r >= 0.95, "recall@10 {r} (seed {seed:#x})");
}

#[test]
fn tombstones_of_the_flat_copy_are_never_returned() {
    let mut rng = Rng(7);
    println!("seed 7");
    let data = model_like(&mut rng, &golden(), 500);
    let g = graph_of(&data);
    let f = frozen(&g);
    let keep: HashSet<u64> = (0..500u64).filter(|i| i % 3 != 0).collect();
    assert_eq!(f.retain(&keep), 167);
    assert_eq!((f.len(), f.dead()), (333, 167));
    assert!(!f.contains(0) && f.contains(1));
    assert_eq!(f.retain(&keep), 0, "a second retain tombstones nothing");
    for q in data.iter().take(50) {
        let hits = f.search(&query_point(q), 20);
        // The over-fetch by the dead fraction is what the graph does too: most of the k.
        assert!(hits.len() >= 15, "tombstones ate the k: {}", hits.len());
        for h in hits {
            assert!(keep.contains(&h.id), "tombstone {} returned", h.id);
        }
    }
    // Tombstones in the graph before the freeze carry over.
    g.retain(&keep);
    let f2 = frozen(&g);
    assert_eq!((f2.len(), f2.dead()), (333, 167));
    // The graph gives its live points (a merge re-inserts them) as the copy does.
    let (mut a, mut b) = (g.live_points(), f2.live_points());
    a.sort();
    b.sort();
    assert_eq!(a, b);
    let q = query_point(&data[0]);
    assert_eq!(f2.search(&q, 20), f.search(&q, 20));
}

#[test]
fn a_saved_flat_copy_loads_as_it_was_and_damage_is_refused() {
    let mut rng = Rng(11);
    println!("seed 11");
    let data = model_like(&mut rng, &golden(), 600);
    let g = graph_of(&data);
    let f = frozen(&g);
    f.retain(&(0..600u64).filter(|i| i % 7 != 0).collect());
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("ann").join("p1.flat");
    assert!(FlatGraph::load(&path).expect("no file").is_none());
    f.save(&path).expect("save");
    let back = FlatGraph::load(&path).expect("load").expect("saved");
    assert!(back.same_layout(&f), "the round trip changed the layout");
    for q in data.iter().take(30) {
        let q = query_point(q);
        assert_eq!(back.search(&q, 10), f.search(&q, 10));
    }
    let bytes = std::fs::read(&path).expect("read");
    let n = bytes.len();
    for at in [0, 9, 12, 20, n / 3, n / 2, n - 5, n - 1] {
        let mut bad = bytes.clone();
        bad[at] ^= 0x5a;
        std::fs::write(&path, &bad).expect("write");
        let got = FlatGraph::load(&path);
        assert!(
            matches!(got, Err(AnnError::Corrupt(_))),
            "byte {at} flipped: {got:?}"
        );
    }
    for len in [0, 5, 11, 30, n / 2, n - 1] {
        std::fs::write(&path, &bytes[..len]).expect("write");
        let got = FlatGraph::load(&path);
        assert!(
            matches!(got, Err(AnnError::Corrupt(_))),
            "truncated to {len}: {got:?}"
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    std::fs::write(&path, &longer).expect("write");
    assert!(matches!(FlatGraph::load(&path), Err(AnnError::Corrupt(_))));
}

#[test]
fn an_empty_graph_freezes_saves_and_loads() {
    let g = Graph::new(crate::GraphParams::default(), 0);
    let f = frozen(&g);
    assert!(f.is_empty());
    assert!(f.search(&[1, 2, 3, 4, 5], 5).is_empty());
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("p0.flat");
    f.save(&path).expect("save");
    let back = FlatGraph::load(&path).expect("load").expect("saved");
    assert!(back.is_empty() && back.same_layout(&f));
}

#[test]
fn concurrent_searches_answer_as_sequential_ones() {
    let mut rng = Rng(23);
    println!("seed 23");
    let base = golden();
    let data = model_like(&mut rng, &base, 1500);
    let queries: Vec<Vec<i8>> = model_like(&mut rng, &base, 60)
        .iter()
        .map(|q| query_point(q))
        .collect();
    let f = frozen(&graph_of(&data));
    let seq: Vec<_> = queries.iter().map(|q| f.search_ef(q, 10, 300)).collect();
    let par: Vec<Vec<Vec<AnnHit>>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..2)
            .map(|t| {
                let (f, queries) = (&f, &queries);
                s.spawn(move || {
                    // The two threads walk the queries in opposite orders.
                    let mut out: Vec<_> = (0..queries.len())
                        .map(|i| {
                            let i = if t == 0 { i } else { queries.len() - 1 - i };
                            (i, f.search_ef(&queries[i], 10, 300))
                        })
                        .collect();
                    out.sort_by_key(|x| x.0);
                    out.into_iter().map(|x| x.1).collect()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().expect("thread")).collect()
    });
    for answers in par {
        assert_eq!(answers, seq);
    }
    assert!(f.memory_bytes() > data.len() * 388);
}
