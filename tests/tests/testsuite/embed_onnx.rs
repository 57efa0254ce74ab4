//! The real all-MiniLM-L6-v2 on ONNX Runtime: golden values from the Python reference run,
//! semantic sanity, batch/single agreement.

use memctl_engine::{Embedder, OnnxEmbedder, dot};
use memctl_test_support::fixture;
use memctl_tests::onnx_config;
use serde::Deserialize;
use std::sync::OnceLock;

#[derive(Deserialize)]
struct Golden {
    dims: usize,
    truncation: usize,
    sentences: Vec<GoldenSentence>,
}

#[derive(Deserialize)]
struct GoldenSentence {
    text: String,
    n_tokens: usize,
    embedding: Vec<f32>,
    int8_embedding: Vec<f32>,
}

fn model() -> &'static OnnxEmbedder {
    static M: OnceLock<OnnxEmbedder> = OnceLock::new();
    M.get_or_init(|| OnnxEmbedder::load(&onnx_config()).expect("load the ONNX embedder"))
}

fn golden() -> Golden {
    let raw = std::fs::read_to_string(fixture("golden_embeddings.json")).expect("golden fixture");
    serde_json::from_str(&raw).expect("golden fixture parses")
}

#[test]
fn matches_python_reference_within_1e_4() {
    let g = golden();
    let m = model();
    assert_eq!(m.dims(), g.dims);
    let mut worst = 0.0f32;
    for s in &g.sentences {
        let v = m.embed(&s.text).expect("embed");
        assert_eq!(v.len(), g.dims);
        let diff = v
            .iter()
            .zip(&s.embedding)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        worst = worst.max(diff);
        assert!(diff < 1e-4, "{:?}: max abs diff {diff}", s.text);
        assert_eq!(
            m.token_count(&s.text).expect("tokens"),
            s.n_tokens.min(g.truncation),
            "{:?}",
            s.text
        );
        // The int8 variant is a different space but must agree closely on real sentences.
        let cos_int8 = dot(&v, &s.int8_embedding);
        assert!(
            cos_int8 > 0.995,
            "{:?}: fp32 vs int8 cosine {cos_int8}",
            s.text
        );
    }
    println!("golden: max abs diff vs python reference = {worst:e}");
}

#[test]
fn batch_equals_single() {
    let g = golden();
    let m = model();
    let texts: Vec<&str> = g.sentences.iter().map(|s| s.text.as_str()).collect();
    let batch = m.embed_batch(&texts).expect("batch");
    for (t, b) in texts.iter().zip(&batch) {
        let single = m.embed(t).expect("single");
        let diff = single
            .iter()
            .zip(b)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(diff < 1e-5, "{t:?}: batch vs single diff {diff}");
    }
}

#[test]
fn token_budget_batches_keep_input_order_and_pad_little() {
    // An embedder of its own: the shared one's counters see the other tests' batches too.
    let mut cfg = onnx_config();
    cfg.token_budget = 512;
    let m = OnnxEmbedder::load(&cfg).expect("load the ONNX embedder");
    let words = [
        "cargo",
        "test",
        "engine/src/store.rs",
        "redb",
        "the",
        "hook",
        "E0433",
    ];
    // Lengths from 2 to ~300 tokens in scrambled order (truncated at 256): several batches.
    let texts: Vec<String> = (0..48)
        .map(|i| {
            (0..1 + (i * 37) % 100)
                .map(|j| words[(i + j) % words.len()])
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let before = m.stats();
    let batch = m.embed_batch(&refs).expect("batch");
    let d = m.stats().since(&before);
    assert_eq!(d.texts, 48);
    assert!(d.batches >= 4, "a 512-cell budget cuts many batches: {d:?}");
    assert!(d.cells >= d.tokens && d.cells > 0, "{d:?}");
    assert!(d.padding_fraction() < 0.15, "sorted by tokens: {d:?}");
    for (t, b) in refs.iter().zip(&batch) {
        let single = m.embed(t).expect("single");
        let diff = single
            .iter()
            .zip(b)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(diff < 1e-5, "{t:?}: batch vs single diff {diff}");
    }
}

#[test]
fn paraphrases_are_closer_than_unrelated() {
    let m = model();
    let pairs = [
        (
            "The build fails because the linker cannot find libssl.",
            "Linking breaks since libssl is missing on the machine.",
            "We went hiking in the mountains last weekend.",
        ),
        (
            "Rename the function parse_config to load_settings.",
            "Change the name of parse_config so it is called load_settings.",
            "The cat is sleeping on the warm windowsill.",
        ),
        (
            "How do I make the test suite run faster?",
            "What can speed up running the tests?",
            "Paris is the capital of France.",
        ),
    ];
    for (a, b, c) in pairs {
        let v = m.embed_batch(&[a, b, c]).expect("embed");
        let close = dot(&v[0], &v[1]);
        let far = dot(&v[0], &v[2]);
        assert!(
            close > far + 0.2,
            "{a:?}: paraphrase {close} vs unrelated {far}"
        );
    }
}

#[test]
fn vectors_are_normalized_and_tagged() {
    let m = model();
    let v = m.embed("a normalized vector").expect("embed");
    let n: f32 = v.iter().map(|x| x * x).sum();
    assert!((n - 1.0).abs() < 1e-4);
    assert_eq!(m.id().model, "all-MiniLM-L6-v2");
    assert_eq!(m.id().dims, 384);
    assert_ne!(m.id(), memctl_engine::HashEmbedder::new().id());
    assert!(
        m.id()
            .ensure_same(memctl_engine::HashEmbedder::new().id())
            .is_err()
    );
}

#[test]
fn empty_batch_is_empty() {
    assert!(model().embed_batch(&[]).expect("empty").is_empty());
}

/// ort allows one environment per process; a second embedder (a second `Engine`, a test, a
/// long-lived process reloading) must share it instead of failing. Regression test.
#[test]
fn several_embedders_in_one_process() {
    let a = OnnxEmbedder::load(&onnx_config()).expect("first");
    let b = OnnxEmbedder::load(&onnx_config()).expect("second");
    let va = a.embed("same text").expect("a");
    let vb = b.embed("same text").expect("b");
    assert!(dot(&va, &vb) > 0.9999);
}
