//! Several real `memctl` processes ingest into one store at once (redb MultiWriter): every turn
//! lands exactly once — 0 lost, 0 duplicated. A burst of prompts on one transcript runs one
//! background archiver at a time, and every turn lands.

use crate::common;

use common::fixture;
use std::path::{Path, PathBuf};
use std::process::Command;

const PROCS: usize = 8;

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

/// The hooks' environment for the burst: the default deferred archive (a detached `memctl
/// ingest --background` per prompt), no embedder, every job-lock line in the log.
const BURST_ENV: &[(&str, &str)] = &[
    ("MEMCTL_HOOK_INLINE_PROMPT_ARCHIVE", "0"),
    ("MEMCTL_LOG", "debug"),
];

fn prompt(home: &Path, transcript: &Path, k: usize) {
    let payload = serde_json::json!({
        "session_id": common::SID, "transcript_path": transcript, "cwd": common::PROJECT,
        "hook_event_name": "UserPromptSubmit", "prompt": format!("step {k}"),
    });
    common::hook(
        home,
        "UserPromptSubmit",
        payload.to_string().as_bytes(),
        BURST_ENV,
    );
}

/// Live `memctl ingest --background` processes of transcript `t` (their command lines in
/// /proc; a process that has ended has none). Looked at from outside: taking the job lock here
/// would turn an archiver starting at that moment away.
fn archivers_running(t: &Path) -> usize {
    let t = t.to_string_lossy().into_owned();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return 0;
    };
    procs
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter(|e| {
            std::fs::read(e.path().join("cmdline")).is_ok_and(|c| {
                let c = String::from_utf8_lossy(&c);
                c.contains("ingest\0--background") && c.contains(t.as_str())
            })
        })
        .count()
}

/// A burst of prompts on one transcript with a backlog: while an archiver runs, a hook starts
/// none (it leaves a request), no two archivers ever hold the transcript at once (the log's
/// job-lock lines, written while the lock is held), and every turn appended during the burst
/// is archived in the end.
#[test]
fn a_prompt_burst_runs_one_archiver_at_a_time_and_loses_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let t = dir.path().join(format!("{}.jsonl", common::SID));
    let text = std::fs::read_to_string(fixture()).expect("fixture");
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    // Half the session as the backlog, the rest appended one piece per prompt.
    let half = lines.len() / 2;
    std::fs::write(&t, lines[..half].concat()).expect("write transcript");
    let pieces: Vec<String> = lines[half..]
        .chunks(lines[half..].len().div_ceil(20))
        .map(<[&str]>::concat)
        .collect();
    let append = |piece: &str| {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&t)
            .expect("open transcript");
        f.write_all(piece.as_bytes()).expect("append");
    };

    // While an archiver holds the transcript (this test), the hooks start none.
    let held = memctl_engine::Job::start(&home, memctl_engine::JOB_INGEST, &t)
        .expect("job lock")
        .expect("free at first");
    let first = pieces.len() / 2;
    for (k, piece) in pieces[..first].iter().enumerate() {
        append(piece);
        prompt(&home, &t, k);
    }
    let log = std::fs::read_to_string(home.join("logs/memctl.log")).expect("log");
    assert_eq!(
        log.matches("left the request to it").count(),
        first,
        "every hook left its request to the running archiver: {log}"
    );
    assert_eq!(archivers_running(&t), 0, "a hook started an archiver");
    assert!(
        !log.contains("job lock taken"),
        "an archiver ran beside the held one: {log}"
    );
    // Let go without serving: the requests stay for the next archiver.
    drop(held);

    // Now a burst with nothing held: the archivers the hooks start serve everything.
    for (k, piece) in pieces[first..].iter().enumerate() {
        append(piece);
        prompt(&home, &t, first + k);
    }
    // Every archiver a hook started exists by now (the hooks have exited): wait for them.
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(300);
    let mut most = 0;
    loop {
        let n = archivers_running(&t);
        most = most.max(n);
        if n == 0 {
            break;
        }
        assert!(
            std::time::Instant::now() < give_up,
            "the archivers never finished"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let left: Vec<_> = std::fs::read_dir(home.join("backlog"))
        .expect("backlog dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "request"))
        .collect();
    assert!(left.is_empty(), "a request nobody served: {left:?}");

    let log = std::fs::read_to_string(home.join("logs/memctl.log")).expect("log");
    let mut holder: Option<&str> = None;
    let mut holders = std::collections::BTreeSet::new();
    for line in log.lines() {
        let pid = || {
            line.split("pid=")
                .nth(1)
                .and_then(|r| r.split_whitespace().next())
                .expect("pid field")
        };
        if line.contains("job lock taken") {
            assert_eq!(holder, None, "two archivers at once: {line}\n{log}");
            holder = Some(pid());
            holders.insert(pid());
        } else if line.contains("job lock let go") {
            assert_eq!(holder, Some(pid()), "{line}\n{log}");
            holder = None;
        }
    }
    assert!(!holders.is_empty(), "no archiver ran: {log}");
    eprintln!(
        "{} prompts: {} archiver process(es) ran, at most {most} alive at once, {} request(s) left to a running one",
        pieces.len(),
        holders.len(),
        log.matches("left the request to it").count()
    );

    // Nothing lost: the same turns as the whole session ingested at once.
    let reference = dir.path().join("ref");
    let st = memctl(&reference)
        .args(["ingest", "--no-embed"])
        .arg(&t)
        .status()
        .expect("reference ingest");
    assert!(st.success());
    let want = session_turns(&reference, common::SID);
    let got = session_turns(&home, common::SID);
    assert_eq!(got["session"]["turns"], want["session"]["turns"]);
    assert_eq!(
        got["chunks"].as_array().map(Vec::len),
        want["chunks"].as_array().map(Vec::len),
        "archived chunks"
    );
}
