//! The graph alone against the exact int8 scan, on a real store and real query embeddings:
//! build time for (M, efC), then recall@10 within the top 50 and search time per beam.
//!
//!     cargo run --release -p memctl-ann --example graph_recall -- DATA_DIR M EFC [EF,EF,...]
//!     cargo run --release -p memctl-ann --example graph_recall -- DATA_DIR saved - [EF,EF,...]
//!
//! `saved`: the graphs the service saved under `DATA_DIR/ann` (as it searches them after a
//! restart), every project's searched and merged, instead of a graph built here;
//! `saved-ordered`: the same with each base renumbered in search order first (as a freeze
//! lays a base out now), to compare the two layouts of one graph.
//!
//! Needs the model (`source .cache/env.sh`: ORT_DYLIB_PATH, MEMCTL_MODEL_DIR). Queries: 100
//! seeded 2–4 word combinations of the words scripts/bench_scale.py uses (seed printed).

use anyhow::{Context, Result};
use memctl_ann::dist::{point, query_point};
use memctl_ann::{Graph, GraphParams, Layered};
use memctl_engine::{Embedder, EmbedderId, Engine, EngineOptions, OnnxConfig, OnnxEmbedder};
use std::sync::Arc;
use std::time::Instant;

const WORDS: [&str; 17] = [
    "build", "error", "cache", "test", "deploy", "config", "index", "query", "shard", "migrate",
    "timeout", "retry", "parser", "schema", "token", "bucket", "release",
];

struct Stored {
    ids: Vec<u64>,
    points: Vec<Vec<i8>>,
    vectors: Vec<Vec<f32>>,
}

fn stored(dir: &str, model: &OnnxConfig) -> Result<Stored> {
    let opts = EngineOptions {
        data_dir: dir.into(),
        onnx: model.clone(),
        model_disabled: true,
        resident: Default::default(),
    };
    let e = Engine::open_read_only(opts).context("opening the store")?;
    let space: EmbedderId = model.embedder_id();
    let mut s = Stored {
        ids: Vec::new(),
        points: Vec::new(),
        vectors: Vec::new(),
    };
    e.follow_vectors(&space, &[], None, u64::MAX, &mut |f| {
        s.ids.push(f.id);
        s.points.push(point(f.codes, f.scale));
        s.vectors.push(
            f.codes
                .iter()
                .map(|&b| f32::from(b as i8) * f.scale)
                .collect(),
        );
    })?;
    Ok(s)
}

fn queries(model: &OnnxConfig, seed: u64) -> Result<Vec<Vec<f32>>> {
    let emb = OnnxEmbedder::load(model)?;
    let mut x = seed;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..100)
        .map(|_| {
            let n = 2 + (next() % 3) as usize;
            let words: Vec<&str> = (0..n)
                .map(|_| WORDS[(next() % WORDS.len() as u64) as usize])
                .collect();
            Ok(emb.embed(&words.join(" "))?)
        })
        .collect()
}

fn exact_top10(s: &Stored, q: &[f32]) -> Vec<u64> {
    let mut all: Vec<(f32, u64)> = s
        .vectors
        .iter()
        .zip(&s.ids)
        .map(|(v, &id)| (memctl_engine::dot(v, q), id))
        .collect();
    all.sort_by(|a, b| b.0.total_cmp(&a.0));
    all.into_iter().take(10).map(|x| x.1).collect()
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: graph_recall DATA_DIR (M EFC | saved - | saved-ordered -) [EF,EF,...]";
    let (dir, m_arg, efc_arg) = match &args[1..] {
        [d, m, e, ..] => (d, m.as_str(), e.as_str()),
        _ => anyhow::bail!(usage),
    };
    let efs: Vec<usize> = args
        .get(4)
        .map_or("500,1000,2000", String::as_str)
        .split(',')
        .map(str::parse)
        .collect::<Result<_, _>>()?;
    let model = OnnxConfig::new(
        std::env::var("ORT_DYLIB_PATH").context("ORT_DYLIB_PATH")?,
        std::env::var("MEMCTL_MODEL_DIR").context("MEMCTL_MODEL_DIR")?,
    );
    let s = stored(dir, &model)?;
    let seed = 12345;
    let qs = queries(&model, seed)?;
    let truth: Vec<Vec<u64>> = qs.iter().map(|q| exact_top10(&s, q)).collect();
    let graphs = if m_arg.starts_with("saved") {
        let ann = memctl_engine::ann_dir(std::path::Path::new(dir));
        let mut gs = Vec::new();
        for p in memctl_ann::persist::saved_projects(&ann) {
            if let Some(l) = memctl_ann::persist::load(&ann, p)? {
                // The beam is the run's, not the one the service saved with.
                let base = match l.base {
                    Some(b) if m_arg == "saved-ordered" => Some(b.in_search_order()?),
                    b => b,
                };
                gs.push(Layered {
                    base: base.map(|b| Arc::new(b.with_ef_search(0))),
                    tail: Arc::new(l.tail.with_ef_search(0)),
                });
            }
        }
        let n: usize = gs.iter().map(Layered::len).sum();
        println!("{n} points in {} saved graphs; seed {seed}", gs.len());
        gs
    } else {
        let (m, efc) = (m_arg.parse()?, efc_arg.parse()?);
        let params = GraphParams {
            m,
            ef_construction: efc,
            ef_search: 0,
        };
        let g = Graph::new(params, s.ids.len());
        let t = Instant::now();
        let batch: Vec<(u64, Vec<i8>)> = s.ids.iter().copied().zip(s.points).collect();
        for part in batch.chunks(5000) {
            g.insert(part);
        }
        let build = t.elapsed().as_secs_f64();
        println!(
            "{} points, M {m}, efC {efc}: built in {build:.1} s; seed {seed}",
            s.ids.len()
        );
        vec![Layered::new(Arc::new(g))]
    };
    for ef in efs {
        let t = Instant::now();
        let found: usize = qs
            .iter()
            .zip(&truth)
            .map(|(q, want)| {
                let qp = query_point(q);
                let mut got: Vec<_> = graphs
                    .iter()
                    .flat_map(|g| g.search_ef(&qp, 50, ef))
                    .collect();
                got.sort_by(|a, b| b.score.total_cmp(&a.score));
                got.truncate(50);
                want.iter()
                    .filter(|id| got.iter().any(|h| h.id == **id))
                    .count()
            })
            .sum();
        let ms = t.elapsed().as_secs_f64() * 1000.0 / qs.len() as f64;
        let recall = found as f64 / (10 * qs.len()) as f64;
        println!("beam {ef}: recall@10 within the top 50 {recall:.3}, {ms:.2} ms per search");
    }
    Ok(())
}
