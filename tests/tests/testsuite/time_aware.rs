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
    // (read, asked, right with the phrase searched as words) per form
    let mut per_form = vec![(0, 0, 0); FORMS.len()];
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
            req.read_time = false;
            let plain = e.search(&req).expect("search");
            let plain_ok = plain
                .results
                .first()
                .is_some_and(|r| r.record.chunk.text.contains(decisions[*want]));
            hit += usize::from(ok);
            n += 1;
            per_form[f].0 += usize::from(ok);
            per_form[f].1 += 1;
            per_form[f].2 += usize::from(plain_ok);
            assert!(found.time.is_some(), "{query}: no time phrase read");
            if !ok {
                println!(
                    "miss {query:?}: first {:?}",
                    first.map(|t| t.chars().take(120).collect::<String>())
                );
            }
        }
    }
    println!("\n| form | R@1 | same, phrase searched as words |\n|---|---|---|");
    for ((form, _), (h, k, p)) in FORMS.iter().zip(&per_form) {
        println!("| {form} | {h}/{k} | {p}/{k} |");
    }
    let plain: usize = per_form.iter().map(|f| f.2).sum();
    println!("| all | {hit}/{n} | {plain}/{n} |");
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

/// The event-relative set: each subject decided three times (September, October, November),
/// with two events between the decisions: the Postgres migration (after the first) and the
/// Redis outage (after the second). Each event is talked about again later, in the same words,
/// so the event's turn must be its first strong match, not any mention.
const EVENT_DATES: [&str; 3] = ["2026-09-10", "2026-10-08", "2026-11-05"];

/// (when, prompt, answer) of the event turns and of the later mentions of the events.
const EVENT_TURNS: &[(&str, &str, &str)] = &[
    (
        "2026-09-24T14:00:00.000Z",
        "Is the Postgres migration done?",
        "Yes: the migration to Postgres finished at 14:00. We switched the app from MySQL to \
         Postgres; MySQL is read-only until the migration is signed off.",
    ),
    (
        "2026-10-22T09:30:00.000Z",
        "What caused the Redis outage this morning?",
        "The Redis outage lasted 40 minutes: the Redis primary ran out of memory and the \
         replica did not take over. Outage notes are in docs/postmortems/redis.md.",
    ),
    (
        "2026-11-12T11:00:00.000Z",
        "Why is the nightly report slower?",
        "Since the Postgres migration the nightly report uses another query plan; after the \
         migration to Postgres the planner skips the date index. Unrelated to the Redis outage.",
    ),
];

/// Subjects of the event set: the time set's, but the migration tool (its name holds the
/// event's word) replaced by another subject.
const EVENT_SUBJECTS: &[(&str, [&str; 3])] = &[
    SUBJECTS[0],
    (
        "connection pool size",
        [
            "use 10 connections",
            "raise the pool to 50",
            "size the pool per worker",
        ],
    ),
    SUBJECTS[2],
    SUBJECTS[3],
    SUBJECTS[4],
    SUBJECTS[5],
];

/// (query form with `{}` = subject, the decisions (by date) inside the asked window). One
/// decision: the window holds only it. Two: the window holds both (a hit is one of them at
/// rank 1: which of the two the question means is not said).
const EVENT_FORMS: &[(&str, &[usize])] = &[
    (
        "what did we decide about the {} before the migration?",
        &[0],
    ),
    ("the {} prior to the Postgres migration", &[0]),
    ("the {} until we switched to Postgres", &[0]),
    (
        "what did we decide about the {} since the Redis outage?",
        &[2],
    ),
    ("the {} after the Redis outage", &[2]),
    ("the {} after the outage", &[2]),
    ("the {} after we switched to Postgres", &[1, 2]),
    ("the {} before the Redis outage", &[0, 1]),
];

/// A turn to write: when, prompt, answer.
type Turn = (String, String, String);

/// One session of `turns` (when, prompt, answer) written as `name.jsonl` under `dir`.
fn write_session(dir: &Path, name: &str, n: usize, turns: &[Turn]) {
    let sid = format!("00000000-0000-4000-e000-{n:012}");
    let mut out = String::new();
    let mut parent: Option<String> = None;
    for (i, (ts, user, answer)) in turns.iter().enumerate() {
        let uu = format!("00000000-0000-4{n:03}-e000-{:012}", i * 2);
        let au = format!("00000000-0000-4{n:03}-e000-{:012}", i * 2 + 1);
        let u = serde_json::json!({"type": "user", "sessionId": sid, "cwd": "/home/dev/shop",
            "uuid": uu, "parentUuid": parent, "timestamp": ts,
            "message": {"role": "user", "content": user}});
        let a = serde_json::json!({"type": "assistant", "sessionId": sid, "cwd": "/home/dev/shop",
            "uuid": au, "parentUuid": uu, "timestamp": ts,
            "message": {"id": format!("msg_e{n}_{i}"), "type": "message", "role": "assistant",
                "content": [{"type": "text", "text": answer}]}});
        out.push_str(&format!("{u}\n{a}\n"));
        parent = Some(au);
    }
    std::fs::write(dir.join(format!("{name}.jsonl")), out).expect("write the session");
}

/// An engine under `dir` with the event set archived: the three days of decisions, one session
/// per event turn, and the generated filler.
fn engine_with_events(dir: &Path) -> memctl_engine::Engine {
    let e = memctl_tests::model_engine(&dir.join("home"));
    let src = dir.join("transcripts");
    std::fs::create_dir_all(&src).expect("dir");
    let mut sessions: Vec<(String, Vec<Turn>)> = Vec::new();
    for (d, date) in EVENT_DATES.iter().enumerate() {
        let turns = EVENT_SUBJECTS
            .iter()
            .enumerate()
            .map(|(i, (subject, decisions))| {
                (
                    format!("{date}T{:02}:15:00.000Z", 9 + i),
                    format!("Let's settle the {subject}. What should we do?"),
                    format!(
                        "Decision on the {subject}: we {}. I updated the docs to say so.",
                        decisions[d]
                    ),
                )
            })
            .collect();
        sessions.push((format!("decisions{d}"), turns));
    }
    for (i, (ts, user, answer)) in EVENT_TURNS.iter().enumerate() {
        let turn = (ts.to_string(), user.to_string(), answer.to_string());
        sessions.push((format!("event{i}"), vec![turn]));
    }
    for (n, (name, turns)) in sessions.iter().enumerate() {
        write_session(&src, name, n, turns);
        e.ingest_transcript(
            &src.join(format!("{name}.jsonl")),
            &IngestOptions::default(),
        )
        .expect("ingest");
    }
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
    e
}

/// Rank-1 hits per event form, with the phrase read as an event and searched as plain words.
#[test]
fn event_phrases_find_the_turns_on_the_asked_side() {
    println!("event set seed {SEED}, query time {NOW}");
    let dir = tempfile::tempdir().expect("tempdir");
    let e = engine_with_events(dir.path());
    let now: jiff::Timestamp = NOW.parse().expect("now");
    // (read, plain words) hits per form
    let mut per_form = vec![(0, 0, 0); EVENT_FORMS.len()];
    for (subject, decisions) in EVENT_SUBJECTS {
        for (f, (form, want)) in EVENT_FORMS.iter().enumerate() {
            let query = form.replace("{}", subject);
            let mut hits = [false; 2];
            for (read, hit) in hits.iter_mut().enumerate() {
                let mut req = SearchRequest::new(&query, 3);
                req.now = Some(now.as_second());
                req.read_time = read == 0;
                let found = e.search(&req).expect("search");
                let first = found.results.first().map(|r| r.record.chunk.text.clone());
                *hit = first
                    .as_deref()
                    .is_some_and(|t| want.iter().any(|w| t.contains(decisions[*w])));
                if read == 0 {
                    let t = found.time.as_ref().expect("a time phrase read");
                    let event = t.event.as_ref().expect("an event read");
                    let turn = event.turn.as_ref().expect("the event found");
                    let day = &turn.started_at[..10];
                    assert!(
                        ["2026-09-24", "2026-10-22"].contains(&day),
                        "{query}: event {:?} read as the turn of {day}",
                        event.words
                    );
                    if !*hit {
                        println!(
                            "miss {query:?} (event {day}): first {:?}",
                            first.map(|t| t.chars().take(100).collect::<String>())
                        );
                    }
                }
            }
            per_form[f].0 += usize::from(hits[0]);
            per_form[f].1 += usize::from(hits[1]);
            per_form[f].2 += 1;
        }
    }
    println!("\n| form | right at rank 1 | same, phrase searched as words |\n|---|---|---|");
    let (mut read, mut plain, mut n) = (0, 0, 0);
    for ((form, want), (r, p, k)) in EVENT_FORMS.iter().zip(&per_form) {
        let note = if want.len() > 1 {
            " (either decision in the window)"
        } else {
            ""
        };
        println!("| {form}{note} | {r}/{k} | {p}/{k} |");
        read += r;
        plain += p;
        n += k;
    }
    println!("| all | {read}/{n} | {plain}/{n} |");
    assert!(read * 10 >= n * 9, "event-relative R@1 {read}/{n} (< 90 %)");
}

/// An event the archive does not hold: no window, the whole query searched, and the outcome
/// says the event was not found.
#[test]
fn an_event_not_found_has_no_time_effect() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = engine_with_events(dir.path());
    let now: jiff::Timestamp = NOW.parse().expect("now");
    let query = "what did we decide about the log format before the kubernetes rollout?";
    let mut req = SearchRequest::new(query, 3);
    req.now = Some(now.as_second());
    let found = e.search(&req).expect("search");
    let t = found.time.expect("the phrase read");
    assert!(t.since.is_none() && t.until.is_none() && t.order.is_none());
    assert!(t.event.as_ref().is_some_and(|e| e.turn.is_none()), "{t:?}");
    assert_eq!(t.text, query);
    req.read_time = false;
    let plain = e.search(&req).expect("search");
    let ids = |o: &memctl_engine::SearchOutcome| o.results.iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(
        ids(&found_again(&e, query, now)),
        ids(&plain),
        "same as the query unread"
    );
}

fn found_again(
    e: &memctl_engine::Engine,
    query: &str,
    now: jiff::Timestamp,
) -> memctl_engine::SearchOutcome {
    let mut req = SearchRequest::new(query, 3);
    req.now = Some(now.as_second());
    e.search(&req).expect("search")
}
