//! `memctl install` and the hook it writes, as real processes outside the checkout: binaries on
//! PATH are written by bare name into the shared settings; `--data-dir` reaches the hook, which
//! archives there; hooks installed twice are a warning at install and a doctor finding; a hook
//! binary that disappeared makes doctor exit 1.

use crate::common;
use crate::common::outside;

use common::{PROJECT, SID, fixture};
use memctl_cli::doctor::{Report, Status};
use outside::{Outside, text};

/// The model is not what these tests are about: hash vectors keep them fast, and doctor then
/// reports the runtime and model as warnings only.
const HASH: (&str, &str) = ("MEMCTL_EMBEDDER", "hash");

fn doctor(o: &Outside, args: &[&str]) -> (Option<i32>, Report) {
    let mut all = args.to_vec();
    all.extend(["doctor", "--json"]);
    let out = o.memctl(&all, &[HASH]);
    let (stdout, stderr) = text(&out);
    let r: Report = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("doctor --json ({e}): {stdout}\n{stderr}"));
    (out.status.code(), r)
}

fn status_of(r: &Report, name: &str) -> Option<Status> {
    r.checks.iter().find(|c| c.name == name).map(|c| c.status)
}

#[test]
fn the_hook_archives_into_the_data_dir_its_command_names() {
    let o = Outside::new();
    let data = o.path().join("data");
    let other = o.path().join("other");
    let payload = serde_json::json!({
        "session_id": SID,
        "transcript_path": fixture(),
        "cwd": PROJECT,
        "hook_event_name": "SessionEnd",
        "reason": "other",
    })
    .to_string();
    let d = data.to_str().expect("utf8");
    let out = o.run(
        "memctl-hook",
        &["--data-dir", d, "SessionEnd"],
        payload.as_bytes(),
        // The command's --data-dir wins over the environment's MEMCTL_HOME.
        &[HASH, ("MEMCTL_HOME", other.to_str().expect("utf8"))],
    );
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let out = o.memctl(&["--data-dir", d, "sessions"], &[HASH]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains(SID), "archived in --data-dir: {stdout}");
    assert!(
        !other.join("memctl.redb").exists(),
        "nothing in MEMCTL_HOME"
    );

    // A bad argument does not stop a hook: logged, exit 0, still archived.
    let out = o.run(
        "memctl-hook",
        &["--data-dir", d, "SessionEnd", "--bogus"],
        payload.as_bytes(),
        &[HASH],
    );
    assert_eq!(out.status.code(), Some(0));
    let log = std::fs::read_to_string(data.join("logs/memctl.log")).expect("log");
    assert!(log.contains("bad memctl-hook argument"), "{log}");
}

#[test]
fn install_writes_bare_names_and_doctor_finds_double_installs_and_missing_binaries() {
    let o = Outside::new();
    let project = o.proj().join(".claude/settings.json");
    // A dry run says which file it would write, and writes nothing.
    let out = o.memctl(&["install", "--dry-run"], &[HASH]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("would write {}", project.display())),
        "{stderr}"
    );
    assert!(stdout.contains("memctl-hook SessionStart") && !project.exists());
    let out = o.memctl(&["install"], &[HASH]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.contains(&format!("installed hooks in {}", project.display())),
        "{stdout}"
    );
    let text_of = |p: &std::path::Path| std::fs::read_to_string(p).expect("settings");
    assert!(text_of(&project).contains("\"memctl-hook SessionStart\""));
    assert!(
        !text_of(&project).contains(&o.path().display().to_string()),
        "no machine path"
    );

    let (code, r) = doctor(&o, &[]);
    assert_eq!(code, Some(0), "{r:#?}");
    assert_eq!(status_of(&r, "hooks.project"), Some(Status::Ok));
    assert_eq!(status_of(&r, "hooks.twice"), None);

    // The same commands at user level too: a warning (Claude Code runs identical ones once).
    let out = o.memctl(&["install", "--user"], &[HASH]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("memctl: warning:") && stderr.contains("identical"),
        "{stderr}"
    );
    let (code, r) = doctor(&o, &[]);
    assert_eq!(code, Some(0), "{r:#?}");
    assert_eq!(status_of(&r, "hooks.twice"), Some(Status::Warn));

    // Different commands (another data dir) in the local file: they would all run.
    let data = o.path().join("data");
    let d = data.to_str().expect("utf8");
    let out = o.memctl(&["--data-dir", d, "install", "--local"], &[HASH]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("archived and restored twice"), "{stderr}");
    let (code, r) = doctor(&o, &["--data-dir", d]);
    assert_eq!(code, Some(1), "{r:#?}");
    assert_eq!(status_of(&r, "hooks.twice"), Some(Status::Error));
    // The user and project hooks use the default data dir, not this one.
    assert_eq!(status_of(&r, "hooks.user"), Some(Status::Warn));

    for scope in ["--user", "--local"] {
        let out = o.memctl(&["uninstall", scope], &[HASH]);
        assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    }
    let (code, r) = doctor(&o, &[]);
    assert_eq!(code, Some(0), "{r:#?}");

    // The hook binary gone: the installed hooks are broken.
    std::fs::remove_file(o.bin().join("memctl-hook")).expect("remove memctl-hook");
    let (code, r) = doctor(&o, &[]);
    assert_eq!(code, Some(1), "{r:#?}");
    let c = r
        .checks
        .iter()
        .find(|c| c.name == "hooks.project")
        .expect("check");
    assert_eq!(c.status, Status::Error);
    assert!(c.detail.contains("binary missing: memctl-hook"), "{c:?}");
}

/// Every install command we document or print builds the versions CI tested: `cargo install`
/// ignores `Cargo.lock` unless told `--locked`, and resolves the newest semver-compatible
/// versions instead (the storage engine among them).
#[test]
fn every_documented_cargo_install_is_locked() {
    let root = memctl_test_support::repo_root();
    let mut files = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    let mut dirs = vec![
        root.join("docs"),
        root.join("plugin"),
        root.join("hooks/src"),
        root.join("cli/src"),
    ];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    let mut seen = 0;
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            // A command, not prose about the tool (`cargo install` finds ...).
            let commands = line.matches("cargo install -").count();
            if commands > 0 {
                seen += commands;
                assert_eq!(
                    line.matches("cargo install --locked").count(),
                    commands,
                    "{}:{}: an install command without --locked: {line}",
                    file.display(),
                    n + 1
                );
            }
        }
    }
    assert!(
        seen >= 2,
        "the README's install commands were not found ({seen})"
    );
}

#[test]
fn codex_and_gemini_installs_run_their_hook_and_reach_doctor() {
    let o = Outside::new();
    let out = o.memctl(&["install", "--agent", "codex"], &[HASH]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("/hooks"), "the trust note: {stdout}");
    let hooks = o.proj().join(".codex/hooks.json");
    let text_of = |p: &std::path::Path| std::fs::read_to_string(p).expect("file");
    assert!(text_of(&hooks).contains("\"memctl-hook --agent codex SessionStart\""));
    assert!(text_of(&o.proj().join(".codex/config.toml")).contains("[mcp_servers.memctl]"));
    assert!(
        !text_of(&hooks).contains(&o.path().display().to_string()),
        "no machine path in a project file"
    );
    let out = o.memctl(&["install", "--agent=gemini", "--user"], &[HASH]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let settings = o.home().join(".gemini/settings.json");
    assert!(text_of(&settings).contains("memctl-hook --agent gemini BeforeAgent"));

    // The command as written runs: a recorded Gemini CLI prompt payload through it.
    let payload = serde_json::json!({
        "session_id": "g1", "transcript_path": fixture(), "cwd": PROJECT,
        "hook_event_name": "BeforeAgent", "timestamp": "2026-11-28T07:10:54.347Z",
        "prompt": "hi",
    })
    .to_string();
    let out = o.run(
        "memctl-hook",
        &["--agent", "gemini", "BeforeAgent"],
        payload.as_bytes(),
        &[HASH],
    );
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));

    let (_, r) = doctor(&o, &[]);
    assert_eq!(status_of(&r, "hooks.codex"), Some(Status::Ok), "{r:?}");
    assert_eq!(status_of(&r, "hooks.gemini"), Some(Status::Ok), "{r:?}");
    assert!(
        !r.checks
            .iter()
            .any(|c| c.detail.contains("installed nowhere")),
        "{r:?}"
    );

    for args in [
        &["uninstall", "--agent", "codex"][..],
        &["uninstall", "--agent", "gemini", "--user"],
    ] {
        let out = o.memctl(args, &[HASH]);
        assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    }
    assert!(!text_of(&hooks).contains("memctl-hook"));
    assert!(!text_of(&settings).contains("memctl"));
    let (_, r) = doctor(&o, &[]);
    assert_eq!(status_of(&r, "hooks.codex"), None, "{r:?}");
}
