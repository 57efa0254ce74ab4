//! Hybrid retrieval must serve both kinds of query: exact identifiers, where BM25
//! shines, and paraphrases with few of the original words, where dense shines. Real model,
//! real store, the coding query set `tests/fixtures/queries/coding.jsonl` (identifier-style
//! queries: exact names, paths, error strings; paraphrases with few of the original words) over
//! every transcript fixture of the repository (the sample, and the engine's recorded sessions).

use memctl_engine::{Engine, EngineOptions, IngestOptions, SearchMode, SearchRequest};
use memctl_test_support::{fixture, repo_root};
use memctl_tests::onnx_config;
use std::collections::HashSet;
use std::path::PathBuf;

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
    let mut out = memctl_tests::jsonl_files(&fixture("sample"));
    out.extend(memctl_tests::jsonl_files(
        &repo_root().join("engine/tests/fixtures/transcripts"),
    ));
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

/// Recall of the coding query set, per kind and mode (hybrid must win on both kinds).
#[test]
fn hybrid_wins_on_the_coding_query_set() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut opts = EngineOptions::from_settings(&memctl_engine::Settings::default());
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
    let mut chunks = Vec::new();
    let mut after = 0;
    loop {
        let page = e.chunks_after(after, 1000).expect("chunks");
        let Some(&(last, _)) = page.last() else {
            break;
        };
        after = last;
        chunks.extend(page.into_iter().map(|(_, r)| r.chunk));
    }
    let queries = coding_queries();
    for kind in KINDS {
        let n = queries.iter().filter(|q| q.kind == kind).count();
        assert!(n >= 15, "{kind}: only {n} queries");
    }

    // Queries that at least one single method answers in its top 5, per kind.
    let mut reachable: std::collections::HashMap<&str, usize> = Default::default();
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
        if ranks[0] != "-" || ranks[1] != "-" {
            *reachable.entry(q.kind.as_str()).or_insert(0) += 1;
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
        let reach = reachable.get(kind).copied().unwrap_or(0);
        println!(
            "{kind}: hybrid {hybrid}/{n}, better single method {best}/{n}, either method {reach}/{n}"
        );
        assert!(
            hybrid >= best,
            "{kind}: hybrid R@5 {hybrid}/{n} below the better single method {best}/{n}"
        );
        // The fusion must keep 90 % of what either list can find in its top 5. Identifiers
        // must also be answered outright (≥ 90 %); paraphrases cannot be yet: three of them are
        // in neither top 5 (MiniLM ranks them 10th-16th, BM25 lower), which no fusion of the
        // two lists can repair: dense and hybrid both answer 17/21.
        assert!(
            hybrid * 10 >= reach * 9,
            "{kind}: hybrid answers {hybrid}/{n}, < 90 % of the {reach} that either method finds"
        );
        if kind == "identifier" {
            assert!(
                hybrid * 10 >= n * 9,
                "{kind}: hybrid answers {hybrid}/{n} in the top 5 (< 90 %)"
            );
        }
    }
}
