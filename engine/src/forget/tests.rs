use super::fixture::*;
use super::*;
use crate::SearchRequest;
use crate::engine::Engine;
use crate::search::SearchMode;
use serde_json::json;

fn req() -> ForgetRequest {
    ForgetRequest::default()
}

#[test]
fn requests_that_do_not_say_what_to_forget_are_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    let err = |r: ForgetRequest| e.forget(&r, true).expect_err("refused").to_string();
    assert!(err(req()).contains("nothing to forget was named"));
    assert!(
        err(ForgetRequest {
            text: Some("  ".into()),
            ..req()
        })
        .contains("empty")
    );
    assert!(
        err(ForgetRequest {
            chunk_ids: vec![1, 987_654],
            ..req()
        })
        .contains("987654")
    );
    assert!(
        err(ForgetRequest {
            since: Some("last tuesday".into()),
            ..req()
        })
        .contains("not a time")
    );
    assert!(
        err(ForgetRequest {
            session: Some("ffff".into()),
            ..req()
        })
        .contains("no archived session")
    );
    assert!(
        err(ForgetRequest {
            project: Some("/nowhere".into()),
            ..req()
        })
        .contains(project_a())
    );
    let inverted = ForgetRequest {
        since: Some("2026-01-03".into()),
        until: Some("2026-01-02".into()),
        ..req()
    };
    assert!(err(inverted).contains("time range is empty"));
    // Nothing was touched by any of them.
    assert_eq!(e.sessions().expect("sessions").len(), 3);
}

#[test]
fn a_session_goes_entirely_and_nothing_else_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    let before = e.status().expect("status");
    let dry = e
        .forget(
            &ForgetRequest {
                session: Some("aaaa".into()),
                ..req()
            },
            true,
        )
        .expect("dry run");
    assert_eq!(dry.turns, 4);
    assert_eq!(dry.sessions_removed, vec![SA.to_string()]);
    assert_eq!(dry.tool_outputs, 1);
    assert_eq!(
        e.status().expect("status").chunks,
        before.chunks,
        "a dry run removes nothing"
    );

    let done = e
        .forget(
            &ForgetRequest {
                session: Some("aaaa".into()),
                ..req()
            },
            false,
        )
        .expect("forget");
    assert_eq!(
        (done.chunks, done.turns, done.tool_outputs),
        (dry.chunks, dry.turns, dry.tool_outputs)
    );
    assert_eq!(
        done.removed_ids, dry.removed_ids,
        "the dry run named exactly what went"
    );
    assert!(done.rewrite.is_some(), "the store file was rewritten");
    assert!(e.session(SA).expect("session").is_none());
    assert!(e.swap_list(Some(SA)).expect("swap").is_empty());
    assert_eq!(
        e.swap_list(Some(SC)).expect("swap").len(),
        1,
        "other outputs stay"
    );
    assert!(
        lexical_hits(&e, "ZebraFrost release tag")
            .iter()
            .all(|(s, _)| s != SA)
    );
    assert_eq!(lexical_hits(&e, "OrchidLantern warmup")[0].0, SB);
    assert_eq!(lexical_hits(&e, "TangerineComet")[0].0, SC);
    let after = e.status().expect("status");
    assert_eq!(after.chunks, before.chunks - done.chunks);
    assert_eq!(after.sessions, 2);
    audit(&e);
}

#[test]
fn a_text_takes_its_whole_turn_ignoring_case_and_the_session_is_fixed_up() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    e.summarize(SA, &crate::summary::SummaryConfig::default())
        .expect("summary");
    let done = e
        .forget(
            &ForgetRequest {
                text: Some("zebrafrost".into()),
                ..req()
            },
            false,
        )
        .expect("forget");
    assert_eq!(done.turns, 1);
    assert_eq!(done.turn_lines[0].turn, 1);
    assert_eq!(done.tool_outputs, 1, "the output that says it goes too");
    assert!(done.sessions_removed.is_empty());
    assert_eq!(done.summaries_rebuilt, 1);
    // The prompt of that turn went with the answer that matched.
    assert!(
        lexical_hits(&e, "release tag")
            .iter()
            .all(|(s, t)| !(s == SA && *t == 1))
    );
    let left: Vec<u32> = e
        .session_chunks(SA)
        .expect("chunks")
        .iter()
        .map(|(((t, _), _), _)| *t)
        .collect();
    assert_eq!(left, vec![0, 2, 3]);
    let rec = e.session(SA).expect("session").expect("kept");
    assert_eq!(rec.turns, 4);
    let summary = rec.summary.expect("rebuilt summary");
    assert!(!summary.to_lowercase().contains("zebrafrost"), "{summary}");
    audit(&e);
}

#[test]
fn a_time_range_selects_turns_by_their_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    let done = e
        .forget(
            &ForgetRequest {
                since: Some(ts(1, 0)),
                until: Some(ts(3, 0)),
                session: Some(SA.into()),
                ..req()
            },
            false,
        )
        .expect("forget");
    let turns: Vec<u32> = done.turn_lines.iter().map(|l| l.turn).collect();
    assert_eq!(turns, vec![1, 2]);
    assert_eq!(done.tool_outputs, 1, "stored during turn 1");
    let rec = e.session(SA).expect("session").expect("kept");
    assert_eq!(rec.first_ts.as_deref(), Some(ts(0, 0).as_str()));
    assert_eq!(
        e.session_chunks(SB).expect("b").len(),
        2,
        "B is outside the session criterion"
    );
    audit(&e);
}

#[test]
fn a_project_and_a_text_and_together() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    // The text is in project B only: forgetting it in project A matches nothing.
    let none = e
        .forget(
            &ForgetRequest {
                project: Some(format!("{}/", project_a())),
                text: Some("TangerineComet".into()),
                ..req()
            },
            false,
        )
        .expect("forget");
    assert!(none.is_empty(), "{none:?}");
    assert!(none.rewrite.is_none(), "nothing removed: no rewrite");
    let done = e
        .forget(
            &ForgetRequest {
                project: Some(project_b().into()),
                ..req()
            },
            false,
        )
        .expect("forget");
    assert_eq!(done.sessions_removed, vec![SC.to_string()]);
    assert_eq!(done.tool_outputs, 1);
    assert!(lexical_hits(&e, "TangerineComet").is_empty());
    assert_eq!(e.sessions().expect("sessions").len(), 2);
    audit(&e);
}

#[test]
fn chunk_ids_take_their_turn_and_the_outputs_stored_during_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    let (((_, _), id), _) = e.session_chunks(SA).expect("chunks")[1].clone();
    let done = e
        .forget(
            &ForgetRequest {
                chunk_ids: vec![id],
                ..req()
            },
            false,
        )
        .expect("forget");
    assert_eq!(done.turn_lines.len(), 1);
    assert_eq!(done.turn_lines[0].turn, 1);
    assert_eq!(done.tool_outputs, 1);
    assert!(e.chunk(id).expect("chunk").is_none());
    let again = e
        .forget(
            &ForgetRequest {
                chunk_ids: vec![id],
                ..req()
            },
            true,
        )
        .expect_err("a forgotten id is unknown now");
    assert!(again.to_string().contains(&id.to_string()));
    audit(&e);
}

#[test]
fn forgotten_turns_do_not_come_back_when_the_transcript_is_archived_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, paths) = three_sessions(dir.path());
    e.forget(
        &ForgetRequest {
            session: Some(SA.into()),
            ..req()
        },
        false,
    )
    .expect("forget");
    // The same transcript under another path: read from the start, every turn seen again.
    let moved = dir.path().join("moved.jsonl");
    std::fs::copy(&paths[0], &moved).expect("copy");
    let rep = ingest(&e, &moved);
    assert_eq!(rep.inserted, 0, "{rep:?}");
    assert_eq!(rep.forgotten, 4, "{rep:?}");
    assert!(
        e.session(SA).expect("session").is_none(),
        "no empty record comes back"
    );
    // The session goes on: a new turn is archived as usual.
    let mut text = std::fs::read_to_string(&paths[0]).expect("read");
    let line = json!({"parentUuid": null, "isSidechain": false, "userType": "external",
        "cwd": project_a(), "sessionId": SA, "version": "2.0.37", "type": "user",
        "message": {"role": "user", "content": "A new question about the pager rota"},
        "uuid": "new-u", "timestamp": ts(9, 0)});
    text.push_str(&format!("{line}\n"));
    std::fs::write(&paths[0], text).expect("append");
    let rep = ingest(&e, &paths[0]);
    assert_eq!(rep.inserted, 1, "{rep:?}");
    assert_eq!(lexical_hits(&e, "pager rota")[0].0, SA);
    assert!(lexical_hits(&e, "ZebraFrost").is_empty());
    audit(&e);
}

/// Search over the store after a forget ranks exactly like a fresh store that never held the
/// forgotten session: BM25 statistics, postings and vector blocks all followed.
#[test]
fn search_after_forget_equals_a_store_that_never_had_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, paths) = three_sessions(dir.path());
    e.forget(
        &ForgetRequest {
            session: Some(SB.into()),
            ..req()
        },
        false,
    )
    .expect("forget");
    let fresh = engine_at(&dir.path().join("fresh"));
    ingest(&fresh, &paths[0]);
    ingest(&fresh, &paths[2]);
    for q in [
        "deploy the scheduler",
        "release tag main",
        "warmup cache restart",
        "flag renamed",
    ] {
        for mode in [SearchMode::Lexical, SearchMode::Hybrid, SearchMode::Dense] {
            let run = |eng: &Engine| -> Vec<(String, u32, i64)> {
                let mut r = SearchRequest::new(q, 10);
                r.mode = mode;
                eng.search(&r)
                    .expect("search")
                    .results
                    .iter()
                    .map(|h| {
                        let c = &h.record.chunk;
                        (
                            c.session_id.clone(),
                            c.turn_index,
                            (h.scores.score * 1e4).round() as i64,
                        )
                    })
                    .collect()
            };
            assert_eq!(run(&e), run(&fresh), "{q:?} {mode:?}");
        }
    }
}

#[test]
fn the_rewritten_file_holds_no_forgotten_byte_and_other_handles_follow_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    let path = e.store_path();
    // Another process's handle, opened before the forget.
    let other = crate::store::Store::open(&path).expect("second handle");
    assert!(other.read().expect("read").chunk_count().expect("count") > 0);
    let done = e
        .forget(
            &ForgetRequest {
                text: Some("ZEBRAFROST".into()),
                ..req()
            },
            false,
        )
        .expect("forget");
    let rw = done.rewrite.expect("rewritten");
    assert!(rw.bytes_after > 0 && rw.rows > 0, "{rw:?}");
    let bytes = std::fs::read(&path).expect("read store");
    for needle in ["ZebraFrost", "zebrafrost", "ZEBRAFROST"] {
        assert!(
            !bytes.windows(needle.len()).any(|w| w == needle.as_bytes()),
            "{needle} is still in the store file"
        );
    }
    // The other handle reads the new file and its writes land there.
    let r = other.read().expect("read");
    assert!(r.chunk(done.removed_ids[0]).expect("chunk").is_none());
    drop(r);
    other
        .write(|w| w.set_meta_value("test.after", b"1"))
        .expect("write through the old handle");
    let third = crate::store::Store::open(&path).expect("third handle");
    assert_eq!(
        third
            .read()
            .expect("read")
            .meta_value("test.after")
            .expect("meta"),
        Some(b"1".to_vec())
    );
    assert_eq!(
        third
            .read()
            .expect("read")
            .tombstone_count()
            .expect("count"),
        done.tombstones
    );
    audit(&e);
}

#[test]
fn a_summary_built_before_a_forget_is_not_stored_after_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    let (built, epoch) = {
        let r = e.store().read().expect("read");
        let cfg = crate::summary::SummaryConfig::default();
        (
            crate::summary::build(&r, SA, &cfg)
                .expect("build")
                .expect("some"),
            r.forget_epoch().expect("epoch"),
        )
    };
    e.forget(
        &ForgetRequest {
            text: Some("zebrafrost".into()),
            ..req()
        },
        false,
    )
    .expect("forget");
    let stored = e
        .store()
        .write(|w| crate::summary::put_unless_forgotten(w, &built, epoch))
        .expect("write");
    assert!(!stored, "a summary of forgotten chunks must not be stored");
}

#[test]
fn spooled_calls_and_context_files_of_what_is_forgotten_go_too() {
    use crate::recall::{ContextState, load_state, save_state, state_path};
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    let data = e.data_dir().to_path_buf();
    // A hook that found the store busy spooled a call of C, and one of B.
    let response = json!({"stdout": format!("TangerineComet {}", "x\n".repeat(4000))}).to_string();
    for sid in [SC, SB] {
        let call = crate::swap::ToolCall {
            session_id: sid,
            project: if sid == SC { project_b() } else { project_a() },
            tool_name: "Bash",
            tool_input: r#"{"command":"make"}"#,
            tool_response: &response,
            tool_use_id: None,
            failed: false,
        };
        crate::spool::spool_tool(&data, &call).expect("spool");
    }
    // Context states: C's (gone after the forget), A's naming one chunk that goes.
    let a_ids: Vec<ChunkId> = e
        .session_chunks(SA)
        .expect("a")
        .iter()
        .map(|((_, id), _)| *id)
        .collect();
    let st = |ids: &[ChunkId]| ContextState {
        lost: true,
        injected: ids.to_vec(),
        recalled: ids.to_vec(),
        ..ContextState::default()
    };
    save_state(&data, SC, &st(&[])).expect("save");
    save_state(&data, SA, &st(&a_ids)).expect("save");

    let dry = e
        .forget(
            &ForgetRequest {
                project: Some(project_b().into()),
                ..req()
            },
            true,
        )
        .expect("dry");
    assert_eq!(dry.spooled_calls, 1, "{dry:?}");
    let done = e
        .forget(
            &ForgetRequest {
                project: Some(project_b().into()),
                ..req()
            },
            false,
        )
        .expect("forget");
    assert_eq!(done.spooled_calls, 1);
    assert_eq!(done.context_files, 1);
    assert!(!state_path(&data, SC).exists());
    let left: Vec<String> = std::fs::read_dir(data.join("spool").join("tools"))
        .expect("spool dir")
        .flatten()
        .map(|f| std::fs::read_to_string(f.path()).expect("read"))
        .collect();
    assert_eq!(left.len(), 1, "B's call stays");
    assert!(left[0].contains(SB));

    let done = e
        .forget(
            &ForgetRequest {
                text: Some("zebrafrost".into()),
                ..req()
            },
            false,
        )
        .expect("forget");
    assert_eq!(done.context_files, 1);
    let a = load_state(&data, SA);
    assert_eq!(a.injected.len(), a_ids.len() - done.removed_ids.len());
    assert!(a.injected.iter().all(|id| !done.removed_ids.contains(id)));
}

/// A rewrite that fails after the removal committed says so, and the next forget (even one
/// that matches nothing) finishes it.
#[test]
fn a_failed_rewrite_is_reported_and_retried_by_the_next_forget() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    let future = redb::TableDefinition::<u64, u64>::new("from_the_future");
    e.store()
        .write(|w| {
            w.raw_tx().open_table(future)?.insert(1, 1)?;
            Ok(())
        })
        .expect("a table this memctl does not know");
    // A reader from before the removal pins the pages it frees, so that their bytes are in the
    // file until a rewrite, whatever pages redb would otherwise reuse (the storage work left
    // fewer stale copies lying around).
    let pin = e.store().read().expect("read");
    let err = e
        .forget(
            &ForgetRequest {
                text: Some("zebrafrost".into()),
                ..req()
            },
            false,
        )
        .expect_err("the rewrite is refused");
    assert!(
        matches!(err, EngineError::Forget(ForgetError::Rewrite { .. })),
        "{err}"
    );
    assert!(err.to_string().contains("forgotten, but"), "{err}");
    assert!(
        lexical_hits(&e, "ZebraFrost").is_empty(),
        "the removal itself committed"
    );
    let bytes = std::fs::read(e.store_path()).expect("read");
    assert!(
        bytes.windows(10).any(|w| w == b"ZebraFrost"),
        "not rewritten: the bytes are still in free pages"
    );
    drop(pin);
    e.store()
        .write(|w| {
            w.raw_tx().delete_table(future)?;
            Ok(())
        })
        .expect("drop it");
    let retry = e
        .forget(
            &ForgetRequest {
                text: Some("no such words".into()),
                ..req()
            },
            false,
        )
        .expect("forget");
    assert!(retry.is_empty());
    assert!(retry.rewrite.is_some(), "the pending rewrite ran");
    let bytes = std::fs::read(e.store_path()).expect("read");
    assert!(!bytes.windows(10).any(|w| w == b"ZebraFrost"));
}

/// A turn repeated within a session is stored as a second turn entry naming the first one's
/// chunk: forgetting the session removes both entries, and nothing of it is left anywhere.
#[test]
fn a_session_with_a_repeated_turn_goes_entirely() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, _) = three_sessions(dir.path());
    let sid = "dddd4444-0000-4000-8000-000000000004";
    let t = transcript(
        &dir.path().join("transcripts"),
        sid,
        project_a(),
        &[
            turn("Start the build", "Started (PlumHarbor build)."),
            turn("Run the tests again", "All 42 tests pass (PlumHarbor)."),
            turn("And the linter?", "Clean."),
            turn("Run the tests again", "All 42 tests pass (PlumHarbor)."),
        ],
    );
    ingest(&e, &t);
    let linked: Vec<u64> = e
        .store()
        .read()
        .expect("read")
        .session_turns(sid)
        .expect("turns")
        .iter()
        .map(|(_, id)| *id)
        .collect();
    let distinct: BTreeSet<u64> = linked.iter().copied().collect();
    assert!(
        distinct.len() < linked.len(),
        "the repeated turn is a link to the first: {linked:?}"
    );
    let done = e
        .forget(
            &ForgetRequest {
                session: Some("dddd".into()),
                ..req()
            },
            false,
        )
        .expect("forget");
    assert_eq!(done.sessions_removed, vec![sid.to_string()]);
    assert!(e.session(sid).expect("session").is_none());
    assert!(e.sessions().expect("sessions").iter().all(|s| s.0 != sid));
    assert!(lexical_hits(&e, "PlumHarbor").is_empty());
    assert_eq!(e.status().expect("status").sessions, 3);
    audit(&e);
    let found = crate::store::check::check_store(&e.store_path()).expect("check");
    assert!(found.is_consistent(), "{:?}", found.violations);
}
