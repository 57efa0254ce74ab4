//! One BM25 conformance suite over every [`Postings`] implementation (tantivy style): the
//! in-memory reference [`MemLexicalIndex`] and the store's redb postings
//! ([`crate::store::StoreLexical`], the one that ships). Same documents, same queries: the same
//! ranking, the same scores and the same coverage. The bounded scorer ([`bm25_search`]) is
//! held to the exhaustive one ([`bm25_search_exhaustive`], the oracle) on both, on random
//! corpora whose common words are in most documents.

use super::lexical::{Walk, bm25_search, bm25_search_exhaustive, bm25_search_walk};
use super::{Bm25Params, MemLexicalIndex, Postings, bm25_search_since};
use crate::chunk::Chunk;
use crate::index::synth::{SplitMix64, TextGen};
use crate::store::Store;

const SEED: u64 = 0x00b2_5eed;

fn chunk(i: usize, text: &str) -> Chunk {
    chunk_in("/p", i, text)
}

fn chunk_in(project: &str, i: usize, text: &str) -> Chunk {
    Chunk {
        session_id: format!("s{project}"),
        project: project.into(),
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
            same(&mem, &q, k, |_| true);
            same(&view, &q, k, |_| true);
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

/// A word of rank `r` in a Zipf-like vocabulary: rank 0 is in most documents.
fn zipf_word(rng: &mut SplitMix64, vocab: usize) -> String {
    // P(rank ≤ r) ~ ln(r + 1) / ln(vocab + 1).
    let r = ((vocab as f64 + 1.0).powf(rng.unit()) - 1.0) as usize;
    format!("w{}", r.min(vocab - 1))
}

fn random_doc(rng: &mut SplitMix64, vocab: usize) -> String {
    let len = 1 + rng.below(40);
    let mut words: Vec<String> = (0..len).map(|_| zipf_word(rng, vocab)).collect();
    if rng.below(3) == 0 {
        // Repeats: term frequencies well above 1.
        let w = words[0].clone();
        words.extend(std::iter::repeat_n(w, 1 + rng.below(6)));
    }
    words.join(" ")
}

/// Queries of 1–6 words: mostly the commonest words (the case bounding is for), some from the
/// tail, a repeat now and then, and a word no document has.
fn random_query(rng: &mut SplitMix64, vocab: usize) -> String {
    let n = 1 + rng.below(6);
    let mut q: Vec<String> = (0..n)
        .map(|_| match rng.below(10) {
            0..=4 => format!("w{}", rng.below(4)),
            5..=7 => zipf_word(rng, vocab),
            8 => format!("w{}", rng.below(vocab)),
            _ => "zzyzx".to_string(),
        })
        .collect();
    if rng.below(5) == 0 {
        q.push(q[0].clone());
    }
    q.join(" ")
}

/// The seed of the random-corpus tests: `MEMCTL_TEST_SEED` or a fixed one, printed.
fn seed() -> u64 {
    let s = std::env::var("MEMCTL_TEST_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x05ee_db25);
    println!("bm25 bounded vs exhaustive: seed {s} (MEMCTL_TEST_SEED={s} reproduces)");
    s
}

fn same<P: Postings>(src: &P, q: &str, k: usize, filter: impl Fn(u64) -> bool + Copy)
where
    P::Error: std::fmt::Debug,
{
    let p = Bm25Params::default();
    let exhaustive = bm25_search_exhaustive(src, q, k, p, filter).unwrap();
    let bounded = bm25_search(src, q, k, p, filter).unwrap();
    assert_eq!(bounded, exhaustive, "query {q:?} k {k}");
    for walk in [Walk::Documents, Walk::Windows] {
        let bounded = bm25_search_walk(src, q, k, p, 0, filter, walk).unwrap();
        assert_eq!(bounded, exhaustive, "query {q:?} k {k} {walk:?}");
    }
}

/// The bounded search over the ids ≥ `since` is the exhaustive one with that filter.
fn same_since<P: Postings>(src: &P, q: &str, k: usize, since: u64)
where
    P::Error: std::fmt::Debug,
{
    let p = Bm25Params::default();
    let exhaustive = bm25_search_exhaustive(src, q, k, p, |d| d >= since).unwrap();
    let bounded = bm25_search_since(src, q, k, p, since, |_| true).unwrap();
    assert_eq!(bounded, exhaustive, "query {q:?} k {k} since {since}");
    for walk in [Walk::Documents, Walk::Windows] {
        let bounded = bm25_search_walk(src, q, k, p, since, |_| true, walk).unwrap();
        assert_eq!(
            bounded, exhaustive,
            "query {q:?} k {k} since {since} {walk:?}"
        );
    }
}

/// Property: on random corpora (Zipf words, the commonest in most documents, 64-posting
/// blocks) the bounded top k, whichever walk, is the exhaustive top k: same ids in the same order, the same
/// scores to the bit, the same coverage; with and without a filter, and over the newest ids.
#[test]
fn bounded_top_k_equals_exhaustive_in_memory() {
    let mut rng = SplitMix64::new(seed());
    for case in 0..40 {
        let vocab = 5 + rng.below(300);
        let docs = 1 + rng.below(1500);
        let mut ix = MemLexicalIndex::new();
        for d in 0..docs {
            // Sparse ids: blocks whose bases are far apart.
            ix.add((d * (1 + case % 3)) as u64, &random_doc(&mut rng, vocab));
        }
        for _ in 0..15 {
            let q = random_query(&mut rng, vocab);
            let since = rng.below(docs * (1 + case % 3) + 2) as u64;
            for k in [1, 3, 10, 100] {
                same(&ix, &q, k, |_| true);
                same(&ix, &q, k, |d| d % 3 != 1);
                same_since(&ix, &q, k, since);
            }
        }
    }
}

/// The same property on the store's redb postings (segments of ~2 KiB: the commonest words
/// span several), written over several transactions (appends to the last segment) into two
/// projects whose lists interleave, searched over one and over both.
#[test]
fn bounded_top_k_equals_exhaustive_on_the_store() {
    let mut rng = SplitMix64::new(seed() ^ 0x5707e);
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("s.redb")).unwrap();
    let vocab = 400;
    let mut mem = MemLexicalIndex::new();
    for batch in 0..4 {
        let docs: Vec<(String, String)> = (0..1000)
            .map(|i| {
                let project = if rng.below(3) == 0 { "/q" } else { "/p" };
                let text = format!("{} n{batch}x{i}", random_doc(&mut rng, vocab));
                (project.to_string(), text)
            })
            .collect();
        let ids = store
            .write(|w| {
                let mut ids = Vec::new();
                for (i, (p, d)) in docs.iter().enumerate() {
                    ids.push(w.put_chunk(&chunk_in(p, batch * 1000 + i, d), &[], 0)?.id());
                }
                Ok(ids)
            })
            .unwrap();
        for (id, (_, d)) in ids.iter().zip(&docs) {
            mem.add(*id, d);
        }
    }
    let r = store.read().unwrap();
    let p = r.project_id("/p").unwrap().unwrap();
    let q = r.project_id("/q").unwrap().unwrap();
    let both = r.lexical(&[q, p]).unwrap();
    let one = r.lexical(&[p]).unwrap();
    let segments = both.blocks("w0").unwrap();
    assert!(
        segments.len() == 2 && segments.iter().all(|l| l.len() >= 2),
        "the commonest word spans several segments per project"
    );
    for _ in 0..150 {
        let text = random_query(&mut rng, vocab);
        for k in [1, 10, 100] {
            same(&both, &text, k, |_| true);
            same(&one, &text, k, |_| true);
            same(&both, &text, k, |d| d % 4 != 0);
            same_since(&both, &text, k, 1 + rng.below(4200) as u64);
            let a = bm25_search(&both, &text, k, Bm25Params::default(), |_| true).unwrap();
            let b = bm25_search_exhaustive(&mem, &text, k, Bm25Params::default(), |_| true);
            assert_eq!(a, b.unwrap(), "store vs reference, query {text:?} k {k}");
        }
    }
}
