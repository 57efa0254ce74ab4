//! The archive/restore pipeline in-process: transcript parse + chunk (MB/s), what ingest derives
//! per chunk (term counts, hash vector; MB/s of chunk text on one core), ingest end to end
//! (chunks/s, hash-only and with the ONNX model), restore build on a 5000-turn session, and each
//! hook event's in-process path. Fixed seeds (`memctl_tests::transcript_gen`, seed 42, without
//! the CLI bookkeeping extras); results asserted.
//!
//! Needs, for the ONNX ingest, `scripts/setup.sh`.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use memctl_engine::{
    AgentEvent, ChunkerConfig, Embedder, Engine, EngineOptions, EventKind, HashEmbedder,
    HookConfig, IngestOptions, RestoreConfig, RestoreKind, StartKind, chunk_transcript,
    handle_event, term_frequencies,
};
use memctl_tests::transcript_gen::{GenConfig, generate};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A generated transcript of `turns` turns (cached under target/bench-data). Without extras:
/// the conversation lines only, as the reference generator writes them.
fn transcript(turns: u64) -> PathBuf {
    let dir = repo().join("target/bench-data");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let path = dir.join(format!("t{turns}-seed42-rs.jsonl"));
    if !path.exists() {
        let cfg = GenConfig {
            turns,
            seed: 42,
            extras: false,
            ..GenConfig::default()
        };
        std::fs::write(&path, generate(&cfg)).expect("write");
    }
    path
}

fn engine(home: &Path, model: bool) -> Engine {
    let mut o = EngineOptions::from_settings(&memctl_engine::Settings::default());
    o.data_dir = home.to_path_buf();
    o.model_disabled = !model;
    o.onnx = memctl_engine::OnnxConfig::new(
        repo().join(".cache/onnxruntime/libonnxruntime.so.1.31.1"),
        repo().join("models/all-MiniLM-L6-v2"),
    );
    Engine::open(o).expect("engine")
}

fn session_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("read");
    text.lines()
        .find_map(|l| {
            let i = l.find("\"sessionId\":\"")? + 13;
            Some(l[i..i + 36].to_string())
        })
        .expect("session id")
}

fn bench(c: &mut Criterion) {
    let t5000 = transcript(5000);
    let t500 = transcript(500);
    let bytes5000 = std::fs::read(&t5000).expect("read");

    let mut g = c.benchmark_group("parse_chunk");
    g.throughput(Throughput::Bytes(bytes5000.len() as u64));
    g.sample_size(10);
    g.bench_function("5000_turns", |b| {
        b.iter(|| {
            let batch = chunk_transcript(black_box(&bytes5000), "s", &ChunkerConfig::default());
            assert!(batch.turns.len() >= 5000);
            batch.chunks.len()
        })
    });
    g.finish();

    // What ingest derives from each chunk on the pool (term counts, hash vector), over the
    // chunks of the 500-turn transcript: one thread, so the figures are per core.
    let texts: Vec<String> = chunk_transcript(
        &std::fs::read(&t500).expect("read"),
        "s",
        &ChunkerConfig::default(),
    )
    .chunks
    .into_iter()
    .map(|c| c.chunk.text)
    .collect();
    let n500 = texts.len();
    let text_bytes: usize = texts.iter().map(String::len).sum();
    let mut g = c.benchmark_group("derive");
    g.throughput(Throughput::Bytes(text_bytes as u64));
    g.sample_size(10);
    g.bench_function("term_frequencies_500_turns", |b| {
        b.iter(|| {
            let n: usize = texts
                .iter()
                .map(|t| term_frequencies(black_box(t)).len())
                .sum();
            assert!(n > texts.len());
            n
        })
    });
    let hash = HashEmbedder::new();
    let dims = hash.id().dims;
    g.bench_function("hash_vectors_500_turns", |b| {
        b.iter(|| {
            let n: usize = texts
                .iter()
                .map(|t| hash.embed_one(black_box(t)).len())
                .sum();
            assert_eq!(n, texts.len() * dims);
            n
        })
    });
    g.finish();

    let mut g = c.benchmark_group("ingest");
    g.sample_size(10);
    g.throughput(Throughput::Elements(n500 as u64));
    g.bench_function("500_turns_hash_only", |b| {
        b.iter_batched(
            || tempfile::tempdir().expect("tempdir"),
            |dir| {
                let e = engine(dir.path(), false);
                let opts = IngestOptions {
                    embed_with_model: false,
                    ..IngestOptions::default()
                };
                let r = e.ingest_transcript(&t500, &opts).expect("ingest");
                assert_eq!(r.inserted + r.duplicates, n500 as u64);
            },
            BatchSize::PerIteration,
        )
    });
    // With the model: a 50-turn transcript keeps this bench short on 2 cores.
    let t50 = transcript(50);
    let n50 = chunk_transcript(
        &std::fs::read(&t50).expect("read"),
        "s",
        &ChunkerConfig::default(),
    )
    .chunks
    .len();
    g.throughput(Throughput::Elements(n50 as u64));
    g.bench_function("50_turns_onnx", |b| {
        b.iter_batched(
            || tempfile::tempdir().expect("tempdir"),
            |dir| {
                let e = engine(dir.path(), true);
                if let Err(why) = e.model() {
                    panic!("the ONNX model must load for this bench: {why}");
                }
                let r = e
                    .ingest_transcript(&t50, &IngestOptions::default())
                    .expect("ingest");
                assert!(
                    r.embedder
                        .as_deref()
                        .is_some_and(|m| m.starts_with("all-MiniLM"))
                );
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();

    // A 5000-turn session archived once; restore and hook paths run against it.
    let dir = tempfile::tempdir().expect("tempdir");
    let e = engine(dir.path(), false);
    let opts = IngestOptions {
        embed_with_model: false,
        ..IngestOptions::default()
    };
    e.ingest_transcript(&t5000, &opts).expect("ingest 5000");
    let sid = session_of(&t5000);
    let project = "/home/dev/src/quill-notes";
    let mut g = c.benchmark_group("restore");
    g.bench_function("build_5000_turn_session", |b| {
        b.iter(|| {
            let r = e
                .restore(
                    &sid,
                    project,
                    RestoreKind::Compact,
                    &RestoreConfig::default(),
                )
                .expect("restore");
            assert!(!r.text.is_empty() && r.text.chars().count() <= 4000);
        })
    });
    g.finish();

    let mut g = c.benchmark_group("hook_inprocess_5000");
    let cfg = HookConfig::default();
    let deadline = || Instant::now() + Duration::from_secs(10);
    // The engine's events for Claude Code's UserPromptSubmit, SessionStart(compact) and
    // PreCompact (what `memctl_hooks::claude` translates their payloads to).
    let event = |kind: EventKind| AgentEvent {
        session_id: sid.to_string(),
        transcript_path: Some(t5000.clone()),
        cwd: Some(project.to_string()),
        kind,
    };
    let ups = event(EventKind::Prompt { prompt: "x".into() });
    g.bench_function("user_prompt_submit_nothing_new", |b| {
        b.iter(|| handle_event(&e, &ups, deadline(), &cfg).expect("ups"))
    });
    let ss = event(EventKind::SessionStart(StartKind::Compact));
    g.bench_function("session_start_compact", |b| {
        b.iter(|| handle_event(&e, &ss, deadline(), &cfg).expect("ss"))
    });
    let pc = event(EventKind::BeforeCompact { instructions: None });
    g.bench_function("pre_compact", |b| {
        b.iter(|| handle_event(&e, &pc, deadline(), &cfg).expect("pc"))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
