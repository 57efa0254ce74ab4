use super::*;
use crate::autopilot::AutopilotConfig;

fn cfg(chars_per_token: f32) -> AutopilotConfig {
    AutopilotConfig {
        chars_per_token,
        ..AutopilotConfig::default()
    }
}

fn hook(session: &str, hook: &str, at: i64, inj: u64, summ: u64, removed: u64) -> HookInjection {
    HookInjection {
        session_id: session.into(),
        hook: hook.into(),
        at,
        injection: Injection {
            injected_chars: inj,
            summarizer_chars: summ,
            removed_chars: removed,
        },
    }
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn records_round_trip_in_the_documented_format() {
    let d = tmp();
    record(d.path(), &hook("s1", "SessionStart", 100, 1834, 0, 0)).unwrap();
    let text = std::fs::read_to_string(path(d.path(), "s1")).unwrap();
    assert_eq!(
        text,
        "{\"type\":\"hook\",\"session_id\":\"s1\",\"hook\":\"SessionStart\",\"at\":100,\
         \"injected_chars\":1834,\"summarizer_chars\":0,\"removed_chars\":0}\n"
    );
    let sample = ContextSample {
        session_id: "s1".into(),
        at: 142,
        used_tokens: Some(86_000),
        window_tokens: Some(200_000),
    };
    assert!(record_context(d.path(), None, &sample).unwrap());
    let log = read_session(d.path(), "s1").unwrap().unwrap();
    assert_eq!(
        log.records,
        vec![
            Record::Hook(hook("s1", "SessionStart", 100, 1834, 0, 0)),
            Record::Context(sample.clone())
        ]
    );
    assert_eq!(log.skipped_lines, 0);
    assert_eq!(log.latest_context(), Some(&sample));
    assert_eq!(sample.percent(), Some(43.0));
    assert_eq!(read_session(d.path(), "nobody").unwrap(), None);
}

#[cfg(unix)]
#[test]
fn files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let d = tmp();
    record(d.path(), &hook("s", "SessionStart", 1, 5, 0, 0)).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&d.path().join(DIR)), 0o700);
    assert_eq!(mode(&path(d.path(), "s")), 0o600);
}

#[test]
fn session_ids_are_sanitized_into_one_file_each() {
    let d = tmp();
    for id in ["../../etc/passwd", "a/b", "a\nb", ".."] {
        record(d.path(), &hook(id, "SessionStart", 1, 3, 0, 0)).unwrap();
        let p = path(d.path(), id);
        assert_eq!(p.parent(), Some(d.path().join(DIR).as_path()), "{id:?}");
        let log = read_session(d.path(), id).unwrap().unwrap();
        assert_eq!(log.records.len(), 1, "{id:?}: one file per id");
    }
    assert!(!d.path().join("etc").exists());
    let files = std::fs::read_dir(d.path().join(DIR)).unwrap().count();
    assert_eq!(files, 4);
    // The report names the session by its real id, not the file name.
    let r = report(d.path(), 10, &cfg(4.0)).unwrap();
    let mut ids: Vec<_> = r.recent.iter().map(|s| s.session_id.as_str()).collect();
    ids.sort_unstable();
    assert_eq!(ids, ["..", "../../etc/passwd", "a\nb", "a/b"]);
}

#[test]
fn torn_and_garbage_lines_are_skipped_and_counted() {
    let d = tmp();
    record(d.path(), &hook("s", "SessionStart", 10, 400, 0, 0)).unwrap();
    let p = path(d.path(), "s");
    let mut f = crate::paths::append_private(&p).unwrap();
    // A torn line (a crash mid-write) followed by garbage, a future record type and an
    // empty line; then a good record again.
    f.write_all(b"{\"type\":\"hook\",\"session_id\":\"s\",\"ho\n\xff\xfe not json\n")
        .unwrap();
    f.write_all(b"{\"type\":\"quota\",\"session_id\":\"s\",\"at\":1}\n\n")
        .unwrap();
    drop(f);
    record(d.path(), &hook("s", "UserPromptSubmit", 20, 100, 0, 0)).unwrap();
    let log = read_session(d.path(), "s").unwrap().unwrap();
    assert_eq!(log.records.len(), 2);
    assert_eq!(log.skipped_lines, 3);
    let r = summarize(&log, "s", 4.0);
    assert_eq!(r.total.injected_chars, 500);
    assert_eq!(r.total.calls, 2);
    assert_eq!(r.skipped_lines, 3);
    assert_eq!(report(d.path(), 5, &cfg(4.0)).unwrap().skipped_lines, 3);
}

#[test]
fn concurrent_appends_keep_every_line_whole() {
    let d = tmp();
    let threads = 8;
    let per = 200;
    std::thread::scope(|s| {
        for t in 0..threads {
            let dir = d.path();
            s.spawn(move || {
                for i in 0..per {
                    // Long hook names make lines big enough to expose interleaving.
                    let name = format!("Hook{t}-{}", "x".repeat(200));
                    record(dir, &hook("shared", &name, i, 1, 2, 3)).unwrap();
                }
            });
        }
    });
    let log = read_session(d.path(), "shared").unwrap().unwrap();
    assert_eq!(log.skipped_lines, 0);
    assert_eq!(log.records.len(), (threads * per) as usize);
    let r = summarize(&log, "shared", 4.0);
    let n = (threads * per) as u64;
    assert_eq!(r.total.calls, n);
    assert_eq!(
        (
            r.total.injected_chars,
            r.total.summarizer_chars,
            r.total.removed_chars
        ),
        (n, 2 * n, 3 * n)
    );
    assert_eq!(r.hooks.len(), threads as usize);
    assert!(r.hooks.iter().all(|h| h.counts.calls == per as u64));
}

#[test]
fn report_sums_per_hook_and_session_with_the_one_estimator() {
    let d = tmp();
    record(d.path(), &hook("old", "SessionStart", 100, 3500, 0, 0)).unwrap();
    record(d.path(), &hook("old", "PreCompact", 110, 0, 700, 0)).unwrap();
    record(d.path(), &hook("new", "UserPromptSubmit", 200, 350, 0, 0)).unwrap();
    record(d.path(), &hook("new", "UserPromptSubmit", 210, 350, 0, 0)).unwrap();
    record(d.path(), &hook("new", "PostToolUse", 220, 0, 0, 7000)).unwrap();
    let cpt = 3.5;
    let r = report(d.path(), 1, &cfg(cpt)).unwrap();
    assert_eq!(r.sessions, 2);
    assert_eq!(r.total.calls, 5);
    assert_eq!(r.total.injected_chars, 4200);
    assert_eq!(r.total.injected_tokens, 1200);
    assert_eq!(r.total.summarizer_tokens, 200);
    assert_eq!(r.total.removed_tokens, 2000);
    assert_eq!(
        r.total.injected_tokens,
        crate::autopilot::tokens_from_chars(4200, cpt)
    );
    let names: Vec<_> = r.hooks.iter().map(|h| h.hook.as_str()).collect();
    assert_eq!(
        names,
        [
            "PostToolUse",
            "PreCompact",
            "SessionStart",
            "UserPromptSubmit"
        ]
    );
    // Only the most recent session in detail.
    assert_eq!(r.recent.len(), 1);
    let s = &r.recent[0];
    assert_eq!(s.session_id, "new");
    assert_eq!((s.first_at, s.last_at), (200, 220));
    assert_eq!(s.total.injected_chars, 700);
    assert_eq!(s.total.injected_tokens, 200);
    assert_eq!(s.total.removed_chars, 7000);
    let ups = s
        .hooks
        .iter()
        .find(|h| h.hook == "UserPromptSubmit")
        .unwrap();
    assert_eq!((ups.counts.calls, ups.counts.injected_chars), (2, 700));
    let one = session_report(d.path(), "old", &cfg(cpt)).unwrap().unwrap();
    assert_eq!(one.total.summarizer_chars, 700);
    assert_eq!(session_report(d.path(), "none", &cfg(cpt)).unwrap(), None);
    assert_eq!(
        report(&d.path().join("nothing"), 5, &cfg(cpt)).unwrap(),
        TelemetryReport::default()
    );
}

#[test]
fn context_samples_are_appended_only_when_they_change() {
    let d = tmp();
    let at = |at, used| ContextSample {
        session_id: "s".into(),
        at,
        used_tokens: used,
        window_tokens: Some(200_000),
    };
    assert!(record_context(d.path(), None, &at(1, Some(10))).unwrap());
    let log = read_session(d.path(), "s").unwrap();
    assert!(!record_context(d.path(), log.as_ref(), &at(2, Some(10))).unwrap());
    assert!(record_context(d.path(), log.as_ref(), &at(3, Some(20))).unwrap());
    let log = read_session(d.path(), "s").unwrap().unwrap();
    assert_eq!(log.records.len(), 2);
    assert_eq!(log.latest_context().unwrap().used_tokens, Some(20));
    // Nothing to say, or no session: nothing written.
    let none = ContextSample {
        session_id: "s".into(),
        at: 4,
        used_tokens: None,
        window_tokens: None,
    };
    assert!(!record_context(d.path(), None, &none).unwrap());
    let anon = ContextSample {
        session_id: String::new(),
        ..at(5, Some(1))
    };
    assert!(!record_context(d.path(), None, &anon).unwrap());
    // Context lines are not hook calls.
    let r = session_report(d.path(), "s", &cfg(4.0)).unwrap().unwrap();
    assert_eq!(r.total.calls, 0);
    assert_eq!((r.first_at, r.last_at), (1, 3));
}

#[test]
fn a_full_or_unwritable_file_is_an_error_and_the_hook_step_goes_on() {
    let d = tmp();
    let p = path(d.path(), "s");
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(MAX_FILE_BYTES).unwrap();
    drop(f);
    let err = record(d.path(), &hook("s", "SessionStart", 1, 1, 0, 0)).unwrap_err();
    assert!(matches!(err, TelemetryError::Full { .. }), "{err}");
    assert_eq!(std::fs::metadata(&p).unwrap().len(), MAX_FILE_BYTES);
    // The hook's step logs and returns.
    record_hook(
        d.path(),
        "s",
        "SessionStart",
        Injection {
            injected_chars: 1,
            ..Injection::default()
        },
    );
    // A directory where the file should be: an error, never a panic.
    let q = path(d.path(), "dir");
    std::fs::create_dir_all(&q).unwrap();
    assert!(record(d.path(), &hook("dir", "SessionStart", 1, 1, 0, 0)).is_err());
    assert!(read_session(d.path(), "dir").is_err());
    let r = report(d.path(), 5, &cfg(4.0)).unwrap();
    assert_eq!(r.unreadable.len(), 1, "{:?}", r.unreadable);
    assert!(
        r.unreadable[0].starts_with("dir.jsonl: "),
        "{:?}",
        r.unreadable
    );
    // The full file (NULs, no newline) is one skipped line, not an error.
    assert_eq!((r.sessions, r.skipped_lines), (1, 1));
}

#[test]
fn empty_injections_and_anonymous_sessions_are_not_recorded() {
    let d = tmp();
    record_hook(d.path(), "s", "SessionEnd", Injection::default());
    record_hook(
        d.path(),
        "",
        "SessionStart",
        Injection {
            injected_chars: 9,
            ..Injection::default()
        },
    );
    assert!(!d.path().join(DIR).exists());
    record_hook(
        d.path(),
        "s",
        "SessionStart",
        Injection {
            injected_chars: 9,
            ..Injection::default()
        },
    );
    let r = session_report(d.path(), "s", &cfg(4.0)).unwrap().unwrap();
    assert_eq!((r.total.calls, r.total.injected_chars), (1, 9));
    assert!(r.last_at > 0);
}

#[test]
fn the_context_fill_prefers_claude_codes_numbers_to_our_estimate() {
    let d = tmp();
    let c = cfg(3.5);
    // No numbers at all: no fill.
    record(d.path(), &hook("s", "SessionStart", 1, 10, 0, 0)).unwrap();
    let r = session_report(d.path(), "s", &c).unwrap().unwrap();
    assert_eq!(r.fill, None);
    // The autopilot's sample (memctl's estimate), with the configured window.
    let mut st = crate::autopilot::AutopilotState::default();
    st.push(crate::autopilot::Sample {
        at: 5,
        tokens: 50_000,
    });
    crate::autopilot::save_state(d.path(), "s", &st).unwrap();
    let fill = session_report(d.path(), "s", &c)
        .unwrap()
        .unwrap()
        .fill
        .unwrap();
    assert_eq!(fill.source, FillSource::Estimate);
    assert_eq!(
        (fill.used_tokens, fill.window_tokens, fill.at),
        (50_000, 200_000, 5)
    );
    assert_eq!(fill.percent, 25.0);
    // Claude Code reported only its window (after /clear): our tokens, its window.
    let window_only = ContextSample {
        session_id: "s".into(),
        at: 6,
        used_tokens: None,
        window_tokens: Some(1_000_000),
    };
    assert!(record_context(d.path(), None, &window_only).unwrap());
    let fill = session_report(d.path(), "s", &c)
        .unwrap()
        .unwrap()
        .fill
        .unwrap();
    assert_eq!(fill.source, FillSource::Estimate);
    assert_eq!(fill.window_tokens, 1_000_000);
    // Claude Code's usage wins over the estimate.
    let exact = ContextSample {
        session_id: "s".into(),
        at: 7,
        used_tokens: Some(86_000),
        window_tokens: Some(200_000),
    };
    assert!(record_context(d.path(), None, &exact).unwrap());
    let fill = session_report(d.path(), "s", &c)
        .unwrap()
        .unwrap()
        .fill
        .unwrap();
    assert_eq!(fill.source, FillSource::ClaudeCode);
    assert_eq!(
        (fill.used_tokens, fill.window_tokens, fill.at),
        (86_000, 200_000, 7)
    );
    assert_eq!(fill.percent, 43.0);
    let all = report(d.path(), 5, &c).unwrap();
    assert_eq!(all.recent[0].fill, Some(fill));
}

#[test]
fn an_unreadable_telemetry_directory_is_listed_not_an_error() {
    let d = tmp();
    // A file where the directory should be (as root, modes would not stop the read).
    std::fs::write(d.path().join(DIR), b"not a directory").unwrap();
    let r = report(d.path(), 5, &cfg(4.0)).unwrap();
    assert_eq!(r.sessions, 0);
    assert_eq!(r.unreadable.len(), 1, "{:?}", r.unreadable);
    // And the hook's step only warns.
    record_hook(
        d.path(),
        "s",
        "SessionStart",
        Injection {
            injected_chars: 1,
            ..Injection::default()
        },
    );
    assert!(record(d.path(), &hook("s", "SessionStart", 1, 1, 0, 0)).is_err());
}
