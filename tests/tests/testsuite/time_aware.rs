//! Time in a query: "what did we decide about the cache last week?" must find last week's
//! decision, not the October one or yesterday's, though all three use the same words. A
//! labelled set: six subjects, each decided three times on three dates (October, the week
//! before the query, the day before it), among generated sessions; queries ask by relative
//! and absolute time and by order ("the first time", "the latest"), at a fixed query time.
//! Real model, real store, hybrid search. Without the time phrase the three decisions tie on
//! words, so the figure without time-awareness is about one in three.

use memctl_engine::{IngestOptions, SearchRequest};
use memctl_tests::transcript_gen::{GenConfig, Layout, generate};
use std::path::Path;

/// The queries' own time: Friday 2026-11-27, 15:00 UTC.
const NOW: &str = "2026-11-27T15:00:00Z";
/// Seed of the generated sessions around the decisions.
const SEED: u64 = 5;

/// The three dates each subject was decided on: October, last week, yesterday.
const DATES: [&str; 3] = ["2026-10-08", "2026-11-17", "2026-11-26"];

/// (subject, the three decisions in date order).
const SUBJECTS: &[(&str, [&str; 3])] = &[
    (
        "cache eviction policy",
        [
            "use LRU",
            "switch to LFU",
            "keep LFU but cap it at 10k entries",
        ],
    ),
    (
        "database migration tool",
        [
            "use alembic",
            "move to sqlx migrations",
            "run sqlx migrations at startup",
        ],
    ),
    (
        "CI runner",
        [
            "stay on the hosted runners",
            "move to self-hosted runners",
            "add an ARM runner",
        ],
    ),
    (
        "log format",
        [
            "log JSON lines",
            "switch to logfmt",
            "keep logfmt with a request id",
        ],
    ),
    (
        "API pagination",
        [
            "paginate with offset and limit",
            "use cursor pagination",
            "cap cursor pages at 200",
        ],
    ),
    (
        "retry backoff",
        [
            "retry with a fixed 1 s delay",
            "use exponential backoff",
            "add jitter to the backoff",
        ],
    ),
];

/// (query form with `{}` = subject, index of the right date).
const FORMS: &[(&str, usize)] = &[
    ("what did we decide about the {} last week?", 1),
    ("the {} decision yesterday", 2),
    ("what was the {} in October", 0),
    ("the first time we decided the {}", 0),
    ("the latest decision on the {}", 2),
    ("{} 10 days ago", 1),
];

/// One session per date: each subject's decision of that date in a turn of its own.
fn write_day(dir: &Path, d: usize) {
    let sid = format!("00000000-0000-4000-b000-{:012}", d);
    let mut out = String::new();
    let mut parent: Option<String> = None;
    for (i, (subject, decisions)) in SUBJECTS.iter().enumerate() {
        let uu = format!("00000000-0000-4{d:03}-c000-{:012}", i * 2);
        let au = format!("00000000-0000-4{d:03}-c000-{:012}", i * 2 + 1);
        let ts = format!("{}T{:02}:15:00.000Z", DATES[d], 9 + i);
        let user = serde_json::json!({"type": "user", "sessionId": sid, "cwd": "/home/dev/shop",
            "uuid": uu, "parentUuid": parent, "timestamp": ts,
            "message": {"role": "user", "content": format!("Let's settle the {subject}. What should we do?")}});
        let asst = serde_json::json!({"type": "assistant", "sessionId": sid, "cwd": "/home/dev/shop",
            "uuid": au, "parentUuid": uu, "timestamp": ts,
            "message": {"id": format!("msg_{d}_{i}"), "type": "message", "role": "assistant",
                "content": [{"type": "text", "text": format!("Decision on the {subject}: we {}. I updated the docs to say so.", decisions[d])}]}});
        out.push_str(&format!("{user}\n{asst}\n"));
        parent = Some(au);
    }
    std::fs::write(dir.join(format!("day{d}.jsonl")), out).expect("write the day");
}

/// An engine under `dir` with the three days of decisions archived (`dir/transcripts`).
fn engine_with_days(dir: &Path) -> memctl_engine::Engine {
    let e = memctl_tests::model_engine(&dir.join("home"));
    let src = dir.join("transcripts");
    std::fs::create_dir_all(&src).expect("dir");
    for d in 0..DATES.len() {
        write_day(&src, d);
        e.ingest_transcript(
            &src.join(format!("day{d}.jsonl")),
            &IngestOptions::default(),
        )
        .expect("ingest");
    }
    e
}

#[test]
fn time_phrases_find_the_turn_of_that_time() {
    println!("time-aware set seed {SEED}, query time {NOW}");
    let dir = tempfile::tempdir().expect("tempdir");
    let e = engine_with_days(dir.path());
    let src = dir.path().join("transcripts");
    let filler = generate(&GenConfig {
        turns: 40,
        seed: SEED,
        layout: Layout::Combined,
        compact_at: None,
        extras: false,
    });
    std::fs::write(src.join("filler.jsonl"), filler).expect("write");
    e.ingest_transcript(&src.join("filler.jsonl"), &IngestOptions::default())
        .expect("ingest");
    let now: jiff::Timestamp = NOW.parse().expect("now");
    let (mut hit, mut n) = (0, 0);
    let mut per_form = vec![(0, 0); FORMS.len()];
    for (subject, decisions) in SUBJECTS {
        for (f, (form, want)) in FORMS.iter().enumerate() {
            let query = form.replace("{}", subject);
            let mut req = SearchRequest::new(&query, 3);
            req.now = Some(now.as_second());
            let found = e.search(&req).expect("search");
            let first = found.results.first().map(|r| r.record.chunk.text.clone());
            let ok = first
                .as_deref()
                .is_some_and(|t| t.contains(decisions[*want]));
            hit += usize::from(ok);
            n += 1;
            per_form[f].0 += usize::from(ok);
            per_form[f].1 += 1;
            assert!(found.time.is_some(), "{query}: no time phrase read");
            if !ok {
                println!(
                    "miss {query:?}: first {:?}",
                    first.map(|t| t.chars().take(120).collect::<String>())
                );
            }
        }
    }
    println!("\n| form | R@1 |\n|---|---|");
    for ((form, _), (h, k)) in FORMS.iter().zip(&per_form) {
        println!("| {form} | {h}/{k} |");
    }
    println!("| all | {hit}/{n} |");
    assert!(hit * 10 >= n * 9, "time-aware R@1 {hit}/{n} (< 90 %)");
}

#[test]
fn a_later_decision_supersedes_and_comes_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = engine_with_days(dir.path());
    let (mut first, mut marked, mut n) = (0, 0, 0);
    for (subject, decisions) in SUBJECTS {
        let query = format!("what did we decide about the {subject}?");
        let found = e.search(&SearchRequest::new(&query, 3)).expect("search");
        let top = &found.results[0];
        first += usize::from(top.record.chunk.text.contains(decisions[2]));
        for r in &found.results[1..] {
            if decisions[..2]
                .iter()
                .any(|d| r.record.chunk.text.contains(d))
            {
                n += 1;
                marked += usize::from(r.superseded_by == Some(top.id));
            }
        }
    }
    println!(
        "latest decision first {first}/{}; older ones marked {marked}/{n}",
        SUBJECTS.len()
    );
    assert_eq!(first, SUBJECTS.len(), "the latest decision is not first");
    assert!(
        n > 0 && marked == n,
        "older decisions marked superseded: {marked}/{n}"
    );
}
