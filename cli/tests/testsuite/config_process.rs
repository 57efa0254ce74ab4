//! Config files as real processes: a user file and a project file in a temp dir, environment
//! overrides, `memctl config --json` showing each effective value and its source; a bad file
//! makes `memctl` exit 1 naming the file while `memctl-hook` exits 0 and uses the rest.

use crate::common;

use common::{SID, fixture};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// One entry of `memctl config --json`.
#[derive(Debug, Deserialize)]
struct Entry {
    key: String,
    variable: String,
    value: Option<String>,
    source: String,
    file: Option<PathBuf>,
    note: Option<String>,
    project_file: String,
}

/// One file of `memctl config path --json`.
#[derive(Debug, Deserialize)]
struct File {
    scope: String,
    path: PathBuf,
    exists: bool,
    from_env: bool,
}

struct World {
    tmp: tempfile::TempDir,
}

impl World {
    fn new() -> Self {
        Self {
            tmp: tempfile::tempdir().expect("tempdir"),
        }
    }
    fn data(&self) -> PathBuf {
        self.tmp.path().join("data")
    }
    fn xdg(&self) -> PathBuf {
        self.tmp.path().join("xdg")
    }
    fn proj(&self) -> PathBuf {
        self.tmp.path().join("proj")
    }
    fn user_file(&self) -> PathBuf {
        self.xdg().join("memctl/config.toml")
    }
    fn project_file(&self) -> PathBuf {
        self.proj().join(".memctl/config.toml")
    }
    fn write(&self, path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    /// The environment pointing at this world's files, plus `extra`.
    fn env(&self) -> Vec<(String, String)> {
        vec![
            ("XDG_CONFIG_HOME".into(), self.xdg().display().to_string()),
            (
                "CLAUDE_PROJECT_DIR".into(),
                self.proj().display().to_string(),
            ),
            ("MEMCTL_EMBEDDER".into(), "hash".into()),
        ]
    }
    fn memctl(&self, args: &[&str], extra: &[(&str, &str)]) -> std::process::Output {
        let env = self.env();
        let mut all: Vec<(&str, &str)> = env.iter().map(|(k, v)| (&**k, &**v)).collect();
        all.extend_from_slice(extra);
        common::memctl(&self.data(), args, b"", &all)
    }
    fn hook(&self, event: &str, payload: &[u8]) -> std::process::Output {
        let env = self.env();
        let all: Vec<(&str, &str)> = env.iter().map(|(k, v)| (&**k, &**v)).collect();
        common::hook(&self.data(), event, payload, &all)
    }
}

#[test]
fn config_json_shows_each_value_and_where_it_came_from() {
    let w = World::new();
    w.write(
        &w.user_file(),
        "# mine\nrestore_chars = 3000\nrecall = false\nsummarizer_cmd = \"llm -s x\"\nautopilot_warn = 60.5\n",
    );
    w.write(
        &w.project_file(),
        "recall_chars = 800\nrestore_chars = 3500\nmemory_dir = \"docs/memory\"\n",
    );
    let out = w.memctl(&["config", "--json"], &[("MEMCTL_RECALL_CHARS", "700")]);
    assert!(out.status.success(), "{out:?}");
    let entries: Vec<Entry> = serde_json::from_slice(&out.stdout).expect("config --json");
    let get = |k: &str| entries.iter().find(|e| e.key == k).expect(k);
    let user = Some(w.user_file());
    let project = Some(w.project_file());

    let e = get("restore_chars");
    assert_eq!(
        (e.value.as_deref(), &*e.source),
        (Some("3500"), "project_file")
    );
    assert_eq!((&e.file, &*e.variable), (&project, "MEMCTL_RESTORE_CHARS"));
    let e = get("recall");
    assert_eq!(
        (e.value.as_deref(), &*e.source, &e.file),
        (Some("false"), "user_file", &user)
    );
    let e = get("autopilot_warn");
    assert_eq!(
        (e.value.as_deref(), &*e.source),
        (Some("60.5"), "user_file")
    );
    let e = get("summarizer_cmd");
    assert_eq!(
        (e.value.as_deref(), &*e.project_file),
        (Some("llm -s x"), "refused")
    );
    let e = get("recall_chars");
    assert_eq!(
        (e.value.as_deref(), &*e.source, &e.file),
        (Some("700"), "environment", &None)
    );
    let e = get("memory_dir");
    let mem = w.proj().join("docs/memory").display().to_string();
    assert_eq!(
        (e.value.as_deref(), &*e.source),
        (Some(mem.as_str()), "project_file")
    );
    let e = get("home");
    let data = w.data().display().to_string();
    assert_eq!(
        (e.value.as_deref(), &*e.source),
        (Some(data.as_str()), "environment")
    );
    let e = get("embedder");
    assert_eq!(
        (e.value.as_deref(), &*e.source),
        (Some("hash"), "environment")
    );
    let e = get("hook_deadline_ms");
    assert_eq!((e.value.as_deref(), &*e.source), (None, "default"));
    assert_eq!(e.note.as_deref(), Some("per event"));
    let e = get("precompact_chars");
    assert_eq!((e.value.as_deref(), &*e.source), (Some("2000"), "default"));

    // The table says the same for people; `get` prints one value for scripts.
    let out = w.memctl(&["config"], &[]);
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let line = text
        .lines()
        .find(|l| l.starts_with("restore_chars "))
        .expect("row");
    assert!(
        line.contains("3500")
            && line.ends_with(&format!("project file {}", w.project_file().display())),
        "{text}"
    );
    let out = w.memctl(&["config", "get", "MEMCTL_RESTORE_CHARS"], &[]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "3500\n");
    let out = w.memctl(&["config", "get", "restore_char"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .starts_with("memctl: error: unknown key \"restore_char\"")
    );

    // `config path`: the files and whether they exist.
    let out = w.memctl(&["config", "path", "--json"], &[]);
    let files: Vec<File> = serde_json::from_slice(&out.stdout).expect("path --json");
    let got: Vec<_> = files
        .iter()
        .map(|f| (&*f.scope, &f.path, f.exists, f.from_env))
        .collect();
    assert_eq!(
        got,
        vec![
            ("user", &w.user_file(), true, false),
            ("project", &w.project_file(), true, false)
        ]
    );
    let own = w.tmp.path().join("own.toml");
    w.write(&own, "restore_chars = 1000\n");
    let own_s = own.display().to_string();
    let out = w.memctl(
        &["config", "get", "restore_chars", "--json"],
        &[("MEMCTL_CONFIG", &own_s)],
    );
    let e: Entry = serde_json::from_slice(&out.stdout).expect("get --json");
    // MEMCTL_CONFIG replaced the user file; the project file still wins over it.
    assert_eq!(
        (e.value.as_deref(), &*e.source),
        (Some("3500"), "project_file")
    );
    let out = w.memctl(&["config", "path"], &[("MEMCTL_CONFIG", &own_s)]);
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains(&format!("user     {own_s} (exists, from MEMCTL_CONFIG)"))
    );
}

#[test]
fn a_bad_file_fails_the_cli_and_the_hook_uses_the_rest() {
    let w = World::new();
    let t = w.tmp.path().join(format!("{SID}.jsonl"));
    std::fs::copy(fixture(), &t).expect("copy");
    let payload = |event: &str, extra: &str| {
        format!(
            r#"{{"session_id":"{SID}","transcript_path":"{}","cwd":"{}","hook_event_name":"{event}"{extra}}}"#,
            t.display(),
            w.proj().display()
        )
        .into_bytes()
    };
    let restore = |w: &World| {
        let out = w.hook(
            "SessionStart",
            &payload("SessionStart", r#","source":"compact""#),
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .expect("context")
            .chars()
            .count()
    };
    // Archive the session, and measure a restore with the defaults (4,000 chars at most).
    w.hook(
        "UserPromptSubmit",
        &payload("UserPromptSubmit", r#","prompt":"go on""#),
    );
    let full = restore(&w);
    assert!(
        full > 800,
        "the default restore is longer than the file's budget: {full}"
    );

    // A user file with a budget, and a project file with a typo and a refused key.
    w.write(&w.user_file(), "restore_chars = 800\n");
    w.write(
        &w.project_file(),
        "restore_char = 100\nsummarizer_cmd = \"sh -c evil\"\n",
    );
    let out = w.memctl(&["status"], &[]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    let p = w.project_file().display().to_string();
    assert!(
        err.contains(&format!(
            "memctl: error: {p}:1: unknown key \"restore_char\""
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "memctl: error: {p}:2: summarizer_cmd cannot be set in a project file"
        )),
        "{err}"
    );
    // `memctl config` still shows the table, then the errors, and exits 1.
    let out = w.memctl(&["config"], &[]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("restore_chars "));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown key \"restore_char\""));

    // The hook exits 0 (common::hook asserts it), logs the errors, and applies the user file.
    let short = restore(&w);
    assert!(short <= 800, "the user file's budget applies: {short}");
    let log = std::fs::read_to_string(w.data().join("logs/memctl.log")).expect("hook log");
    assert!(
        log.contains("restore_char") && log.contains("summarizer_cmd"),
        "{log}"
    );

    // Bad TOML in the user file: the CLI names file and line; the hook still works.
    w.write(&w.user_file(), "restore_chars = 800\nswap = \n");
    let out = w.memctl(&["status"], &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}:2: not valid TOML", w.user_file().display())),
        "{err}"
    );
    assert!(restore(&w) > 800, "nothing of an unparsable file applies");
}

/// `config get KEY` gives the key's value or an error about that key, never a value followed
/// by a failure: a bad value of another key is a warning only.
#[test]
fn config_get_fails_only_on_its_own_key() {
    let w = World::new();
    let out = w.memctl(
        &["config", "get", "restore_chars"],
        &[("MEMCTL_RESTORE_CHARS", "abc")],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty(), "no value beside the error");
    assert!(stderr.contains("MEMCTL_RESTORE_CHARS"), "{stderr}");

    let out = w.memctl(
        &["config", "get", "restore_chars"],
        &[("MEMCTL_RECALL", "maybe")],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "4000");
    assert!(
        stderr.contains("warning") && stderr.contains("MEMCTL_RECALL"),
        "{stderr}"
    );
}
