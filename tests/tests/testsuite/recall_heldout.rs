//! Prompt-time recall on a held-out archive (`memctl_tests::heldout`): a buoy-telemetry
//! pipeline session, eleven facts buried in prompts, answers, the tail of long tool outputs and
//! the end of a long answer, two low-overlap questions per fact, twelve in-domain prompts that
//! must not recall. Real model, real redb through the Engine.
//!
//! Prints, per question: delivered (the fact is in the injected block), the rank of the fact's
//! chunk in a raw hybrid search, the evidence of the fact's chunk and of the best candidate,
//! and the cause of a miss (gate, ranking, passage, budget); then the totals. Holds delivery
//! and precision above a floor, so a change that overfits the tuning set shows up here.

use memctl_engine::{
    ContextState, Engine, GateParams, IngestOptions, RecallConfig, Recalled, SearchRequest,
    Thresholds, prompt_kind, recall_gate,
};
use memctl_tests::heldout::{FACTS, NEGATIVES, SESSION, session_jsonl};
use std::path::Path;

const SEED: u64 = 20_261_118;

fn engine(dir: &Path) -> Engine {
    memctl_tests::model_engine(dir)
}

/// Every candidate passes, all are shown: where the fact's chunk sits among recall's eligible
/// candidates and what evidence it had.
fn permissive(cfg: &RecallConfig) -> RecallConfig {
    RecallConfig {
        budget_chars: 10_000,
        max_hits: 40,
        gate: {
            let all = Thresholds {
                dense_alone: -1.0,
                dense_with_lexical: -1.0,
                coverage_with_dense: 0.0,
                coverage_alone: 0.0,
            };
            GateParams {
                question: all,
                other: all,
                ..cfg.gate
            }
        },
        ..cfg.clone()
    }
}

/// Why a question's fact did not reach the model: `fact_ids` are the chunks holding it (from a
/// raw search), `all` is recall with every candidate passing and shown, `big_budget` recall
/// with the default gate and a large budget.
fn cause(
    prompt: &str,
    needle: &str,
    fact_ids: &[u64],
    got: &Recalled,
    all: &Recalled,
    big_budget: &Recalled,
    cfg: &RecallConfig,
) -> String {
    if got.text.contains(needle) {
        return "ok".into();
    }
    if got.turns.iter().any(|t| fact_ids.contains(&t.id)) {
        return "passage (the fact's turn is shown, its line lacks the fact)".into();
    }
    if big_budget.text.contains(needle) {
        return "budget".into();
    }
    let Some(p) = all.turns.iter().position(|t| fact_ids.contains(&t.id)) else {
        return "ranking (the fact's turn is not among recall's candidates)".into();
    };
    let ev = all.turns[p].evidence;
    let passes = recall_gate(&ev, prompt_kind(prompt), &cfg.gate);
    let better = all.turns[..p]
        .iter()
        .filter(|t| recall_gate(&t.evidence, prompt_kind(prompt), &cfg.gate))
        .count();
    match (passes, better >= cfg.max_hits) {
        (_, true) => format!(
            "ranking (candidate #{}; {better} better-ranked turns pass the gate)",
            p + 1
        ),
        (false, false) => format!(
            "gate: weak evidence (candidate #{}: dense {:?}, coverage {:.2})",
            p + 1,
            ev.dense,
            ev.coverage
        ),
        (true, false) => "passes the gate and ranks high enough: see the shown lines".into(),
    }
}

#[test]
fn recall_on_a_held_out_archive() {
    println!("recall held-out seed {SEED}");
    let dir = tempfile::tempdir().expect("tempdir");
    let e = engine(&dir.path().join("home"));
    let cwd = dir.path().join("saltmarsh").display().to_string();
    let t = dir.path().join(format!("{SESSION}.jsonl"));
    std::fs::write(&t, session_jsonl(&cwd, SEED)).expect("write the session");
    e.ingest_transcript(&t, &IngestOptions::default())
        .expect("ingest");
    let last = e.last_turn(SESSION).expect("turns").expect("some turns");
    assert!(last >= 35, "a long session: {last} turns");
    let compacted = ContextState {
        lost: true,
        boundary_turn: last + 1,
        injected: Vec::new(),
        recalled: Vec::new(),
        ..ContextState::default()
    };
    let cfg = RecallConfig::default();
    let wide = permissive(&cfg);
    let roomy = RecallConfig {
        budget_chars: 10_000,
        ..cfg.clone()
    };

    let (mut delivered, mut fired_wrong, mut positives) = (0usize, 0usize, 0usize);
    for f in FACTS {
        for q in f.questions {
            positives += 1;
            let got = e
                .recall(SESSION, &cwd, q, &compacted, &cfg)
                .expect("recall");
            assert!(got.text.chars().count() <= cfg.budget_chars);
            let all = e
                .recall(SESSION, &cwd, q, &compacted, &wide)
                .expect("recall");
            let big = e
                .recall(SESSION, &cwd, q, &compacted, &roomy)
                .expect("recall");
            let mut req = SearchRequest::new(q, 40);
            req.projects = vec![cwd.clone()];
            let found = e.search(&req).expect("search");
            let rank = found
                .results
                .iter()
                .position(|r| r.record.chunk.text.contains(f.needle));
            let fact_ids: Vec<u64> = found
                .results
                .iter()
                .filter(|r| r.record.chunk.text.contains(f.needle))
                .map(|r| r.id)
                .collect();
            let hit = got.text.contains(f.needle);
            if hit {
                delivered += 1;
            } else if !got.text.is_empty() {
                fired_wrong += 1;
            }
            let fact_ev = rank.map(|i| {
                (
                    found.results[i].scores.dense,
                    found.results[i].scores.lexical,
                )
            });
            println!(
                "POS {} [{:<16}] {q:?}\n      search rank {} (dense, bm25) {:?}; best {:?}; shown {:?}; cause: {}",
                if hit { "hit " } else { "MISS" },
                f.kind,
                rank.map_or("-".to_string(), |r| (r + 1).to_string()),
                fact_ev,
                got.best,
                got.turns.iter().map(|t| t.evidence).collect::<Vec<_>>(),
                cause(q, f.needle, &fact_ids, &got, &all, &big, &cfg),
            );
            if !hit && !got.text.is_empty() {
                for t in &got.turns {
                    println!("      shown: {}", t.line);
                }
            }
        }
    }
    let mut neg_fired = 0usize;
    for q in NEGATIVES {
        let r = e
            .recall(SESSION, &cwd, q, &compacted, &cfg)
            .expect("recall");
        let fired = !r.text.is_empty();
        println!(
            "NEG {} {q:?} best={:?}",
            if fired { "FIRE" } else { "ok  " },
            r.best
        );
        neg_fired += usize::from(fired);
    }
    let fires = delivered + fired_wrong + neg_fired;
    let precision = delivered as f64 / fires.max(1) as f64;
    println!(
        "held-out: facts delivered {delivered}/{positives}; blocks without the fact {fired_wrong}; \
         negatives that fired {neg_fired}/{}; precision {precision:.2} ({delivered}/{fires})",
        NEGATIVES.len()
    );
    // Floors a little under what the current recall reaches (12/22 delivered, 0/12 negatives,
    // precision 0.71): the misses left are turns whose cosine with the question is 0.07-0.25
    // with little word overlap (see the causes printed above).
    assert!(
        delivered * 2 >= positives,
        "delivered {delivered}/{positives}"
    );
    assert!(neg_fired <= 1, "{neg_fired} negatives fired");
    assert!(precision >= 0.65, "precision {precision:.2}");
}
