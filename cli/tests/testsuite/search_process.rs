//! `memctl search` explains itself, through the real binary: each hit has an absolute
//! confidence that does not move with `-k` or `--file`, weak hits are marked and "no confident
//! match" is said when none clears the threshold, the lines that matched are shown (plain text
//! in a pipe), an exact identifier in the query ranks the turn holding it first, and `-k 0` is
//! refused.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

const SID: &str = "5ea4c400-0000-4000-8000-000000000001";
const PROJECT: &str = "/home/dev/src/ledger-app";

/// Turns about billing and its tests; only turn 0 holds `billing.test.ts:52` (turn 4 holds
/// `billing.test.ts:520` and more of the query's words), and its summary (first lines of prompt
/// and reply) does not show it.
const TURNS: &[(&str, &str)] = &[
    (
        "The build is failing with this:\nFAIL src/billing.test.ts:52 expected invoice total 120, received 118",
        "All 18 tests pass now.\nThe rounding of the invoice total in billing.ts was off by one cent per line.",
    ),
    (
        "Add a billing test for refunds to billing.test.ts",
        "Added a refund test to billing.test.ts; the billing tests pass.",
    ),
    (
        "The billing test suite is slow: speed up the billing tests in billing.test.ts",
        "Mocked the billing API in billing.test.ts; the billing tests run in 2 s now.",
    ),
    (
        "Fix the typo in billing.test.ts",
        "Fixed the typo at billing.test.ts:80 in the billing test name.",
    ),
    (
        "Run billing.test.ts again: the billing tests at billing.test.ts:520 and billing.test.ts:5 fail",
        "The billing test at billing.test.ts:520 was flaky (a timer); the billing tests in billing.test.ts pass now.",
    ),
    (
        "Rename module_graph to take a Config",
        "Done: module_graph now takes &Config and its 4 call sites pass it.",
    ),
    (
        "Deploy the billing service to staging",
        "Deployed billing to staging.example.com; the smoke tests for billing pass.",
    ),
    (
        "Where do we keep the postgres connection string?",
        "In config/database.toml under [primary]; the tests read it from DATABASE_URL.",
    ),
];

/// A Claude Code transcript of `turns` (prompt, reply), each turn touching `src/<n>.ts` with
/// an Edit so that `--file` can filter.
fn transcript(dir: &Path, turns: &[(&str, &str)]) -> PathBuf {
    let mut parent: Option<String> = None;
    let mut lines = Vec::new();
    for (i, (prompt, answer)) in turns.iter().enumerate() {
        let at = |s: usize| format!("2026-03-04T09:{:02}:{:02}.000Z", i, s);
        let edit = serde_json::json!({"type": "tool_use", "id": format!("toolu_{i}"),
            "name": "Edit", "input": {"file_path": format!("{PROJECT}/src/f{i}.ts"),
            "old_string": "a", "new_string": "b"}});
        let result = serde_json::json!([{"type": "tool_result", "tool_use_id": format!("toolu_{i}"),
            "content": "ok", "is_error": false}]);
        for (kind, ty, message, s) in [
            (
                "u",
                "user",
                serde_json::json!({"role": "user", "content": prompt}),
                0,
            ),
            (
                "e",
                "assistant",
                serde_json::json!({"role": "assistant", "content": [edit]}),
                2,
            ),
            (
                "r",
                "user",
                serde_json::json!({"role": "user", "content": result}),
                3,
            ),
            (
                "a",
                "assistant",
                serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": answer}]}),
                5,
            ),
        ] {
            let uuid = format!("{SID}-{kind}{i}");
            lines.push(
                serde_json::json!({"parentUuid": parent, "isSidechain": false,
                    "userType": "external", "cwd": PROJECT, "sessionId": SID,
                    "version": "2.0.37", "type": ty, "message": message, "uuid": uuid,
                    "timestamp": at(s)})
                .to_string(),
            );
            parent = Some(uuid);
        }
    }
    let path = dir.join(format!("{SID}.jsonl"));
    std::fs::write(&path, lines.join("\n") + "\n").expect("write transcript");
    path
}

fn memctl(home: &Path, args: &[&str]) -> Output {
    common::memctl(home, args, b"", &[])
}

fn archived() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let t = transcript(dir.path(), TURNS);
    let out = memctl(&home, &["ingest", "--quiet", t.to_str().expect("utf-8")]);
    assert!(out.status.success(), "{out:?}");
    (dir, home)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `memctl search --json` hits.
fn json_hits(home: &Path, query: &str, extra: &[&str]) -> Vec<serde_json::Value> {
    let mut args = vec!["search", query, "--project", PROJECT, "--json"];
    args.extend_from_slice(extra);
    let out = memctl(home, &args);
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    // The real model (ORT_DYLIB_PATH, MEMCTL_MODEL_DIR): the confidence reads its cosines.
    assert!(v["degraded"].is_null(), "the model is needed here: {v}");
    v["results"].as_array().expect("results").clone()
}

fn turn_of(hit: &serde_json::Value) -> u64 {
    hit["turn_index"].as_u64().expect("turn_index")
}

#[test]
fn an_exact_identifier_ranks_the_turn_holding_it_first_and_shows_its_line() {
    let (_dir, home) = archived();
    let hits = json_hits(&home, "billing.test.ts:52", &[]);
    assert_eq!(turn_of(&hits[0]), 0, "{hits:#?}");
    assert_eq!(hits[0]["confident"], true, "{:#?}", hits[0]);
    let lines = hits[0]["lines"].as_array().expect("lines");
    assert!(
        lines[0]
            .as_str()
            .is_some_and(|l| l.contains("billing.test.ts:52")),
        "{lines:?}"
    );
    // By cosine alone turn 4 (`billing.test.ts:520`, more billing words) is the closest.
    let dense = json_hits(&home, "billing.test.ts:52", &["--mode", "dense"]);
    let best_cosine = dense
        .iter()
        .max_by(|a, b| {
            a["score"]
                .as_f64()
                .partial_cmp(&b["score"].as_f64())
                .expect("scores")
        })
        .expect("hits");
    assert_eq!(turn_of(best_cosine), 4, "{dense:#?}");
    assert_eq!(turn_of(&dense[0]), 0, "{dense:#?}");
    for extra in [
        &["-k", "1"][..],
        &["--mode", "lexical"],
        &["-k", "1", "--mode", "dense"],
    ] {
        let hits = json_hits(&home, "billing.test.ts:52", extra);
        assert_eq!(turn_of(&hits[0]), 0, "{extra:?}: {hits:#?}");
    }
}

#[test]
fn hits_show_the_lines_that_matched_plain_in_a_pipe() {
    let (_dir, home) = archived();
    let out = memctl(
        &home,
        &[
            "search",
            "billing.test.ts:52",
            "--project",
            PROJECT,
            "-k",
            "3",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    assert!(
        text.contains("    > FAIL src/billing.test.ts:52 expected invoice total 120"),
        "the line holding the identifier, under the summary: {text}"
    );
    assert!(
        !text.contains('\u{1b}'),
        "no ANSI codes in a pipe: {text:?}"
    );
    assert!(!text.contains("no confident match"), "{text}");
    let first = text.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(" 1. [") && !first.contains("weak"),
        "the confidence leads the hit: {first}"
    );
}

#[test]
fn a_garbage_query_gives_no_confident_match_and_marks_the_weak_hits() {
    let (_dir, home) = archived();
    let garbage = "x".repeat(130_000);
    let out = memctl(&home, &["search", &garbage, "--project", PROJECT]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout(&out);
    assert!(text.contains("no confident match"), "{text}");
    let hits: Vec<&str> = text.lines().filter(|l| l.contains("] chunk ")).collect();
    assert!(
        hits.iter().all(|l| l.contains(" weak] ")),
        "every hit listed is marked weak: {hits:?}"
    );
    for h in json_hits(&home, &garbage, &[]) {
        assert_eq!(h["confident"], false, "{h:#?}");
        let c = h["confidence"].as_f64().expect("confidence");
        assert!((0.0..0.5).contains(&c), "{c}");
    }
}

#[test]
fn the_confidence_of_a_hit_does_not_depend_on_k_or_the_filters() {
    let (_dir, home) = archived();
    let q = "why were the billing tests slow";
    let conf = |extra: &[&str]| -> std::collections::HashMap<u64, f64> {
        json_hits(&home, q, extra)
            .iter()
            .map(|h| {
                let c = h["confidence"].as_f64().expect("confidence");
                assert!((0.0..=1.0).contains(&c), "{c}");
                (h["id"].as_u64().expect("id"), c)
            })
            .collect()
    };
    let base = conf(&["-k", "100000"]);
    assert!(base.len() >= 3, "{base:?}");
    for extra in [
        &["-k", "1"][..],
        &["-k", "2"],
        &["-k", "10"],
        &["--file", "src/f2.ts"],
        &["--file", "src/f5.ts", "-k", "1"],
    ] {
        let got = conf(extra);
        assert!(!got.is_empty(), "{extra:?}");
        for (id, c) in got {
            let want = base[&id];
            assert!(
                (c - want).abs() < 1e-6,
                "chunk {id}: {c} with {extra:?}, {want} with -k 100000"
            );
        }
    }
}

#[test]
fn k_zero_is_refused() {
    let (_dir, home) = archived();
    for k in ["-k", "--k="] {
        let arg = if k == "-k" {
            vec!["-k", "0"]
        } else {
            vec!["--k=0"]
        };
        let mut args = vec!["search", "billing", "--project", PROJECT];
        args.extend(arg);
        let out = memctl(&home, &args);
        assert_eq!(out.status.code(), Some(2), "-k {k}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("'--k <K>'") && err.contains("0 is not in 1.."),
            "{k}: {err}"
        );
        assert!(out.stdout.is_empty(), "{out:?}");
    }
}

/// Loading the model starts no telemetry: Microsoft's builds of ONNX Runtime write a device id
/// and an event queue under `$XDG_CACHE_HOME/Microsoft` (else `~/.cache/Microsoft`) and upload
/// them unless `ORT_DISABLE_TELEMETRY` is set before the runtime loads; the CLI sets it.
#[test]
fn loading_the_model_starts_no_runtime_telemetry() {
    let (dir, home) = archived();
    let user = dir.path().join("user");
    let cache = dir.path().join("cache");
    std::fs::create_dir_all(&user).expect("mkdir");
    let out = common::memctl(
        &home,
        &[
            "search",
            "which billing test failed",
            "--project",
            PROJECT,
            "--json",
        ],
        b"",
        &[
            ("HOME", user.to_str().expect("utf-8")),
            ("XDG_CACHE_HOME", cache.to_str().expect("utf-8")),
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(v["degraded"].is_null(), "the model must load here: {v}");
    for place in [cache.join("Microsoft"), user.join(".cache/Microsoft")] {
        assert!(
            !place.exists(),
            "the runtime's telemetry wrote {}",
            place.display()
        );
    }
}

/// An event phrase through the real binary: the note names the turn the event was read as, the
/// JSON carries it, `--no-time` searches the phrase as words (no note), and an event the
/// archive does not hold is said to have no time effect.
#[test]
fn an_event_phrase_is_read_and_said() {
    let (_dir, home) = archived();
    let q = "the billing tests before we deployed billing to staging";
    let out = memctl(&home, &["search", q, "--project", PROJECT, "-k", "3"]);
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    assert!(
        text.contains("note: \"before we deployed billing to staging\" read as a time: \"we deployed billing to staging\" is chunk")
            && text.contains("(session 5ea4c400 turn 6, 2026-03-04 09:06); matching turns before it first"),
        "{text}"
    );
    let args = ["search", q, "--project", PROJECT, "--json"];
    let v: serde_json::Value = serde_json::from_slice(&memctl(&home, &args).stdout).expect("json");
    assert_eq!(v["time"]["event"]["relation"], "before", "{v}");
    assert_eq!(v["time"]["event"]["turn"]["turn_index"], 6, "{v}");
    assert_eq!(v["time"]["until"], "2026-03-04T09:06:00.000Z", "{v}");
    let plain = memctl(&home, &["search", q, "--project", PROJECT, "--no-time"]);
    assert!(!stdout(&plain).contains("read as"), "{}", stdout(&plain));
    let lost = memctl(
        &home,
        &[
            "search",
            "the billing tests before the kubernetes rollout",
            "--project",
            PROJECT,
        ],
    );
    assert!(
        stdout(&lost).contains("no archived turn matches \"the kubernetes rollout\" well: searched the whole query with no time effect"),
        "{}",
        stdout(&lost)
    );
}
