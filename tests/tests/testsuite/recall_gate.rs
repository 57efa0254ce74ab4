//! Prompt-time recall over a realistic project archive, with the real model: a labelled set of
//! prompts that should recall a buried fact (paraphrased questions) and prompts that should not
//! (chit-chat, continuations, unrelated new tasks). Prints the gate's precision and recall and
//! holds them above a floor; checks that nothing is recalled twice in one context window and
//! that an uncompacted session recalls nothing.
//!
//! The archive: a generated 40-turn tool-heavy session (the one that was compacted) and an
//! earlier session of the same project in which six ordinary facts were said once each.

use memctl_engine::{ContextState, Engine, IngestOptions, RecallConfig};
use memctl_tests::transcript_gen::{GenConfig, Layout, generate};
use std::path::Path;

const SEED: u64 = 20_261_125;

/// (fact, what was said, the assistant's answer, two paraphrased questions).
const FACTS: &[(&str, &str, &str, [&str; 2])] = &[
    (
        "db-replica-7.internal.example",
        "For the read path, let's route queries to db-replica-7.internal.example instead of the primary.",
        "Agreed: the read pool now points at db-replica-7.internal.example; writes stay on the primary.",
        [
            "which machine should the read traffic go to?",
            "what host did we pick for serving reads?",
        ],
    ),
    (
        "OPS-4471",
        "This work is tracked in ticket OPS-4471, please reference it in the commit messages.",
        "Noted, every commit message for this change will mention OPS-4471.",
        [
            "what was the issue number for this work again?",
            "which ticket do the commits need to reference?",
        ],
    ),
    (
        "enable_lazy_thumbnails",
        "Guard the new thumbnail rendering behind the feature flag enable_lazy_thumbnails.",
        "I added enable_lazy_thumbnails to config/flags.toml, default off, and wrapped the renderer.",
        [
            "what's the name of the toggle for the lazy image previews?",
            "which feature flag hides the new thumbnail code?",
        ],
    ),
    (
        "quartermaster",
        "We need a new background worker for the reconciliation jobs. Call it quartermaster.",
        "Created the quartermaster worker skeleton in workers/quartermaster.py with a run loop.",
        [
            "what did we decide to name the reconciliation worker?",
            "what is the new background job runner called?",
        ],
    ),
    (
        "183 ms",
        "Benchmark result: the search endpoint is at a p99 of 183 ms after the index change.",
        "That is within budget: p99 of 183 ms, down from 240 ms before the index.",
        [
            "how fast was search at the tail after the index change?",
            "what latency did the search benchmark show?",
        ],
    ),
    (
        "IBM Plex Mono",
        "Use IBM Plex Mono for the code blocks in the docs theme.",
        "Switched the docs theme's code font to IBM Plex Mono in docs/theme.css.",
        [
            "which typeface did we choose for code in the docs?",
            "what font are the docs code blocks using?",
        ],
    ),
];

/// Prompts that must not recall anything.
const NEGATIVES: &[&str] = &[
    "yes, go on",
    "thanks, that looks right",
    "ok do it",
    "great, next step please",
    "what's the weather like in Lisbon today?",
    "write a haiku about autumn leaves",
    "can you explain what a monad is in simple terms?",
    "how do I center a div with flexbox?",
    "let's take a short break",
    "tell me a joke about penguins",
    "what is the capital of Australia?",
    "translate 'good morning' into German",
];

#[derive(serde::Deserialize)]
struct Head {
    cwd: Option<String>,
}

/// The earlier session, written the way the CLI writes a plain text exchange.
fn fact_session(cwd: &str, path: &Path) {
    let sid = "0f0f0f0f-1111-4222-8333-444455556666";
    let mut out = String::new();
    let mut parent: Option<String> = None;
    let fillers = [
        (
            "Run the unit tests for the parser module.",
            "All 48 parser tests pass.",
        ),
        (
            "Rename fetch_all to load_all in the client.",
            "Renamed it in client.py and updated 3 call sites.",
        ),
        (
            "Why is the CI job slower today?",
            "The cache key changed, so dependencies were rebuilt from scratch.",
        ),
    ];
    let mut turns: Vec<(&str, &str)> = Vec::new();
    for (i, f) in FACTS.iter().enumerate() {
        turns.push((f.1, f.2));
        turns.push(fillers[i % fillers.len()]);
    }
    for (i, (u, a)) in turns.iter().enumerate() {
        let uu = format!("00000000-0000-4000-8000-{:012}", i * 2);
        let au = format!("00000000-0000-4000-8000-{:012}", i * 2 + 1);
        let ts = format!("2026-11-20T10:{:02}:00.000Z", i);
        let user = serde_json::json!({"type": "user", "sessionId": sid, "cwd": cwd,
            "uuid": uu, "parentUuid": parent, "timestamp": ts,
            "message": {"role": "user", "content": u}});
        let asst = serde_json::json!({"type": "assistant", "sessionId": sid, "cwd": cwd,
            "uuid": au, "parentUuid": uu, "timestamp": ts,
            "message": {"id": format!("msg_{i}"), "type": "message", "role": "assistant",
                "content": [{"type": "text", "text": a}]}});
        out.push_str(&format!("{user}\n{asst}\n"));
        parent = Some(au);
    }
    std::fs::write(path, out).expect("write the fact session");
}

fn engine(dir: &Path) -> Engine {
    memctl_tests::model_engine(dir)
}

#[test]
fn recall_gate_precision_and_recall_on_a_labelled_set() {
    println!("recall gate seed {SEED}");
    let dir = tempfile::tempdir().expect("tempdir");
    let e = engine(&dir.path().join("home"));
    let live = dir.path().join("live.jsonl");
    let bytes = generate(&GenConfig {
        turns: 40,
        seed: SEED,
        layout: Layout::Split,
        compact_at: None,
        extras: true,
    });
    std::fs::write(&live, &bytes).expect("write");
    let first = bytes
        .split(|b| *b == b'\n')
        .find_map(|l| serde_json::from_slice::<Head>(l).ok().and_then(|h| h.cwd));
    let cwd = first.expect("generated transcript has a cwd");
    let earlier = dir.path().join("earlier.jsonl");
    fact_session(&cwd, &earlier);
    for t in [&earlier, &live] {
        e.ingest_transcript(t, &IngestOptions::default())
            .expect("ingest");
    }
    let live_session = e
        .sessions()
        .expect("sessions")
        .into_iter()
        .map(|(id, _)| id)
        .find(|id| !id.starts_with("0f0f0f0f"))
        .expect("live session");
    let boundary = e.last_turn(&live_session).expect("turns").expect("some") + 1;
    let compacted = ContextState {
        lost: true,
        boundary_turn: boundary,
        injected: Vec::new(),
        recalled: Vec::new(),
        ..ContextState::default()
    };
    let cfg = RecallConfig::default();

    let (mut tp, mut fp, mut positives) = (0usize, 0usize, 0usize);
    for (fact, _, _, questions) in FACTS {
        for q in questions {
            positives += 1;
            let r = e
                .recall(&live_session, &cwd, q, &compacted, &cfg)
                .expect("recall");
            let hit = r.text.contains(fact);
            println!(
                "POS {} {q:?} best={:?} -> {}",
                if hit { "hit " } else { "MISS" },
                r.best,
                r.turns.len()
            );
            if hit {
                tp += 1;
            } else if !r.text.is_empty() {
                fp += 1;
            }
            assert!(r.text.chars().count() <= cfg.budget_chars);
        }
    }
    for q in NEGATIVES {
        let r = e
            .recall(&live_session, &cwd, q, &compacted, &cfg)
            .expect("recall");
        println!(
            "NEG {} {q:?} best={:?}",
            if r.text.is_empty() { "ok  " } else { "FIRE" },
            r.best
        );
        if !r.text.is_empty() {
            fp += 1;
        }
    }
    let precision = tp as f64 / (tp + fp).max(1) as f64;
    let recall = tp as f64 / positives as f64;
    println!(
        "recall gate: precision {precision:.2} ({tp}/{}), recall {recall:.2} ({tp}/{positives}), \
         {} negatives",
        tp + fp,
        NEGATIVES.len()
    );
    assert!(precision >= 0.9, "precision {precision:.2}");
    assert!(recall >= 0.75, "recall {recall:.2}");

    // Nothing twice in one context window: what was injected is excluded next time.
    let q = FACTS[3].3[0];
    let first = e
        .recall(&live_session, &cwd, q, &compacted, &cfg)
        .expect("recall");
    assert!(first.text.contains("quartermaster"), "{}", first.text);
    let mut after = compacted.clone();
    after.add_recalled(&first.turns.iter().map(|t| t.id).collect::<Vec<_>>());
    let again = e
        .recall(&live_session, &cwd, q, &after, &cfg)
        .expect("recall");
    assert!(
        !again.text.contains("workers/quartermaster.py"),
        "{}",
        again.text
    );
}

#[test]
fn an_uncompacted_session_recalls_nothing_of_its_own_live_turns() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = engine(&dir.path().join("home"));
    let t = dir.path().join("t.jsonl");
    // The project is a folder of this test, as a session's cwd would be.
    let project = dir.path().join("recall-live").display().to_string();
    fact_session(&project, &t);
    e.ingest_transcript(&t, &IngestOptions::default())
        .expect("ingest");
    let sid = "0f0f0f0f-1111-4222-8333-444455556666";
    // Compacted: the fact comes back; live (boundary 0 = every turn is still in the context):
    // nothing does, however good the match.
    let q = "what did we decide to name the reconciliation worker?";
    let compacted = ContextState {
        lost: true,
        boundary_turn: e.last_turn(sid).expect("turns").expect("some") + 1,
        injected: Vec::new(),
        recalled: Vec::new(),
        ..ContextState::default()
    };
    let cfg = RecallConfig::default();
    let r = e
        .recall(sid, &project, q, &compacted, &cfg)
        .expect("recall");
    assert!(r.text.contains("quartermaster"), "{}", r.text);
    let live = ContextState {
        lost: true,
        boundary_turn: 0,
        injected: Vec::new(),
        recalled: Vec::new(),
        ..ContextState::default()
    };
    let r = e.recall(sid, &project, q, &live, &cfg).expect("recall");
    assert_eq!(r.text, "", "a live turn must not be recalled");
}
