//! Embedding throughput: all-MiniLM-L6-v2 fp32 on ONNX Runtime (1 intra-op thread, the hook
//! default) vs the hash fallback; tokenization alone. Needs `scripts/setup.sh` (the real model).
//!
//! Compute bound for reference: MiniLM-L6 costs ≈ 22.4 MFLOP per token at 128 tokens;
//! `scripts/bench.sh` relates the measured throughput to it.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use memctl_engine::{Embedder, HashEmbedder, OnnxConfig, OnnxEmbedder};
use std::hint::black_box;
use std::path::PathBuf;

const SENTENCE: &str =
    "How do I configure the hook timeout for PostToolUse events in settings.json?";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn batch() -> Vec<String> {
    // 32 realistic chunk-like texts of varied length (deterministic).
    (0..32)
        .map(|i| {
            let words = [
                "cargo",
                "test",
                "failed",
                "linker",
                "engine/src/store.rs",
                "redb",
                "commit",
                "the",
                "hook",
                "restore",
                "budget",
                "compaction",
                "summary",
                "error",
                "E0433",
                "path",
            ];
            let n = 12 + (i * 7) % 90;
            (0..n)
                .map(|j| words[(i * 31 + j * 17) % words.len()])
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let cfg = OnnxConfig::new(
        repo().join(".cache/onnxruntime/libonnxruntime.so.1.31.1"),
        repo().join("models/all-MiniLM-L6-v2"),
    );
    let model = OnnxEmbedder::load(&cfg)
        .expect("run scripts/setup.sh first: the real model is benchmarked");
    let hash = HashEmbedder::new();
    let texts = batch();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();

    // Sanity: the results are real, normalized vectors.
    let v = model.embed(SENTENCE).expect("embed");
    assert_eq!(v.len(), 384);
    assert!((v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-3);

    let mut g = c.benchmark_group("embed");
    g.throughput(Throughput::Elements(1));
    g.bench_function("onnx_fp32_single", |b| {
        b.iter(|| model.embed(black_box(SENTENCE)).expect("embed"))
    });
    g.bench_function("hash_single", |b| {
        b.iter(|| hash.embed_one(black_box(SENTENCE)))
    });
    g.throughput(Throughput::Elements(32));
    g.sample_size(10);
    g.bench_function("onnx_fp32_batch32", |b| {
        b.iter(|| model.embed_batch(black_box(&refs)).expect("embed"))
    });
    g.bench_function("hash_batch32", |b| {
        b.iter(|| hash.embed_batch(black_box(&refs)).expect("embed"))
    });
    g.finish();

    let mut g = c.benchmark_group("tokenize");
    g.throughput(Throughput::Elements(32));
    g.bench_function("batch32", |b| {
        b.iter(|| {
            refs.iter()
                .map(|t| model.token_count(black_box(t)).expect("tok"))
                .sum::<usize>()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
