//! The quiet-moment reclaim: hash vectors of model-embedded chunks go (rows, record spaces and
//! int8 entries), nothing happens while chunks are pending, free pages are given back by a
//! rewrite, and the store checks clean and answers as before throughout.

use super::*;
use crate::embed::{Embedder, HashEmbedder};
use crate::forget::fixture::{audit, lexical_hits, three_sessions};
use crate::store::check;

/// A stand-in model space (no ONNX here): any key without the hash prefix is a model's.
fn model() -> EmbedderId {
    EmbedderId::new("test-model", "fp32", 384)
}

/// Give every chunk a "model" vector the way schema 3 left them: both spaces listed, both
/// vectors stored, nothing pending. Returns the chunks embedded.
fn embed_all_keeping_hash(e: &crate::Engine) -> u64 {
    let h = HashEmbedder::new();
    let mut recs = Vec::new();
    e.store()
        .read()
        .expect("read")
        .for_each_chunk(|id, rec| {
            recs.push((id, rec));
            Ok(())
        })
        .expect("chunks");
    let m = model();
    e.store()
        .write(|w| {
            for (id, rec) in &recs {
                // The hash vector of the reversed text: a different space, same dimensions.
                let text: String = rec.chunk.text.chars().rev().collect();
                let v = h.embed(&text).expect("embed");
                w.put_vector(rec.project_id, *id, &m, &v)?;
                let mut cur = w.get_record(*id)?.expect("record");
                cur.embedders.push(m.key());
                w.update_record(*id, &cur)?;
                w.clear_pending(*id)?;
            }
            Ok(())
        })
        .expect("embed");
    recs.len() as u64
}

/// Dense hits in the model space for a query, from every project.
fn model_hits(e: &crate::Engine, q: &str) -> Vec<u64> {
    let r = e.store().read().expect("read");
    let pids = r.project_ids().expect("projects");
    let text: String = q.chars().rev().collect();
    let v = HashEmbedder::new().embed(&text).expect("embed");
    crate::retrieve::Retriever::new(&r)
        .dense(&pids, &model(), &v, 5)
        .expect("dense")
        .hits
        .into_iter()
        .map(|h| h.id)
        .collect()
}

/// Free pages: a big value written and deleted again.
fn free_pages(e: &crate::Engine) {
    let big = vec![7u8; 8 << 20];
    e.store()
        .write(|w| w.set_meta_value("test.ballast", &big))
        .expect("ballast");
    e.store()
        .write(|w| {
            w.tx.open_table(META)?.remove("test.ballast")?;
            Ok(())
        })
        .expect("drop ballast");
}

fn assert_clean(e: &crate::Engine) {
    audit(e);
    let c = check::check_store(&e.store_path()).expect("check");
    assert!(c.violations.is_empty(), "{:#?}", c.violations);
}

#[test]
fn reclaim_drops_the_hash_space_of_embedded_chunks_and_answers_as_before() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    let hash = HashEmbedder::new().id().clone();

    // Pending chunks keep their hash vectors: nothing to reclaim yet.
    let pending = e.store().read().expect("read").pending_count().expect("n");
    assert!(pending > 0, "the fixture leaves chunks pending");
    let rep = e.store().reclaim(&model(), &hash).expect("reclaim");
    assert_eq!(
        rep,
        ReclaimReport::default(),
        "nothing while chunks are pending"
    );

    let n = embed_all_keeping_hash(&e);
    assert_clean(&e);
    let hits_before = model_hits(&e, "deploy the scheduler");
    let lex_before = lexical_hits(&e, "release tag ZebraFrost");
    assert!(!hits_before.is_empty());

    let rep = e.store().reclaim(&model(), &hash).expect("reclaim");
    assert_eq!(rep.hash_vectors_dropped, n, "{rep:?}");
    assert_eq!(rep.block_entries_dropped, n, "{rep:?}");
    let r = e.store().read().expect("read");
    let mut listed_hash = 0;
    r.for_each_chunk(|id, rec| {
        assert!(r.vector(id, &hash)?.is_none(), "hash vector of {id} left");
        assert!(
            r.vector(id, &model())?.is_some(),
            "model vector of {id} lost"
        );
        listed_hash += u64::from(rec.embedders.contains(&hash.key()));
        Ok(())
    })
    .expect("chunks");
    assert_eq!(listed_hash, 0);
    for (_, pid) in r.projects().expect("projects") {
        assert_eq!(r.vector_count(pid, &hash).expect("count"), 0);
        assert!(r.vector_count(pid, &model()).expect("count") > 0);
    }
    drop(r);
    assert_clean(&e);
    assert_eq!(model_hits(&e, "deploy the scheduler"), hits_before);
    assert_eq!(lexical_hits(&e, "release tag ZebraFrost"), lex_before);

    // A second quiet moment finds nothing to do.
    let again = e.store().reclaim(&model(), &hash).expect("reclaim");
    assert_eq!(again, ReclaimReport::default());
}

#[test]
fn reclaim_rewrites_a_file_that_is_mostly_free_pages_and_keeps_every_row() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    let hash = HashEmbedder::new().id().clone();
    embed_all_keeping_hash(&e);
    free_pages(&e);
    let path = e.store_path();
    let before = std::fs::metadata(&path).expect("meta").len();
    assert!(before > 8 << 20, "{before}");
    let hits_before = lexical_hits(&e, "release tag ZebraFrost");

    let rep = e.store().reclaim(&model(), &hash).expect("reclaim");
    let rw = rep.rewrite.expect("a file mostly free is rewritten");
    let after = std::fs::metadata(&path).expect("meta").len();
    assert_eq!(rw.bytes_after, after);
    assert!(after * 2 < before, "{before} → {after}");
    assert_eq!(lexical_hits(&e, "release tag ZebraFrost"), hits_before);
    assert_clean(&e);

    // Now compact: another quiet moment does not rewrite again.
    let again = e.store().reclaim(&model(), &hash).expect("reclaim");
    assert_eq!(again.rewrite, None);
}

/// A chunk deleted (or replaced: an open turn stored again) leaves its model entry in the int8
/// blocks; the quiet moment compacts it, so the index counts what the chunks hold.
#[test]
fn reclaim_compacts_stale_model_entries_of_deleted_chunks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    let hash = HashEmbedder::new().id().clone();
    let n = embed_all_keeping_hash(&e);
    e.store().reclaim(&model(), &hash).expect("reclaim");
    let entries = |e: &crate::Engine| {
        let r = e.store().read().expect("read");
        let mut total = 0;
        for (_, pid) in r.projects().expect("projects") {
            total += r.vector_count(pid, &model()).expect("count");
        }
        total
    };
    assert_eq!(entries(&e), n);

    let (id, rec) = e
        .store()
        .read()
        .expect("read")
        .chunks_after(0, 1)
        .expect("chunks")
        .pop()
        .expect("a chunk");
    e.store()
        .write(|w| {
            let c = &rec.chunk;
            w.tx.open_table(TURNS)?
                .remove((c.session_id.as_str(), c.turn_index, c.part))?;
            w.release_chunk(id, &rec, &c.session_id)
        })
        .expect("delete");
    assert_eq!(entries(&e), n, "the entry stays until a compaction");
    let live = |e: &crate::Engine| {
        e.store()
            .read()
            .expect("read")
            .live_vector_counts()
            .expect("live")
            .get(&model().key())
            .copied()
    };
    assert_eq!(live(&e), Some(n - 1));

    let rep = e.store().reclaim(&model(), &hash).expect("reclaim");
    assert_eq!(rep.block_entries_dropped, 1, "{rep:?}");
    assert_eq!(entries(&e), n - 1);
    assert_eq!(live(&e), Some(n - 1));
    assert_clean(&e);
}

/// After a bulk write the file is compacted in place: smaller, every row kept; not while a
/// reader is inside a transaction (the pages stay free for later writes), and not when too
/// little of the file is free.
#[test]
fn compact_after_bulk_cuts_the_free_tail_unless_a_reader_is_inside() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    free_pages(&e);
    let path = e.store_path();
    let before = std::fs::metadata(&path).expect("meta").len();
    let hits_before = lexical_hits(&e, "release tag ZebraFrost");

    let reader = e.store().read().expect("read");
    assert_eq!(
        e.store().compact_after_bulk().expect("compact"),
        FileCompaction::Busy
    );
    drop(reader);
    assert_eq!(std::fs::metadata(&path).expect("meta").len(), before);

    let FileCompaction::Done {
        bytes_before,
        bytes_after,
        ..
    } = e.store().compact_after_bulk().expect("compact")
    else {
        panic!("a file mostly free is compacted");
    };
    assert_eq!(bytes_before, before);
    assert_eq!(bytes_after, std::fs::metadata(&path).expect("meta").len());
    assert!(bytes_after * 2 < before, "{before} → {bytes_after}");
    assert_eq!(lexical_hits(&e, "release tag ZebraFrost"), hits_before);
    assert_clean(&e);
    assert_eq!(
        e.store().compact_after_bulk().expect("compact"),
        FileCompaction::NotNeeded
    );
}
