use super::*;
use crate::embed::Embedder;
use crate::engine::Engine;
use crate::search::SearchMode;
use crate::{EngineOptions, IngestOptions, SearchRequest};
use std::collections::HashSet;

pub(crate) const SID: &str = "db5b5fab-8f4d-4e27-9da1-494c73cf256d";
pub(crate) const PROJECT: &str = "/home/dev/src/quill-notes";

/// An engine over a temp dir holding the sample transcript (hash vectors only).
pub(crate) fn engine_with_fixture() -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().expect("tempdir");
    let data_dir = dir.path().join("data");
    let engine = Engine::open(EngineOptions {
        onnx: crate::embed::OnnxConfig::discover(Some(&data_dir)),
        data_dir,
        model_disabled: true,
        resident: Default::default(),
    })
    .expect("open");
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../tests/fixtures/sample/{SID}.jsonl"));
    engine
        .ingest_transcript(
            &fixture,
            &IngestOptions {
                embed_with_model: false,
                ..IngestOptions::default()
            },
        )
        .expect("ingest");
    (dir, engine)
}

fn all_ids(engine: &Engine) -> Vec<ChunkId> {
    let r = engine.store().read().unwrap();
    let mut v = Vec::new();
    r.for_each_chunk(|id, _| {
        v.push(id);
        Ok(())
    })
    .unwrap();
    v
}

/// Make every chunk with an id in `old` look `days` old and never accessed.
fn age(engine: &Engine, old: &[ChunkId], now: i64, days: i64) {
    engine
        .store()
        .write(|w| {
            for &id in old {
                let mut rec = w.get_record(id)?.unwrap();
                rec.ingested_at = now - days * 86_400;
                rec.last_access = None;
                rec.access_count = 0;
                w.update_record(id, &rec)?;
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn verdict_applies_decay_since_last_access() {
    let (_d, engine) = engine_with_fixture();
    let id = all_ids(&engine)[0];
    let rec = engine.store().read().unwrap().chunk(id).unwrap().unwrap();
    let p = RankParams::default();
    let now = rec.ingested_at;
    assert!(!verdict(&rec, now, &p).0, "fresh chunk kept");
    // 200 h without use: 1.0 − 0.005 × 200 → floor 0.1 ≤ 0.15 → pruned.
    let (pruned, input) = verdict(&rec, now + 200 * 3600, &p);
    assert!(pruned);
    assert!((input.confidence - 0.1).abs() < 1e-6);
    // Accessed recently: decay counts from the access, and accessed chunks are kept.
    let used = ChunkRecord {
        access_count: 1,
        last_access: Some(now + 199 * 3600),
        ..rec.clone()
    };
    assert!(!verdict(&used, now + 200 * 3600, &p).0);
    let pinned = ChunkRecord {
        pinned: true,
        ..rec
    };
    assert!(!verdict(&pinned, now + 1000 * 86_400, &p).0);
}

#[test]
fn dry_run_changes_nothing_real_run_prunes_and_keeps_pinned() {
    let (_d, engine) = engine_with_fixture();
    let ids = all_ids(&engine);
    let now = unix_now();
    let old: Vec<ChunkId> = ids.iter().copied().filter(|i| i % 2 == 0).collect();
    age(&engine, &old, now, 40);
    let pinned = old[0];
    assert!(set_pinned(engine.core(), pinned, true).unwrap());
    assert!(!set_pinned(engine.core(), 999_999, true).unwrap());
    let p = RankParams::default();

    let dry = prune_all(engine.core(), &p, true, Some(now)).unwrap();
    assert!(dry.dry_run);
    assert_eq!(dry.examined, ids.len() as u64);
    assert_eq!(dry.pruned, old.len() as u64 - 1);
    assert_eq!(dry.pinned_kept, 1);
    assert_eq!(dry.vectors_dropped, 0, "no tombstones yet");
    assert_eq!(all_ids(&engine), ids, "dry run deletes nothing");

    let real = prune_all(engine.core(), &p, false, Some(now)).unwrap();
    assert_eq!(real.pruned, dry.pruned);
    assert_eq!(real.pinned_kept, 1);
    assert!(real.turns_unlinked >= real.pruned);
    assert_eq!(
        real.vectors_dropped, real.pruned,
        "one hash vector per chunk"
    );
    assert!(real.blocks_after <= real.blocks_before);
    let left: HashSet<ChunkId> = all_ids(&engine).into_iter().collect();
    assert!(left.contains(&pinned));
    for id in &old {
        assert_eq!(left.contains(id), *id == pinned);
    }
    // Unpin and prune again: now it goes.
    assert!(set_pinned(engine.core(), pinned, false).unwrap());
    let again = prune_all(engine.core(), &p, false, Some(now)).unwrap();
    assert_eq!((again.pruned, again.pinned_kept), (1, 0));
    // Nothing left to prune: idempotent.
    let none = prune_all(engine.core(), &p, false, Some(now)).unwrap();
    assert_eq!((none.pruned, none.vectors_dropped), (0, 0));
}

#[test]
fn indexes_are_consistent_after_prune() {
    let (_d, engine) = engine_with_fixture();
    let ids = all_ids(&engine);
    let now = unix_now();
    let old: Vec<ChunkId> = ids.iter().copied().filter(|i| i % 3 != 0).collect();
    // Queries that certainly hit deleted chunks: their own summaries.
    let queries: Vec<String> = {
        let r = engine.store().read().unwrap();
        old.iter()
            .take(10)
            .map(|id| r.chunk(*id).unwrap().unwrap().chunk.summary)
            .collect()
    };
    age(&engine, &old, now, 40);
    let rep = prune_all(engine.core(), &RankParams::default(), false, Some(now)).unwrap();
    assert_eq!(rep.pruned, old.len() as u64);
    let dead: HashSet<ChunkId> = old.iter().copied().collect();
    let alive: HashSet<ChunkId> = all_ids(&engine).into_iter().collect();
    assert!(alive.is_disjoint(&dead));

    let r = engine.store().read().unwrap();
    let pid = r.project_id(PROJECT).unwrap().unwrap();
    // Turn entries and session links only point at live chunks.
    for (_, id) in r.session_turns(SID).unwrap() {
        assert!(
            alive.contains(&id),
            "turn entry points at deleted chunk {id}"
        );
    }
    for id in r.session_chunk_ids(SID).unwrap() {
        assert!(alive.contains(&id), "session link to deleted chunk {id}");
    }
    // Int8 blocks were compacted: exactly the live ids remain, and the count is exact.
    let emb = engine.core().hash_embedder().id().clone();
    let block_ids: HashSet<ChunkId> = r.block_ids(pid, &emb).unwrap().into_iter().collect();
    assert_eq!(block_ids, alive);
    assert_eq!(r.vector_count(pid, &emb).unwrap(), alive.len() as u64);
    assert_eq!(r.dead_vector_ids(pid).unwrap(), 0);
    // The vector scan and BM25 postings never return a deleted chunk.
    for q in &queries {
        let qv = engine
            .core()
            .hash_embedder()
            .embed_batch(&[q.as_str()])
            .unwrap()
            .remove(0);
        for h in r.scan_vectors(&[pid], &emb, &qv, 100, None).unwrap() {
            assert!(
                alive.contains(&h.id),
                "vector scan returned deleted {}",
                h.id
            );
        }
        let lex = crate::retrieve::Retriever::new(&r)
            .lexical(&[pid], q, 100)
            .unwrap()
            .hits;
        for h in lex {
            assert!(alive.contains(&h.id), "BM25 returned deleted {}", h.id);
        }
        for mode in [SearchMode::Hybrid, SearchMode::Lexical, SearchMode::Dense] {
            let mut req = SearchRequest::new(q.clone(), 10);
            req.mode = mode;
            for res in engine.search(&req).unwrap().results {
                assert!(alive.contains(&res.id));
            }
        }
    }
    drop(r);
    // New vectors still append correctly after compaction (tail entry rewritten).
    engine
        .ingest_transcript(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("../tests/fixtures/sample/{SID}.jsonl")),
            &IngestOptions {
                embed_with_model: false,
                ..IngestOptions::default()
            },
        )
        .unwrap();
    let r = engine.store().read().unwrap();
    let n = r.chunk_count().unwrap();
    assert_eq!(r.vector_count(pid, &emb).unwrap(), n);
    assert_eq!(r.block_ids(pid, &emb).unwrap().len() as u64, n);
}

#[test]
fn auto_pass_is_bounded_rate_limited_and_off_by_default() {
    let (_d, engine) = engine_with_fixture();
    let ids = all_ids(&engine);
    let now = unix_now();
    age(&engine, &ids, now, 40);
    assert_eq!(
        auto_pass(engine.core(), &AutoPruneConfig::default(), Some(now)).unwrap(),
        None
    );
    let cfg = AutoPruneConfig {
        enabled: true,
        max_examined: 10,
        max_time: Duration::from_secs(5),
        ..AutoPruneConfig::default()
    };
    let first = auto_pass(engine.core(), &cfg, Some(now)).unwrap().unwrap();
    assert_eq!((first.examined, first.pruned), (10, 10));
    assert_eq!(all_ids(&engine).len(), ids.len() - 10);
    // Within the hour: does not run.
    assert_eq!(
        auto_pass(engine.core(), &cfg, Some(now + 60)).unwrap(),
        None
    );
    // An hour later: resumes after the cursor.
    let second = auto_pass(engine.core(), &cfg, Some(now + 3600))
        .unwrap()
        .unwrap();
    assert_eq!(second.pruned, 10);
    let left = all_ids(&engine);
    assert_eq!(left.len(), ids.len() - 20);
    assert!(left.iter().all(|id| *id > ids[19]), "oldest ids went first");
}
