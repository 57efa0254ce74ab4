//! The resident copy of the int8 blocks answers exactly as the scan of the store, through
//! appends (new turns), compactions (prune after deletions) and forget's file rewrite.

use super::*;
use crate::embed::{Embedder, HashEmbedder};
use crate::forget::fixture::{self, three_sessions};

/// Candidates from both paths for a few queries, in every project.
fn assert_same(e: &crate::Engine, cache: &ResidentBlocks, what: &str) {
    let r = e.store().read().expect("read");
    let pids = r.project_ids().expect("projects");
    let h = HashEmbedder::new();
    for q in [
        "deploy the scheduler",
        "release tag",
        "cache warmup",
        "rename a flag",
        "zzz",
    ] {
        let v = h.embed(q).expect("embed");
        let emb = h.id();
        for scope in [pids.clone(), vec![pids[0]]] {
            let want = r.scan_vectors(&scope, emb, &v, 20, None).expect("scan");
            let got = r
                .scan_vectors(&scope, emb, &v, 20, Some(cache))
                .expect("resident scan");
            assert_eq!(got, want, "{what}: {q} in {scope:?}");
        }
    }
}

#[test]
fn resident_blocks_answer_as_the_store_through_appends_compactions_and_rewrites() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    let cache = ResidentBlocks::default();
    assert_same(&e, &cache, "first load");
    assert!(cache.bytes() > 0);
    assert_same(&e, &cache, "cached");

    // Appends: enough new turns to fill the tail block and start new ones.
    let turns: Vec<(String, String)> = (0..560)
        .map(|i| {
            (
                format!("Question {i} about the ledger shard {i}"),
                format!("Answer {i}: shard {i} is rebuilt nightly"),
            )
        })
        .collect();
    let t: Vec<fixture::Turn<'_>> = turns.iter().map(|(p, a)| fixture::turn(p, a)).collect();
    let tdir = dir.path().join("more");
    std::fs::create_dir_all(&tdir).expect("mkdir");
    let path = fixture::transcript(
        &tdir,
        "dddd4444-0000-4000-8000-000000000004",
        fixture::project_a(),
        &t,
    );
    let tail_before = e
        .store()
        .read()
        .expect("read")
        .vector_count(1, HashEmbedder::new().id())
        .expect("count");
    fixture::ingest(&e, &path);
    let tail_after = e
        .store()
        .read()
        .expect("read")
        .vector_count(1, HashEmbedder::new().id())
        .expect("count");
    assert!(
        tail_after >= tail_before + 560 && tail_after > 2 * BLOCK_VECTORS as u64,
        "{tail_before} → {tail_after}"
    );
    assert_same(&e, &cache, "after appends");

    // Deletions and a compaction that re-packs the blocks.
    let req = crate::forget::ForgetRequest {
        chunk_ids: Vec::new(),
        session: Some("dddd4444".into()),
        project: None,
        since: None,
        until: None,
        text: None,
    };
    e.forget(&req, false).expect("forget");
    assert_same(&e, &cache, "after a forget (rewritten file)");
    let pid = e
        .store()
        .read()
        .expect("read")
        .project_id(fixture::project_a())
        .expect("pid")
        .expect("a project");
    let rep = e
        .store()
        .write(|w| w.compact_vectors(pid))
        .expect("compact");
    assert!(
        rep.vectors_dropped > 0 || rep.blocks_before >= rep.blocks_after,
        "{rep:?}"
    );
    assert_same(&e, &cache, "after a compaction");
    let epoch = e
        .store()
        .read()
        .expect("read")
        .meta_value(META_BLOCK_EPOCH)
        .expect("meta");
    assert!(
        epoch.is_some(),
        "the forget's deletions re-packed blocks: the epoch moved"
    );
}
