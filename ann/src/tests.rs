//! The graph against the exact oracle on real-model vectors, and the service against a real
//! store: following appends, a forget (never returned, files gone, graph rebuilt), a restart
//! from the saved graph, files that do not match their sidecar, and `memctl check` of them.

use crate::dist::{point, query_point};
use crate::{AnnConfig, AnnService, Graph, GraphParams, GraphState, Layered, check_index, persist};
use memctl_engine::{
    DenseService, Embedder, EmbedderId, Engine, EngineOptions, ForgetReport, ForgetRequest,
    HashEmbedder, IngestOptions, OnnxConfig,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// A proptest config of `cases` cases from the fixed `seed`, which it prints.
pub(crate) fn proptest_config(seed: u64, cases: u32) -> proptest::test_runner::Config {
    println!("proptest seed {seed:#x}");
    proptest::test_runner::Config {
        cases,
        rng_seed: proptest::test_runner::RngSeed::Fixed(seed),
        ..proptest::test_runner::Config::default()
    }
}

/// A small deterministic generator (the seed is printed by the tests that use it).
pub(crate) struct Rng(pub(crate) u64);
impl Rng {
    pub(crate) fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

fn unit(mut v: Vec<f32>) -> Vec<f32> {
    memctl_engine::l2_normalize(&mut v);
    v
}

/// The committed golden embeddings: real all-MiniLM-L6-v2 vectors.
pub(crate) fn golden() -> Vec<Vec<f32>> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/golden_embeddings.json");
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("golden file")).expect("json");
    doc["sentences"]
        .as_array()
        .expect("sentences")
        .iter()
        .map(|s| {
            s["embedding"]
                .as_array()
                .expect("embedding")
                .iter()
                .map(|x| x.as_f64().unwrap_or_default() as f32)
                .collect()
        })
        .collect()
}

/// `n` model-space vectors: random mixtures of the real ones plus noise, normalized.
pub(crate) fn model_like(rng: &mut Rng, base: &[Vec<f32>], n: usize) -> Vec<Vec<f32>> {
    (0..n)
        .map(|_| {
            let w: Vec<f32> = base.iter().map(|_| rng.next().powi(3)).collect();
            let v = (0..base[0].len())
                .map(|d| {
                    let mix: f32 = base.iter().zip(&w).map(|(b, w)| b[d] * w).sum();
                    mix + 0.04 * (rng.next() - 0.5)
                })
                .collect();
            unit(v)
        })
        .collect()
}

pub(crate) fn stored_point(v: &[f32]) -> Vec<i8> {
    let (q, scale) = memctl_engine::quantize(v);
    let raw: Vec<u8> = q.iter().map(|&c| c as u8).collect();
    point(&raw, scale)
}

/// A graph of `data`, chunk id = position.
pub(crate) fn graph_of(data: &[Vec<f32>]) -> Graph {
    let g = Graph::new(GraphParams::default(), data.len());
    let points: Vec<(u64, Vec<i8>)> = data
        .iter()
        .enumerate()
        .map(|(i, v)| (i as u64, stored_point(v)))
        .collect();
    g.insert(&points);
    g
}

pub(crate) fn exact_top(data: &[Vec<f32>], q: &[f32], k: usize) -> Vec<u64> {
    let mut s: Vec<(f32, u64)> = data
        .iter()
        .enumerate()
        .map(|(i, v)| (memctl_engine::dot(v, q), i as u64))
        .collect();
    s.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    s.into_iter().take(k).map(|x| x.1).collect()
}

#[test]
fn the_graph_with_rescoring_finds_what_the_exact_scan_finds() {
    let seed = 0x05ee_da11_u64;
    println!("seed {seed:#x}");
    let mut rng = Rng(seed);
    let base = golden();
    let data = model_like(&mut rng, &base, 4000);
    let queries = model_like(&mut rng, &base, 100);
    let g = graph_of(&data);
    assert_eq!(g.len(), data.len());
    let (mut found, mut total) = (0usize, 0usize);
    for q in &queries {
        let truth = exact_top(&data, q, 10);
        // What the retrieval does: 50 graph candidates re-scored with the stored vectors.
        let mut cand: Vec<(f32, u64)> = g
            .search(&query_point(q), 50)
            .iter()
            .map(|h| (memctl_engine::dot(&data[h.id as usize], q), h.id))
            .collect();
        cand.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let got: Vec<u64> = cand.into_iter().take(10).map(|x| x.1).collect();
        found += truth.iter().filter(|t| got.contains(t)).count();
        total += truth.len();
    }
    let recall = found as f64 / total as f64;
    println!(
        "recall@10 {recall:.4} over {} queries, n = {}",
        queries.len(),
        data.len()
    );
    assert!(recall >= 0.95, "recall@10 {recall} (seed {seed:#x})");
}

#[test]
fn tombstones_are_never_returned() {
    let mut rng = Rng(7);
    println!("seed 7");
    let data = model_like(&mut rng, &golden(), 500);
    let g = graph_of(&data);
    let keep: std::collections::HashSet<u64> = (0..500u64).filter(|i| i % 3 != 0).collect();
    assert_eq!(g.retain(&keep), 167);
    for q in data.iter().take(50) {
        for h in g.search(&query_point(q), 20) {
            assert!(keep.contains(&h.id), "tombstone {} returned", h.id);
        }
    }
}

struct Store {
    _tmp: tempfile::TempDir,
    opts: EngineOptions,
}

fn sample_store() -> Store {
    let tmp = tempfile::tempdir().expect("tempdir");
    let none = tmp.path().join("no-model");
    let opts = EngineOptions {
        data_dir: tmp.path().join("data"),
        onnx: OnnxConfig::new(none.join("lib.so"), &none),
        model_disabled: true,
        resident: Default::default(),
    };
    let sample: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/sample/db5b5fab-8f4d-4e27-9da1-494c73cf256d.jsonl");
    let e = Engine::open(opts.clone()).expect("open");
    let opts_ingest = IngestOptions {
        embed_with_model: false,
        ..IngestOptions::default()
    };
    e.ingest_transcript(&sample, &opts_ingest).expect("ingest");
    Store { _tmp: tmp, opts }
}

fn space() -> EmbedderId {
    HashEmbedder::new().id().clone()
}

fn config() -> AnnConfig {
    AnnConfig {
        min_vectors: 1,
        step: 16,
        poll: Duration::from_millis(1),
        save_after: Duration::ZERO,
        ..AnnConfig::default()
    }
}

/// Every stored entry of the space: (chunk, its int8 vector back in f32).
fn entries(e: &Engine) -> Vec<(u64, Vec<f32>)> {
    let mut out = Vec::new();
    e.follow_vectors(&space(), &[], None, u64::MAX, &mut |f| {
        let v = f
            .codes
            .iter()
            .map(|&b| f32::from(b as i8) * f.scale)
            .collect();
        out.push((f.id, v));
    })
    .expect("follow");
    out
}

/// Forget the turn of `chunk` through the engine, as `memctl forget` does.
fn forget_chunk(e: &Engine, chunk: u64) -> ForgetReport {
    let req = ForgetRequest {
        chunk_ids: vec![chunk],
        ..ForgetRequest::default()
    };
    e.forget(&req, false).expect("forget")
}

fn catch_up(svc: &AnnService, e: &Engine) {
    for _ in 0..1000 {
        svc.step(e).expect("step");
        if svc.caught_up(e).expect("caught up") {
            return;
        }
    }
    panic!("the index never caught up");
}

#[test]
fn the_service_follows_the_store_forgets_and_restarts_from_its_files() {
    let s = sample_store();
    let e = Engine::open(s.opts.clone()).expect("open");
    let all = entries(&e);
    assert!(all.len() >= 20, "sample has {} vectors", all.len());
    let svc = AnnService::new(s.opts.clone(), space(), config());
    assert!(
        svc.search(&space(), &[1], &all[0].1, 5).is_none(),
        "answered before reading"
    );
    catch_up(&svc, &e);
    let total: usize = svc.sizes().values().sum();
    assert_eq!(total, all.len());
    let projects: Vec<u32> = svc.sizes().keys().copied().collect();
    for (id, v) in all.iter().take(10) {
        let a = svc.search(&space(), &projects, v, 3).expect("answer");
        assert_eq!(a.hits[0].id, *id, "an entry's own vector finds it first");
    }
    svc.save_now(&e);
    let dir = memctl_engine::ann_dir(&s.opts.data_dir);
    assert!(!persist::saved_projects(&dir).is_empty(), "nothing saved");

    // Forget the turn of one chunk: its files go at once, the graph stops returning it, and
    // the rebuilt graph that is saved again does not hold it.
    let (gone, gone_v) = all[5].clone();
    let rep = forget_chunk(&e, gone);
    assert!(!rep.removed_ids.is_empty());
    assert!(
        persist::saved_projects(&dir).is_empty(),
        "forget left index files"
    );
    catch_up(&svc, &e);
    let a = svc
        .search(&space(), &projects, &gone_v, 50)
        .expect("answer");
    for h in &a.hits {
        assert!(
            !rep.removed_ids.contains(&h.id),
            "forgotten chunk {} returned",
            h.id
        );
    }
    assert_eq!(svc.sizes().values().sum::<usize>(), entries(&e).len());
    svc.save_now(&e);
    let saved = persist::saved_projects(&dir);
    for p in &saved {
        let l = persist::load(&dir, *p).expect("load").expect("saved");
        let g = Layered {
            base: l.base.map(Arc::new),
            tail: Arc::new(l.tail),
        };
        assert_eq!(g.dead(), 0, "a saved graph holds tombstones after a forget");
        for id in &rep.removed_ids {
            assert!(!g.contains(*id));
        }
    }

    // A restarted service answers from its files and has nothing to read.
    let again = AnnService::new(s.opts.clone(), space(), config());
    again.load_saved();
    assert_eq!(again.sizes(), svc.sizes());
    assert!(
        again.caught_up(&e).expect("caught up"),
        "a saved graph had to re-read"
    );
}

/// The sample store with a service index that has read and saved all of it.
struct Saved {
    store: Store,
    engine: Engine,
    svc: AnnService,
    dir: PathBuf,
}

fn saved_index() -> Saved {
    let store = sample_store();
    let engine = Engine::open(store.opts.clone()).expect("open");
    let svc = AnnService::new(store.opts.clone(), space(), config());
    catch_up(&svc, &engine);
    svc.save_now(&engine);
    let dir = memctl_engine::ann_dir(&store.opts.data_dir);
    Saved {
        store,
        engine,
        svc,
        dir,
    }
}

#[test]
fn index_files_that_do_not_match_their_sidecar_are_refused_and_removed() {
    let Saved {
        store: s,
        engine: e,
        svc,
        dir,
    } = saved_index();
    let data = std::fs::read_dir(&dir)
        .expect("dir")
        .flatten()
        .map(|d| d.path())
        .find(|p| p.to_string_lossy().ends_with(".hnsw.data"))
        .expect("a dump");
    let mut bytes = std::fs::read(&data).expect("read");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x5a;
    std::fs::write(&data, bytes).expect("write");
    let p = persist::saved_projects(&dir)[0];
    assert!(
        persist::load(&dir, p).is_err(),
        "an altered dump was loaded"
    );
    let again = AnnService::new(s.opts.clone(), space(), config());
    again.load_saved();
    assert!(
        persist::saved_projects(&dir).is_empty(),
        "the bad files stayed"
    );
    catch_up(&again, &e);
    assert_eq!(again.sizes(), svc.sizes(), "the rebuilt index differs");
}

/// A graph of project `p` saved at the store's current position with `points`.
fn save_crafted(e: &Engine, dir: &Path, p: u32, points: &[(u64, Vec<i8>)]) {
    let f = e
        .follow_vectors(&space(), &[], None, u64::MAX, &mut |_| {})
        .expect("follow");
    let cursor = *f.cursors.iter().find(|c| c.project == p).expect("cursor");
    let g = Graph::new(GraphParams::default(), points.len());
    g.insert(points);
    let pos = persist::Position {
        space: space().key(),
        epoch: f.epoch,
        cursor,
        forgets: e.forget_epoch().expect("forget count"),
    };
    persist::save(dir, p, &Layered::new(Arc::new(g)), None, &pos).expect("save");
}

#[test]
fn check_finds_a_saved_graph_that_differs_from_the_store() {
    let Saved {
        store: _s,
        engine: e,
        dir,
        ..
    } = saved_index();
    let ok = check_index(&dir, &e, &space()).expect("check");
    assert!(ok.violations.is_empty(), "{:?}", ok.violations);
    assert!(!ok.graphs.is_empty());
    assert!(ok.graphs.iter().all(|g| g.state == GraphState::Current));
    let points: u64 = ok.graphs.iter().map(|g| g.points).sum();
    assert_eq!(points as usize, entries(&e).len());

    // One point the store does not hold, and one entry left out.
    let p = ok.graphs[0].project;
    let mut mine = Vec::new();
    e.follow_vectors(&space(), &[], None, u64::MAX, &mut |f| {
        if f.project == p {
            mine.push((f.id, point(f.codes, f.scale)));
        }
    })
    .expect("follow");
    let mut foreign = mine.clone();
    foreign.push((u64::MAX / 2, mine[0].1.clone()));
    save_crafted(&e, &dir, p, &foreign);
    let bad = check_index(&dir, &e, &space()).expect("check");
    assert_eq!(bad.violations.len(), 1, "{:?}", bad.violations);
    assert!(bad.violations[0].contains("no longer holds"));
    save_crafted(&e, &dir, p, &mine[1..]);
    let bad = check_index(&dir, &e, &space()).expect("check");
    assert!(
        bad.violations[0].contains("not in it"),
        "{:?}",
        bad.violations
    );
    assert!(bad.graphs.iter().any(|g| g.state == GraphState::Broken));

    // A sidecar that does not match its dump.
    let meta = dir.join(format!("p{p}.meta"));
    let mut bytes = std::fs::read(&meta).expect("read");
    let last = bytes.len() - 1;
    bytes[last] ^= 0x01;
    std::fs::write(&meta, bytes).expect("write");
    let bad = check_index(&dir, &e, &space()).expect("check");
    assert!(
        bad.violations[0].contains("checksum"),
        "{:?}",
        bad.violations
    );
}

/// A service that freezes small tails: 8 points make a base, a tail of a tenth of it merges.
fn freezing_config() -> AnnConfig {
    AnnConfig {
        freeze: crate::FreezePolicy {
            min_points: 8,
            merge_percent: 10,
        },
        ..config()
    }
}

fn flat_files(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .filter(|n| n.ends_with(".flat"))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The project directory of the sample transcript.
fn sample_cwd() -> String {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/sample/db5b5fab-8f4d-4e27-9da1-494c73cf256d.jsonl");
    let text = std::fs::read_to_string(sample).expect("sample");
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|v| v.get("cwd")?.as_str().map(str::to_string))
        .expect("a cwd")
}

/// A Claude Code transcript of `turns` turns of another session in the sample's project,
/// each on its own subject.
fn later_session(turns: usize) -> String {
    let cwd = sample_cwd();
    let mut out = String::new();
    for t in 0..turns {
        let ts = |s: usize| format!("2026-01-02T10:{:02}:{:02}Z", t, s);
        let user = serde_json::json!({
            "type": "user", "sessionId": "later-session", "cwd": cwd,
            "uuid": format!("u{t}"), "timestamp": ts(0),
            "message": {"role": "user", "content": format!("subject {t}: tune the shard{t} cache{t} ratio")},
        });
        let reply = serde_json::json!({
            "type": "assistant", "sessionId": "later-session", "cwd": cwd,
            "uuid": format!("a{t}"), "parentUuid": format!("u{t}"), "timestamp": ts(5),
            "message": {"role": "assistant", "content": [{"type": "text",
                "text": format!("Set shard{t} ratio to {t}.{t} and cache{t} to {} entries.", t * 97)}]},
        });
        out.push_str(&format!("{user}\n{reply}\n"));
    }
    out
}

/// Every entry's own vector finds it first, whichever part holds it.
fn finds_each_entry_first(svc: &AnnService, all: &[(u64, Vec<f32>)]) {
    let projects: Vec<u32> = svc.sizes().keys().copied().collect();
    for (id, v) in all {
        let a = svc.search(&space(), &projects, v, 3).expect("answer");
        assert_eq!(a.hits[0].id, *id, "an entry's own vector finds it first");
    }
}

#[test]
fn a_frozen_base_and_a_tail_serve_save_restart_check_and_forget_like_one_graph() {
    let s = sample_store();
    let e = Engine::open(s.opts.clone()).expect("open");
    let all = entries(&e);
    assert!(all.len() >= 40, "sample has {} vectors", all.len());
    let dir = memctl_engine::ann_dir(&s.opts.data_dir);
    let svc = AnnService::new(s.opts.clone(), space(), freezing_config());

    // Caught up and quiet, the graph becomes the base.
    catch_up(&svc, &e);
    svc.save_now(&e);
    let parts = svc.parts();
    assert_eq!(
        parts.values().map(|p| p.0).sum::<usize>(),
        all.len(),
        "{parts:?}"
    );
    assert!(parts.values().all(|p| p.1 == 0), "{parts:?}");
    let first = flat_files(&dir);
    assert_eq!(first.len(), 1, "the base is saved");
    assert!(
        svc.restart_wanted(),
        "the frozen tail's memory needs a restart"
    );
    finds_each_entry_first(&svc, &all);

    // A later session's turns go into a tail beside the base.
    let later = s.opts.data_dir.join("later.jsonl");
    std::fs::write(&later, later_session(24)).expect("write");
    let opts_ingest = IngestOptions {
        embed_with_model: false,
        ..IngestOptions::default()
    };
    e.ingest_transcript(&later, &opts_ingest).expect("ingest");
    let all = entries(&e);
    catch_up(&svc, &e);
    let parts = svc.parts();
    assert!(parts.values().any(|p| p.0 > 0 && p.1 > 0), "{parts:?}");
    assert_eq!(svc.sizes().values().sum::<usize>(), all.len());
    finds_each_entry_first(&svc, &all);

    // The tail is past a tenth of the base: saving merges both into one new base, and the old
    // base's file goes.
    svc.save_now(&e);
    let parts = svc.parts();
    assert!(parts.values().all(|p| p.1 == 0), "tail left: {parts:?}");
    assert_eq!(parts.values().map(|p| p.0).sum::<usize>(), all.len());
    let merged = flat_files(&dir);
    assert_eq!(merged.len(), 1);
    assert_ne!(merged, first, "the merged base is a new file");
    finds_each_entry_first(&svc, &all);

    // A restart answers from the files, has nothing to read, and the check finds them current.
    let again = AnnService::new(s.opts.clone(), space(), freezing_config());
    again.load_saved();
    assert_eq!(again.sizes(), svc.sizes());
    assert!(
        again.caught_up(&e).expect("caught up"),
        "re-read after a restart"
    );
    finds_each_entry_first(&again, &all);
    let check = check_index(&dir, &e, &space()).expect("check");
    assert!(check.violations.is_empty(), "{:?}", check.violations);
    assert!(check.graphs.iter().all(|g| g.state == GraphState::Current));
    assert_eq!(
        check.graphs.iter().map(|g| g.points).sum::<u64>(),
        all.len() as u64
    );

    // Forget one chunk held by the base: every index file goes, the chunk is never returned,
    // and what is saved again does not hold it.
    let (gone, gone_v) = all[3].clone();
    let rep = forget_chunk(&e, gone);
    assert!(flat_files(&dir).is_empty(), "forget left a base file");
    catch_up(&again, &e);
    let projects: Vec<u32> = again.sizes().keys().copied().collect();
    let a = again
        .search(&space(), &projects, &gone_v, 50)
        .expect("answer");
    assert!(a.hits.iter().all(|h| !rep.removed_ids.contains(&h.id)));
    assert_eq!(again.sizes().values().sum::<usize>(), entries(&e).len());
    again.save_now(&e);
    let check = check_index(&dir, &e, &space()).expect("check");
    assert!(check.violations.is_empty(), "{:?}", check.violations);
    for p in persist::saved_projects(&dir) {
        let l = persist::load(&dir, p).expect("load").expect("saved");
        let g = Layered {
            base: l.base.map(Arc::new),
            tail: Arc::new(l.tail),
        };
        assert_eq!(g.dead(), 0);
        assert!(rep.removed_ids.iter().all(|id| !g.contains(*id)));
    }
}

#[test]
fn a_damaged_or_missing_base_file_is_refused_and_the_index_rebuilt() {
    for damage in ["flip", "remove"] {
        let store = sample_store();
        let e = Engine::open(store.opts.clone()).expect("open");
        let svc = AnnService::new(store.opts.clone(), space(), freezing_config());
        catch_up(&svc, &e);
        svc.save_now(&e);
        let dir = memctl_engine::ann_dir(&store.opts.data_dir);
        let flat = dir.join(&flat_files(&dir)[0]);
        if damage == "flip" {
            let mut bytes = std::fs::read(&flat).expect("read");
            let mid = bytes.len() / 2;
            bytes[mid] ^= 0x5a;
            std::fs::write(&flat, bytes).expect("write");
        } else {
            std::fs::remove_file(&flat).expect("remove");
        }
        let p = persist::saved_projects(&dir)[0];
        assert!(persist::load(&dir, p).is_err(), "{damage}: loaded");
        assert!(
            persist::read_saved(&dir, p).is_err(),
            "{damage}: checked as sound"
        );
        let again = AnnService::new(store.opts.clone(), space(), freezing_config());
        again.load_saved();
        assert!(
            persist::saved_projects(&dir).is_empty() && flat_files(&dir).is_empty(),
            "{damage}: the bad files stayed"
        );
        catch_up(&again, &e);
        assert_eq!(
            again.sizes(),
            svc.sizes(),
            "{damage}: the rebuilt index differs"
        );
    }
}

#[test]
fn a_freeze_asks_for_a_restart_only_once_its_base_is_saved_and_strays_go_at_load() {
    let store = sample_store();
    let e = Engine::open(store.opts.clone()).expect("open");
    let dir = memctl_engine::ann_dir(&store.opts.data_dir);
    let svc = AnnService::new(store.opts.clone(), space(), freezing_config());
    catch_up(&svc, &e);

    // The index directory cannot be made: the tail freezes, the save fails, no restart.
    std::fs::write(&dir, b"not a directory").expect("block the directory");
    svc.save_now(&e);
    assert!(svc.parts().values().all(|p| p.0 > 0 && p.1 == 0));
    assert!(
        !svc.restart_wanted(),
        "a restart now would rebuild the base"
    );
    std::fs::remove_file(&dir).expect("unblock");
    svc.save_now(&e);
    assert_eq!(flat_files(&dir).len(), 1, "the base is saved");
    assert!(
        svc.restart_wanted(),
        "saved: the restart gives the memory back"
    );

    // What an interrupted save leaves: another process's temporary file, a base the sidecar
    // does not name, the files of a project without a sidecar. A restart removes them and
    // loads what the sidecar names.
    let p = persist::saved_projects(&dir)[0];
    let strays = [
        format!("p{p}-f99.flat"),
        format!("p{p}.meta.tmp-1"),
        format!("p{p}-f98.flat.tmp-1"),
        "p77-g0.hnsw.data".to_string(),
    ];
    for s in &strays {
        std::fs::write(dir.join(s), b"partial").expect("plant");
    }
    let again = AnnService::new(store.opts.clone(), space(), freezing_config());
    again.load_saved();
    for s in &strays {
        assert!(!dir.join(s).exists(), "{s} stayed");
    }
    assert_eq!(again.sizes(), svc.sizes());
    assert_eq!(flat_files(&dir).len(), 1);
    assert!(
        again.caught_up(&e).expect("caught up"),
        "nothing to re-read"
    );
}
