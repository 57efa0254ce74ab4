//! Fuzzing the CLI's filter parsers end to end: `memctl search` with arbitrary and
//! time-shaped `--since`/`--until`, `--session` prefixes, `--project` paths, `--tool`, `--file`,
//! `--fusion` and `-k`, over a real store holding the sample session. Property: the process
//! never panics or dies by a signal; exit 0 prints something (never a silently empty answer);
//! exit 1 prints a `memctl: error: ...` line; exit 2 is clap's usage error.
//!
//! Cases: `MEMCTL_FUZZ_CASES` (default 120: each is a process), seed `MEMCTL_FUZZ_SEED`
//! (printed). `scripts/fuzz.sh` runs it long too.

use crate::common;

use common::{PROJECT, SID, fixture};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestError, TestRng, TestRunner};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// Any text without NUL (an argument cannot hold one), or a value shaped like the flag's.
fn arg(shaped: &'static [&'static str]) -> impl Strategy<Value = Option<String>> {
    prop::option::of(prop_oneof![
        "[^\u{0}]{0,40}",
        prop::sample::select(shaped).prop_map(str::to_string),
        "[-+0-9:TZ. smhdw]{0,24}",
    ])
}

#[derive(Debug, Clone)]
struct Search {
    since: Option<String>,
    until: Option<String>,
    session: Option<String>,
    project: Option<String>,
    tool: Option<String>,
    file: Option<String>,
    fusion: Option<String>,
    k: Option<String>,
    query: String,
}

fn search() -> impl Strategy<Value = Search> {
    let times: &'static [&'static str] = &[
        "7d",
        "18000000h",
        "99999999999999999999d",
        "today",
        "2025-10-24",
        "-000005-01-01T00:00:00Z",
        "2025-10-24T11:41:50Z",
        "0s",
        "now",
    ];
    (
        (
            arg(times),
            arg(times),
            arg(&["db5b", "db5b5fab", "", " ", "d", "zz"]),
        ),
        (
            arg(&[PROJECT, "/home/dev/src/quill-notes/", "/", ".", "./x/../"]),
            arg(&["Bash", "bash", "READ", " Edit "]),
            arg(&["src/", "lib.rs", ""]),
        ),
        (
            arg(&["0.9,0.15,0.2", "1,1,1,1,1,1,1", ",,,", "nan,inf,-1", "0.9"]),
            arg(&[
                "0",
                "1",
                "10",
                "18446744073709551615",
                "99999999999999999999999",
                "-1",
            ]),
            "[^\u{0}]{1,30}",
        ),
    )
        .prop_map(
            |((since, until, session), (project, tool, file), (fusion, k, query))| Search {
                since,
                until,
                session,
                project,
                tool,
                file,
                fusion,
                k,
                query,
            },
        )
}

#[test]
fn fuzz_search_filters_through_the_cli() {
    let seed = env_u64("MEMCTL_FUZZ_SEED").unwrap_or(0x0014_0005);
    let cases = env_u64("MEMCTL_FUZZ_CASES").map_or(120, |c| c.min(5_000));
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let env = [("MEMCTL_EMBEDDER", "hash")];
    let out = common::memctl(
        &home,
        &["ingest", "--no-embed", fixture().to_str().expect("utf-8")],
        b"",
        &env,
    );
    assert!(out.status.success(), "ingest: {out:?}");
    let runs = AtomicU64::new(0);
    let start = Instant::now();
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    let config = Config {
        cases: cases as u32,
        failure_persistence: None,
        max_shrink_iters: 200,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &key));
    let result = runner.run(&search(), |s| {
        runs.fetch_add(1, Ordering::Relaxed);
        let mut args: Vec<String> = vec!["search".into(), "--mode".into(), "lexical".into()];
        for (flag, v) in [
            ("--since", &s.since),
            ("--until", &s.until),
            ("--session", &s.session),
            ("--project", &s.project),
            ("--tool", &s.tool),
            ("--file", &s.file),
            ("--fusion", &s.fusion),
            ("-k", &s.k),
        ] {
            if let Some(v) = v {
                args.push(format!("{flag}={v}"));
            }
        }
        args.push("--".into());
        args.push(s.query.clone());
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let t = Instant::now();
        let out = common::memctl(&home, &refs, b"", &env);
        prop_assert!(
            t.elapsed() < Duration::from_secs(30),
            "hang: {:?}",
            t.elapsed()
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        prop_assert!(!stderr.contains("panicked"), "panic: {stderr}");
        match out.status.code() {
            Some(0) => prop_assert!(!out.stdout.is_empty(), "exit 0 with nothing printed"),
            Some(1) => prop_assert!(stderr.contains("memctl: error: "), "exit 1: {stderr}"),
            Some(2) => prop_assert!(!stderr.is_empty(), "usage error without a message"),
            other => prop_assert!(false, "exit {other:?} (a signal or a panic): {stderr}"),
        }
        Ok(())
    });
    match result {
        Ok(()) => {}
        Err(TestError::Fail(reason, value)) => {
            panic!("fuzz cli search: FINDING (seed {seed:#x}): {reason}\nminimal input: {value:?}")
        }
        Err(e) => panic!("fuzz cli search (seed {seed:#x}): {e}"),
    }
    println!(
        "fuzz target cli search filters (process): {} executions in {:.1} s, seed {seed:#x}, \
         findings 0 (session {SID})",
        runs.load(Ordering::Relaxed),
        start.elapsed().as_secs_f64()
    );
}
