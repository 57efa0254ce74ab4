use super::extract::extract;
use super::*;
use crate::chunk::Chunk;

fn rec(turn: u32, part: u16, text: &str) -> ChunkRecord {
    ChunkRecord {
        chunk: Chunk {
            session_id: "s".into(),
            project: "/p".into(),
            turn_index: turn,
            part,
            parts: 1,
            turn_uuid: format!("u{turn}"),
            line_uuids: Vec::new(),
            started_at: None,
            ended_at: None,
            text: text.into(),
            tools: Vec::new(),
            files: Vec::new(),
            summary: String::new(),
            is_compact_summary: false,
            sha256: String::new(),
        },
        project_id: 1,
        doc_len: 0,
        ingested_at: 0,
        access_count: 0,
        last_access: None,
        confidence: 1.0,
        pinned: false,
        embedders: Vec::new(),
        shared_with: Vec::new(),
    }
}

#[test]
fn blocks_follow_the_chunk_labels() {
    let b = blocks(
        "User: fix the build\nsecond line\nAssistant: Looking.\n[tool: Bash] {\"command\":\"cargo build\"}\n[result: Bash] ok\nAssistant: Done.\n- detail",
    );
    assert_eq!(
        b,
        vec![
            Block::User {
                text: "fix the build\nsecond line".into(),
                continued: false
            },
            Block::Assistant("Looking.".into()),
            Block::Tool {
                name: "Bash",
                input: "{\"command\":\"cargo build\"}"
            },
            Block::Other,
            Block::Assistant("Done.\n- detail".into()),
        ]
    );
    assert_eq!(
        blocks("User: long one (continued)")[0],
        Block::User {
            text: "long one".into(),
            continued: true
        }
    );
}

#[test]
fn extracts_files_commands_decisions_outcomes_and_open_items() {
    let t0 = rec(
        0,
        0,
        "User: The retry_policy in kiln/scheduler.py drops jobs; fix retry_policy please\n\
         Assistant: I decided to use exponential backoff instead of a fixed sleep. Editing now.\n\
         [tool: Edit] {\"file_path\":\"/p/kiln/scheduler.py\",\"old_string\":\"a\",\"new_string\":\"b\"}\n\
         [tool: Write] {\"file_path\":\"/elsewhere/notes.md\",\"content\":\"# TODO: not an open item\"}\n\
         [tool: Read] {\"file_path\":\"/p/README.md\"}\n\
         [tool: Bash] {\"command\":\"pytest -q tests/test_scheduler.py\"}\n\
         [result: Bash] 3 passed\n\
         Assistant: The retry_policy now backs off. TODO: add jitter.",
    );
    let t1 = rec(
        1,
        0,
        "User: Now the retry_policy docs\nAssistant: Updated.\n\
         [tool: MultiEdit] {\"file_path\":\"/p/docs/retry.md\",\"edits\":[]}\n\
         [tool: NotebookEdit] {\"notebook_path\":\"/p/nb/analysis.ipynb\",\"new_source\":\"x\"}\n\
         [tool: Bash] {\"command\":\"pytest -q tests/test_scheduler.py\"}",
    );
    let t2 = rec(2, 0, "User: and what about the scheduler queue?");
    let s = extract(&[&t0, &t1, &t2], "/p", &SummaryConfig::default());
    assert_eq!(s.turns_covered, 3);
    assert_eq!(
        s.files_changed,
        vec![
            "kiln/scheduler.py",
            "/elsewhere/notes.md",
            "docs/retry.md",
            "nb/analysis.ipynb"
        ]
    );
    assert_eq!(s.commands, vec!["pytest -q tests/test_scheduler.py"]);
    assert_eq!(
        s.decisions,
        vec!["I decided to use exponential backoff instead of a fixed sleep."]
    );
    assert_eq!(
        s.outcomes,
        vec!["The retry_policy now backs off.", "Updated."]
    );
    assert_eq!(
        s.open_items,
        vec![
            "Unanswered: and what about the scheduler queue?",
            "TODO: add jitter."
        ]
    );
    assert_eq!(s.topics.first().map(String::as_str), Some("retry_policy"));
    assert!(!s.topics.iter().any(|t| t == "the" || t == "please"));
    let line = s.one_line();
    assert!(line.starts_with("retry_policy"), "{line}");
    assert!(line.contains("4 files changed") && line.contains("last: Updated."));
    let full = s.render();
    assert!(full.starts_with(&format!("Summary: {line}\n")));
    assert!(full.contains("Commands: `pytest -q tests/test_scheduler.py`"));
    assert!(full.contains("Open items:\n- Unanswered:"));
}

#[test]
fn bounded_lists_keep_the_most_recent() {
    let recs: Vec<ChunkRecord> = (0..30)
        .map(|i| {
            rec(
                i,
                0,
                &format!(
                    "User: step {i}\nAssistant: Finished step {i}.\n[tool: Bash] {{\"command\":\"make step{i}\"}}"
                ),
            )
        })
        .collect();
    let refs: Vec<&ChunkRecord> = recs.iter().collect();
    let cfg = SummaryConfig::default();
    let s = extract(&refs, "/p", &cfg);
    assert_eq!(s.commands.len(), cfg.commands);
    assert_eq!(s.commands.last().map(String::as_str), Some("make step29"));
    assert_eq!(s.outcomes.len(), cfg.outcomes);
    assert_eq!(
        s.outcomes.last().map(String::as_str),
        Some("Finished step 29.")
    );
    assert!(s.open_items.is_empty());
}

#[test]
fn fixture_session_summary_is_stored_and_bounded() {
    let (_d, engine) = crate::prune::tests::engine_with_fixture();
    let sid = crate::prune::tests::SID;
    assert!(
        summarize_session(engine.core(), "no-such-session", &SummaryConfig::default())
            .unwrap()
            .is_none()
    );
    let s = summarize_session(engine.core(), sid, &SummaryConfig::default())
        .unwrap()
        .unwrap();
    assert_eq!(s.turns, 41);
    assert_eq!(s.turns_covered, 41);
    assert!(!s.topics.is_empty() && !s.files_changed.is_empty() && !s.commands.is_empty());
    assert!(
        s.files_changed.iter().all(|f| !f.starts_with('/')),
        "{:?}",
        s.files_changed
    );
    let r = engine.store().read().unwrap();
    assert_eq!(r.session(sid).unwrap().unwrap().summary, Some(s.render()));
    assert_eq!(stored(&r, sid).unwrap(), Some(s.clone()));
    drop(r);
    // Bounded: only the latest turns are read.
    let small = SummaryConfig {
        max_turns: 5,
        ..SummaryConfig::default()
    };
    let r = engine.store().read().unwrap();
    let b = build(&r, sid, &small).unwrap().unwrap();
    assert_eq!(b.turns_covered, 5);
}

#[test]
fn external_summariser_output_is_kept_and_survives_extractive_updates() {
    let (_d, engine) = crate::prune::tests::engine_with_fixture();
    let sid = crate::prune::tests::SID;
    let cfg = SummaryConfig::default();
    let off = external::ExternalConfig::default();
    let s = summarize_with_external(engine.core(), sid, &cfg, &off)
        .unwrap()
        .unwrap();
    assert_eq!(s.abstractive, None);
    let ext = external::ExternalConfig {
        command: Some("head -c 200 >/dev/null; echo 'The session sped up CI.'".into()),
        timeout: std::time::Duration::from_secs(20),
    };
    let s = summarize_with_external(engine.core(), sid, &cfg, &ext)
        .unwrap()
        .unwrap();
    assert_eq!(s.abstractive.as_deref(), Some("The session sped up CI."));
    // A later extractive update (hooks) keeps the abstract.
    let again = summarize_session(engine.core(), sid, &cfg)
        .unwrap()
        .unwrap();
    assert_eq!(
        again.abstractive.as_deref(),
        Some("The session sped up CI.")
    );
    assert!(
        again
            .render()
            .contains("Abstract (external summariser):\nThe session sped up CI.")
    );
    // Failures and timeouts are errors, never hangs.
    let failing = external::ExternalConfig {
        command: Some("echo oops >&2; exit 3".into()),
        ..ext.clone()
    };
    assert!(summarize_with_external(engine.core(), sid, &cfg, &failing).is_err());
    let slow = external::ExternalConfig {
        command: Some("sleep 5".into()),
        timeout: std::time::Duration::from_millis(200),
    };
    let t = std::time::Instant::now();
    assert!(matches!(
        external::run(&slow, "x"),
        Err(external::ExternalError::Timeout(_))
    ));
    assert!(t.elapsed() < std::time::Duration::from_secs(3));
    assert!(matches!(
        external::run(&off, "x"),
        Err(external::ExternalError::Disabled)
    ));
}

/// The limits a SessionStart restore asks for at its default budget.
fn restore_cfg() -> SummaryConfig {
    SummaryConfig {
        max_turns: 80,
        decisions: 5,
        open_items: 3,
        ..SummaryConfig::default()
    }
}

#[test]
fn a_current_stored_summary_serves_the_restore_and_says_what_a_build_says() {
    let (_d, engine) = crate::prune::tests::engine_with_fixture();
    let sid = crate::prune::tests::SID;
    summarize_session(engine.core(), sid, &SummaryConfig::default())
        .unwrap()
        .unwrap();
    let r = engine.store().read().unwrap();
    let built = build(&r, sid, &restore_cfg()).unwrap().unwrap();
    let served = current_or_build(&r, sid, &restore_cfg()).unwrap().unwrap();
    assert_eq!(served.decisions, built.decisions);
    assert_eq!(served.open_items, built.open_items);
    drop(r);
    // Served from the store: what is stored is what the restore gets.
    let mut marked = served.clone();
    marked.decisions = vec!["Decided to keep the stored one.".into()];
    engine.store().write(|w| put(w, &marked)).unwrap();
    let r = engine.store().read().unwrap();
    let got = current_or_build(&r, sid, &restore_cfg()).unwrap().unwrap();
    assert_eq!(got.decisions, marked.decisions);
}

#[test]
fn a_stale_stored_summary_is_rebuilt() {
    let (_d, engine) = crate::prune::tests::engine_with_fixture();
    let sid = crate::prune::tests::SID;
    let mut s = summarize_session(engine.core(), sid, &SummaryConfig::default())
        .unwrap()
        .unwrap();
    let r = engine.store().read().unwrap();
    let built = build(&r, sid, &restore_cfg()).unwrap().unwrap();
    drop(r);
    // Built before the latest turn was archived (one turn fewer): not current.
    s.turns -= 1;
    s.decisions = vec!["Decided something stale.".into()];
    engine.store().write(|w| put(w, &s)).unwrap();
    let r = engine.store().read().unwrap();
    let got = current_or_build(&r, sid, &restore_cfg()).unwrap().unwrap();
    assert_eq!(got.decisions, built.decisions);
    // A restore asking for more than hooks store is built too.
    let more = SummaryConfig {
        decisions: SummaryConfig::default().decisions + 1,
        ..restore_cfg()
    };
    assert_eq!(
        current_or_build(&r, sid, &more).unwrap(),
        build(&r, sid, &more).unwrap()
    );
}

#[test]
fn open_items_keep_the_unanswered_prompt_and_the_newest_todos() {
    let mut recs: Vec<ChunkRecord> = (0..6)
        .map(|i| rec(i, 0, &format!("User: step {i}\nAssistant: TODO: item {i}.")))
        .collect();
    recs.push(rec(6, 0, "User: and the queue?"));
    let refs: Vec<&ChunkRecord> = recs.iter().collect();
    let s = extract(&refs, "/p", &restore_cfg());
    assert_eq!(
        s.open_items,
        vec![
            "Unanswered: and the queue?",
            "TODO: item 4.",
            "TODO: item 5."
        ]
    );
    // Cutting a summary built with the hooks' limits gives the same items.
    let mut wide = extract(&refs, "/p", &SummaryConfig::default());
    assert_eq!(wide.open_items.len(), SummaryConfig::default().open_items);
    keep_newest(&mut wide, &restore_cfg());
    assert_eq!(wide.open_items, s.open_items);
}
