//! Several real `memctl` processes ingest into one store at once (redb MultiWriter): every turn
//! lands exactly once — 0 lost, 0 duplicated.

use std::path::{Path, PathBuf};
use std::process::Command;

const PROCS: usize = 8;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/sample/db5b5fab-8f4d-4e27-9da1-494c73cf256d.jsonl")
}

/// A copy of the fixture transcript under a new session id, with its words altered so that no
/// chunk is a duplicate of another copy's (every process really inserts).
fn session_copy(dir: &Path, n: usize) -> (String, PathBuf) {
    let text = std::fs::read_to_string(fixture()).expect("fixture");
    let sid = format!("00000000-0000-4000-8000-{n:012}");
    let path = dir.join(format!("{sid}.jsonl"));
    let text = text
        .replace("db5b5fab-8f4d-4e27-9da1-494c73cf256d", &sid)
        .replace("the ", &format!("the{n} "));
    std::fs::write(&path, text).expect("write copy");
    (sid, path)
}

fn memctl(home: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_memctl"));
    c.env("MEMCTL_HOME", home).env("MEMCTL_EMBEDDER", "hash");
    c
}

fn session_turns(home: &Path, sid: &str) -> serde_json::Value {
    let out = memctl(home)
        .args(["show", sid, "--json"])
        .output()
        .expect("run memctl show");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

fn stored_chunks(home: &Path) -> usize {
    let out = memctl(home).arg("status").output().expect("status");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("chunks:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("chunk count in status")
}

#[test]
fn eight_processes_lose_and_duplicate_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).expect("mkdir");
    let copies: Vec<(String, PathBuf)> = (0..PROCS).map(|n| session_copy(&src, n)).collect();

    // Each process ingests its own session plus the same shared one (session 0), so the
    // processes also race on identical keys.
    let children: Vec<_> = copies
        .iter()
        .map(|(_, p)| {
            memctl(&home)
                .arg("ingest")
                .arg("--no-embed")
                .arg(p)
                .arg(&copies[0].1)
                .stdout(std::process::Stdio::null())
                .spawn()
                .expect("spawn memctl ingest")
        })
        .collect();
    for mut c in children {
        let st = c.wait().expect("wait");
        assert!(st.success(), "an ingest process failed: {st}");
    }

    // Reference: the same transcript ingested alone into a fresh store.
    let ref_home = dir.path().join("ref");
    let st = memctl(&ref_home)
        .args(["ingest", "--no-embed"])
        .arg(&copies[1].1)
        .status()
        .expect("reference ingest");
    assert!(st.success());
    let reference = session_turns(&ref_home, &copies[1].0);
    let ref_chunks = reference["chunks"].as_array().expect("chunks").len();
    let ref_turns = reference["session"]["turns"].as_u64().expect("turns");
    assert!(
        ref_chunks > 30,
        "fixture should have many turns, got {ref_chunks}"
    );

    // Oracle for the whole store: the same inputs ingested by one process, sequentially.
    let seq_home = dir.path().join("seq");
    let st = memctl(&seq_home)
        .args(["ingest", "--no-embed"])
        .arg(&src)
        .status()
        .expect("sequential ingest");
    assert!(st.success());
    assert_eq!(
        stored_chunks(&home),
        stored_chunks(&seq_home),
        "concurrent and sequential ingest must store the same chunks"
    );
    for (sid, _) in &copies {
        let s = session_turns(&home, sid);
        let chunks = s["chunks"].as_array().expect("chunks");
        assert_eq!(
            s["session"]["turns"].as_u64(),
            Some(ref_turns),
            "{sid}: turn count"
        );
        assert_eq!(
            chunks.len(),
            ref_chunks,
            "{sid}: chunk count (lost or duplicated)"
        );
        let mut keys: Vec<(u64, u64)> = chunks
            .iter()
            .map(|c| {
                (
                    c["turn_index"].as_u64().unwrap_or(u64::MAX),
                    c["part"].as_u64().unwrap_or(0),
                )
            })
            .collect();
        keys.sort_unstable();
        let before = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), before, "{sid}: duplicated turn parts");
    }
}
