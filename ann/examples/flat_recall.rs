//! The flat layout against hnsw_rs's on a real store: resident memory before and after
//! building, after freezing and after dropping the hnsw_rs graph, then recall@10 within the
//! top 50 (against the exact scan) and search time per beam for both layouts.
//!
//!     cargo run --release -p memctl-ann --example flat_recall -- DATA_DIR M EFC OUT [EF,...]
//!     cargo run --release -p memctl-ann --example flat_recall -- DATA_DIR saved - OUT [EF,...]
//!     cargo run --release -p memctl-ann --example flat_recall -- - flat - OUT [EF,...]
//!
//! The first two build a graph (or load the graphs the service saved under `DATA_DIR/ann`),
//! freeze it and write `OUT.<i>.flat` and `OUT.queries` (the query points and their exact
//! top 10). `flat` only loads those files and searches: the resident memory of a process that
//! never held the store or an hnsw_rs graph (freed memory that glibc keeps does not blur it).
//!
//! Needs the model except in `flat` mode (`source .cache/env.sh`: ORT_DYLIB_PATH,
//! MEMCTL_MODEL_DIR). Queries: the 100 seeded 2–4 word queries of examples/graph_recall.

use anyhow::{Context, Result};
use memctl_ann::dist::{point, query_point};
use memctl_ann::{FlatGraph, Graph, GraphParams};
use memctl_engine::{AnnHit, Embedder, Engine, EngineOptions, OnnxConfig, OnnxEmbedder};
use std::path::{Path, PathBuf};
use std::time::Instant;

const WORDS: [&str; 17] = [
    "build", "error", "cache", "test", "deploy", "config", "index", "query", "shard", "migrate",
    "timeout", "retry", "parser", "schema", "token", "bucket", "release",
];
const SEED: u64 = 12345;

/// The queries as points and their exact top 10 (chunk ids), as `OUT.queries` keeps them.
#[derive(serde::Serialize, serde::Deserialize)]
struct Queries {
    points: Vec<Vec<i8>>,
    truth: Vec<Vec<u64>>,
}

/// The store's points: (chunk id, point).
type Points = Vec<(u64, Vec<i8>)>;

/// VmRSS of this process, MB.
fn rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn model() -> Result<OnnxConfig> {
    Ok(OnnxConfig::new(
        std::env::var("ORT_DYLIB_PATH").context("ORT_DYLIB_PATH")?,
        std::env::var("MEMCTL_MODEL_DIR").context("MEMCTL_MODEL_DIR")?,
    ))
}

/// The store's points (chunk id, point) and the queries with their exact top 10; the f32
/// vectors of the exact scan are dropped before this returns.
fn store_and_queries(dir: &str, model: &OnnxConfig) -> Result<(Points, Queries)> {
    let opts = EngineOptions {
        data_dir: dir.into(),
        onnx: model.clone(),
        model_disabled: true,
        resident: Default::default(),
    };
    let e = Engine::open_read_only(opts).context("opening the store")?;
    let (mut points, mut vectors) = (Vec::new(), Vec::new());
    e.follow_vectors(&model.embedder_id(), &[], None, u64::MAX, &mut |f| {
        points.push((f.id, point(f.codes, f.scale)));
        let v: Vec<f32> = f
            .codes
            .iter()
            .map(|&b| f32::from(b as i8) * f.scale)
            .collect();
        vectors.push(v);
    })?;
    let emb = OnnxEmbedder::load(model)?;
    let mut x = SEED;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut qs = Queries {
        points: Vec::new(),
        truth: Vec::new(),
    };
    for _ in 0..100 {
        let n = 2 + (next() % 3) as usize;
        let words: Vec<&str> = (0..n)
            .map(|_| WORDS[(next() % WORDS.len() as u64) as usize])
            .collect();
        let q = emb.embed(&words.join(" "))?;
        let mut all: Vec<(f32, u64)> = vectors
            .iter()
            .zip(&points)
            .map(|(v, (id, _))| (memctl_engine::dot(v, &q), *id))
            .collect();
        all.sort_by(|a, b| b.0.total_cmp(&a.0));
        qs.truth
            .push(all.into_iter().take(10).map(|x| x.1).collect());
        qs.points.push(query_point(&q));
    }
    Ok((points, qs))
}

/// Recall@10 within the top 50 and ms per search of `search` (every graph searched, merged).
fn measure(label: &str, qs: &Queries, efs: &[usize], search: impl Fn(&[i8], usize) -> Vec<AnnHit>) {
    for &ef in efs {
        let t = Instant::now();
        let found: usize = qs
            .points
            .iter()
            .zip(&qs.truth)
            .map(|(q, want)| {
                let mut got = search(q, ef);
                got.sort_by(|a, b| b.score.total_cmp(&a.score));
                got.truncate(50);
                want.iter()
                    .filter(|id| got.iter().any(|h| h.id == **id))
                    .count()
            })
            .sum();
        let ms = t.elapsed().as_secs_f64() * 1000.0 / qs.points.len() as f64;
        let recall = found as f64 / (10 * qs.points.len()) as f64;
        println!(
            "{label} beam {ef}: recall@10 within the top 50 {recall:.3}, {ms:.2} ms per search"
        );
    }
}

fn flat_path(out: &str, i: usize) -> PathBuf {
    PathBuf::from(format!("{out}.{i}.flat"))
}

/// Build (or load the saved) graphs, freeze them, measure both, save the flat copies.
fn build_mode(dir: &str, m_arg: &str, efc_arg: &str, out: &str, efs: &[usize]) -> Result<()> {
    let model = model()?;
    let (points, qs) = store_and_queries(dir, &model)?;
    println!(
        "{} points, 100 queries (seed {SEED}); RSS {:.0} MB",
        points.len(),
        rss_mb()
    );
    let t = Instant::now();
    let graphs: Vec<Graph> = if m_arg == "saved" {
        drop(points);
        let ann = memctl_engine::ann_dir(Path::new(dir));
        let mut gs = Vec::new();
        for p in memctl_ann::persist::saved_projects(&ann) {
            gs.extend(memctl_ann::persist::load(&ann, p)?.map(|l| l.tail));
        }
        gs
    } else {
        let params = GraphParams {
            m: m_arg.parse()?,
            ef_construction: efc_arg.parse()?,
            ef_search: 0,
        };
        let g = Graph::new(params, points.len());
        for part in points.chunks(5000) {
            g.insert(part);
        }
        drop(points);
        vec![g]
    };
    let n: usize = graphs.iter().map(Graph::len).sum();
    println!(
        "hnsw_rs: {n} points in {} graph(s), {} in {:.1} s; RSS {:.0} MB",
        graphs.len(),
        if m_arg == "saved" { "loaded" } else { "built" },
        t.elapsed().as_secs_f64(),
        rss_mb()
    );
    let t = Instant::now();
    let flats: Vec<FlatGraph> = graphs
        .iter()
        .map(FlatGraph::freeze)
        .collect::<Result<_, _>>()?;
    let bytes: usize = flats.iter().map(FlatGraph::memory_bytes).sum();
    println!(
        "frozen in {:.1} s: flat memory_bytes {:.0} MB; RSS {:.0} MB",
        t.elapsed().as_secs_f64(),
        bytes as f64 / 1e6,
        rss_mb()
    );
    measure("hnsw_rs", &qs, efs, |q, ef| {
        graphs.iter().flat_map(|g| g.search_ef(q, 50, ef)).collect()
    });
    measure("flat", &qs, efs, |q, ef| {
        flats.iter().flat_map(|g| g.search_ef(q, 50, ef)).collect()
    });
    drop(graphs);
    println!("hnsw_rs graph dropped: RSS {:.0} MB", rss_mb());
    for (i, f) in flats.iter().enumerate() {
        f.save(&flat_path(out, i))?;
    }
    let config = bincode::config::standard();
    let body = bincode::serde::encode_to_vec(&qs, config)?;
    std::fs::write(format!("{out}.queries"), body)?;
    println!(
        "saved {} flat file(s) and the queries under {out}",
        flats.len()
    );
    Ok(())
}

/// Load only the flat files and the queries, and search.
fn flat_mode(out: &str, efs: &[usize]) -> Result<()> {
    let before = rss_mb();
    let t = Instant::now();
    let mut flats = Vec::new();
    while let Some(f) = FlatGraph::load(&flat_path(out, flats.len()))? {
        flats.push(f.with_ef_search(0));
    }
    let load = t.elapsed().as_secs_f64();
    let file_mb: f64 = (0..flats.len())
        .map(|i| std::fs::metadata(flat_path(out, i)).map_or(0, |m| m.len()) as f64 / 1e6)
        .sum();
    let bytes: usize = flats.iter().map(FlatGraph::memory_bytes).sum();
    let n: usize = flats.iter().map(FlatGraph::len).sum();
    println!(
        "flat: {n} points in {} file(s) of {file_mb:.0} MB loaded in {load:.2} s; \
         memory_bytes {:.0} MB; RSS {before:.0} MB before, {:.0} MB after",
        flats.len(),
        bytes as f64 / 1e6,
        rss_mb()
    );
    for f in &flats {
        println!("{f:?}");
    }
    let body = std::fs::read(format!("{out}.queries"))?;
    let (qs, _): (Queries, usize) =
        bincode::serde::decode_from_slice(&body, bincode::config::standard())?;
    measure("flat", &qs, efs, |q, ef| {
        flats.iter().flat_map(|g| g.search_ef(q, 50, ef)).collect()
    });
    println!("after the searches: RSS {:.0} MB", rss_mb());
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: flat_recall (DATA_DIR (M EFC | saved -) | - flat -) OUT [EF,EF,...]";
    let [dir, m_arg, efc_arg, out, rest @ ..] = &args[1..] else {
        anyhow::bail!(usage)
    };
    let efs: Vec<usize> = rest
        .first()
        .map_or("500,1000,2000,3000", String::as_str)
        .split(',')
        .map(str::parse)
        .collect::<Result<_, _>>()?;
    if m_arg == "flat" {
        flat_mode(out, &efs)
    } else {
        build_mode(dir, m_arg, efc_arg, out, &efs)
    }
}
