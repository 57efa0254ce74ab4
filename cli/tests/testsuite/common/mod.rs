//! Shared helpers for the process-level tests: run the real binaries with a payload on stdin.

pub mod outside;
pub mod ui;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub use memctl_test_support::sample_transcript as fixture;
pub use memctl_test_support::{PROJECT, SID};

/// The `memctl-hook` binary. It is built by its own package (`memctl-hooks`), so cargo gives
/// these tests no `CARGO_BIN_EXE_` for it: it sits beside `memctl` in the same target dir,
/// built by the workspace-wide test command (`cargo test --workspace`).
pub fn hook_bin() -> &'static str {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let p = Path::new(env!("CARGO_BIN_EXE_memctl")).with_file_name("memctl-hook");
        assert!(
            p.is_file(),
            "{} missing: build it with `cargo build --workspace --bins --profile test` (scripts/test.sh does)",
            p.display()
        );
        p.to_string_lossy().into_owned()
    })
}

/// Run `bin args` with `stdin` and extra environment; returns its output.
pub fn run(bin: &str, home: &Path, args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .env("MEMCTL_HOME", home)
        .env("MEMCTL_BACKGROUND_EMBED", "0")
        // These tests drive the store through UserPromptSubmit's archive (faults, spool,
        // budgets): archive inline, as every other event does. The default deferred archive
        // has its own tests (resident_process.rs) and runs in every e2e scenario.
        .env("MEMCTL_HOOK_INLINE_PROMPT_ARCHIVE", "1")
        // No detached resident embedder from tests that do not ask for one: it would start
        // while the test's temp dir is being deleted and keep the dir alive (seen in CI).
        .env("MEMCTL_RESIDENT", "0")
        // No user config file: the developer's `~/.config/memctl/config.toml` stays out
        // (a test that wants one passes XDG_CONFIG_HOME or MEMCTL_CONFIG in `env`).
        .env("XDG_CONFIG_HOME", home.join("no-config"))
        // Nor the machine's `memctl setup` (`$XDG_DATA_HOME/memctl`): the runtime and model
        // come from this checkout's scripts/setup.sh, found beside the executable.
        .env("XDG_DATA_HOME", home.join("no-install"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Tests must not depend on the developer's configuration.
    for k in [
        "MEMCTL_CONTEXT_WINDOW",
        "MEMCTL_AUTOPILOT_NOTE",
        "MEMCTL_AUTOPILOT_WARN",
        "MEMCTL_AUTOPILOT_CRITICAL",
        "MEMCTL_MEMORY",
        "MEMCTL_MEMORY_CHARS",
        "MEMCTL_SUMMARIZER_CMD",
        "MEMCTL_RESTORE_CHARS",
        "MEMCTL_RESTORE_ON_COMPACT",
        "MEMCTL_RESTORE_ON_RESUME",
        "MEMCTL_RESTORE_ON_CLEAR",
        "MEMCTL_RESTORE_ON_STARTUP",
        "CLAUDE_CONFIG_DIR",
        "MEMCTL_CONFIG",
        // The project file is looked up there (else in the test's working directory).
        "CLAUDE_PROJECT_DIR",
        // The CLI sets it for itself (scripts/test.sh sets it for the in-process tests).
        "ORT_DISABLE_TELEMETRY",
    ] {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin)
        .expect("write stdin");
    child.wait_with_output().expect("wait")
}

/// Run `memctl-hook <event>`; asserts the one exit policy (always 0).
pub fn hook(home: &Path, event: &str, stdin: &[u8], env: &[(&str, &str)]) -> Output {
    let out = run(hook_bin(), home, &[event], stdin, env);
    assert_eq!(out.status.code(), Some(0), "hooks always exit 0: {out:?}");
    out
}

/// Run `memctl args`.
pub fn memctl(home: &Path, args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Output {
    run(env!("CARGO_BIN_EXE_memctl"), home, args, stdin, env)
}

/// `memctl args` with the hash embedder: what the CLI does, not what the model finds (no model
/// load, so these tests stay fast).
pub fn memctl_hash(home: &Path, args: &[&str]) -> Output {
    memctl(home, args, b"", &[("MEMCTL_EMBEDDER", "hash")])
}

/// [`memctl_hash`], which must exit 0; its stdout.
pub fn ok_hash(home: &Path, args: &[&str]) -> String {
    let out = memctl_hash(home, args);
    assert!(out.status.success(), "memctl {args:?}: {out:?}");
    String::from_utf8(out.stdout).expect("utf-8")
}

/// A data dir `<tmp>/home` holding the sample transcript archived without model vectors (its
/// chunks wait for the embedder).
pub fn home_with_pending(tmp: &Path) -> PathBuf {
    let home = tmp.join("home");
    let fx = fixture();
    let fx = fx.to_str().expect("utf-8 path");
    let out = memctl(&home, &["ingest", "--no-embed", "--quiet", fx], b"", &[]);
    assert!(out.status.success(), "ingest: {out:?}");
    home
}

/// Assert that `child` still runs (`what` says what ending early means).
pub fn assert_running(child: &mut std::process::Child, what: &str) {
    assert!(child.try_wait().expect("try_wait").is_none(), "{what}");
}

/// Start the resident service as hooks do (`memctl embedder --background`: its bulk thread
/// embeds pending chunks at nice 19) on `home`, detached from the test's stdio; it exits
/// `idle_secs` after its last request or batch.
pub fn spawn_service(home: &Path, idle_secs: &str) -> std::process::Child {
    quiet_command(env!("CARGO_BIN_EXE_memctl"), home)
        .args(["embedder", "--background"])
        .env("MEMCTL_RESIDENT_IDLE_SECS", idle_secs)
        .stdin(Stdio::null())
        .spawn()
        .expect("spawn the resident service")
}

/// `bin` on `home` with no resident embedder, no user config, and no output to the test's
/// stdio (the caller sets stdin and spawns).
pub fn quiet_command(bin: &str, home: &Path) -> Command {
    let mut cmd = Command::new(bin);
    cmd.env("MEMCTL_HOME", home)
        .env("MEMCTL_RESIDENT", "0")
        .env("XDG_CONFIG_HOME", home.join("no-config"))
        .env("XDG_DATA_HOME", home.join("no-install"))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

/// A Claude Code transcript of `turns` turns in `project`: every fifth turn asks again what
/// turn 0 asked and gets the same answer (a repeated turn is stored as a link to the first
/// one's chunk), every third turn says `word`, and the others are distinct.
pub fn transcript_with_repeats(
    dir: &Path,
    sid: &str,
    project: &str,
    word: &str,
    turns: usize,
) -> PathBuf {
    let mut parent: Option<String> = None;
    let mut lines = Vec::new();
    for i in 0..turns {
        let (prompt, answer) = if i % 5 == 0 {
            (
                "Run the whole test suite again".to_string(),
                format!("All 212 tests pass; the {word} check is green."),
            )
        } else if i % 3 == 0 {
            (
                format!("Where does the {word} setting live? (step {i})"),
                format!("In config/settings.toml under [{word}], line {i}."),
            )
        } else {
            (
                format!("Refactor module_{i} to take a Config"),
                format!("Done: module_{i} now takes &Config and its {i} call sites pass it."),
            )
        };
        let at = |s: usize| format!("2026-03-04T{:02}:{:02}:{:02}.000Z", 8 + i / 60, i % 60, s);
        for (kind, ty, message, s) in [
            (
                "u",
                "user",
                serde_json::json!({"role": "user", "content": prompt}),
                0,
            ),
            (
                "a",
                "assistant",
                serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": answer}]}),
                5,
            ),
        ] {
            let uuid = format!("{sid}-{kind}{i}");
            lines.push(
                serde_json::json!({"parentUuid": parent, "isSidechain": false,
                    "userType": "external", "cwd": project, "sessionId": sid,
                    "version": "2.0.37", "type": ty, "message": message, "uuid": uuid,
                    "timestamp": at(s)})
                .to_string(),
            );
            parent = Some(uuid);
        }
    }
    let path = dir.join(format!("{sid}.jsonl"));
    std::fs::write(&path, lines.join("\n") + "\n").expect("write transcript");
    path
}

/// Every file under `dir` (recursively) holding `needle` in any of its cases (as typed,
/// lower, upper): `(file, occurrences)`.
pub fn scan_for(dir: &Path, needle: &str) -> Vec<(PathBuf, usize)> {
    let forms = [
        needle.to_string(),
        needle.to_lowercase(),
        needle.to_uppercase(),
    ];
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(ft) = entry.file_type() else { continue };
            if ft.is_dir() {
                stack.push(path);
            } else if ft.is_file() {
                let Ok(bytes) = std::fs::read(&path) else {
                    continue;
                };
                let n: usize = forms
                    .iter()
                    .map(|f| {
                        bytes
                            .windows(f.len())
                            .filter(|w| *w == f.as_bytes())
                            .count()
                    })
                    .sum();
                if n > 0 {
                    found.push((path, n));
                }
            }
        }
    }
    found
}

/// The vector counts of `memctl status --json`, by space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusVectors {
    /// Stored chunks.
    pub chunks: u64,
    /// Chunks with a vector of the model (`all-MiniLM-…`).
    pub model: u64,
    /// Chunks with a hash vector.
    pub hash: u64,
    /// Stale int8 index entries, every space.
    pub stale: u64,
}

/// [`StatusVectors`] of a parsed `memctl status --json`.
pub fn status_vectors(st: &serde_json::Value) -> StatusVectors {
    let mut v = StatusVectors {
        chunks: st["chunks"].as_u64().expect("chunks"),
        model: 0,
        hash: 0,
        stale: 0,
    };
    for x in st["vectors"].as_array().expect("vectors") {
        let n = x["count"].as_u64().expect("count");
        if x["embedder"]
            .as_str()
            .expect("key")
            .starts_with("all-MiniLM")
        {
            v.model += n;
        } else {
            v.hash += n;
        }
        v.stale += x["stale_index_entries"].as_u64().expect("stale");
    }
    v
}
