//! What a stored record costs per encoding (the choice behind schema 2, `engine/src/codec.rs`):
//! the chunk records of the sample transcript as bare bincode (schema 1), a format version
//! byte + bincode (schema 2, what is stored), CBOR (self-describing, field names in every
//! record) and JSON. Prints the bytes per record; criterion measures encode and decode.

use criterion::{Criterion, criterion_group, criterion_main};
use memctl_engine::{
    ChunkRecord, Engine, EngineOptions, IngestOptions, SearchRequest, decode_record, encode_record,
};
use std::hint::black_box;
use std::path::PathBuf;

/// Every chunk record of the sample transcript, ingested with hash vectors into a temp store.
fn records() -> Vec<ChunkRecord> {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = tempfile::tempdir().expect("tempdir");
    let mut o = EngineOptions::from_settings(&memctl_engine::Settings::default());
    o.data_dir = dir.path().to_path_buf();
    o.model_disabled = true;
    let e = Engine::open(o).expect("engine");
    let t = repo.join("tests/fixtures/sample/db5b5fab-8f4d-4e27-9da1-494c73cf256d.jsonl");
    e.ingest_transcript(
        &t,
        &IngestOptions {
            embed_with_model: false,
            ..IngestOptions::default()
        },
    )
    .expect("ingest");
    // Every chunk: the union of lexical searches for words most turns hold.
    let mut recs: Vec<ChunkRecord> = Vec::new();
    for q in [
        "kiln",
        "tests",
        "user",
        "assistant",
        "file",
        "error",
        "README",
        "check",
    ] {
        let mut req = SearchRequest::new(q, 1000);
        req.mode = memctl_engine::SearchMode::Lexical;
        for r in e.search(&req).expect("search").results {
            if !recs.contains(&r.record) {
                recs.push(r.record);
            }
        }
    }
    assert!(recs.len() >= 40, "{} records", recs.len());
    recs
}

/// One record in each encoding: bincode, versioned, CBOR, JSON.
type Encoded = (Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>);

fn bincode_body(r: &ChunkRecord) -> Vec<u8> {
    bincode::serde::encode_to_vec(r, bincode::config::standard()).expect("bincode")
}

fn cbor(r: &ChunkRecord) -> Vec<u8> {
    let mut out = Vec::new();
    ciborium::into_writer(r, &mut out).expect("cbor");
    out
}

fn bench(c: &mut Criterion) {
    let recs = records();
    let n = recs.len() as f64;
    let mean = |f: &dyn Fn(&ChunkRecord) -> Vec<u8>| {
        recs.iter().map(|r| f(r).len()).sum::<usize>() as f64 / n
    };
    let versioned = |r: &ChunkRecord| encode_record(r).expect("encode");
    let json = |r: &ChunkRecord| serde_json::to_vec(r).expect("json");
    println!(
        "bytes per chunk record ({} records): bincode {:.0}, version byte + bincode {:.0}, CBOR {:.0}, JSON {:.0}",
        recs.len(),
        mean(&bincode_body),
        mean(&versioned),
        mean(&cbor),
        mean(&json)
    );
    let encoded: Vec<Encoded> = recs
        .iter()
        .map(|r| (bincode_body(r), versioned(r), cbor(r), json(r)))
        .collect();
    let mut g = c.benchmark_group("record");
    g.bench_function("encode/bincode", |b| {
        b.iter(|| {
            recs.iter()
                .map(|r| bincode_body(black_box(r)).len())
                .sum::<usize>()
        })
    });
    g.bench_function("encode/versioned", |b| {
        b.iter(|| {
            recs.iter()
                .map(|r| versioned(black_box(r)).len())
                .sum::<usize>()
        })
    });
    g.bench_function("encode/cbor", |b| {
        b.iter(|| recs.iter().map(|r| cbor(black_box(r)).len()).sum::<usize>())
    });
    g.bench_function("encode/json", |b| {
        b.iter(|| recs.iter().map(|r| json(black_box(r)).len()).sum::<usize>())
    });
    g.bench_function("decode/bincode", |b| {
        b.iter(|| {
            for (x, _, _, _) in &encoded {
                let (r, _): (ChunkRecord, usize) =
                    bincode::serde::decode_from_slice(black_box(x), bincode::config::standard())
                        .expect("decode");
                black_box(r);
            }
        })
    });
    g.bench_function("decode/versioned", |b| {
        b.iter(|| {
            for (_, x, _, _) in &encoded {
                black_box(decode_record::<ChunkRecord>(black_box(x)).expect("decode"));
            }
        })
    });
    g.bench_function("decode/cbor", |b| {
        b.iter(|| {
            for (_, _, x, _) in &encoded {
                let r: ChunkRecord =
                    ciborium::from_reader(black_box(x.as_slice())).expect("decode");
                black_box(r);
            }
        })
    });
    g.bench_function("decode/json", |b| {
        b.iter(|| {
            for (_, _, _, x) in &encoded {
                let r: ChunkRecord = serde_json::from_slice(black_box(x)).expect("decode");
                black_box(r);
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
