use super::*;
use proptest::prelude::*;

fn turn(id: u64, line: &str) -> RecalledTurn {
    RecalledTurn {
        id,
        evidence: Evidence::default(),
        line: line.into(),
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
fn best_passage_is_the_line_sharing_most_prompt_terms() {
    let text = "User: set up the worker\nAssistant: We will call the new worker quartermaster.\n\
                [tool: Bash] ls\nAssistant: done";
    let terms = informative_terms("what name did we pick for the new worker?");
    let p = best_passage(text, &terms).unwrap();
    assert!(p.contains("quartermaster"), "{p}");
    assert_eq!(best_passage(text, &informative_terms("zzyzx qqq")), None);
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
    /// More evidence never turns a match into a non-match.
    #[test]
    fn gate_is_monotone(d1 in -1.0f32..1.0, d2 in -1.0f32..1.0, c1 in 0.0f32..1.0, c2 in 0.0f32..1.0) {
        let p = GateParams::default();
        let lo = Evidence { dense: Some(d1.min(d2)), coverage: c1.min(c2) };
        let hi = Evidence { dense: Some(d1.max(d2)), coverage: c1.max(c2) };
        prop_assert!(!gate(&lo, &p) || gate(&hi, &p));
        let no_model = Evidence { dense: None, coverage: lo.coverage };
        prop_assert!(!gate(&no_model, &p) || gate(&lo, &p));
    }
}
