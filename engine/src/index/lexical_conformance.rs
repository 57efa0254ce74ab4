//! One BM25 conformance suite over every [`Postings`] implementation (tantivy style): the
//! in-memory reference [`MemLexicalIndex`] and the store's redb postings
//! ([`crate::store::StoreLexical`], the one that ships). Same documents, same queries: the same
//! ranking, the same scores and the same coverage.

use super::{Bm25Params, MemLexicalIndex, Postings, bm25_search};
use crate::chunk::Chunk;
use crate::index::synth::TextGen;
use crate::store::Store;

const SEED: u64 = 0x00b2_5eed;

fn chunk(i: usize, text: &str) -> Chunk {
    Chunk {
        session_id: "s1".into(),
        project: "/p".into(),
        turn_index: i as u32,
        part: 0,
        parts: 1,
        turn_uuid: format!("u{i}"),
        line_uuids: vec![format!("u{i}")],
        started_at: None,
        ended_at: None,
        text: text.to_string(),
        tools: Vec::new(),
        files: Vec::new(),
        summary: String::new(),
        is_compact_summary: false,
        sha256: Chunk::hash_text(text),
    }
}

/// Documents with repeats, identifiers and a shared vocabulary, so that df, tf and length all
/// vary; plus hand-written ones that pin the code tokenizer.
fn corpus() -> Vec<String> {
    let mut g = TextGen::new(SEED);
    let mut docs: Vec<String> = (0..120).map(|_| g.document()).collect();
    docs.push("the linker error in cargo test for the engine crate".into());
    docs.push("cargo build succeeded after fixing the linker flags in build.rs".into());
    docs.push("we changed max_layer to sixteen in engine/src/index/hnsw.rs".into());
    docs.push("linker linker linker".into());
    docs
}

fn queries(docs: &[String]) -> Vec<String> {
    let mut q: Vec<String> = docs
        .iter()
        .step_by(7)
        .map(|d| d.split_whitespace().take(4).collect::<Vec<_>>().join(" "))
        .collect();
    q.extend(
        [
            "linker error cargo",
            "linker linker",
            "max_layer hnsw.rs",
            "engine/src/index/hnsw.rs",
            "a word never seen zzyzx",
            "",
            "the and of",
        ]
        .map(String::from),
    );
    q
}

/// Build both sources over the same corpus; the store's ids are assigned by the store, so the
/// reference uses the same ids.
fn both() -> (tempfile::TempDir, Store, MemLexicalIndex) {
    println!("lexical conformance seed {SEED:#x}");
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("s.redb")).unwrap();
    let mut mem = MemLexicalIndex::new();
    let ids = store
        .write(|w| {
            let mut ids = Vec::new();
            for (i, d) in corpus().iter().enumerate() {
                ids.push(w.put_chunk(&chunk(i, d), &[], 0)?.id());
            }
            Ok(ids)
        })
        .unwrap();
    for (id, d) in ids.iter().zip(corpus()) {
        mem.add(*id, &d);
    }
    (dir, store, mem)
}

#[test]
fn store_postings_score_like_the_reference() {
    let (_dir, store, mem) = both();
    let r = store.read().unwrap();
    let pid = r.project_id("/p").unwrap().unwrap();
    let view = r.lexical(&[pid]).unwrap();
    assert_eq!(view.doc_count().unwrap(), mem.doc_count().unwrap());
    assert_eq!(view.total_len().unwrap(), mem.total_len().unwrap());
    for q in queries(&corpus()) {
        for k in [1, 5, 50] {
            let a = bm25_search(&mem, &q, k, Bm25Params::default(), |_| true).unwrap();
            let b = bm25_search(&view, &q, k, Bm25Params::default(), |_| true).unwrap();
            assert_eq!(
                a.hits.iter().map(|h| h.id).collect::<Vec<_>>(),
                b.hits.iter().map(|h| h.id).collect::<Vec<_>>(),
                "query {q:?} k {k}"
            );
            for (x, y) in a.hits.iter().zip(&b.hits) {
                assert!(
                    (x.score - y.score).abs() < 1e-5,
                    "query {q:?}: {x:?} vs {y:?}"
                );
            }
            assert!((a.coverage - b.coverage).abs() < 1e-6, "query {q:?}");
        }
    }
}

#[test]
fn coverage_counts_every_query_term_and_its_repeats() {
    let (_dir, store, mem) = both();
    let r = store.read().unwrap();
    let pid = r.project_id("/p").unwrap().unwrap();
    let view = r.lexical(&[pid]).unwrap();
    coverage_rules(|q| bm25_search(&mem, q, 10, Bm25Params::default(), |_| true).unwrap());
    coverage_rules(|q| bm25_search(&view, q, 10, Bm25Params::default(), |_| true).unwrap());
}

fn coverage_rules(src: impl Fn(&str) -> super::Bm25Hits) {
    let full = src("linker error cargo");
    assert!((full.coverage - 1.0).abs() < 1e-6, "{full:?}");
    // An unknown word holds idf mass that nothing matched.
    let partial = src("linker zzyzx");
    assert!(
        partial.coverage > 0.0 && partial.coverage < 0.5,
        "{partial:?}"
    );
    assert_eq!(src("zzyzx").coverage, 0.0);
    assert!(src("").hits.is_empty());
    // A repeated query word weighs more than once.
    let once = src("linker build");
    let twice = src("linker linker build");
    let score = |h: &super::Bm25Hits, id| h.hits.iter().find(|x| x.id == id).map(|x| x.score);
    let linker_only = twice
        .hits
        .iter()
        .find(|h| score(&once, h.id).is_some())
        .unwrap()
        .id;
    assert!(score(&twice, linker_only) >= score(&once, linker_only));
}

#[test]
fn filter_and_k_are_honoured() {
    let (_dir, store, _mem) = both();
    let r = store.read().unwrap();
    let pid = r.project_id("/p").unwrap().unwrap();
    let view = r.lexical(&[pid]).unwrap();
    let all = bm25_search(&view, "linker", 10, Bm25Params::default(), |_| true).unwrap();
    assert_eq!(all.hits.len(), 3);
    let best = all.hits[0].id;
    let rest = bm25_search(&view, "linker", 10, Bm25Params::default(), |d| d != best).unwrap();
    assert_eq!(rest.hits.len(), 2);
    assert!(rest.hits.iter().all(|h| h.id != best));
    assert!(
        bm25_search(&view, "linker", 0, Bm25Params::default(), |_| true)
            .unwrap()
            .hits
            .is_empty()
    );
}
