//! Configuration as real processes: a bad `MEMCTL_*` value makes the CLI exit non-zero with a
//! message naming it, while `memctl-hook` with the same value still exits 0, logs it and works
//! with the default; unknown variables are warnings.

use crate::common;

use common::{PROJECT, SID, fixture};

const BAD: (&str, &str) = ("MEMCTL_RESTORE_CHARS", "lots");

#[test]
fn a_bad_value_fails_the_cli_with_a_clear_message() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = common::memctl(tmp.path(), &["status"], b"", &[BAD]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(r#"memctl: error: invalid MEMCTL_RESTORE_CHARS="lots": not a number"#),
        "{err}"
    );
    assert!(out.stdout.is_empty());

    let out = common::memctl(tmp.path(), &["status"], b"", &[("MEMCTL_SWAP", "maybe")]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("MEMCTL_SWAP=\"maybe\": not a boolean"));
}

#[test]
fn the_hook_with_the_same_bad_value_exits_0_and_still_archives() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path();
    let payload = serde_json::json!({
        "session_id": SID,
        "transcript_path": fixture(),
        "cwd": PROJECT,
        "hook_event_name": "UserPromptSubmit",
        "prompt": "go on",
    })
    .to_string();
    // `common::hook` asserts exit 0.
    let out = common::hook(
        home,
        "UserPromptSubmit",
        payload.as_bytes(),
        &[
            BAD,
            ("MEMCTL_EMBEDDER", "hash"),
            ("MEMCTL_NO_SUCH_KNOB", "1"),
        ],
    );
    assert!(out.stdout.is_empty(), "{out:?}");
    let log = std::fs::read_to_string(home.join("logs/memctl.log")).expect("hook log");
    assert!(
        log.contains("MEMCTL_RESTORE_CHARS") && log.contains("using its default"),
        "{log}"
    );
    assert!(log.contains("MEMCTL_NO_SUCH_KNOB"), "{log}");
    // The archive happened: the CLI (with a clean environment) sees the session.
    let out = common::memctl(home, &["sessions"], b"", &[("MEMCTL_EMBEDDER", "hash")]);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains(&SID[..8]));
}

#[test]
fn unknown_variables_warn_and_do_not_fail() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = common::memctl(
        tmp.path(),
        &["status"],
        b"",
        &[("MEMCTL_EMBEDDER", "hash"), ("MEMCTL_RESTORE_CHAR", "3000")],
    );
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("memctl: warning: unknown variable MEMCTL_RESTORE_CHAR ignored"),
        "{err}"
    );
}

#[test]
fn switches_accept_every_spelling_of_the_one_boolean_rule() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for v in ["1", "0", "TRUE", "false", "Yes", "no", "on", "OFF"] {
        let out = common::memctl(
            tmp.path(),
            &["status"],
            b"",
            &[("MEMCTL_EMBEDDER", "hash"), ("MEMCTL_SWAP", v)],
        );
        assert!(out.status.success(), "MEMCTL_SWAP={v}: {out:?}");
    }
}

#[test]
fn the_status_line_behaves_like_a_hook() {
    // Claude Code runs `memctl statusline` on every turn: a bad value must not blank it.
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = common::memctl(
        tmp.path(),
        &["statusline"],
        b"{}",
        &[("MEMCTL_CONTEXT_WINDOW", "big")],
    );
    assert!(out.status.success(), "{out:?}");
    assert!(!out.stdout.is_empty(), "{out:?}");
}
