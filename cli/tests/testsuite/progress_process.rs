//! Background progress: `memctl status` shows whether an embedder runs, its pid,
//! since when, what it embedded and its rate; `memctl ingest` advances within a large file.
//! Real binaries, the real model (`scripts/setup.sh`), temp data dirs.

use crate::common;

use common::{fixture, memctl};
use memctl_engine::{Engine, EngineOptions, IngestOptions, IngestProgress, Settings};
use serde_json::Value;
use std::path::Path;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn status(home: &Path) -> Value {
    let out = memctl(home, &["status", "--json"], b"", &[]);
    assert!(out.status.success(), "status: {out:?}");
    serde_json::from_slice(&out.stdout).expect("status JSON")
}

#[test]
fn status_shows_a_running_embedder_its_progress_and_the_end_of_the_run() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = common::home_with_pending(tmp.path());

    let before = status(&home);
    let pending = before["pending"].as_u64().expect("pending");
    assert!(pending > 0, "the fixture leaves chunks pending: {before}");
    assert_eq!(before["background"]["running"], Value::Bool(false));
    assert_eq!(before["background"]["embedded"], Value::Null, "no run yet");
    let text = memctl(&home, &["status"], b"", &[]);
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    assert!(text.contains("background: no embedder running"), "{text}");

    let mut child = common::spawn_service(&home, "3");
    let give_up = Instant::now() + Duration::from_secs(300);
    // Status tests the embed lock by taking it for a moment: only once the embedder holds it
    // (it records its start right after) may status poll, or a starting embedder would find
    // the lock taken and leave.
    while !home.join(memctl_hooks::progress::FILE).exists() {
        assert!(Instant::now() < give_up, "the embedder never started");
        common::assert_running(&mut child, "the embedder ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    let running = loop {
        let s = status(&home);
        let b = &s["background"];
        if b["running"] == Value::Bool(true) && b["embedded"].as_u64().unwrap_or(0) > 0 {
            break s;
        }
        assert!(Instant::now() < give_up, "no progress recorded: {s}");
        assert!(
            child.try_wait().expect("try_wait").is_none(),
            "the embedder ended before status saw it run: {s}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let b = &running["background"];
    assert_eq!(b["pid"].as_u64(), Some(u64::from(child.id())), "{b}");
    assert!(b["since"].as_i64().unwrap_or(0) > 0, "{b}");
    assert!(b["rate"].as_f64().unwrap_or(0.0) > 0.0, "{b}");
    assert!(b["threads"].as_u64().unwrap_or(0) >= 1, "{b}");
    let text = memctl(&home, &["status"], b"", &[]);
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    assert!(
        text.contains(&format!("background: embedder running (pid {}", child.id())),
        "{text}"
    );
    assert!(text.contains("chunks/s"), "{text}");

    // Idle 3 s after its last batch, the service exits by itself.
    let st = child.wait().expect("wait for the embedder");
    assert!(st.success(), "embedder: {st:?}");
    let after = status(&home);
    assert_eq!(after["pending"].as_u64(), Some(0), "{after}");
    let b = &after["background"];
    assert_eq!(b["running"], Value::Bool(false), "{b}");
    assert_eq!(b["embedded"].as_u64(), Some(pending), "{b}");
    assert_eq!(b["eta_seconds"], Value::Null, "no ETA once it ended: {b}");
}

#[test]
fn ingest_reports_progress_within_one_transcript_by_bytes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let settings = Settings::load([("MEMCTL_HOME", tmp.path().as_os_str())]);
    let mut opts = EngineOptions::from_settings(&settings.settings);
    opts.model_disabled = true;
    let engine = Engine::open(opts).expect("open");
    let seen: Arc<Mutex<Vec<u64>>> = Arc::default();
    let sink = Arc::clone(&seen);
    let ingest = IngestOptions {
        embed_with_model: false,
        commit_bytes: Some(64 * 1024),
        progress: Some(IngestProgress(Arc::new(move |n| {
            sink.lock().expect("progress lock").push(n);
        }))),
        ..Default::default()
    };
    let fx = fixture();
    let len = std::fs::metadata(&fx).expect("fixture").len();
    let r = engine.ingest_transcript(&fx, &ingest).expect("ingest");
    let seen = seen.lock().expect("progress lock").clone();
    assert!(
        seen.len() >= (len / (64 * 1024)) as usize,
        "one report per committed pass of a {len}-byte file: {seen:?}"
    );
    assert!(
        seen.iter().all(|&n| n > 0),
        "every pass reads bytes: {seen:?}"
    );
    assert_eq!(seen.iter().sum::<u64>(), r.bytes_read, "{seen:?}");
    assert!(
        r.bytes_read >= len,
        "the whole file was read: {} < {len}",
        r.bytes_read
    );
}
