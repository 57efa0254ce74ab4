//! `memctl install` over real settings files in temp dirs: the merge, the file chosen, the
//! data dir in the commands, the status line, the double-install check.

use super::command::{InstallArgs, InstallEnv, Scope, run};
use super::sources::Found;
use super::*;

/// Settings file contents as typed JSON for assertions.
fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("settings file")).expect("json")
}

fn hook_command(v: &Value, event: &str) -> String {
    #[derive(Deserialize)]
    struct File {
        hooks: std::collections::BTreeMap<String, Vec<MatcherGroup>>,
    }
    let f: File = serde_json::from_value(v.clone()).expect("settings shape");
    let ours: Vec<String> = f.hooks[event]
        .iter()
        .flat_map(|g| g.hooks.iter())
        .filter(|e| is_ours(e))
        .map(|e| e.command.clone())
        .collect();
    assert_eq!(ours.len(), 1, "{event}: {ours:?}");
    ours[0].clone()
}

fn status_command(path: &Path) -> Option<String> {
    load(path)
        .expect("settings")
        .status_command()
        .map(str::to_string)
}

pub(super) struct Fixture {
    _tmp: tempfile::TempDir,
    pub(super) env: InstallEnv,
}

impl Fixture {
    /// A home, a project and a bin dir holding (empty, executable) `memctl` and `memctl-hook`;
    /// `on_path`: whether PATH holds the bin dir.
    pub(super) fn new(on_path: bool) -> Self {
        let tmp = tempfile::tempdir().expect("tempdir");
        let bin = tmp.path().join("bin");
        std::fs::create_dir_all(&bin).expect("bin");
        for name in ["memctl", HOOK_BIN] {
            let p = bin.join(name);
            std::fs::write(&p, b"#!/bin/sh\n").expect("bin file");
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755))
                    .expect("chmod");
            }
        }
        let project = tmp.path().join("proj");
        std::fs::create_dir_all(&project).expect("project");
        let path_var = if on_path {
            bin.clone()
        } else {
            tmp.path().join("elsewhere")
        };
        let env = InstallEnv {
            claude_dir: Some(tmp.path().join("home/.claude")),
            codex_home: Some(tmp.path().join("home/.codex")),
            gemini_dir: Some(tmp.path().join("home/.gemini")),
            project_dir: project,
            path_var: Some(path_var.into_os_string()),
            bin_dir: bin,
            data_dir: None,
            launcher_dirs: Vec::new(),
        };
        Self { _tmp: tmp, env }
    }

    fn file(&self, scope: Scope) -> PathBuf {
        self.env.settings_file(scope).expect("settings path")
    }

    pub(super) fn run(&self, a: &InstallArgs, add: bool) -> Result<String> {
        let mut out = Vec::new();
        run(a, add, &self.env, &mut out)?;
        Ok(String::from_utf8(out).expect("utf8"))
    }
}

pub(super) fn args() -> InstallArgs {
    InstallArgs {
        agent: crate::agent::Agent::ClaudeCode,
        project: false,
        local: false,
        user: false,
        statusline: false,
        force: false,
        dry_run: false,
        claude_md: false,
    }
}

#[test]
fn merge_is_idempotent_and_preserves_other_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    std::fs::write(
        &path,
        r#"{"model":"x","hooks":{"PreCompact":[{"hooks":[{"type":"command","command":"other.sh","timeout":3}]}],"Stop":[{"hooks":[{"type":"command","command":"stop.sh"}]}]}}"#,
    )
    .unwrap();
    let hook = Invocation {
        bin: "/opt/memctl/memctl-hook".into(),
        data_dir: None,
    };
    let mut s = load(&path).unwrap();
    s.merge_hooks(&hook).unwrap();
    let text = s.text().unwrap();
    write_atomic(&path, &text).unwrap();
    let mut again = load(&path).unwrap();
    again.merge_hooks(&hook).unwrap();
    assert_eq!(
        text,
        again.text().unwrap(),
        "second install must change nothing"
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["model"], "x");
    assert_eq!(v["hooks"]["Stop"][0]["hooks"][0]["command"], "stop.sh");
    assert_eq!(
        v["hooks"]["PreCompact"][0]["hooks"][0]["command"],
        "other.sh"
    );
    assert_eq!(
        hook_command(&v, "PreCompact"),
        "/opt/memctl/memctl-hook PreCompact"
    );
    assert_eq!(installed(&path).unwrap().len(), EVENTS.len());
    let mut un = load(&path).unwrap();
    un.remove_hooks().unwrap();
    let v: Value = serde_json::from_str(&un.text().unwrap()).unwrap();
    assert_eq!(
        v["hooks"]["PreCompact"][0]["hooks"][0]["command"],
        "other.sh"
    );
    assert!(v["hooks"].get("UserPromptSubmit").is_none());
    assert_eq!(v["model"], "x");
}

#[test]
fn invalid_settings_are_refused_not_overwritten() {
    let f = Fixture::new(true);
    let path = f.file(Scope::Project);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "{not json").unwrap();
    let e = f.run(&args(), true).expect_err("invalid JSON");
    assert!(
        format!("{e:#}").contains("not valid settings JSON"),
        "{e:#}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{not json");
}

#[test]
fn a_binary_on_path_is_named_bare_and_goes_to_the_shared_settings() {
    let f = Fixture::new(true);
    let out = f.run(&args(), true).expect("install");
    assert!(out.contains("installed hooks in"), "{out}");
    let v = read(&f.file(Scope::Project));
    assert_eq!(hook_command(&v, "SessionStart"), "memctl-hook SessionStart");
    assert!(!f.file(Scope::Local).exists());
    let again = f.run(&args(), true).expect("again");
    assert!(again.contains("already installed"), "{again}");
}

#[test]
fn a_machine_path_goes_to_the_local_settings_unless_project_is_forced() {
    let f = Fixture::new(false);
    // A dry run prints the settings alone (valid JSON) and writes nothing.
    let dry = f
        .run(
            &InstallArgs {
                dry_run: true,
                ..args()
            },
            true,
        )
        .expect("dry run");
    let v: Value = serde_json::from_str(&dry).expect("dry run output is the settings JSON");
    assert!(hook_command(&v, "SessionStart").ends_with("memctl-hook SessionStart"));
    assert!(!f.file(Scope::Local).exists());
    let out = f.run(&args(), true).expect("install");
    assert!(out.contains("settings.local.json"), "{out}");
    assert!(
        !f.file(Scope::Project).exists(),
        "the shared file is untouched"
    );
    let cmd = hook_command(&read(&f.file(Scope::Local)), "PreCompact");
    assert_eq!(
        cmd,
        format!("{} PreCompact", f.env.bin_dir.join(HOOK_BIN).display())
    );

    let forced = InstallArgs {
        project: true,
        ..args()
    };
    let out = f.run(&forced, true).expect("install --project");
    assert!(out.contains("usually committed"), "{out}");
    assert!(hook_command(&read(&f.file(Scope::Project)), "SessionEnd").starts_with('/'));
}

#[test]
fn data_dir_is_carried_into_every_hook_command() {
    let mut f = Fixture::new(true);
    let data = f.env.project_dir.join("my data");
    f.env.data_dir = Some(data.clone());
    f.run(&args(), true).expect("install");
    // A data dir is a machine path: the local file, whatever the binary's name.
    let v = read(&f.file(Scope::Local));
    for ev in EVENTS {
        assert_eq!(
            hook_command(&v, ev.as_str()),
            format!(
                "memctl-hook --data-dir '{}' {}",
                data.display(),
                ev.as_str()
            )
        );
    }
    // Words as sh splits them: the hook gets the data dir as one argument.
    let words = shlex::split(&hook_command(&v, "SessionEnd")).expect("shell words");
    assert_eq!(
        words,
        [
            "memctl-hook",
            "--data-dir",
            &data.display().to_string(),
            "SessionEnd"
        ]
    );
}

#[test]
fn local_is_honoured_and_uninstall_cleans_both_project_files() {
    let f = Fixture::new(true);
    f.run(
        &InstallArgs {
            local: true,
            ..args()
        },
        true,
    )
    .expect("--local");
    assert!(f.file(Scope::Local).exists());
    assert!(!f.file(Scope::Project).exists());
    f.run(&args(), true).expect("shared too");
    assert_eq!(
        installed(&f.file(Scope::Project)).unwrap().len(),
        EVENTS.len()
    );
    let out = f.run(&args(), false).expect("uninstall");
    assert_eq!(out.matches("removed hooks from").count(), 2, "{out}");
    assert!(installed(&f.file(Scope::Project)).unwrap().is_empty());
    assert!(installed(&f.file(Scope::Local)).unwrap().is_empty());
}

#[test]
fn the_status_line_is_set_in_user_settings_and_never_clobbered_without_force() {
    let f = Fixture::new(true);
    let user = f.file(Scope::User);
    let with = InstallArgs {
        statusline: true,
        ..args()
    };
    f.run(&with, true).expect("statusline");
    assert_eq!(status_command(&user).as_deref(), Some("memctl statusline"));
    let v = read(&user);
    assert_eq!(v["statusLine"]["type"], "command");
    assert!(
        v.get("hooks").is_none(),
        "hooks went to the project, not the user"
    );

    // Someone else's status line: refused, nothing written (not even the hooks).
    std::fs::write(
        &user,
        r#"{"statusLine":{"type":"command","command":"~/bin/line.sh","padding":1},"theme":"dark"}"#,
    )
    .unwrap();
    std::fs::remove_file(f.file(Scope::Project)).unwrap();
    let e = f.run(&with, true).expect_err("would clobber");
    let msg = format!("{e:#}");
    assert!(
        msg.contains("~/bin/line.sh") && msg.contains("--force"),
        "{msg}"
    );
    assert_eq!(status_command(&user).as_deref(), Some("~/bin/line.sh"));
    assert!(!f.file(Scope::Project).exists());

    let forced = InstallArgs {
        force: true,
        ..with
    };
    f.run(&forced, true).expect("--force");
    let v = read(&user);
    assert_eq!(v["statusLine"]["command"], "memctl statusline");
    assert_eq!(v["statusLine"]["padding"], 1, "its other keys are kept");
    assert_eq!(v["theme"], "dark");

    let off = InstallArgs {
        statusline: true,
        ..args()
    };
    f.run(&off, false).expect("uninstall --statusline");
    assert_eq!(status_command(&user), None);
    assert_eq!(read(&user)["theme"], "dark");
}

#[test]
fn the_status_line_carries_the_data_dir() {
    let mut f = Fixture::new(false);
    f.env.data_dir = Some(PathBuf::from("/srv/mem"));
    f.run(
        &InstallArgs {
            statusline: true,
            user: true,
            ..args()
        },
        true,
    )
    .expect("install --user --statusline");
    let cmd = status_command(&f.file(Scope::User)).expect("status line");
    assert_eq!(
        cmd,
        format!(
            "{} --data-dir /srv/mem statusline",
            f.env.bin_dir.join("memctl").display()
        )
    );
    assert!(is_our_statusline(&cmd));
    assert!(!is_our_statusline("~/bin/line.sh statusline-ish"));
}

#[test]
fn hooks_in_two_places_are_reported_and_identical_ones_told_apart() {
    let f = Fixture::new(true);
    assert_eq!(Found::scan(&f.env).double_install(), None);
    f.run(&args(), true).expect("project");
    assert_eq!(Found::scan(&f.env).double_install(), None);
    f.run(
        &InstallArgs {
            user: true,
            ..args()
        },
        true,
    )
    .expect("user");
    let d = Found::scan(&f.env).double_install().expect("two places");
    assert!(d.identical, "the same bare commands: {d:?}");
    assert_eq!(d.places.len(), 2);

    // A different command (another binary path) in the local file: they would all run.
    let mut other = load(&f.file(Scope::Local)).unwrap();
    other
        .merge_hooks(&Invocation {
            bin: "/opt/old/memctl-hook".into(),
            data_dir: None,
        })
        .unwrap();
    write_atomic(&f.file(Scope::Local), &other.text().unwrap()).unwrap();
    let d = Found::scan(&f.env).double_install().expect("three places");
    assert!(!d.identical);
    assert!(
        d.message().contains("archived and restored twice"),
        "{}",
        d.message()
    );

    // The plugin alone next to one installed file: a double install too.
    f.run(&args(), false).expect("uninstall project files");
    let user = f.file(Scope::User);
    let mut s = load(&user).unwrap();
    s.enabled_plugins =
        Some(serde_json::from_str(r#"{"memctl@memctl": true, "x@y": true}"#).unwrap());
    write_atomic(&user, &s.text().unwrap()).unwrap();
    let d = Found::scan(&f.env).double_install().expect("user + plugin");
    assert!(!d.identical);
    assert!(
        d.places
            .iter()
            .any(|p| p.starts_with("plugin memctl@memctl")),
        "{d:?}"
    );
    f.run(
        &InstallArgs {
            user: true,
            ..args()
        },
        false,
    )
    .expect("uninstall user");
    assert_eq!(
        Found::scan(&f.env).double_install(),
        None,
        "the plugin alone is fine"
    );
}

#[test]
fn a_missing_binary_is_a_clear_error() {
    let f = Fixture::new(true);
    std::fs::remove_file(f.env.bin_dir.join(HOOK_BIN)).unwrap();
    let e = f.run(&args(), true).expect_err("no memctl-hook");
    assert!(format!("{e:#}").contains("memctl-hook not found"), "{e:#}");
}
