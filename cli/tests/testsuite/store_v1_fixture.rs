//! A store written by the schema-1 release (`tests/fixtures/store-v1/`, made by its `make.sh`
//! with that release's binaries) opens with today's memctl: a hook meets it first, fails open
//! and starts `memctl migrate` in the background; then every search answers as the schema-1
//! release answered, every session, summary and stored tool output is there byte for byte,
//! the export holds the same records, forgotten turns stay forgotten, and new turns archive.

use crate::common;

use common::{PROJECT, SID, fixture};
use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn fixture_dir() -> PathBuf {
    memctl_test_support::fixture("store-v1")
}

fn gunzip(path: &Path) -> Vec<u8> {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(f)
        .read_to_end(&mut out)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    out
}

fn memctl(home: &Path, args: &[&str]) -> std::process::Output {
    common::memctl(home, args, b"", &[])
}

fn ok_json(home: &Path, args: &[&str]) -> Value {
    let out = memctl(home, args);
    assert!(out.status.success(), "memctl {args:?}: {out:?}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("memctl {args:?}: {e}"))
}

/// The export's records without the header (its time and version) and the trailer (counts
/// that include the header's own line), as parsed JSON.
///
/// Swap entries gained `in_place` after the schema-1 release (swap entry format 2):
/// a schema-1 row reads as `false`, the one value this comparison accepts for the new field.
fn export_records(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("export line"))
        .filter(|v| !matches!(v["kind"].as_str(), Some("header" | "trailer")))
        .map(|mut v| {
            if let Some(e) = v.get_mut("entry") {
                drop_default_in_place(e);
            }
            drop_default_agent(&mut v);
            v
        })
        .collect()
}

/// A swap entry without `in_place: false`, the field's default for schema-1 rows (see
/// [`export_records`]).
fn drop_default_in_place(e: &mut Value) {
    if let Some(e) = e.as_object_mut()
        && e.get("in_place") == Some(&Value::Bool(false))
    {
        e.remove("in_place");
    }
}

/// A session record without `agent: "claude"`: the field came after schema 1, and every
/// session of a schema-1 store is Claude Code's (its absence reads as that).
fn drop_default_agent(v: &mut Value) {
    if v["kind"] == "session"
        && let Some(o) = v.as_object_mut()
        && o.get("agent") == Some(&Value::String("claude".into()))
    {
        o.remove("agent");
    }
}

fn prompt_payload(transcript: &Path) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "session_id": SID,
        "transcript_path": transcript.display().to_string(),
        "cwd": PROJECT,
        "hook_event_name": "UserPromptSubmit",
        "prompt": "where were we?",
    }))
    .expect("json")
}

#[test]
fn a_schema_1_store_is_migrated_and_answers_as_the_schema_1_release_did() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let store = home.join("memctl.redb");
    std::fs::write(&store, gunzip(&fixture_dir().join("store.redb.gz"))).expect("store");
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture_dir().join("expected.json")).expect("expected.json"),
    )
    .expect("expected json");

    // `memctl check` does not migrate: it says what to run.
    let out = memctl(&home, &["check"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        err.contains("schema version 1") && err.contains("memctl migrate"),
        "{err}"
    );

    // A hook meets the old store first: exit 0, a log line, a background migration.
    let transcript = dir.path().join(format!("{SID}.jsonl"));
    let mut lines = std::fs::read_to_string(fixture()).expect("sample");
    std::fs::write(&transcript, &lines).expect("transcript");
    let out = common::hook(&home, "UserPromptSubmit", &prompt_payload(&transcript), &[]);
    assert!(out.stdout.is_empty(), "{out:?}");
    let give_up = Instant::now() + Duration::from_secs(120);
    while !memctl(&home, &["check"]).status.success() {
        assert!(
            Instant::now() < give_up,
            "the background migration did not finish"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let log = std::fs::read_to_string(home.join("logs").join("memctl.log")).unwrap_or_default();
    assert!(log.contains("store needs a migration"), "{log}");
    let backups: Vec<_> = std::fs::read_dir(home.join("backups"))
        .expect("backups dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        backups.iter().any(|n| n.starts_with("memctl-schema1-")),
        "{backups:?}"
    );

    // The export holds the same records as the schema-1 release's export of the store (first:
    // reading a stored output counts as an access, and access counts are exported).
    let exported = dir.path().join("now.jsonl");
    let out = memctl(
        &home,
        &[
            "export",
            "--all-projects",
            "-o",
            &exported.display().to_string(),
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let then = String::from_utf8(gunzip(&fixture_dir().join("export.jsonl.gz"))).expect("utf8");
    let now = std::fs::read_to_string(&exported).expect("export");
    let (then, now) = (export_records(&then), export_records(&now));
    assert_eq!(now.len(), then.len());
    for (a, b) in now.iter().zip(&then) {
        if a != b {
            let keys: Vec<_> = a
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(k, v)| b.get(k.as_str()) != Some(v))
                .map(|(k, _)| k.clone())
                .collect();
            panic!("export record of kind {} differs in {keys:?}", a["kind"]);
        }
    }

    // Every search answers as the schema-1 release answered (same top hit; the ranking may
    // move a neighbour, never lose the answer).
    for s in expected["searches"].as_array().expect("searches") {
        let q = s["query"].as_str().expect("query");
        let got = ok_json(&home, &["search", q, "--all-projects", "-k", "5", "--json"]);
        let ids: Vec<u64> = got["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|r| r["id"].as_u64().expect("id"))
            .collect();
        let want: Vec<u64> = s["ids"]
            .as_array()
            .expect("ids")
            .iter()
            .map(|v| v.as_u64().expect("id"))
            .collect();
        assert_eq!(ids.first(), want.first(), "{q}: {ids:?} vs {want:?}");
        let shared = ids.iter().filter(|i| want.contains(i)).count();
        assert!(shared >= 4, "{q}: {ids:?} vs {want:?}");
        let text = got["results"][0]["text"].as_str().expect("text");
        let want_text = s["texts"][0].as_str().expect("text");
        assert!(text.starts_with(want_text), "{q}");
    }

    // Sessions (with their summaries) exactly, each now also naming its agent: Claude Code,
    // as every session of a schema-1 store; stored outputs byte for byte.
    let mut sessions = ok_json(&home, &["sessions", "--json"]);
    for s in sessions.as_array_mut().expect("sessions") {
        assert_eq!(s["agent"], "claude");
        s.as_object_mut().expect("session").remove("agent");
    }
    assert_eq!(sessions, expected["sessions"]);
    let mut swaps = ok_json(&home, &["swap", "list", "--json"]);
    swaps
        .as_array_mut()
        .expect("swap list")
        .iter_mut()
        .for_each(drop_default_in_place);
    assert_eq!(swaps, expected["swap"]);
    for e in swaps.as_array().expect("swap list") {
        let id = e["id"].as_str().expect("id");
        let out = memctl(&home, &["swap", "show", id]);
        assert!(out.status.success(), "{out:?}");
        use sha2::Digest;
        assert_eq!(
            hex::encode(sha2::Sha256::digest(&out.stdout)),
            id,
            "exact bytes of {id}"
        );
    }

    // New turns archive; the turns forgotten under schema 1 stay forgotten.
    let chunks = |home: &Path| -> u64 {
        let out = memctl(home, &["status"]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.lines()
            .find_map(|l| l.strip_prefix("chunks:"))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("{text}"))
    };
    let before = chunks(&home);
    assert_eq!(
        Some(before),
        expected["chunks"].as_u64(),
        "the fixture's chunks"
    );
    let last_uuid = lines
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["uuid"].as_str().map(str::to_string))
        .next_back()
        .expect("a uuid");
    for (i, (ty, content)) in [
        ("user", serde_json::json!("After the migration: rename the kiln CLI flag --fast to --quick")),
        ("assistant", serde_json::json!([{"type": "text", "text": "Renamed --fast to --quick in kiln/cli.py (PeregrineMarble)."}])),
    ]
    .into_iter()
    .enumerate()
    {
        let parent = if i == 0 { last_uuid.clone() } else { "after-migration-0".into() };
        lines.push_str(
            &serde_json::json!({"parentUuid": parent, "isSidechain": false, "userType": "external",
                "cwd": PROJECT, "sessionId": SID, "version": "2.0.37", "type": ty,
                "message": {"role": ty, "content": content}, "uuid": format!("after-migration-{i}"),
                "timestamp": format!("2025-10-24T18:00:0{i}.000Z")})
            .to_string(),
        );
        lines.push('\n');
    }
    std::fs::write(&transcript, &lines).expect("transcript");
    common::hook(&home, "UserPromptSubmit", &prompt_payload(&transcript), &[]);
    let after = chunks(&home);
    assert_eq!(
        after,
        before + 1,
        "one new turn; the forgotten ones not back"
    );
    let found = ok_json(
        &home,
        &["search", "PeregrineMarble", "--all-projects", "--json"],
    );
    assert!(
        found["results"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("PeregrineMarble")),
        "{found}"
    );
    let zod = ok_json(
        &home,
        &[
            "search",
            "zod schemas",
            "--all-projects",
            "--mode",
            "lexical",
            "--json",
        ],
    );
    assert!(
        zod["results"]
            .as_array()
            .expect("results")
            .iter()
            .all(|r| !r["text"].as_str().unwrap_or("").contains("zod schemas")),
        "a forgotten turn came back: {zod}"
    );
}
