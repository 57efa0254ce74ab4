//! Hybrid retrieval must serve both kinds of query (DESIGN §4): exact identifiers, where BM25
//! shines, and paraphrases with few of the original words, where dense shines. Real model,
//! real store, the transcripts shipped in the repo: a handful of hand-picked queries on the
//! sample transcript, and the coding query set `tests/fixtures/queries/coding.jsonl` (half
//! identifier-style, half paraphrases) over every transcript fixture of the repository.

use memctl_engine::search::SearchMode;
use memctl_engine::{Engine, EngineOptions, IngestOptions, SearchRequest};
use memctl_tests::{fixture, onnx_config, repo_root};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

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

/// One line of `tests/fixtures/queries/coding.jsonl`.
#[derive(Debug, serde::Deserialize)]
struct CodingQuery {
    qid: String,
    /// `identifier` (exact names, paths, error strings) or `paraphrase` (few original words).
    kind: String,
    query: String,
    /// A substring of the right turn's text.
    needle: String,
    /// How many turns of the fixtures contain the needle (all of them are right answers).
    turns: usize,
}

const KINDS: [&str; 2] = ["identifier", "paraphrase"];
const MODES: [SearchMode; 3] = [SearchMode::Lexical, SearchMode::Dense, SearchMode::Hybrid];

/// Every transcript fixture of the repository: the sample and the engine's recorded sessions.
fn coding_transcripts() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("dir entry").path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&fixture("sample"), &mut out);
    walk(
        &repo_root().join("engine/tests/fixtures/transcripts"),
        &mut out,
    );
    out
}

fn coding_queries() -> Vec<CodingQuery> {
    let path = fixture("queries/coding.jsonl");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

/// Recall of the coding query set, per kind and mode (DESIGN §4: hybrid must win on both kinds).
#[test]
fn hybrid_wins_on_the_coding_query_set() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut opts = EngineOptions::from_env();
    opts.data_dir = dir.path().to_path_buf();
    opts.onnx = onnx_config();
    opts.model_disabled = false;
    let e = Engine::open(opts).expect("engine");
    let files = coding_transcripts();
    assert!(files.len() >= 5, "transcript fixtures: {files:?}");
    for f in &files {
        let rep = e
            .ingest_transcript(f, &IngestOptions::default())
            .expect("ingest");
        assert!(
            rep.embedder
                .as_deref()
                .is_some_and(|m| m.starts_with("all-MiniLM-L6-v2")),
            "{}: not embedded with the model",
            f.display()
        );
    }
    // Every stored chunk (all parts of long turns): a query's right answers are the turns whose
    // text contains its needle, and the fixture records how many there are.
    let reader = e.store().read().expect("read");
    let mut chunks = Vec::new();
    let mut after = 0;
    loop {
        let page = reader.chunks_after(after, 1000).expect("chunks");
        let Some(&(last, _)) = page.last() else {
            break;
        };
        after = last;
        chunks.extend(page.into_iter().map(|(id, r)| (id, r.chunk)));
    }
    drop(reader);
    tmp_dump(
        &serde_json::json!({"chunks": chunks.iter().map(|(id, c)| (id, &c.session_id, c.turn_index, c.parts)).collect::<Vec<_>>()}),
    );
    let chunks: Vec<memctl_engine::chunk::Chunk> = chunks.into_iter().map(|(_, c)| c).collect();
    let queries = coding_queries();
    for kind in KINDS {
        let n = queries.iter().filter(|q| q.kind == kind).count();
        assert!(n >= 15, "{kind}: only {n} queries");
    }

    // (kind, mode) -> (hits at 1, hits at 5, n)
    let mut table: Vec<(&str, SearchMode, usize, usize, usize)> = Vec::new();
    for kind in KINDS {
        for mode in MODES {
            table.push((kind, mode, 0, 0, 0));
        }
    }
    for q in &queries {
        assert!(
            KINDS.contains(&q.kind.as_str()),
            "{}: kind {:?}",
            q.qid,
            q.kind
        );
        let targets: HashSet<(&str, u32)> = chunks
            .iter()
            .filter(|c| c.text.contains(&q.needle))
            .map(|c| (c.session_id.as_str(), c.turn_index))
            .collect();
        assert_eq!(
            targets.len(),
            q.turns,
            "{}: needle {:?} is in {} turns: {targets:?}",
            q.qid,
            q.needle,
            targets.len()
        );
        tmp_dump(
            &serde_json::json!({"qid": q.qid, "kind": q.kind, "targets": targets.iter().collect::<Vec<_>>()}),
        );
        let mut ranks = Vec::new();
        for mode in MODES {
            let mut req = SearchRequest::new(&q.query, 5);
            req.mode = mode;
            let found = e.search(&req).expect("search");
            let rank = found.results.iter().position(|r| {
                targets.contains(&(
                    r.record.chunk.session_id.as_str(),
                    r.record.chunk.turn_index,
                ))
            });
            let row = table
                .iter_mut()
                .find(|t| t.0 == q.kind && t.1 == mode)
                .expect("row");
            row.2 += usize::from(rank == Some(0));
            row.3 += usize::from(rank.is_some());
            row.4 += 1;
            ranks.push(rank.map_or("-".to_string(), |r| (r + 1).to_string()));
        }
        println!(
            "{} {:<10} lexical {:>1} dense {:>1} hybrid {:>1}  {}",
            q.qid, q.kind, ranks[0], ranks[1], ranks[2], q.query
        );
    }
    println!(
        "\n| kind | n | lexical R@1 | lexical R@5 | dense R@1 | dense R@5 | hybrid R@1 | hybrid R@5 |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for kind in KINDS {
        let cells: Vec<String> = MODES
            .iter()
            .flat_map(|&m| {
                let t = table.iter().find(|t| t.0 == kind && t.1 == m).expect("row");
                let r = |h: usize| format!("{:.3}", h as f64 / t.4 as f64);
                [r(t.2), r(t.3)]
            })
            .collect();
        let n = table.iter().find(|t| t.0 == kind).map_or(0, |t| t.4);
        println!("| {kind} | {n} | {} |", cells.join(" | "));
    }
    let at5 = |k: &str, m: SearchMode| {
        let t = table.iter().find(|t| t.0 == k && t.1 == m).expect("row");
        (t.3, t.4)
    };
    for kind in KINDS {
        let (hybrid, n) = at5(kind, SearchMode::Hybrid);
        let best = at5(kind, SearchMode::Lexical)
            .0
            .max(at5(kind, SearchMode::Dense).0);
        assert!(
            hybrid >= best,
            "{kind}: hybrid R@5 {hybrid}/{n} below the better single method {best}/{n}"
        );
        assert!(
            hybrid * 10 >= n * 9,
            "{kind}: hybrid answers {hybrid}/{n} in the top 5 (< 90 %)"
        );
    }
}

// TEMPORARY
fn tmp_dump(v: &serde_json::Value) {
    if let Some(p) = std::env::var_os("MEMCTL_FUSION_DUMP") {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .unwrap();
        writeln!(f, "{v}").unwrap();
    }
}
