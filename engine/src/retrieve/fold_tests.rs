//! Folding through the real pipeline: a transcript with a test run repeated with other
//! timings, ingested into a real store; search, restore and `chunk_copies` see one turn with
//! its copies. Hash vectors only: the fold key depends on the text, not on the model.

use crate::engine::Engine;
use crate::restore::{RestoreConfig, RestoreKind};
use crate::{EngineOptions, IngestOptions, SearchRequest};
use serde_json::json;

pub(super) const SID: &str = "f01df01d-0000-4000-8000-000000000001";
pub(super) const CWD: &str = "/home/dev/src/ledger";

/// One turn: a prompt, a Bash call, its output, the answer.
fn turn(lines: &mut Vec<String>, n: u32, prompt: &str, output: &str, answer: &str) {
    let at = |k: u32| format!("2026-11-{:02}T10:{:02}:00.000Z", 10 + n, k);
    let mut push = |k: u32, v: serde_json::Value| {
        let mut v = v;
        let o = v.as_object_mut().expect("object");
        o.insert("uuid".into(), json!(format!("u-{n}-{k}")));
        o.insert("sessionId".into(), json!(SID));
        o.insert("cwd".into(), json!(CWD));
        o.insert("timestamp".into(), json!(at(k)));
        lines.push(v.to_string());
    };
    let id = format!("toolu_{n}");
    push(
        0,
        json!({"type": "user", "message": {"role": "user", "content": prompt}}),
    );
    push(
        1,
        json!({"type": "assistant", "message": {"id": format!("m{n}a"), "role": "assistant",
        "content": [{"type": "tool_use", "id": id, "name": "Bash", "input": {"command": "cargo test -p ledger"}}]}}),
    );
    push(
        2,
        json!({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": id, "content": output}]}}),
    );
    push(
        3,
        json!({"type": "assistant", "message": {"id": format!("m{n}b"), "role": "assistant",
        "content": [{"type": "text", "text": answer}]}}),
    );
}

fn run_output(secs: &str, pid: u32, tmp: &str) -> String {
    format!(
        "   Compiling ledger v0.4.2 (/tmp/{tmp}/ledger)\nrunning 42 tests\ntest result: ok. 42 passed; \
         0 failed; finished in {secs}s\n[pid {pid}] done"
    )
}

/// An engine holding three runs of the ledger tests (other timings, pids, temp dirs), one run
/// with a failure (not a copy) and two unrelated turns.
pub(super) fn engine() -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().expect("tempdir");
    let data_dir = dir.path().join("data");
    let engine = Engine::open(EngineOptions {
        onnx: crate::embed::OnnxConfig::discover(Some(&data_dir)),
        data_dir,
        model_disabled: true,
        resident: Default::default(),
    })
    .expect("open");
    let mut lines = Vec::new();
    let ask = "Run the ledger tests and tell me whether they pass.";
    let pass = "All 42 ledger tests pass.";
    turn(
        &mut lines,
        0,
        ask,
        &run_output("0.52", 48213, "tmp.Xk2a9"),
        pass,
    );
    turn(
        &mut lines,
        1,
        "Rename settle_invoice to settle and update callers.",
        "renamed in 4 files",
        "Renamed `settle_invoice` to `settle` in src/billing.rs.",
    );
    turn(
        &mut lines,
        2,
        ask,
        &run_output("1.90", 51102, "tmp.Qz81b"),
        pass,
    );
    turn(
        &mut lines,
        3,
        ask,
        &run_output("0.61", 7731, "tmp.Aa0c3")
            .replace("42 passed; 0 failed", "40 passed; 2 failed"),
        "2 of 42 ledger tests fail.",
    );
    turn(
        &mut lines,
        4,
        "Explain the rounding rule for invoices.",
        "src/rounding.rs",
        "Invoices round half to even at the cent, in `round_cents`.",
    );
    turn(
        &mut lines,
        5,
        ask,
        &run_output("2.07", 60001, "tmp.Rr9d1"),
        pass,
    );
    let path = dir.path().join(format!("{SID}.jsonl"));
    std::fs::write(&path, lines.join("\n") + "\n").expect("write transcript");
    let opts = IngestOptions {
        embed_with_model: false,
        ..IngestOptions::default()
    };
    engine.ingest_transcript(&path, &opts).expect("ingest");
    (dir, engine)
}

fn search(engine: &Engine, fold: bool) -> Vec<crate::SearchResult> {
    let mut req = SearchRequest::new("ledger tests pass", 10);
    req.projects = vec![CWD.into()];
    req.fold = fold;
    engine.search(&req).expect("search").results
}

#[test]
fn search_shows_a_repeated_run_once_with_its_count_and_dates() {
    let (_dir, engine) = engine();
    let runs = |rs: &[crate::SearchResult]| {
        rs.iter()
            .filter(|r| r.record.chunk.text.contains("42 passed; 0 failed"))
            .count()
    };
    let unfolded = search(&engine, false);
    assert_eq!(
        runs(&unfolded),
        3,
        "every copy in its own slot without folding"
    );
    let folded = search(&engine, true);
    assert_eq!(runs(&folded), 1, "one slot for the three runs");
    let run = folded
        .iter()
        .find(|r| r.record.chunk.text.contains("42 passed; 0 failed"))
        .expect("the run is found");
    assert_eq!(run.copies.count(), 3);
    assert_eq!(
        run.copies.first.as_deref(),
        Some("2026-11-10T10:00:00.000Z")
    );
    assert_eq!(run.copies.last.as_deref(), Some("2026-11-15T10:00:00.000Z"));
    // The failing run is another result, and nothing else was folded.
    assert!(
        folded
            .iter()
            .any(|r| r.record.chunk.text.contains("2 failed"))
    );
    assert_eq!(folded.len() + 2, unfolded.len());
    // Reversible: `chunk_copies` lists the other two, oldest first.
    let copies = engine.chunk_copies(run.id).expect("copies");
    let mut want = run.copies.ids.clone();
    want.sort_unstable();
    let mut got: Vec<u64> = copies.iter().map(|(id, _)| *id).collect();
    got.sort_unstable();
    assert_eq!(got, want);
    assert!(
        copies
            .windows(2)
            .all(|w| w[0].1.chunk.started_at <= w[1].1.chunk.started_at)
    );
}

#[test]
fn a_restore_gives_a_repeated_run_one_line_that_says_how_many() {
    let (_dir, engine) = engine();
    let restore = |fold: bool| {
        let cfg = RestoreConfig {
            fold,
            ..RestoreConfig::default()
        };
        engine
            .restore(SID, CWD, RestoreKind::Compact, &cfg)
            .expect("restore")
    };
    let passing = |text: &str| {
        text.lines()
            .filter(|l| l.contains("All 42 ledger tests pass"))
            .count()
    };
    let unfolded = restore(false);
    assert!(passing(&unfolded.text) >= 2, "{}", unfolded.text);
    let folded = restore(true);
    assert_eq!(passing(&folded.text), 1, "{}", folded.text);
    let line = folded
        .text
        .lines()
        .find(|l| l.contains("All 42 ledger tests pass"))
        .expect("line");
    assert!(
        line.contains("×3, first 2026-11-10 10:00, last 2026-11-15 10:00"),
        "{line}"
    );
    assert!(
        folded.text.contains("2 of 42 ledger tests fail"),
        "{}",
        folded.text
    );
    assert!(folded.text.chars().count() < unfolded.text.chars().count());
    // The copies count as restored: they are in the context as the line's count.
    let runs = search(&engine, true);
    let run = runs
        .iter()
        .find(|r| r.record.chunk.text.contains("42 passed; 0 failed"))
        .expect("run");
    for id in std::iter::once(run.id).chain(run.copies.ids.iter().copied()) {
        assert!(
            folded.chunk_ids.contains(&id),
            "{id} not in {:?}",
            folded.chunk_ids
        );
    }
}

#[test]
fn recall_shows_a_repeated_run_once_with_its_count() {
    let (_dir, engine) = engine();
    let state = crate::recall::ContextState {
        lost: true,
        boundary_turn: 100,
        ..Default::default()
    };
    let cfg = crate::recall::RecallConfig::default();
    let found = engine
        .recall(
            "other-session",
            CWD,
            "Did the ledger tests pass?",
            &state,
            &cfg,
        )
        .expect("recall");
    let runs: Vec<_> = found
        .turns
        .iter()
        .filter(|t| t.line.contains("All 42 ledger tests pass"))
        .collect();
    assert_eq!(runs.len(), 1, "{}", found.text);
    assert_eq!(runs[0].copies.count(), 3);
    assert!(
        runs[0]
            .line
            .starts_with("(×3, first 2026-11-10 10:00, last 2026-11-15 10:00) "),
        "{}",
        runs[0].line
    );
    assert!(found.text.contains("×3"), "{}", found.text);
}
