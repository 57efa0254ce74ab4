//! `memctl forget` through the real binaries.
//!
//! The byte scan: a session says a unique marker in a prompt, in an answer and in a
//! big tool output (stored whole by `memctl-hook PostToolUse`, LZ4-compressed, so the marker is
//! checked through the API there), goes through SessionStart(compact) and SessionEnd (context
//! state file, summary); forgetting it leaves no copy of the marker in any file under the data
//! dir, in any case, while another session stays searchable; archiving its transcript again
//! does not bring it back.
//!
//! The command line: a dry run changes nothing, `--yes` removes; a malformed selector is one
//! `memctl: error:` line and exit 1; a selector that matches nothing says so and exits 0.

use crate::common;

use common::{memctl_hash as memctl, ok_hash as ok};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

const SID_A: &str = "f0f0f0f0-1111-4222-8333-444455556666";
const SID_B: &str = "b0b0b0b0-1111-4222-8333-444455556666";
/// Said in A's prompt, answer and tool output. Mixed case: the scan looks for every case.
const MARKER: &str = "QuokkaLedger-7731";
/// Said in B only.
const OTHER: &str = "WombatSignal-2209";

/// A session in `project`: turn 0 asks about `word` and runs a Bash command whose (big) output
/// says it; turn 1 is unrelated.
fn session(dir: &Path, sid: &str, project: &Path, word: &str) -> PathBuf {
    let cwd = project.display().to_string();
    let mut parent: Option<String> = None;
    let mut lines = Vec::new();
    let mut push = |uuid: &str, ty: &str, message: Value, at: &str| {
        lines.push(
            json!({"parentUuid": parent, "isSidechain": false, "userType": "external",
                   "cwd": cwd, "sessionId": sid, "version": "2.0.37", "type": ty,
                   "message": message, "uuid": format!("{sid}-{uuid}"), "timestamp": at})
            .to_string(),
        );
        parent = Some(format!("{sid}-{uuid}"));
    };
    push(
        "u0",
        "user",
        json!({"role": "user", "content": format!("Where is the {word} account configured?")}),
        "2026-02-03T09:00:00.000Z",
    );
    push(
        "c0",
        "assistant",
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_grep", "name": "Bash",
               "input": {"command": "grep -rn account config/"}}]}),
        "2026-02-03T09:00:02.000Z",
    );
    push(
        "r0",
        "user",
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_grep",
               "content": big_output(word)}]}),
        "2026-02-03T09:00:04.000Z",
    );
    push(
        "a0",
        "assistant",
        json!({"role": "assistant", "content": [{"type": "text",
               "text": format!("The {word} account is configured in config/accounts.toml, line 12.")}]}),
        "2026-02-03T09:00:09.000Z",
    );
    push(
        "u1",
        "user",
        json!({"role": "user", "content": "Now bump the version to 2.4.0."}),
        "2026-02-03T09:05:00.000Z",
    );
    push(
        "a1",
        "assistant",
        json!({"role": "assistant", "content": [{"type": "text", "text": "Bumped to 2.4.0 in Cargo.toml."}]}),
        "2026-02-03T09:05:07.000Z",
    );
    let path = dir.join(format!("{sid}.jsonl"));
    std::fs::write(&path, lines.join("\n") + "\n").expect("write transcript");
    path
}

/// ~40 kB of grep output naming `word` near the top and the end.
fn big_output(word: &str) -> String {
    let mut s = format!("config/accounts.toml:12:name = \"{word}\"\n");
    for i in 0..800 {
        s.push_str(&format!(
            "config/generated/part_{i}.toml:3:account = \"svc-{i}\"\n"
        ));
    }
    s.push_str(&format!("config/legacy.toml:1:# {word} (old)\n"));
    s
}

fn hook(home: &Path, event: &str, body: &Value) {
    common::hook(
        home,
        event,
        &serde_json::to_vec(body).expect("json"),
        &[("MEMCTL_EMBEDDER", "hash")],
    );
}

/// Every occurrence of `needle` (any case) in any file under `dir`: `(file, count)`.
fn scan(dir: &Path, needle: &str) -> Vec<(PathBuf, usize)> {
    common::scan_for(dir, needle)
}

#[derive(serde::Deserialize)]
struct SwapListed {
    id: String,
    session_id: String,
}

#[derive(serde::Deserialize)]
struct Found {
    results: Vec<FoundHit>,
}

#[derive(serde::Deserialize)]
struct FoundHit {
    session_id: String,
}

fn search_sessions(home: &Path, q: &str) -> Vec<String> {
    let out = ok(
        home,
        &["search", q, "--all-projects", "--mode", "lexical", "--json"],
    );
    let found: Found = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    found.results.into_iter().map(|h| h.session_id).collect()
}

#[test]
fn a_forgotten_session_leaves_no_byte_under_the_data_dir() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("data");
    let project = tmp.path().join("proj");
    let transcripts = tmp.path().join("transcripts");
    for d in [&home, &project, &transcripts] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    let a = session(&transcripts, SID_A, &project, MARKER);
    let b = session(&transcripts, SID_B, &project, OTHER);
    let base = |sid: &str, t: &Path, event: &str| {
        json!({"session_id": sid, "transcript_path": t.display().to_string(),
               "cwd": project.display().to_string(), "hook_event_name": event})
    };
    for (sid, t, word) in [(SID_A, &a, MARKER), (SID_B, &b, OTHER)] {
        let mut post = base(sid, t, "PostToolUse");
        post["tool_name"] = json!("Bash");
        post["tool_input"] = json!({"command": "grep -rn account config/"});
        post["tool_response"] =
            json!({"stdout": big_output(word), "stderr": "", "interrupted": false});
        post["tool_use_id"] = json!("toolu_grep");
        hook(&home, "PostToolUse", &post);
        let mut start = base(sid, t, "SessionStart");
        start["source"] = json!("compact");
        hook(&home, "SessionStart", &start);
        let mut end = base(sid, t, "SessionEnd");
        end["reason"] = json!("other");
        hook(&home, "SessionEnd", &end);
    }
    // The scan sees the marker before (in the store and the context state of A).
    let before = scan(&home, MARKER);
    eprintln!("marker before the forget: {before:?}");
    assert!(
        before.iter().any(|(p, _)| p.ends_with("memctl.redb")),
        "the marker was archived: {before:?}"
    );
    let swapped: Vec<SwapListed> =
        serde_json::from_str(&ok(&home, &["swap", "list", "--json"])).expect("swap list");
    let a_output = swapped
        .iter()
        .find(|e| e.session_id == SID_A)
        .unwrap_or_else(|| panic!("A's output was stored: {}", swapped.len()))
        .id
        .clone();
    assert!(ok(&home, &["swap", "show", &a_output]).contains(MARKER));
    assert_eq!(search_sessions(&home, MARKER), vec![SID_A.to_string(); 1]);
    assert!(home.join("context").join(format!("{SID_A}.json")).is_file());

    // A dry run removes nothing.
    let dry = ok(&home, &["forget", "--session", &SID_A[..8]]);
    assert!(dry.contains("would forget 2 turns"), "{dry}");
    assert!(dry.contains("--yes"), "{dry}");
    assert!(!search_sessions(&home, MARKER).is_empty());

    let done = ok(&home, &["forget", "--session", &SID_A[..8], "--yes"]);
    assert!(done.contains("forgot 2 turns"), "{done}");
    assert!(done.contains("1 stored tool output"), "{done}");
    assert!(done.contains("store file rewritten"), "{done}");
    let left = scan(&home, MARKER);
    assert!(left.is_empty(), "the marker is still on disk: {left:?}");
    // The compressed blob cannot be scanned for: it is gone by the API.
    let swapped: Vec<SwapListed> =
        serde_json::from_str(&ok(&home, &["swap", "list", "--json"])).expect("swap list");
    assert!(
        swapped.iter().all(|e| e.session_id != SID_A),
        "A's entry is gone"
    );
    let show = memctl(&home, &["swap", "show", &a_output]);
    assert_eq!(show.status.code(), Some(1), "A's blob is gone: {show:?}");
    assert!(!home.join("context").join(format!("{SID_A}.json")).exists());
    // The other session is whole and searchable.
    assert_eq!(search_sessions(&home, OTHER), vec![SID_B.to_string()]);
    assert!(ok(&home, &["sessions"]).contains(&SID_B[..8]));
    assert!(!ok(&home, &["sessions"]).contains(&SID_A[..8]));

    // Archiving A's transcript again, from the start under another name, brings nothing back.
    let moved = transcripts.join("moved.jsonl");
    std::fs::copy(&a, &moved).expect("copy");
    ok(&home, &["ingest", &moved.display().to_string()]);
    assert!(search_sessions(&home, MARKER).is_empty());
    assert!(scan(&home, MARKER).is_empty());
}

#[test]
fn dry_run_yes_and_bad_selectors_on_the_command_line() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("data");
    let project = tmp.path().join("proj");
    std::fs::create_dir_all(&project).expect("mkdir");
    let a = session(tmp.path(), SID_A, &project, MARKER);
    ok(&home, &["ingest", &a.display().to_string()]);
    // The counts `status` prints (not the file size: redb trims the file when a process closes).
    let status = || {
        ok(&home, &["status"])
            .lines()
            .filter(|l| !l.starts_with("file size"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let before = status();

    // Malformed selectors: exit 1, one clear error line, nothing touched.
    for (args, says) in [
        (vec!["forget"], "nothing to forget was named"),
        (vec!["forget", "--since", "last tuesday"], "is not a time"),
        (vec!["forget", "--session", "zzzz"], "no archived session"),
        (vec!["forget", "--text", "   "], "empty"),
        (vec!["forget", "424242"], "no chunk with id 424242"),
        (
            vec!["forget", "--since", "2026-03-01", "--until", "2026-02-01"],
            "time range is empty",
        ),
    ] {
        let out = memctl(&home, &args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("memctl: error: ") && err.contains(says),
            "{args:?}: {err}"
        );
    }
    // Understood but matching nothing: said plainly, exit 0.
    let none = ok(&home, &["forget", "--text", "no such words anywhere"]);
    assert!(none.contains("nothing matches"), "{none}");

    // A dry run (text, JSON) names the turn and changes nothing.
    let dry: Value = serde_json::from_str(&ok(
        &home,
        &["forget", "--text", &MARKER.to_lowercase(), "--json"],
    ))
    .expect("json");
    assert_eq!(dry["dry_run"], true);
    assert_eq!(dry["turns"], 1);
    assert_eq!(dry["turn_lines"][0]["turn"], 0);
    assert_eq!(status(), before, "a dry run removes nothing");

    let done: Value = serde_json::from_str(&ok(
        &home,
        &["forget", "--text", &MARKER.to_lowercase(), "-y", "--json"],
    ))
    .expect("json");
    assert_eq!(done["dry_run"], false);
    assert_eq!(done["removed_ids"], dry["removed_ids"]);
    assert!(
        done["rewrite"]["bytes_after"]
            .as_u64()
            .is_some_and(|n| n > 0),
        "{done}"
    );
    assert!(search_sessions(&home, MARKER).is_empty());
    assert_eq!(
        search_sessions(&home, "version 2.4.0"),
        vec![SID_A.to_string()]
    );
}

/// The 300-turn session of the review's repro has repeated turns (stored as links to the
/// first one's chunk): forgetting the session leaves a store `check` passes, and nothing of it
/// in `sessions`, `show`, `search` or `status`.
#[test]
fn a_session_with_repeated_turns_goes_from_every_listing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("data");
    let sid = "c0c0c0c0-1111-4222-8333-444455556666";
    let t = common::transcript_with_repeats(tmp.path(), sid, "/tmp/proj-repeats", MARKER, 300);
    let b = session(tmp.path(), SID_B, Path::new("/tmp/proj-repeats"), OTHER);
    ok(&home, &["ingest", &t.display().to_string()]);
    ok(&home, &["ingest", &b.display().to_string()]);
    let status_before: Value =
        serde_json::from_str(&ok(&home, &["status", "--json"])).expect("json");
    assert!(ok(&home, &["sessions"]).contains(&sid[..8]));
    let done = ok(&home, &["forget", "--session", &sid[..8], "--yes"]);
    assert!(done.contains("removed entirely"), "{done}");
    let check = memctl(&home, &["check"]);
    assert!(check.status.success(), "check after the forget: {check:?}");
    assert!(!ok(&home, &["sessions"]).contains(&sid[..8]));
    let show = memctl(&home, &["show", sid]);
    let shown = String::from_utf8_lossy(&show.stdout);
    assert!(
        !show.status.success() && !shown.contains(MARKER),
        "show still knows the session: {show:?}"
    );
    assert!(search_sessions(&home, MARKER).is_empty());
    assert_eq!(search_sessions(&home, OTHER), vec![SID_B.to_string()]);
    let status: Value = serde_json::from_str(&ok(&home, &["status", "--json"])).expect("json");
    assert_eq!(status["sessions"], 1, "{status}");
    assert!(status["chunks"].as_u64() < status_before["chunks"].as_u64());
    assert!(scan(&home, MARKER).is_empty());
}

/// Backups in `<data dir>/backups` that hold what a forget removes are deleted (and named);
/// one from before it was archived is kept; one written elsewhere is not touched, and the
/// output says so.
#[test]
fn forget_deletes_the_backups_in_the_data_dir_that_hold_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("data");
    let project = tmp.path().join("proj");
    std::fs::create_dir_all(&project).expect("mkdir");
    let a = session(tmp.path(), SID_A, &project, MARKER);
    let b = session(tmp.path(), SID_B, &project, OTHER);
    ok(&home, &["ingest", &b.display().to_string()]);
    ok(&home, &["backup"]);
    ok(&home, &["ingest", &a.display().to_string()]);
    std::thread::sleep(std::time::Duration::from_millis(1100)); // backup names are per second
    ok(&home, &["backup"]);
    let outside = tmp.path().join("elsewhere.redb");
    ok(&home, &["backup", "--out", &outside.display().to_string()]);
    let backups = home.join("backups");
    let names = |d: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .expect("ls")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let before = names(&backups);
    assert_eq!(before.len(), 2, "{before:?}");
    assert_eq!(
        scan(&backups, MARKER).len(),
        1,
        "the second backup holds it"
    );

    let done = ok(&home, &["forget", "--text", MARKER, "--yes"]);
    assert!(
        done.contains("deleted a backup that held them") && done.contains(&before[1]),
        "{done}"
    );
    assert!(done.contains("1 backup in"), "{done}");
    assert!(done.contains("not touched"), "{done}");
    assert_eq!(names(&backups), vec![before[0].clone()]);
    assert!(scan(&home, MARKER).is_empty(), "{:?}", scan(&home, MARKER));
    assert!(
        scan(tmp.path(), MARKER).iter().any(|(p, _)| p == &outside),
        "the backup written elsewhere is not touched"
    );
    let json: Value =
        serde_json::from_str(&ok(&home, &["forget", "--text", OTHER, "--yes", "--json"]))
            .expect("json");
    assert_eq!(
        json["backups"]["removed"].as_array().map(Vec::len),
        Some(1),
        "the first backup held B: {json}"
    );
}
