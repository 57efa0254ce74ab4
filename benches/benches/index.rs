//! Index benches: exact int8 scan + f32 re-score vs HNSW search, BM25, the int8 kernel, and the
//! "fresh process" cost (HNSW reload from a dump vs scanning encoded blocks) that decides which
//! index a short-lived hook process uses.
//!
//! Fixed seeds (printed); recall vs the f32 oracle is printed next to the timings and asserted,
//! so a bench that got fast by getting wrong fails.
//!
//! ```text
//! cargo bench -p memctl-benches --bench index                       # N = 1e4 (a few minutes)
//! MEMCTL_BENCH_BIG=1 cargo bench -p memctl-benches --bench index    # + N = 5e4 / 1e5 (slow build)
//! ```

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use memctl_benches::index::{ExactIndex, HnswIndex, HnswParams};
use memctl_engine::{
    Embedder, EmbedderId, HashEmbedder, Hit, MemLexicalIndex, TextGen, VectorIndex, dot_i8,
};
use std::collections::HashMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

const CORPUS_SEED: u64 = 20_240_501;
const QUERY_SEED: u64 = 77;
const N_QUERIES: usize = 100;
/// Vectors per encoded block (what the store is expected to use: a few hundred KB per value).
const BLOCK_VECTORS: usize = 1024;

fn big() -> bool {
    std::env::var_os("MEMCTL_BENCH_BIG").is_some_and(|v| v != "0")
}

fn space() -> EmbedderId {
    HashEmbedder::new().id().clone()
}

fn corpus(n: usize, seed: u64) -> Vec<Vec<f32>> {
    let e = HashEmbedder::new();
    let mut g = TextGen::new(seed);
    (0..n).map(|_| e.embed_one(&g.document())).collect()
}

fn items(vs: &[Vec<f32>]) -> Vec<(u64, &[f32])> {
    vs.iter()
        .enumerate()
        .map(|(i, v)| (i as u64, v.as_slice()))
        .collect()
}

fn recall(truth: &[Vec<Hit>], got: &[Vec<Hit>]) -> f64 {
    let mut s = 0.0;
    for (t, g) in truth.iter().zip(got) {
        s += g.iter().filter(|h| t.iter().any(|x| x.id == h.id)).count() as f64
            / t.len().max(1) as f64;
    }
    s / truth.len() as f64
}

struct Fixture {
    n: usize,
    vs: Vec<Vec<f32>>,
    queries: Vec<Vec<f32>>,
    exact: ExactIndex,
    hnsw: HnswIndex,
    truth: Vec<Vec<Hit>>,
}

fn fixture(n: usize) -> Fixture {
    println!("fixture n = {n}: corpus seed {CORPUS_SEED}, query seed {QUERY_SEED}");
    let t = Instant::now();
    let vs = corpus(n, CORPUS_SEED);
    let queries = corpus(N_QUERIES, QUERY_SEED);
    let mut exact = ExactIndex::new(space());
    exact.reserve(n);
    exact.insert_batch(&space(), &items(&vs)).unwrap();
    println!("  corpus + exact index: {:.1?}", t.elapsed());
    let t = Instant::now();
    let mut hnsw = HnswIndex::new(
        space(),
        HnswParams {
            capacity_hint: n,
            ..HnswParams::default()
        },
    );
    hnsw.insert_batch(&space(), &items(&vs)).unwrap();
    println!(
        "  hnsw build (M={}, efC={}, 2 threads): {:.1?}",
        hnsw.params().m,
        hnsw.params().ef_construction,
        t.elapsed()
    );
    let truth = queries
        .iter()
        .map(|q| exact.search_f32(&space(), q, 10).unwrap())
        .collect();
    Fixture {
        n,
        vs,
        queries,
        exact,
        hnsw,
        truth,
    }
}

fn search_group(c: &mut Criterion, f: &Fixture) {
    let all = |search: &dyn Fn(&[f32]) -> Vec<Hit>| -> Vec<Vec<Hit>> {
        f.queries.iter().map(|q| search(q)).collect()
    };
    let r_int8 = recall(
        &f.truth,
        &all(&|q| f.exact.search_int8(&space(), q, 10).unwrap()),
    );
    let r_exact = recall(
        &f.truth,
        &all(&|q| f.exact.search(&space(), q, 10).unwrap()),
    );
    let r_hnsw = recall(&f.truth, &all(&|q| f.hnsw.search(&space(), q, 10).unwrap()));
    println!(
        "recall@10 n={}: int8 only {r_int8:.4}, int8 + f32 re-score {r_exact:.4}, hnsw ef={} {r_hnsw:.4}",
        f.n,
        f.hnsw.params().ef_search
    );
    assert!(r_exact >= 0.99, "exact int8+rescore recall {r_exact}");
    assert!(r_hnsw >= 0.97, "hnsw recall {r_hnsw}");

    let mut g = c.benchmark_group(format!("search_k10/n={}", f.n));
    g.sample_size(20).measurement_time(Duration::from_secs(4));
    let mut qi = 0usize;
    let mut next = || {
        qi = (qi + 1) % f.queries.len();
        &f.queries[qi]
    };
    g.bench_function("exact_int8_rescore50", |b| {
        b.iter(|| black_box(f.exact.search(&space(), next(), 10).unwrap()))
    });
    g.bench_function("exact_f32_bruteforce", |b| {
        b.iter(|| black_box(f.exact.search_f32(&space(), next(), 10).unwrap()))
    });
    g.bench_function(format!("hnsw_ef{}", f.hnsw.params().ef_search), |b| {
        b.iter(|| black_box(f.hnsw.search(&space(), next(), 10).unwrap()))
    });
    g.finish();
}

/// The crossover the product rests on: a fresh process either reloads the HNSW dump (graph
/// deserialization) or scans encoded int8 blocks already in memory (from redb / mmap) and
/// re-scores 50 candidates in f32.
fn fresh_process_group(c: &mut Criterion, f: &Fixture) {
    let dir = tempfile::tempdir().unwrap();
    let t = Instant::now();
    f.hnsw.save(dir.path()).unwrap();
    println!("  hnsw save n={}: {:.1?}", f.n, t.elapsed());

    let ids: Vec<u64> = (0..f.n as u64).collect();
    let refs: Vec<&[f32]> = f.vs.iter().map(Vec::as_slice).collect();
    let blocks: Vec<Vec<u8>> = ids
        .chunks(BLOCK_VECTORS)
        .zip(refs.chunks(BLOCK_VECTORS))
        .map(|(i, v)| memctl_engine::encode_block(&space(), i, v).unwrap())
        .collect();
    let f32_by_id: HashMap<u64, &[f32]> = ids.iter().copied().zip(refs.iter().copied()).collect();
    let scan = |q: &[f32]| -> Vec<Hit> {
        let cands =
            memctl_engine::scan_blocks(blocks.iter().map(Vec::as_slice), &space(), q, 50).unwrap();
        memctl_engine::rescore(
            q,
            cands
                .iter()
                .filter_map(|h| Some((h.id, *f32_by_id.get(&h.id)?))),
            10,
        )
        .unwrap()
    };
    let got: Vec<Vec<Hit>> = f.queries.iter().map(|q| scan(q)).collect();
    let r_blocks = recall(&f.truth, &got);
    println!(
        "  blocks: {} × {BLOCK_VECTORS} vectors, {:.1} MB; scan+rescore recall@10 {r_blocks:.4}",
        blocks.len(),
        blocks.iter().map(Vec::len).sum::<usize>() as f64 / 1e6
    );
    assert!(r_blocks >= 0.99);

    let mut g = c.benchmark_group(format!("fresh_process/n={}", f.n));
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    g.bench_function("hnsw_load_then_search", |b| {
        b.iter(|| {
            let idx = HnswIndex::load(dir.path(), &space()).unwrap();
            black_box(idx.search(&space(), &f.queries[0], 10).unwrap())
        })
    });
    g.bench_function("scan_blocks_then_rescore", |b| {
        b.iter(|| black_box(scan(&f.queries[0])))
    });
    g.finish();
}

fn kernel_group(c: &mut Criterion) {
    // Check that the int8 kernel vectorized: it should beat the naive iterator clearly and run
    // well under 1 ns per component.
    let v = corpus(2, 5);
    let (a, _) = memctl_engine::quantize(&v[0]);
    let (b, _) = memctl_engine::quantize(&v[1]);
    let bu: Vec<u8> = b.iter().map(|x| *x as u8).collect();
    let naive = |a: &[i8], b: &[i8]| -> i32 {
        a.iter()
            .zip(b)
            .map(|(x, y)| i32::from(*x) * i32::from(*y))
            .sum()
    };
    assert_eq!(dot_i8(&a, &b), naive(&a, &b));
    let mut g = c.benchmark_group("kernel_384d");
    g.sample_size(30).measurement_time(Duration::from_secs(2));
    g.bench_function("dot_i8_chunked", |x| {
        x.iter(|| dot_i8(black_box(&a), black_box(&b)))
    });
    g.bench_function("dot_i8_u8_lanes", |x| {
        x.iter(|| dot_i8(black_box(&a), black_box(&bu)))
    });
    g.bench_function("dot_i8_naive_iter", |x| {
        x.iter(|| naive(black_box(&a), black_box(&b)))
    });
    g.bench_function("dot_f32", |x| {
        x.iter(|| memctl_engine::dot(black_box(&v[0]), black_box(&v[1])))
    });
    g.finish();
}

fn bm25_group(c: &mut Criterion) {
    let n = 10_000;
    let mut docs = TextGen::new(CORPUS_SEED);
    let mut ix = MemLexicalIndex::new();
    let t = Instant::now();
    for i in 0..n {
        ix.add(i, &docs.document());
    }
    println!("bm25: indexed {n} docs in {:.1?}", t.elapsed());
    let mut qg = TextGen::new(QUERY_SEED);
    let queries: Vec<String> = (0..N_QUERIES)
        .map(|_| {
            qg.sentence()
                .split(' ')
                .take(5)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let nonempty = queries
        .iter()
        .filter(|q| !ix.search(q, 10).is_empty())
        .count();
    assert!(nonempty > N_QUERIES / 2, "queries should match: {nonempty}");
    let mut g = c.benchmark_group("bm25/n=10000");
    g.sample_size(20).measurement_time(Duration::from_secs(3));
    let mut qi = 0usize;
    g.bench_with_input(
        BenchmarkId::new("search_k10", "5-word query"),
        &queries,
        |b, qs| {
            b.iter(|| {
                qi = (qi + 1) % qs.len();
                black_box(ix.search(&qs[qi], 10))
            })
        },
    );
    g.finish();
}

fn benches(c: &mut Criterion) {
    kernel_group(c);
    bm25_group(c);
    let f = fixture(10_000);
    search_group(c, &f);
    fresh_process_group(c, &f);
    drop(f);
    if big() {
        let f = fixture(50_000);
        fresh_process_group(c, &f);
        drop(f);
        let f = fixture(100_000);
        search_group(c, &f);
        fresh_process_group(c, &f);
    } else {
        println!("(set MEMCTL_BENCH_BIG=1 for N = 5e4 and 1e5)");
    }
}

criterion_group!(index, benches);
criterion_main!(index);
