//! Swap in place: which outputs qualify, the replacement's shape, the client's saved file
//! (and paths it must refuse), the digest's bounds and content, and retention that never drops
//! an output whose digest is in a context.

use super::inplace::{MAX_DIGEST_CHARS, NotInPlace, candidate, line_span, render};
use super::tests::engine;
use super::*;
use proptest::prelude::*;
use std::path::{Path, PathBuf};

const T0: i64 = 1_800_000_000;
const H: i64 = 3600;

/// A build log of `n` lines with an error at line `err_at` (1-based) and a last line.
fn build_log(n: usize, err_at: usize) -> String {
    let mut s = String::new();
    for i in 1..=n {
        if i == err_at {
            s.push_str("error[E0433]: failed to resolve: use of undeclared crate `quux_7f`\n");
        } else if i == n {
            s.push_str("BUILD-END-MARKER-4417 exit 101\n");
        } else {
            s.push_str(&format!(
                "   Compiling crate{i} v0.1.{i} (/w/crates/c{i})\n"
            ));
        }
    }
    s
}

fn bash_response(stdout: &str) -> String {
    serde_json::json!({"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false,
        "noOutputExpected": false})
    .to_string()
}

fn call<'a>(session: &'a str, tool: &'a str, input: &'a str, response: &'a str) -> ToolCall<'a> {
    ToolCall {
        session_id: session,
        project: "/w",
        tool_name: tool,
        tool_input: input,
        tool_response: response,
        tool_use_id: Some("toolu_1"),
        failed: false,
    }
}

const CMD: &str = r#"{"command":"cargo build 2>&1"}"#;

#[test]
fn small_outputs_read_and_failures_stay_whole() {
    let cfg = SwapConfig::default();
    let small = bash_response(&build_log(20, 5));
    assert!(matches!(
        candidate(&call("s", "Bash", CMD, &small), None, &cfg),
        Err(NotInPlace::BelowThreshold { .. })
    ));
    let big = build_log(2000, 1500);
    let read = serde_json::json!({"type": "text", "file": {"filePath": "/w/a.rs", "content": big}})
        .to_string();
    assert_eq!(
        candidate(
            &call("s", "Read", r#"{"file_path":"/w/a.rs"}"#, &read),
            None,
            &cfg
        )
        .unwrap_err(),
        NotInPlace::ToolNotEnabled,
        "Read is never swapped in place: Edit relies on what was read"
    );
    let mut failed = call("s", "Bash", CMD, "\"Error: Exit code 1\\nboom\"");
    failed.failed = true;
    assert_eq!(
        candidate(&failed, None, &cfg).unwrap_err(),
        NotInPlace::Failed
    );
    let image = serde_json::json!({"stdout": big, "stderr": "", "isImage": true}).to_string();
    assert_eq!(
        candidate(&call("s", "Bash", CMD, &image), None, &cfg).unwrap_err(),
        NotInPlace::UnknownShape
    );
    let off = SwapConfig {
        in_place_enabled: false,
        ..SwapConfig::default()
    };
    let resp = bash_response(&big);
    assert_eq!(
        candidate(&call("s", "Bash", CMD, &resp), None, &off).unwrap_err(),
        NotInPlace::ToolNotEnabled
    );
    // A tool whose shape was never verified is refused even when configured.
    let grep = SwapConfig {
        in_place: vec![("Grep".into(), 10)],
        ..SwapConfig::default()
    };
    assert_eq!(grep.in_place_threshold("Grep"), None);
}

#[test]
fn a_big_bash_output_is_stored_whole_and_replaced_by_its_digest() {
    let (_d, e) = engine();
    let log = build_log(2000, 1234);
    let resp = bash_response(&log);
    let c = call("s1", "Bash", CMD, &resp);
    let ip = e
        .swap_in_place(&c, None, &SwapConfig::default(), T0)
        .expect("store")
        .expect("in place");
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Shape {
        stdout: String,
        stderr: String,
        interrupted: bool,
        is_image: bool,
        no_output_expected: bool,
        persisted_output_path: Option<String>,
    }
    let r: Shape = serde_json::from_str(ip.replacement.get()).expect("Bash shape");
    assert_eq!(r.stderr, "");
    assert!(!r.interrupted && !r.is_image && !r.no_output_expected);
    assert!(r.persisted_output_path.is_none());
    let id = short_id(&ip.report.id).to_string();
    assert!(
        r.stdout.contains(&format!("memctl swap show {id} --lines")),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("1234│ error[E0433]"), "{}", r.stdout);
    assert!(
        r.stdout.contains("2000│ BUILD-END-MARKER-4417"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("   1│    Compiling crate1"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.chars().count() <= MAX_DIGEST_CHARS);
    assert_eq!(ip.digest_chars, r.stdout.chars().count() as u64);
    assert_eq!(
        ip.removed_chars(),
        log.chars().count() as u64 - ip.digest_chars
    );
    // Stored byte for byte, pinned as in place.
    let SwapContent { entries, text } = e.swap_show(&id, T0).expect("content");
    assert_eq!(text, log);
    assert!(entries.iter().all(|x| x.in_place), "{entries:?}");
    // A line range comes back exactly.
    let (a, b) = line_span(&text, 1233, 1235);
    assert!(text[a..b].starts_with("   Compiling crate1233 "));
    assert!(text[a..b].contains("error[E0433]"));
    assert_eq!(text[a..b].lines().count(), 3);
}

#[test]
fn a_shell_output_sent_as_one_string_is_replaced_by_its_digest_as_one_string() {
    // Codex CLI's PostToolUse `tool_response` for its shell tool: the output, a JSON string.
    let (_d, e) = engine();
    let log = build_log(2000, 1234);
    let resp = serde_json::to_string(&log).expect("json");
    let c = call("s2", "Bash", r#"{"cmd":"cargo build 2>&1"}"#, &resp);
    let ip = e
        .swap_in_place(&c, None, &SwapConfig::default(), T0)
        .expect("store")
        .expect("in place");
    let digest: String = serde_json::from_str(ip.replacement.get()).expect("a JSON string");
    assert!(digest.contains("1234│ error[E0433]"), "{digest}");
    assert!(digest.chars().count() <= MAX_DIGEST_CHARS);
    assert_eq!(
        ip.removed_chars(),
        log.chars().count() as u64 - ip.digest_chars
    );
    let id = short_id(&ip.report.id).to_string();
    assert_eq!(e.swap_show(&id, T0).expect("content").text, log);
    // Small ones stay whole.
    let small = serde_json::to_string(&build_log(20, 5)).expect("json");
    assert!(matches!(
        candidate(
            &call("s2", "Bash", "{}", &small),
            None,
            &SwapConfig::default()
        ),
        Err(NotInPlace::BelowThreshold { .. })
    ));
}

/// The client's own files: `<transcript dir>/<session>/tool-results/<id>.txt`.
fn client_dirs(root: &Path, session: &str) -> (PathBuf, PathBuf) {
    let proj = root.join("projects").join("-w");
    let results = proj.join(session).join("tool-results");
    std::fs::create_dir_all(&results).expect("mkdir");
    (proj.join(format!("{session}.jsonl")), results)
}

fn persisted_response(head: &str, path: &Path, size: u64) -> String {
    serde_json::json!({"stdout": head, "stderr": "", "interrupted": false, "isImage": false,
        "noOutputExpected": false, "persistedOutputPath": path, "persistedOutputSize": size})
    .to_string()
}

#[test]
fn a_cut_output_is_read_whole_from_the_clients_file() {
    let (d, e) = engine();
    let session = "0f3c-aa";
    let (transcript, results) = client_dirs(d.path(), session);
    let log = build_log(30_000, 29_000);
    let file = results.join("b2su5dkgl.txt");
    std::fs::write(&file, &log).expect("write");
    let head: String = log.chars().take(30_000).collect();
    let resp = persisted_response(&head, &file, log.len() as u64);
    let c = call(session, "Bash", CMD, &resp);
    let ip = e
        .swap_in_place(&c, Some(&transcript), &SwapConfig::default(), T0)
        .expect("store")
        .expect("in place");
    let r: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(ip.replacement.get()).expect("object");
    assert!(!r.contains_key("persistedOutputPath") && !r.contains_key("persistedOutputSize"));
    let text = e.swap_show(&ip.report.id, T0).expect("content").text;
    assert_eq!(text, log, "the whole output, not the client's 30 KB head");
    let digest = r.get("stdout").and_then(|v| v.as_str()).expect("stdout");
    assert!(digest.contains("29000│ error[E0433]"), "{digest}");
    assert!(digest.contains("BUILD-END-MARKER-4417"));
    // The client would have shown a 2 KB preview: about as much as the digest.
    assert_eq!(ip.visible_chars, inplace::CLIENT_PREVIEW_CHARS);
}

#[test]
fn saved_output_paths_outside_the_sessions_folder_are_refused() {
    let (d, e) = engine();
    let session = "s-9";
    let (transcript, results) = client_dirs(d.path(), session);
    let log = build_log(3000, 10);
    let outside = d.path().join("secret.txt");
    std::fs::write(&outside, &log).expect("write");
    let other = d.path().join("projects/-w/other/tool-results");
    std::fs::create_dir_all(&other).expect("mkdir");
    std::fs::write(other.join("x.txt"), &log).expect("write");
    let link = results.join("link.txt");
    std::os::unix::fs::symlink(&outside, &link).expect("symlink");
    let dotdot = results.join("../../other/tool-results/x.txt");
    for (path, transcript) in [
        (outside.clone(), Some(transcript.as_path())),
        (other.join("x.txt"), Some(transcript.as_path())),
        (link, Some(transcript.as_path())),
        (dotdot, Some(transcript.as_path())),
        (results.join("missing.txt"), Some(transcript.as_path())),
        (results.clone(), Some(transcript.as_path())),
        (outside.clone(), None),
    ] {
        let resp = persisted_response("head", &path, 1);
        let c = call(session, "Bash", CMD, &resp);
        let got = e
            .swap_in_place(&c, transcript, &SwapConfig::default(), T0)
            .expect("no store error");
        assert!(
            matches!(got, Err(NotInPlace::PersistedUnreadable(_))),
            "{} must be refused: {got:?}",
            path.display()
        );
    }
    assert!(e.swap_list(None).expect("list").is_empty());
    // A session id that cannot name a folder is refused too.
    let resp = persisted_response("head", &outside, 1);
    let c = call("../x", "Bash", CMD, &resp);
    assert!(matches!(
        e.swap_in_place(&c, Some(&transcript), &SwapConfig::default(), T0),
        Ok(Err(NotInPlace::PersistedUnreadable(_)))
    ));
}

#[test]
fn outputs_swapped_in_place_are_never_evicted_and_expire_only_after_the_long_ttl() {
    let (_d, e) = engine();
    let cfg = SwapConfig {
        max_entries_per_session: 2,
        max_total_bytes: 40_000,
        ..SwapConfig::default()
    };
    let pinned_log = build_log(1500, 700);
    let resp = bash_response(&pinned_log);
    let ip = e
        .swap_in_place(&call("s1", "Bash", CMD, &resp), None, &cfg, T0)
        .expect("store")
        .expect("in place");
    // Four more ordinary swaps (Read) in the same session, each ~12 KB: over both limits.
    for i in 0..4 {
        let body = format!("{i}\n{}", build_log(400, 3));
        let read = serde_json::json!({"type": "text", "file": {"filePath": format!("/w/f{i}.log"), "content": body}}).to_string();
        let input = format!(r#"{{"file_path":"/w/f{i}.log"}}"#);
        e.swap_tool_output(&call("s1", "Read", &input, &read), &cfg, T0 + i + 1)
            .expect("swap");
    }
    let ids: Vec<String> = e
        .swap_list(Some("s1"))
        .expect("list")
        .into_iter()
        .map(|x| x.id)
        .collect();
    assert!(ids.contains(&ip.report.id), "evicted: {ids:?}");
    // Ordinary entries expire after a day; the in-place one stays for 30 days of idleness.
    let pruned = e.swap_prune(&cfg, T0 + 25 * H, false).expect("prune");
    assert!(pruned.removed.iter().all(|r| r.id != ip.report.id));
    assert!(e.swap_show(&ip.report.id, T0).is_ok());
    let pruned = e.swap_prune(&cfg, T0 + 31 * 24 * H, false).expect("prune");
    assert!(pruned.removed.iter().any(|r| r.id == ip.report.id));
    // The store's own check agrees with the order keys (tier 2).
    let report = crate::store::check::check_store(&e.store_path()).expect("check");
    assert!(report.is_consistent(), "{report:?}");
}

#[test]
fn a_version_1_swap_entry_still_decodes() {
    #[derive(serde::Serialize)]
    struct V1<'a> {
        id: &'a str,
        session_id: &'a str,
        project: &'a str,
        tool: &'a str,
        tool_use_id: Option<&'a str>,
        input_summary: &'a str,
        failed: bool,
        bytes: u64,
        stored_bytes: u64,
        lines: u64,
        created_at: i64,
        last_access: Option<i64>,
        access_count: u32,
        summary: &'a str,
        patterns: Vec<&'a str>,
        first_error: Option<&'a str>,
    }
    let v1 = V1 {
        id: "ab",
        session_id: "s",
        project: "/w",
        tool: "Bash",
        tool_use_id: None,
        input_summary: "ls",
        failed: false,
        bytes: 9,
        stored_bytes: 9,
        lines: 1,
        created_at: 5,
        last_access: Some(6),
        access_count: 1,
        summary: "x",
        patterns: vec!["p"],
        first_error: None,
    };
    let mut b = vec![1u8];
    b.extend(crate::codec::encode(&v1).expect("encode"));
    let e: SwapEntry = crate::codec::decode_record(&b).expect("v1 decodes");
    assert!(!e.in_place);
    assert_eq!(
        (e.id.as_str(), e.access_count, e.last_access),
        ("ab", 1, Some(6))
    );
    let again: SwapEntry =
        crate::codec::decode_record(&crate::codec::encode_record(&e).expect("encode")).expect("v2");
    assert_eq!(again, e);
}

fn prepared(text: &str) -> Prepared {
    let resp = bash_response(text);
    prepare_content(
        &call("s", "Bash", CMD, &resp),
        text,
        &SwapConfig::default(),
        T0,
    )
    .expect("prepared")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, rng_algorithm: proptest::test_runner::RngAlgorithm::ChaCha, ..ProptestConfig::default() })]

    /// Any output: the digest fits, names the id and the command, and shows the last line's
    /// number (the tail is the last thing cut).
    #[test]
    fn the_digest_is_bounded_names_its_id_and_keeps_the_last_line(
        lines in proptest::collection::vec("[ -~é→\t]{0,400}", 1..400),
        err_at in 0usize..400,
    ) {
        let mut lines = lines;
        if err_at < lines.len() {
            lines[err_at] = "error: linking with `cc` failed".into();
        }
        let text = lines.join("\n");
        let p = prepared(&text);
        let d = render(&p);
        prop_assert!(d.chars().count() <= MAX_DIGEST_CHARS, "{} chars", d.chars().count());
        let want = format!("memctl swap show {} --lines", short_id(&p.entry.id));
        prop_assert!(d.contains(&want));
        let n = p.content.lines().count();
        if n > 0 {
            let marker = format!("{n}│");
            prop_assert!(d.contains(&marker), "no {marker} in {d}");
        }
    }
}

#[test]
fn an_error_in_the_middle_of_a_long_log_is_in_the_digest_with_its_neighbours() {
    for (n, at) in [(200, 100), (5000, 17), (5000, 4990), (80_000, 40_000)] {
        let p = prepared(&build_log(n, at));
        let d = render(&p);
        assert!(d.contains(&format!("{at}│ error[E0433]")), "{n}/{at}: {d}");
        if at + 1 < n {
            assert!(d.contains(&format!("{}│    Compiling", at + 1)), "{d}");
        }
        assert!(d.contains("… "), "elisions are marked");
    }
}
