//! Ages on restore and recall lines through the real pipeline, at an injected time: a turn of
//! another session, or of this one an hour or more ago, says how long ago it was; a recent turn
//! of this session does not. The fixture is the folding one (six turns of one session, one a
//! day from 2026-11-10 10:00 UTC).

use super::fold_tests::{CWD, SID, engine};
use crate::restore::{RestoreConfig, RestoreKind};

/// Half an hour after the last turn (2026-11-15 10:00 UTC).
const NOW: &str = "2026-11-15T10:30:00Z";

fn now() -> i64 {
    NOW.parse::<jiff::Timestamp>().expect("now").as_second()
}

/// The head of a restore line (`[turn 5, 11-15 10:00, 30 min ago`), without the copies' label.
fn head(line: &str) -> &str {
    let end = line.find([']', ';']).unwrap_or(line.len());
    &line[line.find('[').unwrap_or(0)..end]
}

/// The block's line that holds `needle`.
fn line_with<'a>(text: &'a str, needle: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in\n{text}"))
}

#[test]
fn restore_lines_say_how_long_ago_older_turns_were() {
    let (_dir, engine) = engine();
    let cfg = RestoreConfig {
        now: Some(now()),
        ..RestoreConfig::default()
    };
    let own = engine
        .restore(SID, CWD, RestoreKind::Compact, &cfg)
        .expect("restore");
    let rounding = line_with(&own.text, "round half to even");
    assert!(rounding.contains("11-14 10:00, yesterday]"), "{rounding}");
    let rename = line_with(&own.text, "settle_invoice");
    assert!(rename.contains("11-11 10:00, 4 days ago]"), "{rename}");
    let latest = line_with(&own.text, "[turn 5");
    assert!(
        latest.contains("11-15 10:00]"),
        "recent, own session: {latest}"
    );
    assert!(own.text.chars().count() <= cfg.budget.max_chars);
    // A full restore after /clear is the previous session's: every turn is of another session.
    let mut full = cfg.clone();
    full.sources.clear = crate::restore::RestoreMode::Full;
    let cleared = engine
        .restore("a-new-session", CWD, RestoreKind::Clear, &full)
        .expect("restore");
    let latest = line_with(&cleared.text, "[turn 5");
    assert_eq!(head(latest), "[turn 5, 11-15 10:00, 30 min ago");
    // Deterministic: the same time gives the same block.
    let again = engine
        .restore(SID, CWD, RestoreKind::Compact, &cfg)
        .expect("restore");
    assert_eq!(own.text, again.text);
}

#[test]
fn a_tight_restore_budget_counts_the_ages() {
    let (_dir, engine) = engine();
    for chars in [600, 900, 1_500] {
        let mut cfg = RestoreConfig {
            now: Some(now()),
            ..RestoreConfig::default()
        };
        cfg.budget.max_chars = chars;
        let r = engine
            .restore(SID, CWD, RestoreKind::Compact, &cfg)
            .expect("restore");
        assert!(r.text.chars().count() <= chars, "{chars}: {}", r.text);
    }
}

#[test]
fn recall_lines_of_another_session_say_how_long_ago() {
    let (_dir, engine) = engine();
    let state = crate::recall::ContextState {
        lost: true,
        boundary_turn: 100,
        ..Default::default()
    };
    let cfg = crate::recall::RecallConfig {
        now: Some(now()),
        ..Default::default()
    };
    let found = engine
        .recall(
            "other-session",
            CWD,
            "Did the ledger tests pass?",
            &state,
            &cfg,
        )
        .expect("recall");
    assert!(!found.turns.is_empty(), "nothing recalled");
    let head = regex::Regex::new(
        r"\[session f01df01d, turn \d, 11-1\d 10:0\d, (\d+ min ago|yesterday|\d days ago)\] ",
    )
    .expect("re");
    for t in &found.turns {
        assert!(head.is_match(&t.line), "{}", t.line);
    }
    assert!(found.text.chars().count() <= cfg.budget_chars);
    // Asked from the archived session itself (turns before the boundary), a turn of half an
    // hour ago has no age, older ones do.
    let own = engine
        .recall(SID, CWD, "Did the ledger tests pass?", &state, &cfg)
        .expect("recall");
    assert!(!own.turns.is_empty(), "nothing recalled");
    for t in &own.turns {
        let at = t.line.find("[this session").expect("head");
        let head = &t.line[at..at + t.line[at..].find(']').expect("head end")];
        let recent = head.contains("11-15 10:0");
        let aged = head.ends_with(" ago") || head.ends_with("yesterday");
        assert_eq!(aged, !recent, "{}", t.line);
    }
}
