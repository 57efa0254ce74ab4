//! kill -9 at random points of `memctl ingest` and of each hook: after every kill
//! the store opens and `memctl check` finds no violation, and after one more ingest to
//! completion the session holds exactly the turns a run without a kill stores: nothing lost,
//! nothing duplicated.
//!
//! Each trial starts from the same store (the first half of the sample session archived), runs
//! one operation over the whole transcript and SIGKILLs it after a delay drawn uniformly over
//! that operation's measured duration, so kills land everywhere, commits and fsyncs included.
//! `MEMCTL_FAULT_TRIALS` sets the number of trials (default 18, CI), `MEMCTL_TRIAL_SEED` the
//! seed (printed); `scripts/fault_trials.sh` runs 200 and prints the table.

use crate::common;

use common::{PROJECT, SID, fixture};
use serde::Deserialize;
use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// What a trial runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Ingest,
    UserPromptSubmit,
    PreCompact,
    SessionStartCompact,
    PostToolUseBig,
    SessionEnd,
}

const OPS: [Op; 6] = [
    Op::Ingest,
    Op::UserPromptSubmit,
    Op::PreCompact,
    Op::SessionStartCompact,
    Op::PostToolUseBig,
    Op::SessionEnd,
];

/// The binaries with the process tests' environment (see `common::run`), hash vectors.
fn command(bin: &str, home: &Path) -> Command {
    let mut cmd = Command::new(bin);
    cmd.env("MEMCTL_HOME", home)
        .env("MEMCTL_EMBEDDER", "hash")
        .env("MEMCTL_BACKGROUND_EMBED", "0")
        .env("MEMCTL_HOOK_INLINE_PROMPT_ARCHIVE", "1")
        .env("MEMCTL_RESIDENT", "0")
        .env("XDG_CONFIG_HOME", home.join("no-config"))
        .env_remove("MEMCTL_CONFIG")
        .env_remove("CLAUDE_PROJECT_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

fn memctl(home: &Path, args: &[&str]) -> std::process::Output {
    let mut c = command(env!("CARGO_BIN_EXE_memctl"), home);
    c.args(args).stdin(Stdio::null());
    c.output().expect("run memctl")
}

/// A 200 kB tool output (stored whole by the PostToolUse hook).
fn big_output() -> String {
    (0..4000)
        .map(|i| format!("src/module_{i}.rs:{i}: warning: unused variable `v{i}`\n"))
        .collect()
}

fn payload(op: Op, t: &Path) -> Vec<u8> {
    let mut v = serde_json::json!({"session_id": SID, "transcript_path": t, "cwd": PROJECT});
    let extra = match op {
        Op::Ingest => return Vec::new(),
        Op::UserPromptSubmit => {
            serde_json::json!({"hook_event_name": "UserPromptSubmit", "prompt": "and the linker?"})
        }
        Op::PreCompact => serde_json::json!({"hook_event_name": "PreCompact",
            "trigger": "auto", "custom_instructions": null}),
        Op::SessionStartCompact => {
            serde_json::json!({"hook_event_name": "SessionStart", "source": "compact"})
        }
        Op::PostToolUseBig => serde_json::json!({"hook_event_name": "PostToolUse",
            "tool_name": "Bash", "tool_input": {"command": "cargo build 2>&1"},
            "tool_response": {"stdout": big_output(), "stderr": "", "interrupted": false},
            "tool_use_id": "toolu_kill_trial"}),
        Op::SessionEnd => serde_json::json!({"hook_event_name": "SessionEnd", "reason": "other"}),
    };
    if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
        o.extend(e.clone());
    }
    serde_json::to_vec(&v).expect("payload")
}

/// Start `op` on the store in `home`; the payload is written from a thread (a 200 kB payload
/// fills the pipe before the hook reads it).
fn spawn(op: Op, home: &Path, t: &Path) -> (Child, Option<std::thread::JoinHandle<()>>) {
    let mut child = match op {
        Op::Ingest => {
            let mut c = command(env!("CARGO_BIN_EXE_memctl"), home);
            c.args(["ingest", "--no-embed"]).arg(t);
            c.spawn().expect("spawn ingest")
        }
        _ => {
            let event = match op {
                Op::UserPromptSubmit => "UserPromptSubmit",
                Op::PreCompact => "PreCompact",
                Op::SessionStartCompact => "SessionStart",
                Op::PostToolUseBig => "PostToolUse",
                _ => "SessionEnd",
            };
            let mut c = command(common::hook_bin(), home);
            c.arg(event).current_dir(home);
            c.spawn().expect("spawn hook")
        }
    };
    let body = payload(op, t);
    let stdin = child.stdin.take();
    let writer = stdin.map(|mut s| {
        std::thread::spawn(move || {
            // A killed child closes the pipe: a broken pipe here is part of the trial.
            let _ = s.write_all(&body);
        })
    });
    (child, writer)
}

/// Copy the files of a data dir (the store; no subfolders are needed).
fn copy_home(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    }
    for e in std::fs::read_dir(from).expect("read_dir").flatten() {
        if e.file_type().map(|t| t.is_file()).unwrap_or(false) {
            std::fs::copy(e.path(), to.join(e.file_name())).expect("copy store");
        }
    }
}

#[derive(Debug, Deserialize, PartialEq)]
struct Shown {
    chunks: Vec<ShownChunk>,
}

#[derive(Debug, Deserialize, PartialEq)]
struct ShownChunk {
    turn_index: u32,
    part: u16,
    text: String,
}

/// The session's stored turns, as `memctl show --json` lists them.
fn turns(home: &Path) -> Vec<(u32, u16, String)> {
    let out = memctl(home, &["show", SID, "--json"]);
    assert!(out.status.success(), "show: {out:?}");
    let s: Shown = serde_json::from_slice(&out.stdout).expect("show --json");
    s.chunks
        .into_iter()
        .map(|c| (c.turn_index, c.part, c.text))
        .collect()
}

fn check(home: &Path, what: &str) {
    let out = memctl(home, &["check"]);
    assert!(
        out.status.success(),
        "{what}: memctl check failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// xorshift64*: delays reproducible from the printed seed.
fn next(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

#[test]
fn kill9_at_random_points_of_ingest_and_hooks_loses_and_breaks_nothing() {
    let trials = env_u64("MEMCTL_FAULT_TRIALS", 18);
    let seed = env_u64("MEMCTL_TRIAL_SEED", 0x0014_0009);
    println!("kill -9 trials: {trials}, seed {seed:#x} (MEMCTL_TRIAL_SEED)");
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).expect("mkdir");
    let t = src.join(format!("{SID}.jsonl"));
    let full = std::fs::read_to_string(fixture()).expect("fixture");
    let lines: Vec<&str> = full.lines().collect();
    // The base store: the first half of the session archived.
    std::fs::write(&t, lines[..lines.len() / 2].join("\n") + "\n").expect("write half");
    let base = dir.path().join("base");
    let out = memctl(
        &base,
        &["ingest", "--no-embed", t.to_str().expect("utf-8 path")],
    );
    assert!(out.status.success(), "base ingest: {out:?}");
    std::fs::write(&t, &full).expect("write whole");
    // The reference: the whole session archived without a kill.
    let reference_home = dir.path().join("reference");
    copy_home(&base, &reference_home);
    let out = memctl(
        &reference_home,
        &["ingest", "--no-embed", t.to_str().expect("utf-8")],
    );
    assert!(out.status.success(), "reference ingest: {out:?}");
    let reference = turns(&reference_home);
    assert!(
        reference.len() > 40,
        "the whole session: {}",
        reference.len()
    );

    // Each operation's duration, run to completion from the base store.
    let mut durations = Vec::new();
    for op in OPS {
        let home = dir.path().join(format!("measure-{op:?}"));
        copy_home(&base, &home);
        let start = Instant::now();
        let (child, writer) = spawn(op, &home, &t);
        let out = child.wait_with_output().expect("wait");
        let took = start.elapsed();
        if let Some(w) = writer {
            w.join().expect("writer");
        }
        assert!(out.status.success(), "{op:?} to completion: {out:?}");
        println!("{op:?}: {took:?} to completion");
        durations.push(took);
    }

    let base_turns = turns(&base).len();
    let mut rng = seed;
    let mut killed = [0u32; OPS.len()];
    let mut finished = [0u32; OPS.len()];
    // Where the kills landed, by what the store held right after: [none of the new turns,
    // some, all].
    let mut landed = [[0u32; 3]; OPS.len()];
    for i in 0..trials {
        // Every operation in turn; the delay is the random part.
        let k = i as usize % OPS.len();
        let op = OPS[k];
        let max = durations[k].as_micros().max(1) as u64;
        let delay = Duration::from_micros(next(&mut rng) % max);
        let what = format!("trial {i} (seed {seed:#x}): {op:?} killed after {delay:?}");
        let home = dir.path().join(format!("trial-{i}"));
        copy_home(&base, &home);
        let (mut child, writer) = spawn(op, &home, &t);
        std::thread::sleep(delay);
        let running = child.try_wait().expect("try_wait").is_none();
        child.kill().expect("SIGKILL"); // an exited child is still ours to reap: no error
        let status = child.wait().expect("wait");
        if let Some(w) = writer {
            w.join().expect("writer");
        }
        if running {
            killed[k] += 1;
        } else {
            finished[k] += 1;
            assert!(status.success(), "{what}: exited on its own with {status}");
        }
        // The store opens and every rule holds, right after the kill.
        check(&home, &what);
        let at_kill = turns(&home).len();
        landed[k][if at_kill <= base_turns {
            0
        } else if at_kill < reference.len() {
            1
        } else {
            2
        }] += 1;
        // One more ingest to completion: exactly the reference turns.
        let out = memctl(&home, &["ingest", "--no-embed", t.to_str().expect("utf-8")]);
        assert!(
            out.status.success(),
            "{what}: ingest after the kill: {out:?}"
        );
        check(&home, &what);
        let got = turns(&home);
        assert_eq!(
            got.len(),
            reference.len(),
            "{what}: turns lost or duplicated"
        );
        assert!(
            got == reference,
            "{what}: the stored turns differ from the reference"
        );
        std::fs::remove_dir_all(&home).expect("clean up");
    }
    println!(
        "{:<20} {:>6} {:>8} | new turns stored at the kill: {:>4} {:>4} {:>4}",
        "op", "killed", "finished", "none", "some", "all"
    );
    for (k, op) in OPS.iter().enumerate() {
        println!(
            "{:<20} {:>6} {:>8} | {:>33} {:>4} {:>4}",
            format!("{op:?}"),
            killed[k],
            finished[k],
            landed[k][0],
            landed[k][1],
            landed[k][2]
        );
    }
    println!(
        "all {trials} trials: the store opened, memctl check found no violation, and after one \
         more ingest the session held exactly the reference's {} turn parts",
        reference.len()
    );
}

/// Copy a data dir with its subfolders (backups).
fn copy_tree(from: &Path, to: &Path) {
    copy_home(from, to);
    for e in std::fs::read_dir(from).expect("read_dir").flatten() {
        if e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            copy_tree(&e.path(), &to.join(e.file_name()));
        }
    }
}

/// kill -9 at random points of `memctl forget --session … --yes` (a session with repeated
/// turns; the data dir also holds a backup that has it, and the temporary files of a killed
/// backup and a killed first import, full copies of the store). After each kill the next
/// command (`memctl status`) finishes what the forget left; then, when the removal had
/// committed, no file under the data dir holds the forgotten text, in any case (when it had
/// not, the text is all there, and the forget run again to completion leaves none); `memctl
/// check` passes; the leftovers are gone. `MEMCTL_FORGET_TRIALS` sets the number of trials
/// (default 25), `MEMCTL_TRIAL_SEED` the seed.
#[test]
fn kill9_at_random_points_of_forget_leaves_no_forgotten_byte() {
    const WORD: &str = "PangolinCipher-4417";
    const FSID: &str = "e0e0e0e0-1111-4222-8333-444455556666";
    let trials = env_u64("MEMCTL_FORGET_TRIALS", 25);
    let seed = env_u64("MEMCTL_TRIAL_SEED", 0x0004_0005);
    println!("forget kill -9 trials: {trials}, seed {seed:#x} (MEMCTL_TRIAL_SEED)");
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().join("base");
    let fx = fixture();
    let out = memctl(
        &base,
        &["ingest", "--no-embed", fx.to_str().expect("utf-8")],
    );
    assert!(out.status.success(), "base ingest: {out:?}");
    let t = common::transcript_with_repeats(dir.path(), FSID, PROJECT, WORD, 200);
    let out = memctl(&base, &["ingest", "--no-embed", t.to_str().expect("utf-8")]);
    assert!(out.status.success(), "ingest: {out:?}");
    let out = memctl(&base, &["backup"]);
    assert!(out.status.success(), "backup: {out:?}");
    // Leftovers of killed processes: the pid of one that is gone.
    let mut gone = Command::new("true").spawn().expect("spawn true");
    let dead = gone.id();
    gone.wait().expect("wait");
    let partial = Path::new("backups").join(format!(".memctl-backup-x.redb.partial-{dead}-1"));
    let init = std::path::PathBuf::from(format!(".memctl.redb.init-{dead}-1"));
    for p in [&partial, &init] {
        std::fs::copy(base.join("memctl.redb"), base.join(p)).expect("a leftover");
    }
    assert!(
        common::scan_for(&base, WORD).len() >= 3,
        "store, backup, leftovers"
    );
    let args = ["forget", "--session", &FSID[..8], "--yes"];
    let spawn_forget = |home: &Path| {
        let mut c = command(env!("CARGO_BIN_EXE_memctl"), home);
        c.args(args).stdin(Stdio::null());
        c.spawn().expect("spawn forget")
    };
    let measure = dir.path().join("measure");
    copy_tree(&base, &measure);
    let start = Instant::now();
    let out = spawn_forget(&measure).wait_with_output().expect("wait");
    let took = start.elapsed();
    assert!(out.status.success(), "forget to completion: {out:?}");
    println!("forget: {took:?} to completion");

    let mut rng = seed;
    // [killed before the removal committed, after it, finished on its own]
    let mut landed = [0u32; 3];
    for i in 0..trials {
        let delay = Duration::from_micros(next(&mut rng) % took.as_micros().max(1) as u64);
        let what = format!("forget trial {i} (seed {seed:#x}): killed after {delay:?}");
        let home = dir.path().join(format!("forget-{i}"));
        copy_tree(&base, &home);
        let mut child = spawn_forget(&home);
        std::thread::sleep(delay);
        let running = child.try_wait().expect("try_wait").is_none();
        child.kill().expect("SIGKILL");
        let status = child.wait().expect("wait");
        assert!(running || status.success(), "{what}: exited with {status}");
        // The next command finishes what the kill left.
        let out = memctl(&home, &["status"]);
        assert!(out.status.success(), "{what}: status: {out:?}");
        let listed = memctl(&home, &["sessions"]);
        let committed = !String::from_utf8_lossy(&listed.stdout).contains(&FSID[..8]);
        landed[if !running {
            2
        } else if committed {
            1
        } else {
            0
        }] += 1;
        if !committed {
            // Nothing was removed: nothing lost either; the forget run again finishes.
            assert!(
                common::scan_for(&home, WORD)
                    .iter()
                    .any(|(p, _)| p.ends_with("memctl.redb")),
                "{what}: the store still holds the text"
            );
            let out = spawn_forget(&home).wait_with_output().expect("wait");
            assert!(out.status.success(), "{what}: forget again: {out:?}");
        }
        let left = common::scan_for(&home, WORD);
        assert!(left.is_empty(), "{what}: forgotten text on disk: {left:?}");
        check(&home, &what);
        for p in [&partial, &init] {
            assert!(!home.join(p).exists(), "{what}: {} left", p.display());
        }
        std::fs::remove_dir_all(&home).expect("clean up");
    }
    println!(
        "forget trials: {} killed before the removal committed, {} after it, {} finished on \
         their own; in every one the data dir held no byte of the text afterwards and check passed",
        landed[0], landed[1], landed[2]
    );
}
