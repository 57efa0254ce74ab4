use super::keys::KNOWN_VARS;
use super::*;

use crate::restore::{MAX_RESTORE_CHARS, RestoreMode};
use crate::text::parse_bool;
use proptest::prelude::*;

fn load(vars: &[(&str, &str)]) -> Loaded {
    Settings::load(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())))
}

fn parse(vars: &[(&str, &str)]) -> Settings {
    let l = load(vars);
    assert!(l.errors.is_empty(), "{:?}", l.errors);
    l.settings
}

fn error(var: &str, value: &str) -> SettingsError {
    let l = load(&[(var, value)]);
    assert_eq!(l.errors.len(), 1, "{var}={value:?}: {:?}", l.errors);
    l.errors[0].clone()
}

#[test]
fn defaults_are_the_products() {
    let s = parse(&[]);
    assert_eq!(s.data_dir, PathBuf::from("./.local/share/memctl"));
    assert_eq!((s.home.as_ref(), s.project_dir.as_ref()), (None, None));
    assert_eq!(s.embed, EmbedSettings::default());
    assert_eq!(s.embed.embedder, EmbedderChoice::Onnx);
    assert_eq!(s.embed.ort_threads, 1);
    assert_eq!(s.embed.embed_threads, 2);
    assert!(s.embed.background);
    assert_eq!(s.restore.budget.max_chars, 4000);
    assert_eq!(s.restore.precompact_chars, 2000);
    assert_eq!(
        s.restore.sources,
        crate::restore::sources::RestoreSources::default()
    );
    assert_eq!(s.restore.claude_dir, None);
    let m = &s.restore.memory;
    assert_eq!((m.enabled, m.budget_chars, m.file_chars), (true, 1500, 600));
    assert_eq!(m.dir, None);
    assert_eq!(s.autopilot, AutopilotConfig::default());
    assert_eq!(s.autopilot.window_tokens, 200_000);
    assert!(!s.autopilot.note);
    assert!(!s.auto_prune.enabled);
    assert!(s.swap.enabled);
    assert_eq!(s.summarizer, ExternalConfig::default());
    assert_eq!(s.summarizer.timeout, Duration::from_secs(60));
    assert_eq!(s.hook.inline_bytes, 4 << 20);
    assert_eq!(s.hook.deadline_ms, None);
    assert_eq!(s.log, None);
}

#[test]
fn data_dir_order_is_home_then_xdg_then_home_dir() {
    let all = [
        ("MEMCTL_HOME", "/m"),
        ("XDG_DATA_HOME", "/x"),
        ("HOME", "/h"),
    ];
    let s = parse(&all);
    assert_eq!(s.data_dir, PathBuf::from("/m"));
    assert_eq!(s.home, Some(PathBuf::from("/m")));
    assert_eq!(parse(&all[1..]).data_dir, PathBuf::from("/x/memctl"));
    assert_eq!(
        parse(&all[2..]).data_dir,
        PathBuf::from("/h/.local/share/memctl")
    );
    // Empty is unset.
    let s = parse(&[("MEMCTL_HOME", ""), ("XDG_DATA_HOME", ""), ("HOME", "/h")]);
    assert_eq!(s.data_dir, PathBuf::from("/h/.local/share/memctl"));
    assert_eq!(s.home, None);
}

#[test]
fn every_knob_parses() {
    let s = parse(&[
        ("CLAUDE_PROJECT_DIR", "/proj"),
        ("MEMCTL_EMBEDDER", "hash"),
        ("ORT_DYLIB_PATH", "/ort/lib.so"),
        ("MEMCTL_MODEL_DIR", "/models/m"),
        ("MEMCTL_ORT_THREADS", "3"),
        ("MEMCTL_EMBED_THREADS", "1"),
        ("MEMCTL_BACKGROUND_EMBED", "0"),
        ("MEMCTL_RESTORE_CHARS", "10000"),
        ("MEMCTL_PRECOMPACT_CHARS", " 1200 "),
        ("MEMCTL_RESTORE_ON_STARTUP", "yes"),
        ("MEMCTL_RESTORE_ON_CLEAR", "Full"),
        ("MEMCTL_RESTORE_ON_RESUME", "brief"),
        ("MEMCTL_RESTORE_ON_COMPACT", "off"),
        ("HOME", "/home/u"),
        ("MEMCTL_MEMORY", "off"),
        ("MEMCTL_MEMORY_CHARS", "900"),
        ("MEMCTL_MEMORY_FILE_CHARS", "120"),
        ("MEMCTL_MEMORY_DIR", "/mem"),
        ("MEMCTL_CONTEXT_WINDOW", "1000000"),
        ("MEMCTL_AUTOPILOT_WARN", "60.5"),
        ("MEMCTL_AUTOPILOT_CRITICAL", "90"),
        ("MEMCTL_AUTOPILOT_NOTE", "TRUE"),
        ("MEMCTL_AUTO_PRUNE", "on"),
        ("MEMCTL_SWAP", "false"),
        ("MEMCTL_SUMMARIZER_CMD", "llm -s summarise"),
        ("MEMCTL_SUMMARIZER_TIMEOUT_SECS", "5"),
        ("MEMCTL_HOOK_INLINE_BYTES", "0"),
        ("MEMCTL_HOOK_DEADLINE_MS", "250"),
        ("MEMCTL_LOG", "debug"),
    ]);
    assert_eq!(s.project_dir.as_deref(), Some("/proj"));
    assert_eq!(s.embed.embedder, EmbedderChoice::Hash);
    assert_eq!(s.embed.ort_dylib, Some(PathBuf::from("/ort/lib.so")));
    assert_eq!(s.embed.model_dir, Some(PathBuf::from("/models/m")));
    assert_eq!(s.embed.ort_threads, 3);
    assert!(!s.embed.background);
    assert_eq!(s.restore.budget.max_chars, 10_000);
    assert_eq!(s.restore.precompact_chars, 1200);
    let src = &s.restore.sources;
    assert_eq!(
        (src.startup, src.clear, src.resume, src.compact),
        (
            RestoreMode::Full,
            RestoreMode::Full,
            RestoreMode::Brief,
            RestoreMode::Off
        )
    );
    assert_eq!(s.restore.claude_dir, Some(PathBuf::from("/home/u/.claude")));
    let m = &s.restore.memory;
    assert_eq!((m.enabled, m.budget_chars, m.file_chars), (false, 900, 120));
    assert_eq!(m.dir, Some(PathBuf::from("/mem")));
    assert_eq!(s.autopilot.window_tokens, 1_000_000);
    assert!((s.autopilot.warn_pct - 60.5).abs() < f32::EPSILON);
    assert!((s.autopilot.critical_pct - 90.0).abs() < f32::EPSILON);
    assert!(s.autopilot.note);
    assert!(s.auto_prune.enabled);
    assert!(!s.swap.enabled);
    assert_eq!(s.summarizer.command.as_deref(), Some("llm -s summarise"));
    assert_eq!(s.summarizer.timeout, Duration::from_secs(5));
    assert_eq!(s.hook.inline_bytes, 0);
    assert_eq!(s.hook.deadline_ms, Some(250));
    assert_eq!(s.log.as_deref(), Some("debug"));
    // The config structs built from it carry the same values.
    let o = crate::EngineOptions::from_settings(&s);
    assert!(o.model_disabled);
    assert_eq!(o.onnx.intra_threads, 3);
    // Bulk commands run on the bulk threads; queries keep MEMCTL_ORT_THREADS.
    assert_eq!(s.embed.embed_threads, 1);
    assert_eq!(o.clone().for_bulk(&s).onnx.intra_threads, 1);
    assert_eq!(o.onnx.model_dir, PathBuf::from("/models/m"));
    assert_eq!(o.onnx.dylib_path, PathBuf::from("/ort/lib.so"));
    let h = crate::hooks::HookConfig::from_settings(&s);
    assert_eq!(h.inline_bytes, 0);
    assert!(!h.swap.enabled && h.auto_prune.enabled);
    assert_eq!(h.restore.sources.startup, RestoreMode::Full);
    assert_eq!(h.restore.memory.dir, Some(PathBuf::from("/mem")));
}

#[test]
fn embedder_names() {
    for (v, want) in [
        ("onnx", EmbedderChoice::Onnx),
        ("Model", EmbedderChoice::Onnx),
        ("HASH", EmbedderChoice::Hash),
    ] {
        assert_eq!(parse(&[("MEMCTL_EMBEDDER", v)]).embed.embedder, want);
    }
    assert_eq!(
        error("MEMCTL_EMBEDDER", "bert"),
        SettingsError::UnknownValue {
            var: "MEMCTL_EMBEDDER",
            value: "bert".into(),
            expected: "onnx, hash",
        }
    );
}

#[test]
fn each_kind_of_bad_value_is_an_error_naming_the_variable() {
    assert_eq!(
        error("MEMCTL_RESTORE_CHARS", "lots"),
        SettingsError::NotNumber {
            var: "MEMCTL_RESTORE_CHARS",
            value: "lots".into()
        }
    );
    let e = error("MEMCTL_RESTORE_CHARS", "20000");
    assert!(matches!(
        e,
        SettingsError::OutOfRange {
            var: "MEMCTL_RESTORE_CHARS",
            ..
        }
    ));
    assert_eq!(
        e.to_string(),
        "invalid MEMCTL_RESTORE_CHARS=\"20000\": out of range (allowed: 0..=10000)"
    );
    assert_eq!(
        error("MEMCTL_SWAP", "maybe").to_string(),
        "invalid MEMCTL_SWAP=\"maybe\": not a boolean (use 1/0, true/false, yes/no or on/off)"
    );
    for (var, value) in [
        ("MEMCTL_RESTORE_CHARS", "-1"),
        ("MEMCTL_PRECOMPACT_CHARS", "10001"),
        ("MEMCTL_MEMORY_CHARS", "4e3"),
        ("MEMCTL_MEMORY_FILE_CHARS", "x"),
        ("MEMCTL_ORT_THREADS", "0"),
        ("MEMCTL_EMBED_THREADS", "0"),
        ("MEMCTL_CONTEXT_WINDOW", "0"),
        ("MEMCTL_AUTOPILOT_WARN", "101"),
        ("MEMCTL_AUTOPILOT_CRITICAL", "NaN"),
        ("MEMCTL_SUMMARIZER_TIMEOUT_SECS", "0"),
        ("MEMCTL_HOOK_INLINE_BYTES", "4MiB"),
        ("MEMCTL_HOOK_DEADLINE_MS", "0"),
        ("MEMCTL_BACKGROUND_EMBED", "2"),
        ("MEMCTL_RESTORE_ON_STARTUP", "y"),
        ("MEMCTL_RESTORE_ON_CLEAR", "some"),
        ("MEMCTL_MEMORY", "disabled"),
        ("MEMCTL_AUTOPILOT_NOTE", "enable"),
        ("MEMCTL_AUTO_PRUNE", "01"),
    ] {
        let e = error(var, value);
        assert_eq!(e.var(), Some(var));
        assert!(
            e.to_string().contains(var) && e.to_string().contains(value),
            "{e}"
        );
    }
}

#[test]
fn a_bad_value_keeps_its_default_and_the_strict_parse_fails() {
    let vars = [
        ("MEMCTL_RESTORE_CHARS", "99999"),
        ("MEMCTL_SWAP", "nope"),
        ("MEMCTL_PRECOMPACT_CHARS", "1500"),
    ];
    let l = load(&vars);
    assert_eq!(l.errors.len(), 2);
    assert_eq!(l.settings.restore.budget.max_chars, 4000);
    assert!(l.settings.swap.enabled);
    assert_eq!(
        l.settings.restore.precompact_chars, 1500,
        "good knobs still apply"
    );
    let strict = Settings::from_vars(vars.map(|(k, v)| (k.to_string(), v.to_string())));
    assert_eq!(strict.unwrap_err().var(), Some("MEMCTL_RESTORE_CHARS"));
}

#[cfg(unix)]
#[test]
fn non_utf8_values_are_errors_except_for_paths() {
    use std::os::unix::ffi::OsStringExt;
    let bad = OsString::from_vec(vec![b'/', 0xff, b'x']);
    let l = Settings::load([
        (OsString::from("MEMCTL_HOME"), bad.clone()),
        (OsString::from("MEMCTL_SWAP"), bad.clone()),
    ]);
    assert_eq!(l.settings.data_dir, PathBuf::from(bad));
    assert_eq!(
        l.errors,
        vec![SettingsError::NotUnicode { var: "MEMCTL_SWAP" }]
    );
}

#[test]
fn unknown_memctl_variables_are_reported_not_fatal() {
    let l = load(&[
        ("MEMCTL_RESTORE_CHAR", "3000"),
        ("MEMCTL_BIN", "/x/memctl"),
        ("MEMCTL_E2E_KEEP", "1"),
        ("MEMCTL_RECALL_N", "10"),
        ("PATH", "/bin"),
        ("MEMCTL_ZZZ", "1"),
        ("MEMCTL_ZZZ", "2"),
    ]);
    assert!(l.errors.is_empty());
    assert_eq!(
        l.unknown,
        vec!["MEMCTL_RECALL_N", "MEMCTL_RESTORE_CHAR", "MEMCTL_ZZZ"]
    );
    assert!(Settings::from_vars([("MEMCTL_ZZZ", "1")]).is_ok());
}

#[test]
fn the_later_pair_wins() {
    // How a future config file plugs in: its pairs first, the environment after.
    let s = parse(&[
        ("MEMCTL_RESTORE_CHARS", "3000"),
        ("MEMCTL_RESTORE_CHARS", "5000"),
    ]);
    assert_eq!(s.restore.budget.max_chars, 5000);
}

#[test]
fn every_known_variable_is_read() {
    // A knob listed in KNOWN_VARS must be parsed: a bad value for it is an error (paths and
    // free text excepted, they accept anything).
    let free = [
        "MEMCTL_HOME",
        "MEMCTL_MODEL_DIR",
        "MEMCTL_MEMORY_DIR",
        "MEMCTL_SUMMARIZER_CMD",
        "MEMCTL_LOG",
        "MEMCTL_TEAM_URL",
        "MEMCTL_TEAM_URL_FILE",
        "MEMCTL_TEAM_CA_FILE",
    ];
    // MEMCTL_CONFIG names a file: read by `load_layered` (tests_file.rs), not a knob.
    for var in KNOWN_VARS
        .iter()
        .filter(|v| **v != "MEMCTL_CONFIG" && !free.contains(v))
    {
        let l = load(&[(var, "?")]);
        assert_eq!(l.errors.len(), 1, "{var}");
        assert!(l.unknown.is_empty());
    }
}

fn random_case(s: &str, mask: u64) -> String {
    s.chars()
        .enumerate()
        .map(|(i, c)| {
            if mask >> (i % 64) & 1 == 1 {
                c.to_ascii_uppercase()
            } else {
                c
            }
        })
        .collect()
}

proptest! {
    #[test]
    fn boolean_rule(idx in 0usize..8, mask in any::<u64>(), pad in "[ \t]{0,2}") {
        let (word, want) = [
            ("1", true), ("true", true), ("yes", true), ("on", true),
            ("0", false), ("false", false), ("no", false), ("off", false),
        ][idx];
        let v = format!("{pad}{}{pad}", random_case(word, mask));
        prop_assert_eq!(parse_bool(&v), Some(want));
        let s = parse(&[("MEMCTL_SWAP", &v), ("MEMCTL_AUTO_PRUNE", &v)]);
        prop_assert_eq!((s.swap.enabled, s.auto_prune.enabled), (want, want));
    }

    #[test]
    fn anything_else_is_not_a_boolean(v in "\\PC{1,12}") {
        let accepted = ["1", "0", "true", "false", "yes", "no", "on", "off"];
        prop_assume!(!accepted.contains(&v.trim().to_ascii_lowercase().as_str()));
        prop_assert_eq!(parse_bool(&v), None);
        let l = load(&[("MEMCTL_AUTOPILOT_NOTE", &v)]);
        if v.is_empty() {
            prop_assert!(l.errors.is_empty());
        } else {
            let is_not_bool = matches!(&l.errors[..], [SettingsError::NotBool { var: "MEMCTL_AUTOPILOT_NOTE", .. }]);
            prop_assert!(is_not_bool, "{:?}", l.errors);
        }
    }

    #[test]
    fn restore_chars_in_range_parse_and_beyond_fail(n in 0usize..30_000) {
        let l = load(&[("MEMCTL_RESTORE_CHARS", &n.to_string())]);
        if n <= MAX_RESTORE_CHARS {
            prop_assert_eq!(l.settings.restore.budget.max_chars, n);
            prop_assert!(l.errors.is_empty());
        } else {
            prop_assert_eq!(l.settings.restore.budget.max_chars, 4000);
            prop_assert_eq!(l.errors.len(), 1);
        }
    }
}

/// Claude Code's folder (where its auto-memory lives, which restores do not repeat):
/// `CLAUDE_CONFIG_DIR` when set, else `$HOME/.claude`, else unknown.
#[test]
fn claude_dir_prefers_claude_config_dir() {
    let s = parse(&[("HOME", "/home/u"), ("CLAUDE_CONFIG_DIR", "/cfg/claude")]);
    assert_eq!(s.restore.claude_dir, Some(PathBuf::from("/cfg/claude")));
    let s = parse(&[("HOME", "/home/u")]);
    assert_eq!(s.restore.claude_dir, Some(PathBuf::from("/home/u/.claude")));
    assert_eq!(parse(&[]).restore.claude_dir, None);
}

/// The README's configuration part names every variable and file key memctl reads, and the
/// keys a project file may not set (KNOWN_VARS is the list it is written from).
#[test]
fn the_readme_documents_every_variable() {
    let readme = include_str!("../../../README.md");
    let config = &readme[readme
        .find("## Configuration")
        .expect("a Configuration part")..];
    for var in KNOWN_VARS.iter().chain(&["ORT_DYLIB_PATH"]) {
        assert!(config.contains(&format!("`{var}`")), "README misses {var}");
    }
    for k in KEYS {
        if let ProjectRule::Refused(_) = k.project {
            assert!(
                config.contains(&format!("`{}`", k.name)),
                "README misses that a project file cannot set {}",
                k.name
            );
        }
    }
    assert!(config.contains("memctl config"));
}

#[test]
fn bulk_threads_are_capped_at_the_available_cores() {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let s = parse(&[("MEMCTL_EMBED_THREADS", "4096")]);
    assert_eq!(s.embed.embed_threads, 4096);
    assert_eq!(s.embed.bulk_threads(), cores);
    let d = parse(&[]);
    assert_eq!(d.embed.bulk_threads(), 2.min(cores));
    let o = crate::EngineOptions::from_settings(&d);
    assert_eq!(o.onnx.intra_threads, 1, "queries stay on one thread");
    assert_eq!(o.for_bulk(&d).onnx.intra_threads, 2.min(cores));
}

#[test]
fn a_background_embedder_leaves_one_core_to_the_user() {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let d = parse(&[]);
    // Never every core (at least one thread), never more than the bulk threads.
    let want = d.embed.bulk_threads().min(cores.saturating_sub(1)).max(1);
    assert_eq!(d.embed.background_threads(), want);
    assert!(d.embed.background_threads() >= 1);
    assert!(cores == 1 || d.embed.background_threads() < cores);
    let many = parse(&[("MEMCTL_EMBED_THREADS", "4096")]);
    assert_eq!(
        many.embed.background_threads(),
        cores.saturating_sub(1).max(1)
    );
    let one = parse(&[("MEMCTL_EMBED_THREADS", "1")]);
    assert_eq!(one.embed.background_threads(), 1);
    let o = crate::EngineOptions::from_settings(&d);
    assert_eq!(o.for_background(&d).onnx.intra_threads, want);
}
