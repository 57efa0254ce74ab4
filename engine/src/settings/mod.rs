//! One `Settings`: every knob of memctl, typed, with the product's defaults.
//!
//! The engine reads no environment variable. The binaries call [`Settings::load`] (or the
//! strict [`Settings::from_vars`]) once with the process environment and build every config
//! struct from the result ([`crate::EngineOptions::from_settings`],
//! [`crate::hooks::HookConfig::from_settings`], the fields below).
//!
//! Rules, the same for every variable:
//! - an empty value is the same as an unset one (the default applies);
//! - a switch accepts `1/0`, `true/false`, `yes/no`, `on/off` (any case); anything else is an
//!   error ([`parse_bool`]);
//! - a bad value (not a number, unknown word, out of range) is a [`SettingsError`] naming the
//!   variable and the value. [`Settings::load`] keeps the default for that knob and reports the
//!   error: the `memctl` CLI exits non-zero with it, `memctl-hook` logs it and goes on (a hook
//!   never fails because of its configuration);
//! - an unknown `MEMCTL_*` variable is reported in [`Loaded::unknown`] (a warning, never an
//!   error), except the variables of this repository's own scripts ([`TOOLING_VARS`]).
//!
//! A configuration file would plug in as one more source of `(name, value)` pairs chained
//! before the environment in the binaries (`Settings::load(file_pairs.chain(env))`): later
//! pairs win, so the environment would override the file, and the rules above apply to both.

use crate::autopilot::AutopilotConfig;
use crate::prune::AutoPruneConfig;
use crate::restore::{MAX_RESTORE_CHARS, RestoreConfig, RestoreMode};
use crate::summary::external::ExternalConfig;
use crate::swap::SwapConfig;
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

// The settings build the lower layers' configuration here, so that `core` and `embed` never
// depend on `settings` (dependencies point one way: settings → configured modules).

impl crate::EngineOptions {
    /// The engine's part of the settings: data dir, runtime and model
    /// ([`crate::embed::OnnxConfig::from_settings`]); `MEMCTL_EMBEDDER=hash` disables the model.
    pub fn from_settings(s: &Settings) -> Self {
        Self {
            data_dir: s.data_dir.clone(),
            onnx: crate::embed::OnnxConfig::from_settings(s),
            model_disabled: s.embed.embedder == EmbedderChoice::Hash,
            resident: s.resident.clone(),
        }
    }
}

impl crate::embed::OnnxConfig {
    /// The runtime and model the settings name (`ORT_DYLIB_PATH`, `MEMCTL_MODEL_DIR`,
    /// `MEMCTL_ORT_THREADS`), else found from `MEMCTL_HOME`, the data dir and the executable
    /// ([`crate::embed::OnnxConfig::locate`]).
    pub fn from_settings(s: &Settings) -> Self {
        Self::locate(
            s.embed.ort_dylib.clone(),
            s.embed.model_dir.clone(),
            s.embed.ort_threads,
            s.home.as_deref(),
            Some(&s.data_dir),
        )
    }
}

#[cfg(test)]
mod tests;

/// Every `MEMCTL_*` variable memctl reads (the README's configuration list comes from here).
pub const KNOWN_VARS: &[&str] = &[
    "MEMCTL_HOME",
    "MEMCTL_EMBEDDER",
    "MEMCTL_MODEL_DIR",
    "MEMCTL_ORT_THREADS",
    "MEMCTL_BACKGROUND_EMBED",
    "MEMCTL_RESTORE_CHARS",
    "MEMCTL_PRECOMPACT_CHARS",
    "MEMCTL_RESTORE_ON_COMPACT",
    "MEMCTL_RESTORE_ON_RESUME",
    "MEMCTL_RESTORE_ON_CLEAR",
    "MEMCTL_RESTORE_ON_STARTUP",
    "MEMCTL_MEMORY",
    "MEMCTL_MEMORY_CHARS",
    "MEMCTL_MEMORY_FILE_CHARS",
    "MEMCTL_MEMORY_DIR",
    "MEMCTL_CONTEXT_WINDOW",
    "MEMCTL_AUTOPILOT_WARN",
    "MEMCTL_AUTOPILOT_CRITICAL",
    "MEMCTL_AUTOPILOT_NOTE",
    "MEMCTL_AUTO_PRUNE",
    "MEMCTL_SWAP",
    "MEMCTL_RECALL",
    "MEMCTL_RECALL_CHARS",
    "MEMCTL_RESIDENT",
    "MEMCTL_RESIDENT_IDLE_SECS",
    "MEMCTL_SUMMARIZER_CMD",
    "MEMCTL_SUMMARIZER_TIMEOUT_SECS",
    "MEMCTL_HOOK_INLINE_BYTES",
    "MEMCTL_HOOK_INLINE_PROMPT_ARCHIVE",
    "MEMCTL_HOOK_DEADLINE_MS",
    "MEMCTL_LOG",
];

/// `MEMCTL_*` variables of this repository's scripts, tests and benches (not memctl's knobs):
/// never reported as unknown. A name ending in `_` is a prefix.
pub const TOOLING_VARS: &[&str] = &[
    "MEMCTL_BIN",
    // The plugin's launcher (`plugin/bin/memctl-run`): where the binaries are.
    "MEMCTL_BIN_DIR",
    "MEMCTL_SHARED",
    "MEMCTL_REPO",
    "MEMCTL_OUT",
    "MEMCTL_LOCOMO_JSON",
    "MEMCTL_E2E_",
    "MEMCTL_BENCH_",
];

/// A variable whose value memctl cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// A switch that is not one of `1/0/true/false/yes/no/on/off`.
    #[error("invalid {var}={value:?}: not a boolean (use 1/0, true/false, yes/no or on/off)")]
    NotBool {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
    },
    /// A number that does not parse.
    #[error("invalid {var}={value:?}: not a number")]
    NotNumber {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
    },
    /// A number outside the accepted range.
    #[error("invalid {var}={value:?}: out of range (allowed: {allowed})")]
    OutOfRange {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// The accepted range, for the message.
        allowed: &'static str,
    },
    /// A word that is not one of the accepted values.
    #[error("invalid {var}={value:?}: expected one of {expected}")]
    UnknownValue {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// The accepted values, for the message.
        expected: &'static str,
    },
    /// A non-path value that is not UTF-8.
    #[error("invalid {var}: the value is not UTF-8")]
    NotUnicode {
        /// The variable.
        var: &'static str,
    },
}

impl SettingsError {
    /// The variable the error is about.
    pub fn var(&self) -> &'static str {
        match self {
            Self::NotBool { var, .. }
            | Self::NotNumber { var, .. }
            | Self::OutOfRange { var, .. }
            | Self::UnknownValue { var, .. }
            | Self::NotUnicode { var } => var,
        }
    }
}

/// Which embedder answers queries and embeds in the background.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EmbedderChoice {
    /// all-MiniLM-L6-v2 on ONNX Runtime (`onnx` or `model`).
    #[default]
    Onnx,
    /// The hash embedder only; the model is never loaded (`hash`).
    Hash,
}

/// Embedding settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbedSettings {
    /// `MEMCTL_EMBEDDER` = `onnx` (default) | `hash`. `hash` never loads the model: for
    /// machines without the runtime, and for tests of the fallback.
    pub embedder: EmbedderChoice,
    /// `ORT_DYLIB_PATH`: the ONNX Runtime library (default: searched under `MEMCTL_HOME`, the
    /// data dir and the executable's ancestors, see [`crate::embed::OnnxConfig::discover`]).
    pub ort_dylib: Option<PathBuf>,
    /// `MEMCTL_MODEL_DIR`: the model directory (default: searched like the runtime).
    pub model_dir: Option<PathBuf>,
    /// `MEMCTL_ORT_THREADS` (default 1, at least 1): intra-op threads; hooks and the background
    /// embedder share the machine with the agent.
    pub ort_threads: usize,
    /// `MEMCTL_BACKGROUND_EMBED` (default on): hooks start a detached `memctl embed-pending`
    /// for chunks stored with hash vectors. Off: they wait for a manual run.
    pub background: bool,
}

impl Default for EmbedSettings {
    fn default() -> Self {
        Self {
            embedder: EmbedderChoice::Onnx,
            ort_dylib: None,
            model_dir: None,
            ort_threads: 1,
            background: true,
        }
    }
}

/// Hook settings that are not another module's config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookSettings {
    /// `MEMCTL_HOOK_INLINE_BYTES` (default 4 MiB ≈ 250 turns): unarchived transcript bytes
    /// above which UserPromptSubmit hands the archive to a detached `memctl ingest`, so a first
    /// prompt after installing memctl into a long session does not stall the agent.
    pub inline_bytes: u64,
    /// `MEMCTL_HOOK_DEADLINE_MS` (default unset: per event, see
    /// [`crate::hooks::policy::HookEventName::deadline`]): one deadline for every event, for
    /// tests and slow machines.
    pub deadline_ms: Option<u64>,
    /// `MEMCTL_HOOK_INLINE_PROMPT_ARCHIVE` (default off): UserPromptSubmit archives the new
    /// turns itself instead of handing them to a detached `memctl ingest --background` when
    /// it needs no store otherwise (no recall). Off, the prompt path opens no store: ~16 ms of
    /// CPU less per prompt (ARCHITECTURE.md, "The prompt path").
    pub inline_prompt_archive: bool,
}

impl Default for HookSettings {
    fn default() -> Self {
        Self {
            inline_bytes: crate::hooks::policy::INLINE_BYTES,
            deadline_ms: None,
            inline_prompt_archive: false,
        }
    }
}

/// Every knob of memctl (see the module doc for the rules).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Settings {
    /// Data directory: `MEMCTL_HOME`, else `$XDG_DATA_HOME/memctl`, else
    /// `$HOME/.local/share/memctl` (else `./.local/share/memctl`). One store per user.
    pub data_dir: PathBuf,
    /// `MEMCTL_HOME` as given: also the first place the runtime and model are searched.
    pub home: Option<PathBuf>,
    /// `HOME`: the user's home directory (`memctl install --user` writes under it).
    pub home_dir: Option<PathBuf>,
    /// `CLAUDE_PROJECT_DIR` (set by Claude Code): the project of a hook payload without `cwd`.
    pub project_dir: Option<String>,
    /// Embedder, runtime, model, threads, background embedding.
    pub embed: EmbedSettings,
    /// Restore block and PreCompact instructions: `MEMCTL_RESTORE_CHARS` → `budget.max_chars`
    /// (default 4000, at most 10 000: the block is read by the model on every restore),
    /// `MEMCTL_PRECOMPACT_CHARS` → `precompact_chars` (2000, at most 10 000). Project memory:
    /// `MEMCTL_MEMORY` → `memory.enabled` (on), `MEMCTL_MEMORY_CHARS` → `memory.budget_chars`
    /// (1500 of the block, at most 10 000), `MEMCTL_MEMORY_FILE_CHARS` → `memory.file_chars`
    /// (600 per file), `MEMCTL_MEMORY_DIR` → `memory.dir` (default `<project>/.memctl/memory`).
    /// Per SessionStart source (`full` | `brief` | `off`, see [`crate::restore::RestoreSources`]
    /// for why): `MEMCTL_RESTORE_ON_COMPACT` (full), `MEMCTL_RESTORE_ON_RESUME` (full),
    /// `MEMCTL_RESTORE_ON_CLEAR` (brief: `/clear` asked for a fresh context),
    /// `MEMCTL_RESTORE_ON_STARTUP` (off: a fresh session starts fresh; `1` means full).
    /// `CLAUDE_CONFIG_DIR`, else `$HOME/.claude` → `claude_dir` (Claude Code's auto-memory,
    /// which a restore does not repeat).
    pub restore: RestoreConfig,
    /// Context autopilot: `MEMCTL_CONTEXT_WINDOW` → `window_tokens` (200 000, at least 1),
    /// `MEMCTL_AUTOPILOT_WARN` → `warn_pct` (70, 0..=100), `MEMCTL_AUTOPILOT_CRITICAL` →
    /// `critical_pct` (85, 0..=100), `MEMCTL_AUTOPILOT_NOTE` → `note` (off: the note costs
    /// context on every prompt above the threshold).
    pub autopilot: AutopilotConfig,
    /// `MEMCTL_AUTO_PRUNE` → `enabled` (default off: deleting is the user's call): a bounded
    /// prune pass at SessionEnd.
    pub auto_prune: AutoPruneConfig,
    /// `MEMCTL_SWAP` → `enabled` (default on): big PostToolUse outputs stored whole.
    pub swap: SwapConfig,
    /// Prompt-time recall after a context loss: `MEMCTL_RECALL` → `enabled` (default on),
    /// `MEMCTL_RECALL_CHARS` → `budget_chars` (1,500, at most 10,000: small, because it is
    /// paid on every prompt that recalls).
    pub recall: crate::recall::RecallConfig,
    /// The resident query embedder ([`crate::resident`]): `MEMCTL_RESIDENT` → `enabled`
    /// (default on), `MEMCTL_RESIDENT_IDLE_SECS` → `idle` (900 s, at least 1 s).
    pub resident: crate::resident::ResidentConfig,
    /// External summariser for `memctl summarize`: `MEMCTL_SUMMARIZER_CMD` → `command` (off),
    /// `MEMCTL_SUMMARIZER_TIMEOUT_SECS` → `timeout` (60 s, at least 1 s).
    pub summarizer: ExternalConfig,
    /// Hook hand-off and deadlines.
    pub hook: HookSettings,
    /// `MEMCTL_LOG`: the binaries' log filter (tracing `EnvFilter` syntax; default `warn` for
    /// the CLI on stderr, `info` for hooks in `<data dir>/logs/memctl.log`).
    pub log: Option<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            data_dir: PathBuf::from(".").join(".local/share/memctl"),
            home: None,
            home_dir: None,
            project_dir: None,
            embed: EmbedSettings::default(),
            restore: RestoreConfig::default(),
            autopilot: AutopilotConfig::default(),
            auto_prune: AutoPruneConfig::default(),
            swap: SwapConfig::default(),
            recall: crate::recall::RecallConfig::default(),
            resident: crate::resident::ResidentConfig::default(),
            summarizer: ExternalConfig::default(),
            hook: HookSettings::default(),
            log: None,
        }
    }
}

/// What [`Settings::load`] found: the settings (defaults where a value was bad), the bad
/// values, and the unknown `MEMCTL_*` variables.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// Usable settings.
    pub settings: Settings,
    /// One error per bad variable (its knob kept the default).
    pub errors: Vec<SettingsError>,
    /// `MEMCTL_*` variables memctl does not know (sorted).
    pub unknown: Vec<String>,
}

/// Parse a switch: `1/0`, `true/false`, `yes/no`, `on/off`, any case, surrounding blanks
/// ignored. `None` for anything else.
pub fn parse_bool(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// The variables of interest, and the errors found so far.
struct Vars {
    map: HashMap<String, OsString>,
    errors: Vec<SettingsError>,
}

impl Vars {
    /// The value when set and not empty.
    fn os(&self, var: &str) -> Option<PathBuf> {
        self.map
            .get(var)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    }

    fn text(&mut self, var: &'static str) -> Option<String> {
        let v = self.map.get(var).filter(|v| !v.is_empty())?;
        match v.to_str() {
            Some(s) => Some(s.to_string()),
            None => {
                self.errors.push(SettingsError::NotUnicode { var });
                None
            }
        }
    }

    fn switch(&mut self, var: &'static str) -> Option<bool> {
        let value = self.text(var)?;
        let b = parse_bool(&value);
        if b.is_none() {
            self.errors.push(SettingsError::NotBool { var, value });
        }
        b
    }

    /// A number in `ok` (described by `allowed` in errors).
    fn number<T: FromStr>(
        &mut self,
        var: &'static str,
        ok: impl Fn(&T) -> bool,
        allowed: &'static str,
    ) -> Option<T> {
        let value = self.text(var)?;
        match value.trim().parse::<T>() {
            Ok(n) if ok(&n) => Some(n),
            Ok(_) => {
                self.errors.push(SettingsError::OutOfRange {
                    var,
                    value,
                    allowed,
                });
                None
            }
            Err(_) => {
                self.errors.push(SettingsError::NotNumber { var, value });
                None
            }
        }
    }

    /// `full` / `brief` / `off` (or a switch word).
    fn restore_mode(&mut self, var: &'static str) -> Option<RestoreMode> {
        let value = self.text(var)?;
        let m = value.parse::<RestoreMode>().ok();
        if m.is_none() {
            self.errors.push(SettingsError::UnknownValue {
                var,
                value,
                expected: RestoreMode::EXPECTED,
            });
        }
        m
    }

    fn chars(&mut self, var: &'static str) -> Option<usize> {
        self.number(var, |n: &usize| *n <= MAX_RESTORE_CHARS, "0..=10000")
    }
}

impl Settings {
    /// Parse `(name, value)` pairs (the binaries pass `std::env::vars_os()`): every knob, the
    /// data dir facts (`HOME`, `XDG_DATA_HOME`) and `CLAUDE_PROJECT_DIR`. Never fails: a bad
    /// value keeps its knob's default and is listed in [`Loaded::errors`]. When a name appears
    /// twice the later pair wins.
    pub fn load<I, K, V>(vars: I) -> Loaded
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        let mut map = HashMap::new();
        let mut unknown = Vec::new();
        for (k, v) in vars {
            // Names that are not UTF-8 are nobody's knobs.
            let Ok(k) = k.into().into_string() else {
                continue;
            };
            if k.starts_with("MEMCTL_") && !is_known(&k) && !unknown.contains(&k) {
                unknown.push(k.clone());
            }
            map.insert(k, v.into());
        }
        unknown.sort();
        let mut v = Vars {
            map,
            errors: Vec::new(),
        };
        let settings = Self::from_parsed(&mut v);
        Loaded {
            settings,
            errors: v.errors,
            unknown,
        }
    }

    /// Strict parse: the first bad value is an error (unknown variables are not).
    pub fn from_vars<I, K, V>(vars: I) -> Result<Self, SettingsError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        Self::load(vars).into_result()
    }

    fn from_parsed(v: &mut Vars) -> Self {
        let mut s = Self::default();
        s.home = v.os("MEMCTL_HOME");
        s.home_dir = v.os("HOME");
        s.data_dir = match (&s.home, v.os("XDG_DATA_HOME"), s.home_dir.clone()) {
            (Some(h), _, _) => h.clone(),
            (None, Some(x), _) => x.join("memctl"),
            (None, None, h) => h
                .unwrap_or_else(|| PathBuf::from("."))
                .join(".local/share/memctl"),
        };
        s.project_dir = v.text("CLAUDE_PROJECT_DIR");

        if let Some(e) = v.text("MEMCTL_EMBEDDER") {
            match e.trim().to_ascii_lowercase().as_str() {
                "onnx" | "model" => s.embed.embedder = EmbedderChoice::Onnx,
                "hash" => s.embed.embedder = EmbedderChoice::Hash,
                _ => v.errors.push(SettingsError::UnknownValue {
                    var: "MEMCTL_EMBEDDER",
                    value: e,
                    expected: "onnx, hash",
                }),
            }
        }
        s.embed.ort_dylib = v.os("ORT_DYLIB_PATH");
        s.embed.model_dir = v.os("MEMCTL_MODEL_DIR");
        if let Some(n) = v.number("MEMCTL_ORT_THREADS", |n: &usize| *n >= 1, ">= 1") {
            s.embed.ort_threads = n;
        }
        if let Some(b) = v.switch("MEMCTL_BACKGROUND_EMBED") {
            s.embed.background = b;
        }

        if let Some(n) = v.chars("MEMCTL_RESTORE_CHARS") {
            s.restore.budget.max_chars = n;
        }
        if let Some(n) = v.chars("MEMCTL_PRECOMPACT_CHARS") {
            s.restore.precompact_chars = n;
        }
        let src = &mut s.restore.sources;
        for (var, mode) in [
            ("MEMCTL_RESTORE_ON_COMPACT", &mut src.compact),
            ("MEMCTL_RESTORE_ON_RESUME", &mut src.resume),
            ("MEMCTL_RESTORE_ON_CLEAR", &mut src.clear),
            ("MEMCTL_RESTORE_ON_STARTUP", &mut src.startup),
        ] {
            if let Some(m) = v.restore_mode(var) {
                *mode = m;
            }
        }
        s.restore.claude_dir = v
            .os("CLAUDE_CONFIG_DIR")
            .or_else(|| s.home_dir.as_ref().map(|h| h.join(".claude")));
        let m = &mut s.restore.memory;
        if let Some(b) = v.switch("MEMCTL_MEMORY") {
            m.enabled = b;
        }
        if let Some(n) = v.chars("MEMCTL_MEMORY_CHARS") {
            m.budget_chars = n;
        }
        if let Some(n) = v.number("MEMCTL_MEMORY_FILE_CHARS", |_: &usize| true, ">= 0") {
            m.file_chars = n;
        }
        m.dir = v.os("MEMCTL_MEMORY_DIR");

        let a = &mut s.autopilot;
        if let Some(n) = v.number("MEMCTL_CONTEXT_WINDOW", |n: &u64| *n >= 1, ">= 1") {
            a.window_tokens = n;
        }
        let pct = |p: &f32| (0.0..=100.0).contains(p);
        if let Some(p) = v.number("MEMCTL_AUTOPILOT_WARN", pct, "0..=100") {
            a.warn_pct = p;
        }
        if let Some(p) = v.number("MEMCTL_AUTOPILOT_CRITICAL", pct, "0..=100") {
            a.critical_pct = p;
        }
        if let Some(b) = v.switch("MEMCTL_AUTOPILOT_NOTE") {
            a.note = b;
        }
        if let Some(b) = v.switch("MEMCTL_AUTO_PRUNE") {
            s.auto_prune.enabled = b;
        }
        if let Some(b) = v.switch("MEMCTL_SWAP") {
            s.swap.enabled = b;
        }
        if let Some(b) = v.switch("MEMCTL_RECALL") {
            s.recall.enabled = b;
        }
        if let Some(n) = v.chars("MEMCTL_RECALL_CHARS") {
            s.recall.budget_chars = n;
        }
        if let Some(b) = v.switch("MEMCTL_RESIDENT") {
            s.resident.enabled = b;
        }
        if let Some(n) = v.number("MEMCTL_RESIDENT_IDLE_SECS", |n: &u64| *n >= 1, ">= 1") {
            s.resident.idle = Duration::from_secs(n);
        }

        s.summarizer.command = v
            .text("MEMCTL_SUMMARIZER_CMD")
            .filter(|c| !c.trim().is_empty());
        if let Some(n) = v.number("MEMCTL_SUMMARIZER_TIMEOUT_SECS", |n: &u64| *n >= 1, ">= 1") {
            s.summarizer.timeout = Duration::from_secs(n);
        }
        if let Some(n) = v.number("MEMCTL_HOOK_INLINE_BYTES", |_: &u64| true, ">= 0") {
            s.hook.inline_bytes = n;
        }
        if let Some(b) = v.switch("MEMCTL_HOOK_INLINE_PROMPT_ARCHIVE") {
            s.hook.inline_prompt_archive = b;
        }
        s.hook.deadline_ms = v.number("MEMCTL_HOOK_DEADLINE_MS", |n: &u64| *n >= 1, ">= 1");
        s.log = v.text("MEMCTL_LOG");
        s
    }
}

impl Loaded {
    /// The settings, or the first bad value.
    pub fn into_result(self) -> Result<Settings, SettingsError> {
        match self.errors.into_iter().next() {
            Some(e) => Err(e),
            None => Ok(self.settings),
        }
    }
}

fn is_known(name: &str) -> bool {
    KNOWN_VARS.contains(&name)
        || TOOLING_VARS.iter().any(|t| {
            if t.ends_with('_') {
                name.starts_with(t)
            } else {
                name == *t
            }
        })
}
