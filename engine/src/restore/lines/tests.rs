use super::*;
use proptest::prelude::*;

fn nothing_known(_: &str) -> bool {
    false
}

#[test]
fn error_line_skips_labels_and_exit_codes() {
    let text = "User: build it\n[tool: Bash] {\"command\":\"cargo build\"}\n[error: Bash] Exit code 1\ncompiling quasar v0.7\nerror: linking failed: undefined reference to quasar_init_v7_k9\nAssistant: the error is in the linker";
    assert_eq!(
        first_error_line(text).as_deref(),
        Some("error: linking failed: undefined reference to quasar_init_v7_k9")
    );
    assert_eq!(first_error_line("[error: Read] File does not exist."), None);
    assert_eq!(
        first_error_line("[error: Bash] Exit code 1\n3 tests failed").as_deref(),
        Some("3 tests failed")
    );
    assert_eq!(
        first_error_line("User: fix the error\nAssistant: the error was fixed"),
        None
    );
}

/// The issue's cases: Read output holding code, a passing test run, a path with "error" in it.
#[test]
fn error_label_only_on_real_failures() {
    let read = "[tool: Read] {\"file_path\":\"/p/src/errors.rs\"}\n[result: Read]      1→pub enum Error {\n     2→  if (!x) throw new NotFoundError('x');\n     3→    // error: handled by the caller";
    assert_eq!(first_error_line(read), None);
    let passing = "[tool: Bash] {\"command\":\"cargo test\"}\n[result: Bash] test a::b ... ok\n\ntest result: ok. 12 passed; 0 failed; 0 ignored";
    assert_eq!(first_error_line(passing), None);
    let path = "[result: Bash]  M src/errors.rs\n M src/on_error.rs";
    assert_eq!(first_error_line(path), None);
    let grep = "[result: Grep] src/db.rs:12: return Err(Error::NotFound)";
    assert_eq!(first_error_line(grep), None);
    let traceback = "[error: Bash] Exit code 1\nTraceback (most recent call last):\n  File \"kiln/db.py\", line 3, in get\nKeyError: 'user_id'";
    assert_eq!(
        first_error_line(traceback).as_deref(),
        Some("KeyError: 'user_id'")
    );
}

#[test]
fn error_strength_orders_markers() {
    assert_eq!(error_strength("error[E0308]: mismatched types"), 3);
    assert_eq!(
        error_strength("src/x.ts:4:12 - error TS2345: Argument of type"),
        3
    );
    assert_eq!(
        error_strength("FAILED tests/test_a.py::test_b - AssertionError"),
        3
    );
    assert_eq!(error_strength("Traceback (most recent call last):"), 2);
    assert_eq!(error_strength("2 checks failed"), 1);
    assert_eq!(error_strength("0 failed"), 0);
    assert_eq!(error_strength("see src/errors.rs"), 0);
    assert_eq!(error_strength("test result: ok. 3 passed; 0 failed"), 0);
}

#[test]
fn pasted_failure_log_keeps_its_failure_line() {
    let p = "The build is failing with this:\n```\nerror[E0308]: mismatched types\n  --> src/sync.rs:120:17\n   |\n120 |     let n: usize = x.len() as u32;\n```\nCan you fix it? Don't change the public API of src/sync.rs.";
    let g = prompt_gist(p, GIST_CHARS);
    assert!(g.contains("error[E0308]: mismatched types"), "{g}");
    assert!(g.contains("--> src/sync.rs:120:17"), "{g}");
    assert!(g.contains("Can you fix it?"), "{g}");
    // Tight: the request's first line and the failure outlive the rest.
    let tight = prompt_gist(p, 90);
    assert!(tight.contains("error[E0308]"), "{tight}");
}

#[test]
fn production_log_keeps_error_and_collapses_repeats() {
    let p = "Here is the log from production:\n```\nTraceback (most recent call last):\n  File \"kiln/db.py\", line 88, in fetch_user\n    return self._user[key]\nKeyError: 'user_id'\n2025-10-03T10:00:00Z WARN fetch_user: retrying (attempt 1)\n2025-10-03T10:00:01Z WARN fetch_user: retrying (attempt 2)\n2025-10-03T10:00:02Z WARN fetch_user: retrying (attempt 3)\n```\nWhat is going on?";
    let g = prompt_gist(p, GIST_CHARS);
    assert!(g.contains("KeyError: 'user_id'"), "{g}");
    assert!(g.contains("(×3)"), "{g}");
    assert!(g.contains("What is going on?"), "{g}");
    assert!(!g.contains("attempt 2"), "{g}");
}

#[test]
fn plain_prompts_stay_whole() {
    let p = "Add rate limiting to `send_mail` in src/mail.rs. It should be off by default.";
    assert_eq!(prompt_gist(p, GIST_CHARS), p);
}

#[test]
fn reply_keeps_conclusions_not_announcements() {
    let r = "Here's a summary of the changes:\n\n- `src/sync.rs`: fixed error handling in `load_state`\n- `src/db.rs`: new test for `open_db`\n\nWant me to commit this?";
    let g = reply_gist(r, GIST_CHARS, &nothing_known);
    assert!(!g.contains("Here's a summary"), "{g}");
    assert!(!g.contains("Want me to"), "{g}");
    assert!(g.contains("`src/sync.rs`: fixed error handling"), "{g}");
    let r = "Done. I took the approach of a write-ahead log rather than fsync per write, because it survives a crash.";
    let g = reply_gist(r, GIST_CHARS, &nothing_known);
    assert!(g.starts_with("I took the approach"), "{g}");
    let only_filler = "Let me look at the failing code path first.";
    assert_eq!(reply_gist(only_filler, GIST_CHARS, &nothing_known), "");
}

#[test]
fn known_sentences_are_left_out() {
    let r =
        "The root cause was a stale cache entry. I decided to use a TTL instead of manual flushes.";
    let known = |s: &str| s.starts_with("I decided");
    let g = reply_gist(r, GIST_CHARS, &known);
    assert_eq!(g, "The root cause was a stale cache entry.");
}

#[test]
fn trivial_turns_are_recognised() {
    let text = "User: yes, do that\n[tool: Bash] {\"command\":\"cargo test\"}\n[result: Bash] test result: ok. 42 passed; 0 failed\nAssistant: All 42 tests pass now.";
    let parts = turn_parts(text);
    let head = LineHead {
        session: None,
        turn: 7,
        time: "",
        age: None,
    };
    assert_eq!(turn_line(head, &parts, &[], "/p", &nothing_known), None);
    // The same acknowledgement with an edit is not trivial.
    let edited = "User: go ahead\n[tool: Edit] {\"file_path\":\"/p/src/a.rs\",\"old_string\":\"x\"}\n[result: Edit] ok\nAssistant: Here's a summary of the changes:\n- `src/a.rs`: tightened types";
    let parts = turn_parts(edited);
    let line = turn_line(head, &parts, &[], "/p", &nothing_known).expect("not trivial");
    assert!(
        line.contains("changed: src/a.rs") && !line.contains("/p/"),
        "{line}"
    );
    assert!(is_ack_prompt("lgtm, next") && is_ack_prompt("continue"));
    assert!(!is_ack_prompt("rename `load` to `fetch`"));
    assert!(!is_ack_prompt("fix src/lib.rs"));
}

#[test]
fn turn_line_has_relative_paths_commands_and_real_errors() {
    let text = "User: The build is failing with this:\n```\nerror: could not compile `quasar` (lib) due to 2 previous errors\n```\nCan you fix it?\n[tool: Read] {\"file_path\":\"/w/quasar/src/lib.rs\"}\n[result: Read]      1→// error: old note\n[tool: Bash] {\"command\":\"cargo build\"}\n[error: Bash] Exit code 101\nerror[E0433]: failed to resolve: use of undeclared crate `tokio`\nAssistant: The root cause was a missing dependency in /w/quasar/Cargo.toml.";
    let parts = turn_parts(text);
    let head = LineHead {
        session: Some("0123456789abcdef"),
        turn: 3,
        time: "10-03 14:22",
        age: Some("2 days ago"),
    };
    let files = vec!["/w/quasar/src/lib.rs".to_string()];
    let line = turn_line(head, &parts, &files, "/w/quasar", &nothing_known).expect("line");
    assert!(
        line.starts_with("[session 01234567 turn 3, 10-03 14:22, 2 days ago] "),
        "{line}"
    );
    assert!(line.contains("could not compile `quasar`"), "{line}");
    assert!(line.contains("files: src/lib.rs"), "{line}");
    assert!(line.contains("missing dependency in Cargo.toml"), "{line}");
    assert!(line.contains("ran: `cargo build`"), "{line}");
    assert!(
        line.contains("· error: error[E0433]: failed to resolve"),
        "{line}"
    );
    assert!(!line.contains("/w/quasar/"), "{line}");
}

#[test]
fn relativize_only_touches_paths_under_the_project() {
    assert_eq!(
        relativize("see /w/p/src/a.rs and /w/pp/b.rs", "/w/p"),
        "see src/a.rs and /w/pp/b.rs"
    );
    assert_eq!(relativize("/w/p/x", "/w/p/"), "x");
    assert_eq!(relativize("/a/b", ""), "/a/b");
}

proptest! {
    /// Gists never exceed their budget and are deterministic, whatever the text.
    #[test]
    fn gists_fit_their_budget(text in "(\\PC{0,60}\n){0,12}", max in 8usize..400) {
        let p = prompt_gist(&text, max);
        prop_assert!(p.chars().count() <= max, "{p:?}");
        prop_assert_eq!(&p, &prompt_gist(&text, max));
        let r = reply_gist(&text, max, &nothing_known);
        prop_assert!(r.chars().count() <= max, "{r:?}");
    }

    /// No path under the project survives relativizing.
    #[test]
    fn relativize_removes_the_project_prefix(
        segs in proptest::collection::vec("[a-z]{1,6}", 1..4),
        pre in "[ a-z]{0,10}",
    ) {
        let project = format!("/{}", segs.join("/"));
        let text = format!("{pre}{project}/src/x.rs {project}/y");
        let prefix = format!("{project}/");
        prop_assert!(!relativize(&text, &project).contains(&prefix));
    }

    /// A line of a passing run, or any line holding only a path with "error" in it, is never
    /// an error line.
    #[test]
    fn passing_runs_are_not_errors(n in 0u32..500, ms in 0u32..9999, name in "[a-z]{1,8}") {
        let line = format!("test result: ok. {n} passed; 0 failed; finished in {ms}ms");
        prop_assert_eq!(error_strength(&line), 0);
        let path = format!(" M src/{name}/errors.rs");
        prop_assert_eq!(error_strength(&path), 0);
    }
}

#[test]
fn every_agents_shell_tool_gives_its_command_and_error() {
    for (tool, key) in [
        ("Bash", "command"),
        ("exec_command", "cmd"),
        ("run_shell_command", "command"),
    ] {
        let text = format!(
            "User: deploy it\n[tool: {tool}] {{\"{key}\":\"make deploy\"}}\n[result: {tool}] \
             error: deploy to orca-17 failed: connection refused\nAssistant: It failed."
        );
        let parts = turn_parts(&text);
        assert_eq!(parts.commands, vec!["make deploy".to_string()], "{tool}");
        let error = parts.error.unwrap_or_default();
        assert!(error.contains("orca-17"), "{tool}: {error}");
    }
}
