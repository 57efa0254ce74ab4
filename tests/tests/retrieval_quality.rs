//! Hybrid retrieval must serve both kinds of query (DESIGN §4): exact identifiers, where BM25
//! shines, and paraphrases with few of the original words, where dense shines. Real model,
//! real store, the sample transcript shipped in the repo.

use memctl_engine::search::SearchMode;
use memctl_engine::{Engine, EngineOptions, IngestOptions, SearchRequest};
use memctl_tests::{fixture, onnx_config};

/// (query, a substring that identifies the right turn's text)
const LEXICAL: &[(&str, &str)] = &[
    (
        "rename flush_budget compute_handle",
        "Rename `flush_budget` to `compute_handle`",
    ),
    (
        "render_schema ImportError kiln.utils",
        "cannot import name 'render_schema'",
    ),
    (
        "validate_retry_policy structured JSON logging",
        "`validate_retry_policy` in kiln/config.py",
    ),
    (
        "index_snapshot budgets migration",
        "adding `index_snapshot`",
    ),
];

const PARAPHRASE: &[(&str, &str)] = &[
    (
        "switch the payload parser from untyped dictionaries to typed records",
        "Refactor `parse_payload` in kiln/cli.py to use dataclasses",
    ),
    (
        "the linter is much slower on the build server than on my machine",
        "Why does `ruff check .` take 73 seconds on CI",
    ),
    (
        "replace the open-ended queue with one that has a capacity limit",
        "use a bounded channel instead of an unbounded Vec",
    ),
    (
        "add throttling to the snapshot loader",
        "Add rate limiting to `load_snapshot`",
    ),
];

fn hit_rank(e: &Engine, mode: SearchMode, q: &str, needle: &str) -> Option<usize> {
    let mut req = SearchRequest::new(q, 5);
    req.mode = mode;
    let found = e.search(&req).expect("search");
    found
        .results
        .iter()
        .position(|r| r.record.chunk.text.contains(needle))
}

#[test]
fn hybrid_serves_identifier_and_paraphrase_queries() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut opts = EngineOptions::from_env();
    opts.data_dir = dir.path().to_path_buf();
    opts.onnx = onnx_config();
    opts.model_disabled = false;
    let e = Engine::open(opts).expect("engine");
    let rep = e
        .ingest_transcript(
            &fixture("sample/db5b5fab-8f4d-4e27-9da1-494c73cf256d.jsonl"),
            &IngestOptions::default(),
        )
        .expect("ingest");
    assert!(
        rep.embedder
            .as_deref()
            .is_some_and(|m| m.starts_with("all-MiniLM-L6-v2"))
    );

    let mut table = Vec::new();
    for (kind, set) in [("lexical", LEXICAL), ("paraphrase", PARAPHRASE)] {
        for mode in [SearchMode::Lexical, SearchMode::Dense, SearchMode::Hybrid] {
            let ranks: Vec<Option<usize>> = set
                .iter()
                .map(|(q, needle)| hit_rank(&e, mode, q, needle))
                .collect();
            println!("{kind:<10} {mode:?}: ranks {ranks:?}");
            let hits = ranks.iter().filter(|r| r.is_some()).count();
            table.push((kind, mode, hits, set.len()));
        }
    }
    for (kind, mode, hits, n) in &table {
        println!("{kind:<10} {mode:?}: {hits}/{n} in top 5");
    }
    let get = |k: &str, m: SearchMode| {
        table
            .iter()
            .find(|t| t.0 == k && t.1 == m)
            .map_or(0, |t| t.2)
    };
    // Hybrid answers every query of both kinds.
    assert_eq!(get("lexical", SearchMode::Hybrid), LEXICAL.len());
    assert_eq!(get("paraphrase", SearchMode::Hybrid), PARAPHRASE.len());
    // And is never worse than the better single method on either kind.
    for k in ["lexical", "paraphrase"] {
        let best = get(k, SearchMode::Lexical).max(get(k, SearchMode::Dense));
        assert!(
            get(k, SearchMode::Hybrid) >= best,
            "{k}: hybrid below the best single method"
        );
    }
}
