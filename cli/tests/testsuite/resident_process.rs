//! The resident service and the deferred prompt archive, as hooks use them: real binaries,
//! the real model, real redb files.
//!
//! - `memctl embedder` serves prompt vectors over its socket, one per data dir, and goes away by
//!   itself (idle, or its socket removed);
//! - it embeds the chunks an archive left pending on its bulk thread (no other process does),
//!   answers queries while it does, and a killed one is replaced by the next hook;
//! - after a compaction, the first recalling UserPromptSubmit embeds in process and starts the
//!   embedder; later ones get their vector from it (the log says which);
//! - an uncompacted session's UserPromptSubmit opens no store: a detached
//!   `memctl ingest --background` archives the new turns a moment later.

use crate::common;

use common::{PROJECT, SID, fixture};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn wait_for(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !ok() {
        assert!(t0.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn start_embedder(home: &Path, idle_secs: &str) -> Child {
    std::fs::create_dir_all(home).expect("data dir");
    Command::new(env!("CARGO_BIN_EXE_memctl"))
        .args(["embedder"])
        .env("MEMCTL_HOME", home)
        .env("MEMCTL_RESIDENT_IDLE_SECS", idle_secs)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn memctl embedder")
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn one_embedder_per_data_dir_answers_with_the_model_and_exits_when_idle() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let sock = memctl_engine::resident_socket_path(&home);
    let mut server = start_embedder(&home, "3");
    wait_for("the embedder's socket", Duration::from_secs(60), || {
        sock.exists()
    });

    // A second one exits at once and says why.
    let second = common::memctl(&home, &["embedder"], b"", &[]);
    assert_eq!(second.status.code(), Some(0), "{second:?}");
    assert!(
        String::from_utf8_lossy(&second.stdout).contains("already runs"),
        "{second:?}"
    );

    // Its vectors are the model's: the same text embedded here agrees.
    let text = "which host do the reporting queries go to now?";
    let (id, served) =
        memctl_engine::embed_query(&home, text, Duration::from_secs(5)).expect("served");
    assert_eq!(served.len(), 384);
    let onnx = memctl_engine::OnnxConfig::from_settings(
        &memctl_engine::Settings::load(std::env::vars_os()).settings,
    );
    let local = memctl_engine::OnnxEmbedder::load(&onnx).expect("model");
    use memctl_engine::Embedder as _;
    assert_eq!(&id, local.id(), "the same embedding space");
    let mine = local.embed_batch(&[text]).expect("embed").remove(0);
    let cos = cosine(&served, &mine);
    assert!(cos > 0.999, "cosine {cos}");

    // Idle for 3 s: it exits by itself and removes its socket.
    wait_for("the idle embedder to exit", Duration::from_secs(30), || {
        matches!(server.try_wait(), Ok(Some(_)))
    });
    assert!(!sock.exists(), "socket removed on exit");
    assert!(matches!(
        memctl_engine::embed_query(&home, text, Duration::from_millis(100)),
        Err(memctl_engine::ResidentError::NotRunning { .. })
    ));
}

#[test]
fn an_embedder_whose_socket_is_removed_exits() {
    // The data dir deleted under a running embedder (a test's temp dir, a user's `rm -rf`).
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let sock = memctl_engine::resident_socket_path(&home);
    let mut server = start_embedder(&home, "600");
    wait_for("the embedder's socket", Duration::from_secs(60), || {
        sock.exists()
    });
    std::fs::remove_file(&sock).expect("remove socket");
    wait_for("the embedder to notice", Duration::from_secs(10), || {
        matches!(server.try_wait(), Ok(Some(_)))
    });
}

fn payload(event: &str, transcript: &Path, extra: &str) -> Vec<u8> {
    format!(
        r#"{{"session_id":"{SID}","transcript_path":"{}","cwd":"{PROJECT}","hook_event_name":"{event}"{extra}}}"#,
        transcript.display()
    )
    .into_bytes()
}

fn archived_turns(home: &Path) -> u64 {
    let out = common::memctl(home, &["sessions", "--json"], b"", &[]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    v.as_array()
        .into_iter()
        .flatten()
        .find(|s| s["session_id"] == SID)
        .and_then(|s| s["turns"].as_u64())
        .unwrap_or(0)
}

#[test]
fn prompts_of_an_uncompacted_session_are_archived_by_a_detached_ingest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let t = dir.path().join(format!("{SID}.jsonl"));
    std::fs::copy(fixture(), &t).expect("copy fixture");
    let out = common::hook(
        &home,
        "UserPromptSubmit",
        &payload("UserPromptSubmit", &t, r#","prompt":"go on""#),
        &[("MEMCTL_HOOK_INLINE_PROMPT_ARCHIVE", "0")],
    );
    assert!(out.stdout.is_empty(), "nothing to say: {out:?}");
    wait_for("the detached archive", Duration::from_secs(60), || {
        archived_turns(&home) > 0
    });
    // The same turns as an inline archive stores.
    let inline = dir.path().join("inline");
    let direct = common::memctl(
        &inline,
        &["ingest", "--no-embed", "--quiet", &t.display().to_string()],
        b"",
        &[],
    );
    assert!(direct.status.success(), "{direct:?}");
    wait_for("all turns", Duration::from_secs(60), || {
        archived_turns(&home) == archived_turns(&inline)
    });
}

#[test]
fn recall_starts_the_embedder_and_then_uses_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let t = dir.path().join(format!("{SID}.jsonl"));
    std::fs::copy(fixture(), &t).expect("copy fixture");
    let env = [
        ("MEMCTL_RESIDENT", "1"),
        ("MEMCTL_RESIDENT_IDLE_SECS", "20"),
        ("MEMCTL_LOG", "info"),
    ];
    // Archive, then compact: the session lost context, recall is on from the next prompt.
    common::hook(
        &home,
        "PreCompact",
        &payload("PreCompact", &t, r#","trigger":"manual""#),
        &env,
    );
    common::hook(
        &home,
        "SessionStart",
        &payload("SessionStart", &t, r#","source":"compact""#),
        &env,
    );
    let sock = memctl_engine::resident_socket_path(&home);
    wait_for(
        "the embedder started by SessionStart",
        Duration::from_secs(60),
        || sock.exists(),
    );
    let prompt = r#","prompt":"how did we end up resolving the image digest in the build?""#;
    common::hook(
        &home,
        "UserPromptSubmit",
        &payload("UserPromptSubmit", &t, prompt),
        &env,
    );
    let log = std::fs::read_to_string(home.join("logs/memctl.log")).expect("log");
    let recall_lines: Vec<&str> = log.lines().filter(|l| l.contains("recall")).collect();
    assert!(
        recall_lines
            .iter()
            .any(|l| l.contains("embedded_by=Resident")),
        "the prompt vector came from the resident embedder: {recall_lines:#?}"
    );
    std::fs::remove_file(&sock).expect("stop the embedder");
}

#[test]
fn an_embedder_never_recreates_a_deleted_data_dir() {
    // A hook starts the embedder detached; the data dir may be gone by the time it runs (a
    // test's temp dir). It must exit, not re-create the dir and idle there for 15 minutes.
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("gone");
    for args in [&["embedder"][..], &["embedder", "--background"][..]] {
        let out = common::memctl(&home, args, b"", &[]);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("does not exist"),
            "{out:?}"
        );
        assert!(!home.exists(), "{args:?}: the data dir was re-created");
    }
}

fn status(home: &Path) -> serde_json::Value {
    let out = common::memctl(home, &["status", "--json"], b"", &[]);
    assert!(out.status.success(), "status: {out:?}");
    serde_json::from_slice(&out.stdout).expect("status JSON")
}

/// The command line of process `pid` (empty when it is gone).
fn cmdline(pid: u64) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

/// The hooks' settings for these tests: deferred archive, background embedding on, a service
/// that idles out soon after the test.
const SERVICE_ENV: &[(&str, &str)] = &[
    ("MEMCTL_HOOK_INLINE_PROMPT_ARCHIVE", "0"),
    ("MEMCTL_BACKGROUND_EMBED", "1"),
    ("MEMCTL_RESIDENT_IDLE_SECS", "20"),
    ("MEMCTL_LOG", "debug"),
];

/// True when, within `limit`, more than `chunks` chunks are archived and none is pending.
fn embedded_within(home: &Path, chunks: u64, limit: Duration) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        let s = status(home);
        if s["chunks"].as_u64().unwrap_or(0) > chunks && s["pending"].as_u64() == Some(0) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    false
}

/// Wait until more than `chunks` chunks are archived and every one has its model vector;
/// returns the pid that embedded them (from the progress record), checked to be the resident
/// service while it still runs.
fn wait_embedded_by_the_service(home: &Path, chunks: u64) -> u64 {
    let mut last = serde_json::Value::Null;
    wait_for("the service to embed", Duration::from_secs(300), || {
        last = status(home);
        last["chunks"].as_u64().unwrap_or(0) > chunks
            && last["pending"].as_u64() == Some(0)
            && last["background"]["embedded"].as_u64().unwrap_or(0) > 0
    });
    let pid = last["background"]["pid"]
        .as_u64()
        .expect("an embedder's pid");
    let cmd = cmdline(pid);
    assert!(
        cmd.contains("embedder --background") && !cmd.contains("embed-pending"),
        "the chunks were embedded by the resident service, not by {cmd:?}: {last}"
    );
    pid
}

#[test]
fn the_service_embeds_what_an_archive_left_pending_and_a_killed_one_is_replaced() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let t = dir.path().join(format!("{SID}.jsonl"));
    // The first half of the session now, the rest after the service is killed.
    let all = std::fs::read_to_string(fixture()).expect("fixture");
    let lines: Vec<&str> = all.lines().collect();
    let half = lines.len() / 2;
    std::fs::write(&t, format!("{}\n", lines[..half].join("\n"))).expect("first half");
    let prompt = |text: &str| {
        let extra = format!(r#","prompt":"{text}""#);
        let out = common::hook(
            &home,
            "UserPromptSubmit",
            &payload("UserPromptSubmit", &t, &extra),
            SERVICE_ENV,
        );
        assert!(out.stdout.is_empty(), "nothing to recall: {out:?}");
    };
    prompt("go on");
    let first = wait_embedded_by_the_service(&home, 0);
    let sock = memctl_engine::resident_socket_path(&home);
    assert!(sock.exists(), "the service listens");

    // Killed mid-life: the next prompt falls back (exit 0, archive done) and starts another.
    Command::new("kill")
        .args(["-KILL", &first.to_string()])
        .status()
        .expect("kill");
    wait_for("the killed service to go", Duration::from_secs(10), || {
        !Path::new(&format!("/proc/{first}")).exists()
            || std::fs::read_to_string(format!("/proc/{first}/stat"))
                .is_ok_and(|s| s.contains(") Z "))
    });
    let before = status(&home)["chunks"].as_u64().expect("chunks");
    std::fs::write(&t, format!("{}\n", lines.join("\n"))).expect("the whole session");
    prompt("and now?");
    // Fail-open contract: what one hook's wake-up misses, the next hook's catches. A wake-up
    // can meet the store still held by the killed service's last transaction on a loaded
    // machine; then a later prompt starts the service again. Said on stderr when it happens.
    if !embedded_within(&home, before, Duration::from_secs(90)) {
        eprintln!("the first prompt after the kill did not get the chunks embedded; one more");
        prompt("still there?");
    }
    let second = wait_embedded_by_the_service(&home, before);
    assert_ne!(second, first, "a new service embedded the new chunks");
    let after = status(&home);
    assert!(
        after["chunks"].as_u64().expect("chunks") > before,
        "{after}"
    );
    assert_eq!(after["pending"].as_u64(), Some(0), "{after}");

    // No embed-pending process was started by any hook or archiver.
    let log = std::fs::read_to_string(home.join("logs/memctl.log")).expect("log");
    assert!(!log.contains("embed-pending"), "{log}");
    std::fs::remove_file(&sock).expect("stop the service");
}

#[test]
fn a_query_is_answered_while_the_service_embeds_a_backlog() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = common::home_with_pending(dir.path());
    let pending = status(&home)["pending"].as_u64().expect("pending");
    let mut service = common::spawn_service(&home, "20");
    let sock = memctl_engine::resident_socket_path(&home);
    // The bulk thread's first batch is recorded: it is embedding the backlog now.
    let progress = home.join(memctl_hooks::progress::FILE);
    wait_for("the first batch", Duration::from_secs(300), || {
        common::assert_running(&mut service, "the service ended early");
        progress.exists() && sock.exists()
    });
    let left = status(&home)["pending"].as_u64().expect("pending");
    assert!(
        left > 0 && left < pending,
        "mid-backlog: {left} of {pending}"
    );
    for text in [
        "which port does the cache listen on?",
        "why did the build fail?",
    ] {
        let t0 = Instant::now();
        let (_, v) = memctl_engine::embed_query(&home, text, Duration::from_secs(2))
            .unwrap_or_else(|e| panic!("a query beside the bulk work: {e}"));
        assert_eq!(v.len(), 384);
        assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
    }
    // The backlog goes on to the end, in the same process (its progress record is written
    // just after each batch's commit: wait for both).
    wait_for("the backlog", Duration::from_secs(300), || {
        let st = status(&home);
        st["pending"].as_u64() == Some(0) && st["background"]["embedded"].as_u64() == Some(pending)
    });
    let b = status(&home)["background"].clone();
    assert_eq!(b["pid"].as_u64(), Some(u64::from(service.id())), "{b}");
    assert_eq!(b["embedded"].as_u64(), Some(pending), "{b}");
    std::fs::remove_file(&sock).expect("stop the service");
    let st = service.wait().expect("wait");
    assert!(st.success(), "{st:?}");
}

#[test]
fn embed_pending_in_the_foreground_leaves_the_work_to_a_busy_service() {
    // One embedder of pending chunks at a time: the service's bulk thread holds the embed
    // lock while it embeds; a user's `embed-pending` then says so and returns at once.
    let dir = tempfile::tempdir().expect("tempdir");
    let home = common::home_with_pending(dir.path());
    let mut service = common::spawn_service(&home, "20");
    let progress = home.join(memctl_hooks::progress::FILE);
    wait_for("the first batch", Duration::from_secs(300), || {
        common::assert_running(&mut service, "the service ended early");
        progress.exists()
    });
    let out = common::memctl(&home, &["embed-pending"], b"", &[]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("another embedder is running"),
        "{out:?}"
    );
    // Removing its socket stops the service (gone already when it idled out).
    match std::fs::remove_file(memctl_engine::resident_socket_path(&home)) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => panic!("stop the service: {e}"),
    }
    service.wait().expect("the service exits");
}

/// `memctl search --mode dense --json` top ids and whether the service's index answered.
fn dense_ids(home: &Path, env: &[(&str, &str)], q: &str) -> (Vec<u64>, bool) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memctl"));
    cmd.args([
        "search",
        "--json",
        "--mode",
        "dense",
        "--project",
        PROJECT,
        "-k",
        "5",
        q,
    ])
    .env("MEMCTL_HOME", home);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("search");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let ids = doc["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|r| r["id"].as_u64())
        .collect();
    (ids, doc["indexed"].as_bool().unwrap_or(false))
}

/// A killed service leaves its socket file (or had not bound it yet).
fn remove_stale_socket(sock: &Path) {
    match std::fs::remove_file(sock) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => panic!("removing {}: {e}", sock.display()),
    }
}

fn start_indexing_service(home: &Path, ann: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_memctl"))
        .args(["embedder"])
        .env("MEMCTL_HOME", home)
        .env("MEMCTL_RESIDENT_IDLE_SECS", "60")
        .env("MEMCTL_ANN", ann)
        .env("MEMCTL_ANN_MIN", "1")
        .env("MEMCTL_ANN_SAVE_SECS", "0")
        // Every quiet graph is frozen into a flat base: the kills land in freezes too.
        .env("MEMCTL_ANN_FREEZE_MIN", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn memctl embedder")
}

#[test]
fn the_service_index_answers_like_the_exact_scan_through_kills_and_restarts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let t = dir.path().join(format!("{SID}.jsonl"));
    std::fs::copy(fixture(), &t).expect("copy fixture");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_memctl"))
            .args(args)
            .env("MEMCTL_HOME", &home)
            .output()
            .expect("memctl");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    run(&["ingest", t.to_str().expect("utf-8 path")]);
    run(&["embed-pending"]);
    let queries = [
        "image digest in the build",
        "which test failed",
        "rename the config flag",
    ];
    let sock = memctl_engine::resident_socket_path(&home);
    let indexed = [("MEMCTL_RESIDENT", "1")];

    // The oracle: the same service and model, no index (exact scan).
    let mut exact_svc = start_indexing_service(&home, "0");
    wait_for("the exact service", Duration::from_secs(60), || {
        sock.exists()
    });
    let exact: Vec<Vec<u64>> = queries
        .iter()
        .map(|q| dense_ids(&home, &indexed, q).0)
        .collect();
    exact_svc.kill().expect("kill");
    exact_svc.wait().expect("wait");
    remove_stale_socket(&sock);

    // Kill the indexing service at moments spread over its start, build and save; every
    // restart must answer from a consistent index (loaded or rebuilt), like the exact scan.
    for (round, delay_ms) in [150u64, 400, 900, 1600, 2500].into_iter().enumerate() {
        let mut svc = start_indexing_service(&home, "1");
        std::thread::sleep(Duration::from_millis(delay_ms));
        svc.kill().expect("kill");
        svc.wait().expect("wait");
        remove_stale_socket(&sock);
        println!("round {round}: killed after {delay_ms} ms");
        // Whatever the kill left in the index files, `memctl check` finds it consistent.
        run(&["check"]);
    }
    let mut svc = start_indexing_service(&home, "1");
    wait_for("an index answer", Duration::from_secs(90), || {
        sock.exists() && dense_ids(&home, &indexed, queries[0]).1
    });
    for (q, want) in queries.iter().zip(&exact) {
        let (got, by_index) = dense_ids(&home, &indexed, q);
        assert!(by_index, "{q}: not answered by the index");
        assert_eq!(&got, want, "{q}: the index and the exact scan differ");
    }
    let ann = home.join("ann");
    wait_for("a saved index", Duration::from_secs(60), || {
        std::fs::read_dir(&ann).is_ok_and(|d| {
            d.flatten()
                .any(|e| e.file_name().to_string_lossy().ends_with(".meta"))
        })
    });
    svc.kill().expect("kill");
    svc.wait().expect("wait");
    let report = run(&["check"]);
    assert!(
        report.contains("matches the store"),
        "the saved index was not checked:\n{report}"
    );
}
