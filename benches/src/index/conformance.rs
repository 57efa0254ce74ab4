//! One conformance suite, run against every [`VectorIndex`] implementation (tantivy style): the
//! trait's contract is defined here, not in each implementation's own tests.

use super::{ExactIndex, Hit, HnswIndex, HnswParams, VectorIndex};
use memctl_engine::{Embedder, EmbedderId, HashEmbedder, IndexError, TextGen, l2_normalize};

const SEED: u64 = 0x00c0_ffee;
/// Self-similarity tolerance: int8-only scores (no re-score) are within ~0.5% of the cosine.
const SELF_TOL: f32 = 1e-2;

fn space() -> EmbedderId {
    HashEmbedder::new().id().clone()
}

fn vectors(n: usize, seed: u64) -> Vec<Vec<f32>> {
    let e = HashEmbedder::new();
    let mut g = TextGen::new(seed);
    (0..n).map(|_| e.embed_one(&g.document())).collect()
}

fn filled<I: VectorIndex>(make: &impl Fn(EmbedderId) -> I, n: usize) -> (I, Vec<Vec<f32>>) {
    println!("conformance seed {SEED:#x}, n = {n}");
    let vs = vectors(n, SEED);
    let mut idx = make(space());
    for (i, v) in vs.iter().enumerate() {
        idx.insert(&space(), i as u64 * 10, v).unwrap();
    }
    (idx, vs)
}

fn assert_ranked(hits: &[Hit]) {
    for w in hits.windows(2) {
        assert_ne!(
            Hit::rank_cmp(&w[0], &w[1]),
            std::cmp::Ordering::Greater,
            "not best-first: {hits:?}"
        );
    }
    for h in hits {
        assert!(
            h.score.is_finite() && h.score <= 1.0 + 1e-4 && h.score >= -1.0 - 1e-4,
            "{h:?}"
        );
    }
}

pub(super) fn round_trip_and_self_first<I: VectorIndex>(make: impl Fn(EmbedderId) -> I) {
    let (idx, vs) = filled(&make, 300);
    assert_eq!(idx.len(), 300);
    assert!(!idx.is_empty());
    for (i, v) in vs.iter().enumerate().step_by(7) {
        let hits = idx.search(&space(), v, 5).unwrap();
        assert_eq!(hits.len(), 5);
        assert_ranked(&hits);
        assert_eq!(hits[0].id, i as u64 * 10, "self first for {i}: {hits:?}");
        assert!((hits[0].score - 1.0).abs() < SELF_TOL, "{hits:?}");
    }
}

pub(super) fn agrees_with_oracle<I: VectorIndex>(make: impl Fn(EmbedderId) -> I) {
    let (idx, vs) = filled(&make, 500);
    let mut oracle = ExactIndex::new(space());
    for (i, v) in vs.iter().enumerate() {
        oracle.insert(&space(), i as u64 * 10, v).unwrap();
    }
    let queries = vectors(50, SEED + 1);
    let (mut found, mut total) = (0, 0);
    for q in &queries {
        let truth: Vec<u64> = oracle
            .search_f32(&space(), q, 10)
            .unwrap()
            .iter()
            .map(|h| h.id)
            .collect();
        let got = idx.search(&space(), q, 10).unwrap();
        assert_ranked(&got);
        found += got.iter().filter(|h| truth.contains(&h.id)).count();
        total += truth.len();
    }
    let recall = found as f64 / total as f64;
    assert!(recall >= 0.95, "recall@10 vs oracle at n=500: {recall}");
}

pub(super) fn remove_hides<I: VectorIndex>(make: impl Fn(EmbedderId) -> I) {
    let (mut idx, vs) = filled(&make, 100);
    assert!(idx.remove(50));
    assert!(!idx.remove(50), "second remove reports absence");
    assert!(!idx.remove(123_456), "absent id is not an error");
    assert_eq!(idx.len(), 99);
    let hits = idx.search(&space(), &vs[5], 99).unwrap();
    assert!(hits.iter().all(|h| h.id != 50), "{hits:?}");
    // Re-inserting a removed id brings it back.
    idx.insert(&space(), 50, &vs[5]).unwrap();
    assert_eq!(idx.len(), 100);
    let hits = idx.search(&space(), &vs[5], 2).unwrap();
    assert_eq!(hits[0].id, 50, "{hits:?}");
    // Remove everything.
    for i in 0..100u64 {
        idx.remove(i * 10);
    }
    assert!(idx.is_empty());
    assert!(idx.search(&space(), &vs[0], 5).unwrap().is_empty());
}

pub(super) fn dimension_mismatch<I: VectorIndex>(make: impl Fn(EmbedderId) -> I) {
    let (mut idx, _) = filled(&make, 10);
    let short = vec![0.1f32; space().dims - 1];
    assert!(matches!(
        idx.insert(&space(), 1, &short),
        Err(IndexError::DimensionMismatch { expected, got }) if expected == space().dims && got == space().dims - 1
    ));
    assert!(matches!(
        idx.search(&space(), &short, 3),
        Err(IndexError::DimensionMismatch { .. })
    ));
    assert_eq!(idx.len(), 10, "a failed insert changes nothing");
}

pub(super) fn embedder_mismatch<I: VectorIndex>(make: impl Fn(EmbedderId) -> I) {
    let (mut idx, vs) = filled(&make, 10);
    // Same dimension, other space: the dangerous case (scores would look plausible).
    let other = EmbedderId::new("all-MiniLM-L6-v2", "fp32-1", space().dims);
    assert!(matches!(
        idx.search(&other, &vs[0], 3),
        Err(IndexError::EmbedderMismatch { .. })
    ));
    assert!(matches!(
        idx.insert(&other, 99, &vs[0]),
        Err(IndexError::EmbedderMismatch { .. })
    ));
    assert!(matches!(
        idx.insert_batch(&other, &[(99, vs[0].as_slice())]),
        Err(IndexError::EmbedderMismatch { .. })
    ));
    assert_eq!(idx.len(), 10);
    assert_eq!(idx.embedder(), &space());
}

pub(super) fn invalid_values<I: VectorIndex>(make: impl Fn(EmbedderId) -> I) {
    let (mut idx, vs) = filled(&make, 10);
    let mut bad = vs[0].clone();
    bad[3] = f32::NAN;
    assert!(matches!(
        idx.insert(&space(), 1, &bad),
        Err(IndexError::InvalidVector(_))
    ));
    bad[3] = f32::INFINITY;
    assert!(matches!(
        idx.search(&space(), &bad, 1),
        Err(IndexError::InvalidVector(_))
    ));
    // A zero query is legal and scores everything 0.
    let zero = vec![0.0f32; space().dims];
    let hits = idx.search(&space(), &zero, 3).unwrap();
    assert!(hits.iter().all(|h| h.score.abs() < 1e-6));
    // Off-norm input is normalized: scores stay cosines.
    let scaled: Vec<f32> = vs[1].iter().map(|x| x * 3.0).collect();
    let hits = idx.search(&space(), &scaled, 1).unwrap();
    assert_eq!(hits[0].id, 10);
    assert!((hits[0].score - 1.0).abs() < SELF_TOL);
}

pub(super) fn empty_and_k_edges<I: VectorIndex>(make: impl Fn(EmbedderId) -> I) {
    let idx = make(space());
    assert_eq!(idx.len(), 0);
    assert!(idx.is_empty());
    let q = vectors(1, 5).remove(0);
    assert!(idx.search(&space(), &q, 10).unwrap().is_empty());

    let (idx, vs) = filled(&make, 7);
    let all = idx.search(&space(), &vs[0], 100).unwrap();
    assert_eq!(all.len(), 7, "k > len returns everything");
    assert_ranked(&all);
    let mut ids: Vec<u64> = all.iter().map(|h| h.id).collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..7).map(|i| i * 10).collect::<Vec<_>>());
    assert!(idx.search(&space(), &vs[0], 0).unwrap().is_empty());
}

pub(super) fn duplicate_insert_replaces<I: VectorIndex>(make: impl Fn(EmbedderId) -> I) {
    let (mut idx, vs) = filled(&make, 50);
    // id 70 currently holds vs[7]; replace it with vs[30]'s direction.
    idx.insert(&space(), 70, &vs[30]).unwrap();
    assert_eq!(idx.len(), 50, "replacing does not grow the index");
    let hits = idx.search(&space(), &vs[30], 2).unwrap();
    let mut top2: Vec<u64> = hits.iter().map(|h| h.id).collect();
    top2.sort_unstable();
    assert_eq!(top2, vec![70, 300], "{hits:?}");
    let hits = idx.search(&space(), &vs[7], 50).unwrap();
    let old = hits.iter().find(|h| h.id == 70);
    assert!(
        old.is_none_or(|h| h.score < 0.99),
        "old vector must be gone: {hits:?}"
    );
    // Batch with a duplicate: the later one wins.
    idx.insert_batch(
        &space(),
        &[(5000, vs[1].as_slice()), (5000, vs[2].as_slice())],
    )
    .unwrap();
    assert_eq!(idx.len(), 51);
    let hits = idx.search(&space(), &vs[2], 2).unwrap();
    assert!(
        hits.iter()
            .any(|h| h.id == 5000 && h.score > 1.0 - SELF_TOL),
        "{hits:?}"
    );
}

pub(super) fn ties_broken_by_id_and_deterministic<I: VectorIndex>(make: impl Fn(EmbedderId) -> I) {
    let (mut idx, vs) = filled(&make, 60);
    let mut v = vec![0.0f32; space().dims];
    v[0] = 1.0;
    v[1] = 1.0;
    l2_normalize(&mut v);
    for id in [9001u64, 9000, 9002] {
        idx.insert(&space(), id, &v).unwrap();
    }
    let hits = idx.search(&space(), &v, 3).unwrap();
    assert_eq!(
        hits.iter().map(|h| h.id).collect::<Vec<_>>(),
        vec![9000, 9001, 9002]
    );
    assert_eq!(hits[0].score, hits[2].score);
    for q in vs.iter().take(10) {
        assert_eq!(
            idx.search(&space(), q, 8).unwrap(),
            idx.search(&space(), q, 8).unwrap()
        );
    }
    // Same inserts in the same order → same answers.
    let (twin, _) = filled(&make, 60);
    let (orig, _) = filled(&make, 60);
    for q in vs.iter().take(10) {
        assert_eq!(
            twin.search(&space(), q, 8).unwrap(),
            orig.search(&space(), q, 8).unwrap()
        );
    }
}

macro_rules! conformance {
    ($name:ident, $make:expr) => {
        mod $name {
            use super::*;
            #[test]
            fn round_trip_and_self_first() {
                super::round_trip_and_self_first($make);
            }
            #[test]
            fn agrees_with_oracle() {
                super::agrees_with_oracle($make);
            }
            #[test]
            fn remove_hides() {
                super::remove_hides($make);
            }
            #[test]
            fn dimension_mismatch() {
                super::dimension_mismatch($make);
            }
            #[test]
            fn embedder_mismatch() {
                super::embedder_mismatch($make);
            }
            #[test]
            fn invalid_values() {
                super::invalid_values($make);
            }
            #[test]
            fn empty_and_k_edges() {
                super::empty_and_k_edges($make);
            }
            #[test]
            fn duplicate_insert_replaces() {
                super::duplicate_insert_replaces($make);
            }
            #[test]
            fn ties_broken_by_id_and_deterministic() {
                super::ties_broken_by_id_and_deterministic($make);
            }
        }
    };
}

conformance!(exact, ExactIndex::new);
conformance!(exact_no_rescore, |e| ExactIndex::new(e).with_rescore_n(0));
conformance!(hnsw, |e| HnswIndex::new(e, HnswParams::default()));
