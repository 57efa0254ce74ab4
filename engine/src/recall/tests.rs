use super::*;
use crate::evidence::{PromptKind, confidence};
use proptest::prelude::*;

fn turn(id: u64, line: &str) -> RecalledTurn {
    RecalledTurn {
        id,
        evidence: Evidence::default(),
        line: line.into(),
        copies: crate::fold::Copies::default(),
    }
}

#[test]
fn chit_chat_never_reaches_retrieval() {
    for p in ["yes, go on", "ok", "thanks!", "do it", "yes"] {
        assert!(
            informative_terms(p).len() < GateParams::default().min_terms,
            "{p}"
        );
    }
    assert!(informative_terms("which replica host serves the read traffic").len() >= 2);
}

#[test]
fn render_keeps_whole_lines_within_the_budget() {
    let turns = vec![turn(1, &"a".repeat(300)), turn(2, &"b".repeat(300))];
    let all = render(&turns, 10_000);
    assert!(all.starts_with(RECALL_OPEN) && all.ends_with(crate::transcript::CONTEXT_CLOSE));
    assert_eq!(all.lines().filter(|l| l.starts_with("- ")).count(), 2);
    let one = render(&turns, all.chars().count() - 10);
    assert_eq!(one.lines().filter(|l| l.starts_with("- ")).count(), 1);
    assert!(one.chars().count() <= all.chars().count() - 10);
    assert_eq!(
        render(&turns, 50),
        "",
        "a budget too small for one line gives no block"
    );
    assert!(render(&turns, 1_000_000).chars().count() <= crate::restore::MAX_RESTORE_CHARS);
}

#[test]
fn the_first_passage_is_the_line_sharing_most_prompt_terms() {
    let text = "User: set up the worker\nAssistant: We will call the new worker quartermaster.\n\
                [tool: Bash] ls\nAssistant: done";
    let q = "what name did we pick for the new worker?";
    let p = passage::passages(text, &informative_terms(q), q, "", 1000);
    assert!(p[0].contains("quartermaster"), "{p:?}");
    let q = "zzyzx qqq";
    assert!(passage::passages(text, &informative_terms(q), q, "", 1000).is_empty());
}

#[test]
fn state_round_trips_and_a_missing_or_bad_file_is_the_default() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(load_state(dir.path(), "s/../x"), ContextState::default());
    let mut st = ContextState {
        lost: true,
        boundary_turn: 7,
        injected: vec![3],
        recalled: Vec::new(),
        ..ContextState::default()
    };
    st.add_injected(&[3, 4]);
    assert_eq!(st.injected, vec![3, 4]);
    save_state(dir.path(), "s/../x", &st).unwrap();
    assert_eq!(load_state(dir.path(), "s/../x"), st);
    let path = state_path(dir.path(), "s/../x");
    assert!(path.starts_with(dir.path().join("context")));
    std::fs::write(&path, b"{not json").unwrap();
    assert_eq!(load_state(dir.path(), "s/../x"), ContextState::default());
}

proptest! {
    /// More evidence never turns a match into a non-match, for either kind of prompt; and a
    /// question is never held to a stricter bar than a request.
    #[test]
    fn gate_is_monotone(d1 in -1.0f32..1.0, d2 in -1.0f32..1.0, c1 in 0.0f32..1.0, c2 in 0.0f32..1.0) {
        let p = GateParams::default();
        let lo = Evidence { dense: Some(d1.min(d2)), coverage: c1.min(c2) };
        let hi = Evidence { dense: Some(d1.max(d2)), coverage: c1.max(c2) };
        for kind in [PromptKind::Question, PromptKind::Other] {
            prop_assert!(!gate(&lo, kind, &p) || gate(&hi, kind, &p));
            let no_model = Evidence { dense: None, coverage: lo.coverage };
            prop_assert!(!gate(&no_model, kind, &p) || gate(&lo, kind, &p));
        }
        prop_assert!(!gate(&lo, PromptKind::Other, &p) || gate(&lo, PromptKind::Question, &p));
    }

    /// The confidence stays in 0..=1, never falls when the cosine or the coverage rises, and
    /// clears `CONFIDENT` exactly when the gate passes (for either kind of prompt).
    #[test]
    fn confidence_is_bounded_monotone_and_the_gate(
        d1 in -1.0f32..1.0, d2 in -1.0f32..1.0, c1 in 0.0f32..1.0, c2 in 0.0f32..1.0,
        model in any::<bool>(),
    ) {
        let p = GateParams::default();
        let dense = |d: f32| model.then_some(d);
        let lo = Evidence { dense: dense(d1.min(d2)), coverage: c1.min(c2) };
        let hi = Evidence { dense: dense(d1.max(d2)), coverage: c1.max(c2) };
        let mixed = [
            Evidence { dense: dense(d1.max(d2)), coverage: c1.min(c2) },
            Evidence { dense: dense(d1.min(d2)), coverage: c1.max(c2) },
        ];
        for kind in [PromptKind::Question, PromptKind::Other] {
            let (a, b) = (confidence(&lo, kind, &p), confidence(&hi, kind, &p));
            prop_assert!((0.0..=1.0).contains(&a) && (0.0..=1.0).contains(&b), "{a} {b}");
            prop_assert!(a <= b, "{lo:?} -> {a}, {hi:?} -> {b}");
            for m in &mixed {
                let c = confidence(m, kind, &p);
                prop_assert!(a <= c && c <= b, "{lo:?} {a} <= {m:?} {c} <= {hi:?} {b}");
            }
            for e in [lo, hi] {
                prop_assert_eq!(confidence(&e, kind, &p) >= CONFIDENT, gate(&e, kind, &p), "{:?}", e);
            }
        }
    }

    /// More shared prompt terms never lower a passage's score.
    #[test]
    fn unit_score_grows_with_shared_terms(words in proptest::collection::vec("[a-z]{4,8}", 1..6), extra in "[a-z]{4,8}") {
        let line = words.join(" ");
        let terms_owned = informative_terms(&format!("{line} {extra}"));
        prop_assume!(!terms_owned.is_empty(), "only stopwords");
        let fewer: std::collections::HashSet<&str> =
            terms_owned.iter().filter(|t| **t != terms_owned[0]).map(String::as_str).collect();
        let all: std::collections::HashSet<&str> = terms_owned.iter().map(String::as_str).collect();
        let shapes = passage::wanted_shapes("");
        prop_assert!(passage::unit_score(&line, &all, &shapes) >= passage::unit_score(&line, &fewer, &shapes));
    }

    /// The allowances keep a full block within the budget whenever the budget can hold them
    /// unclamped, never leave the bounds, and favour the best turn.
    #[test]
    fn line_allowances_share_the_budget(budget in 0usize..20_000, n in 1usize..6) {
        let a = line_allowances(budget, n);
        prop_assert_eq!(a.len(), n);
        prop_assert!(a.iter().all(|x| (LINE_MIN..=LINE_MAX).contains(x)));
        prop_assert!(a.iter().all(|x| *x <= a[0]));
        if a.iter().all(|x| *x > LINE_MIN) {
            let used: usize = a.iter().map(|x| x + 3).sum();
            prop_assert!(frame_chars() + used <= budget.min(crate::restore::MAX_RESTORE_CHARS));
        }
    }
}

#[test]
fn questions_and_requests() {
    for q in [
        "which host should the reads go to?",
        "remind me how to redo a single night that went wrong",
        "Where on disk do the refused records end up",
        "ok, so what was the deadline",
    ] {
        assert_eq!(prompt_kind(q), PromptKind::Question, "{q}");
    }
    for q in [
        "run the linter again",
        "write a docstring for the new script",
        "do the same for the parser",
        "now add a unit test for the parser",
    ] {
        assert_eq!(prompt_kind(q), PromptKind::Other, "{q}");
    }
}

#[test]
fn a_question_asks_for_a_shape_and_the_line_holding_it_wins() {
    let text = "User: how do we redo a failed night?\n\
                Assistant: The nightly DAG is idempotent per partition, so a failed night can be redone.\n\
                Check the row counts afterwards.\n\
                make backfill DAY=2026-03-14 SHARDS=6";
    let q = "what was the exact invocation for re-running one date?";
    let p = passage::passages(text, &informative_terms(q), q, "", 1000);
    assert!(p.iter().any(|l| l.contains("make backfill")), "{p:?}");
    let toml = "    1\u{2192}[rejects]\n    2\u{2192}keep_days = 21\n    3\u{2192}dir = \"~/buoy/deadletter/q\"";
    let q = "where on disk do the refused records end up?";
    let p = passage::passages(toml, &informative_terms(q), q, "", 1000);
    assert_eq!(
        p.first().map(String::as_str),
        Some("dir = \"~/buoy/deadletter/q\"")
    );
}
