//! One `Settings`: every knob of memctl, typed, with the product's defaults, from four
//! sources (lowest to highest precedence): defaults < the user's config file < the project's
//! config file < the environment.
//!
//! The engine reads no environment variable. The binaries call [`Settings::load_layered`] once
//! with the process environment and working directory; it reads the config files ([`file`]:
//! `$XDG_CONFIG_HOME/memctl/config.toml` or `MEMCTL_CONFIG`, and `<project>/.memctl/config.toml`)
//! and chains their pairs before the environment's, so later pairs win. [`Settings::load`] (or
//! the strict [`Settings::from_vars`]) takes `(name, value)` pairs alone. Every config struct is
//! built from the result ([`crate::EngineOptions::from_settings`],
//! [`crate::hooks::HookConfig::from_settings`], the fields below).
//!
//! Rules, the same for every source (one set of parsers, `vars.rs`):
//! - an empty value is the same as an unset one (a lower source, else the default, applies);
//! - a switch accepts `1/0`, `true/false`, `yes/no`, `on/off` (any case); anything else is an
//!   error ([`parse_bool`]);
//! - a bad value (not a number, unknown word, out of range) is a [`SettingsError`] naming the
//!   variable (in a file: the file, line and key) and the value. Loading keeps the default for
//!   that knob and reports the error: the `memctl` CLI exits non-zero with it, `memctl-hook`
//!   logs it and goes on (a hook never fails because of its configuration);
//! - in a file, an unknown key, an array or table, or bad TOML is an error too (a typo in a
//!   file must not pass silently); a project file may not set keys that run a command, load
//!   code or move the archive ([`ProjectRule`]);
//! - an unknown `MEMCTL_*` variable is reported in [`Loaded::unknown`] (a warning, never an
//!   error), except the variables of this repository's own scripts ([`TOOLING_VARS`]).
//!
//! [`Loaded::entries`] says where each effective value came from ([`Source`]).

mod error;
pub mod file;
pub(crate) mod keys;
mod source;
mod vars;

pub use error::SettingsError;
pub use file::{ConfigFile, FileScope};
pub use keys::{KEYS, ProjectRule};
pub use source::{ConfigEntry, Source};

use crate::autopilot::AutopilotConfig;
use crate::prune::AutoPruneConfig;
use crate::restore::RestoreConfig;
use crate::summary::external::ExternalConfig;
use crate::swap::SwapConfig;
use file::Value;
use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;
use vars::Vars;

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

impl crate::EngineOptions {
    /// These options for a bulk embedding command (`memctl ingest`, `memctl embed-pending`,
    /// the background embedder): the model runs on [`EmbedSettings::bulk_threads`] threads
    /// instead of the query's `MEMCTL_ORT_THREADS`.
    pub fn for_bulk(mut self, s: &Settings) -> Self {
        self.onnx.intra_threads = s.embed.bulk_threads();
        self
    }

    /// [`Self::for_bulk`] for a background run (hooks' detached embedder and ingest):
    /// [`EmbedSettings::background_threads`], one core left to the user.
    pub fn for_background(mut self, s: &Settings) -> Self {
        self.onnx.intra_threads = s.embed.background_threads();
        self
    }
}

impl crate::embed::OnnxConfig {
    /// The runtime and model the settings name (`ORT_DYLIB_PATH`, `MEMCTL_MODEL_DIR`,
    /// `MEMCTL_ORT_THREADS`), else found from `MEMCTL_HOME`, the data dir, the machine's
    /// install dir ([`Settings::install_dir`]) and the executable
    /// ([`crate::embed::OnnxConfig::locate`]).
    pub fn from_settings(s: &Settings) -> Self {
        let mut roots: Vec<&Path> = s.home.as_deref().into_iter().collect();
        roots.push(&s.data_dir);
        roots.push(&s.install_dir);
        Self::locate(
            s.embed.ort_dylib.clone(),
            s.embed.model_dir.clone(),
            s.embed.ort_threads,
            &roots,
        )
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_file;

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
    /// data dir, the machine's install dir and the executable's ancestors, see
    /// [`crate::embed::OnnxConfig::locate`]).
    pub ort_dylib: Option<PathBuf>,
    /// `MEMCTL_MODEL_DIR`: the model directory (default: searched like the runtime).
    pub model_dir: Option<PathBuf>,
    /// `MEMCTL_ORT_THREADS` (default 1, at least 1): intra-op threads for embedding queries
    /// (hooks, `memctl search`): one short text, where a second thread gains little and a hook
    /// shares the machine with the agent.
    pub ort_threads: usize,
    /// `MEMCTL_EMBED_THREADS` (default 2, at least 1): intra-op threads for bulk embedding
    /// (`memctl ingest`, `memctl embed-pending`, the resident service's bulk thread at nice 19),
    /// capped at the cores this process may use ([`EmbedSettings::bulk_threads`]). Why 2: one
    /// thread is at ORT's one-core bound (≈ 3k tokens/s); a second one is where a
    /// first archive's embedding gets faster.
    pub embed_threads: usize,
    /// `MEMCTL_BACKGROUND_EMBED` (default on): the resident service (`memctl embedder`, which
    /// hooks start) embeds chunks stored with hash vectors. Off: they wait for a manual
    /// `memctl embed-pending`.
    pub background: bool,
}

impl Default for EmbedSettings {
    fn default() -> Self {
        Self {
            embedder: EmbedderChoice::Onnx,
            ort_dylib: None,
            model_dir: None,
            ort_threads: 1,
            embed_threads: 2,
            background: true,
        }
    }
}

impl EmbedSettings {
    /// The bulk embedding threads: `embed_threads`, at most the cores available to this
    /// process (more threads than cores only time-slice one core and cost switches).
    pub fn bulk_threads(&self) -> usize {
        self.embed_threads.clamp(1, available_cores())
    }

    /// The threads of a *background* embedder (started by hooks, or `--background`): the bulk
    /// threads, but never every core — one stays free for the user's work. Measured on the
    /// 2-core machine (`scripts/bench_embedder_contention.py`, 5,000-turn backlog): with two
    /// embedder threads at `SCHED_IDLE` UserPromptSubmit p95 was 3.6× its idle p95, with one
    /// 1.3×. Why `SCHED_IDLE` does not suffice: Claude Code starts every hook in a session of
    /// its own, and with autogroups (processes in the root CPU cgroup) the scheduler shares
    /// the CPU between sessions before it looks at a task's policy, so the embedder (in the
    /// session of the hook that started it) competes with a later hook as an equal: two
    /// idle-policy busy loops in another session took a `/bin/true` spawn from 1.9 to 7.8 ms
    /// (median), one left it at 1.9 ms (the policy is now a long slice instead, see
    /// [`crate::embed::lower_priority`]). A foreground `memctl ingest` / `embed-pending` the user asked for uses
    /// [`Self::bulk_threads`].
    pub fn background_threads(&self) -> usize {
        self.bulk_threads()
            .min(available_cores().saturating_sub(1))
            .max(1)
    }
}

/// The cores this process may use (1 when unknown).
fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// Hook settings that are not another module's config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookSettings {
    /// `MEMCTL_HOOK_INLINE_BYTES` (default 4 MiB ≈ 250 turns): unarchived transcript bytes
    /// above which UserPromptSubmit hands the archive to a detached `memctl ingest`, so a first
    /// prompt after installing memctl into a long session does not stall the agent.
    pub inline_bytes: u64,
    /// `MEMCTL_HOOK_DEADLINE_MS` (default unset: per event, as the agent's adapter sets them,
    /// e.g. `memctl_hooks::claude::HookEventName::deadline`): one deadline for every event,
    /// for tests and slow machines.
    pub deadline_ms: Option<u64>,
    /// `MEMCTL_HOOK_INLINE_PROMPT_ARCHIVE` (default off): UserPromptSubmit archives the new
    /// turns itself instead of handing them to a detached `memctl ingest --background` when
    /// it needs no store otherwise (no recall). Off, the prompt path opens no store: ~16 ms of
    /// CPU less per prompt (docs/perf/hooks.md).
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
    /// Where `memctl setup` installs the runtime and model for the whole machine (`runtime/`,
    /// `models/`): `$XDG_DATA_HOME/memctl`, else `$HOME/.local/share/memctl`, whatever
    /// `MEMCTL_HOME` or `--data-dir` say. Why apart from the data dir: the files are per
    /// machine, not per archive, so every data dir finds them (it is the default data dir,
    /// where earlier versions of setup put them too).
    pub install_dir: PathBuf,
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
    /// `MEMCTL_SWAP_IN_PLACE` (default on) and `MEMCTL_SWAP_IN_PLACE_CHARS` (default 8192) →
    /// `in_place`: Bash outputs from that size are replaced by a digest in the live context.
    pub swap: SwapConfig,
    /// Prompt-time recall after a context loss: `MEMCTL_RECALL` → `enabled` (default on),
    /// `MEMCTL_RECALL_CHARS` → `budget_chars` (1,500, at most 10,000: small, because it is
    /// paid on every prompt that recalls).
    pub recall: crate::recall::RecallConfig,
    /// The resident query embedder ([`crate::resident`]): `MEMCTL_RESIDENT` → `enabled`
    /// (default on), `MEMCTL_RESIDENT_IDLE_SECS` → `idle` (900 s, at least 1 s).
    pub resident: crate::resident::ResidentConfig,
    /// `memctl mcp` keeps the int8 vector blocks in memory between searches
    /// (`Engine::keep_vectors_resident`): `MEMCTL_MCP_RESIDENT_VECTORS` (default on).
    pub mcp_resident_vectors: bool,
    /// The resident service's vector index ([`crate::ann`]): `MEMCTL_ANN` → `enabled` (off),
    /// `MEMCTL_ANN_MIN` → `min_vectors` (20,000, at least 1), `MEMCTL_ANN_SAVE_SECS` →
    /// `save_after` (30 s), `MEMCTL_ANN_FREEZE_MIN` → `freeze_min` (20,000; 0 = never).
    pub index: crate::ann::IndexSettings,
    /// External summariser for `memctl summarize`: `MEMCTL_SUMMARIZER_CMD` → `command` (off),
    /// `MEMCTL_SUMMARIZER_TIMEOUT_SECS` → `timeout` (60 s, at least 1 s).
    pub summarizer: ExternalConfig,
    /// Hook hand-off and deadlines.
    pub hook: HookSettings,
    /// `MEMCTL_LOG`: the binaries' log filter (tracing `EnvFilter` syntax; default `warn` for
    /// the CLI on stderr, `info` for hooks in `<data dir>/logs/memctl.log`).
    pub log: Option<String>,
    /// Team memory (`memctl sync`, `search --team`): `MEMCTL_TEAM_URL` → `url` (a PostgreSQL
    /// connection string; libpq's `PG*` variables also work), `MEMCTL_TEAM_URL_FILE` →
    /// `url_file` (a 0600 file holding it; default `<data dir>/team.url`), `MEMCTL_TEAM_CA_FILE`
    /// → `ca_file` (PEM certificates of a private CA the server's certificate must chain to).
    /// Never from a project file: they are credentials, or decide whom we trust.
    pub team: TeamSettings,
}

/// Where the team database's connection comes from (see [`Settings::team`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TeamSettings {
    /// The connection string itself.
    pub url: Option<String>,
    /// A file holding it (must not be readable by group or others).
    pub url_file: Option<PathBuf>,
    /// PEM file of the certificate authorities the server's TLS certificate is checked against
    /// (a self-hosted server with a private CA); libpq's `sslrootcert`.
    pub ca_file: Option<PathBuf>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            data_dir: PathBuf::from(".").join(".local/share/memctl"),
            home: None,
            install_dir: PathBuf::from(".").join(".local/share/memctl"),
            home_dir: None,
            project_dir: None,
            embed: EmbedSettings::default(),
            restore: RestoreConfig::default(),
            autopilot: AutopilotConfig::default(),
            auto_prune: AutoPruneConfig::default(),
            swap: SwapConfig::default(),
            recall: crate::recall::RecallConfig::default(),
            resident: crate::resident::ResidentConfig::default(),
            mcp_resident_vectors: true,
            index: crate::ann::IndexSettings::default(),
            summarizer: ExternalConfig::default(),
            hook: HookSettings::default(),
            log: None,
            team: TeamSettings::default(),
        }
    }
}

/// What loading found: the settings (defaults where a value was bad), the bad values, the
/// unknown `MEMCTL_*` variables, and where each value came from.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// Usable settings.
    pub settings: Settings,
    /// One error per bad variable, key or file (the knob keeps its default; a file's other
    /// keys still apply, except when the file is not valid TOML).
    pub errors: Vec<SettingsError>,
    /// `MEMCTL_*` variables memctl does not know (sorted).
    pub unknown: Vec<String>,
    /// The config files looked for, user file first ([`Settings::load_layered`] only).
    pub files: Vec<ConfigFile>,
    /// The project directory the project file was looked up in.
    pub project_dir: Option<PathBuf>,
    /// The source of each variable of [`KEYS`] that was used (absent: the default).
    sources: HashMap<&'static str, Source>,
}

impl Settings {
    /// Parse `(name, value)` pairs alone (no config file): every knob, the data dir facts
    /// (`HOME`, `XDG_DATA_HOME`) and `CLAUDE_PROJECT_DIR`. Never fails: a bad value keeps its
    /// knob's default and is listed in [`Loaded::errors`]. When a name appears twice the later
    /// pair wins.
    pub fn load<I, K, V>(vars: I) -> Loaded
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        let env = env_pairs(vars);
        Self::load_sources(Vec::new(), &env, Vec::new(), Vec::new(), None)
    }

    /// What both binaries call: the config files, then the environment `vars` over them
    /// (`cwd`: the working directory, where the project file is looked for when
    /// `CLAUDE_PROJECT_DIR` is unset). Never fails, like [`Settings::load`]; a file that
    /// cannot be read or parsed is an error in [`Loaded::errors`] and contributes nothing.
    pub fn load_layered<I, K, V>(vars: I, cwd: Option<&Path>) -> Loaded
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        let env = env_pairs(vars);
        let last: HashMap<String, OsString> = env.iter().cloned().collect();
        let (files, project_dir) = file::locate(&last, cwd);
        let home = last
            .get("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        let mut errors = Vec::new();
        let mut layers = Vec::new();
        for f in &files {
            layers.extend(file::read(
                f,
                home.as_deref(),
                project_dir.as_deref(),
                &mut errors,
            ));
        }
        Self::load_sources(layers, &env, errors, files, project_dir)
    }

    /// Chain the file pairs (in order) and the environment's, then parse.
    fn load_sources(
        file_pairs: Vec<(&'static str, Value)>,
        env: &[(String, OsString)],
        errors: Vec<SettingsError>,
        files: Vec<ConfigFile>,
        project_dir: Option<PathBuf>,
    ) -> Loaded {
        let mut map = HashMap::new();
        for (var, value) in file_pairs {
            map.insert(var.to_string(), value);
        }
        let mut unknown = Vec::new();
        for (k, v) in env {
            if k.starts_with("MEMCTL_") && !keys::is_known(k) && !unknown.contains(k) {
                unknown.push(k.clone());
            }
            // Empty is unset: it does not hide a file's value.
            if v.is_empty()
                && map
                    .get(k)
                    .is_some_and(|old: &Value| old.source != Source::Environment)
            {
                continue;
            }
            let value = Value {
                value: v.clone(),
                source: Source::Environment,
                at: None,
            };
            map.insert(k.clone(), value);
        }
        unknown.sort();
        let mut v = Vars {
            map,
            errors,
            failed: HashSet::new(),
        };
        let settings = Self::from_parsed(&mut v);
        // In the order of the files and their lines (the environment's after): read top down.
        v.errors.sort_by_key(|e| match e.place() {
            Some((path, line)) => (files.iter().position(|f| f.path == path), line),
            None => (Some(usize::MAX), 0),
        });
        let sources = KEYS
            .iter()
            .filter(|k| !v.failed.contains(k.var))
            .filter_map(|k| {
                let set = v.map.get(k.var).filter(|s| !s.value.is_empty())?;
                Some((k.var, set.source.clone()))
            })
            .collect();
        Loaded {
            settings,
            errors: v.errors,
            unknown,
            files,
            project_dir,
            sources,
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
        s.install_dir = match (v.os("XDG_DATA_HOME"), s.home_dir.clone()) {
            (Some(x), _) => x.join("memctl"),
            (None, h) => h
                .unwrap_or_else(|| PathBuf::from("."))
                .join(".local/share/memctl"),
        };
        s.data_dir = s.home.clone().unwrap_or_else(|| s.install_dir.clone());
        s.project_dir = v.text("CLAUDE_PROJECT_DIR");

        Self::embed_vars(v, &mut s);
        Self::restore_vars(v, &mut s);
        Self::feature_vars(v, &mut s);

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
        s.team.url = v.text("MEMCTL_TEAM_URL");
        s.team.url_file = v.os("MEMCTL_TEAM_URL_FILE");
        s.team.ca_file = v.os("MEMCTL_TEAM_CA_FILE");
        s
    }

    /// The embedder: which one, where its runtime and model are, its threads.
    fn embed_vars(v: &mut Vars, s: &mut Self) {
        if let Some(e) = v.text("MEMCTL_EMBEDDER") {
            match e.trim().to_ascii_lowercase().as_str() {
                "onnx" | "model" => s.embed.embedder = EmbedderChoice::Onnx,
                "hash" => s.embed.embedder = EmbedderChoice::Hash,
                _ => v.error(SettingsError::UnknownValue {
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
        if let Some(n) = v.number("MEMCTL_EMBED_THREADS", |n: &usize| *n >= 1, ">= 1") {
            s.embed.embed_threads = n;
        }
        if let Some(b) = v.switch("MEMCTL_BACKGROUND_EMBED") {
            s.embed.background = b;
        }
    }

    /// What SessionStart restores, from which sources, and the memory files it adds.
    fn restore_vars(v: &mut Vars, s: &mut Self) {
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
    }

    /// Autopilot, pruning, swap, recall and the resident embedder.
    fn feature_vars(v: &mut Vars, s: &mut Self) {
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
        // Only Bash's shape is verified for in-place swaps (crate::swap::inplace).
        if let Some(n) = v.number(
            "MEMCTL_SWAP_IN_PLACE_CHARS",
            |n: &usize| *n >= 1024,
            ">= 1024",
        ) {
            s.swap.in_place = vec![("Bash".to_string(), n)];
        }
        if let Some(b) = v.switch("MEMCTL_SWAP_IN_PLACE") {
            s.swap.in_place_enabled = b;
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
        if let Some(b) = v.switch("MEMCTL_MCP_RESIDENT_VECTORS") {
            s.mcp_resident_vectors = b;
        }
        if let Some(b) = v.switch("MEMCTL_ANN") {
            s.index.enabled = b;
        }
        if let Some(n) = v.number("MEMCTL_ANN_MIN", |n: &usize| *n >= 1, ">= 1") {
            s.index.min_vectors = n;
        }
        if let Some(n) = v.number("MEMCTL_ANN_SAVE_SECS", |_: &u64| true, "seconds") {
            s.index.save_after = Duration::from_secs(n);
        }
        if let Some(n) = v.number("MEMCTL_ANN_FREEZE_MIN", |_: &usize| true, "points") {
            s.index.freeze_min = n;
        }
    }
}

/// The environment's pairs with UTF-8 names (other names are nobody's knobs), in order.
fn env_pairs<I, K, V>(vars: I) -> Vec<(String, OsString)>
where
    I: IntoIterator<Item = (K, V)>,
    K: Into<OsString>,
    V: Into<OsString>,
{
    vars.into_iter()
        .filter_map(|(k, v)| Some((k.into().into_string().ok()?, v.into())))
        .collect()
}

impl Loaded {
    /// Where the effective value of `var` (a variable of [`KEYS`]) came from.
    pub fn source(&self, var: &str) -> Source {
        self.sources.get(var).cloned().unwrap_or(Source::Default)
    }

    /// Every key with its effective value and its source, in [`KEYS`] order (what
    /// `memctl config` prints).
    pub fn entries(&self) -> Vec<ConfigEntry> {
        source::describe(&self.settings, self.project_dir.as_deref())
            .into_iter()
            .map(|(key, value, note)| ConfigEntry {
                key,
                value,
                source: self.source(key.var),
                note,
            })
            .collect()
    }

    /// The settings, or the first bad value.
    pub fn into_result(self) -> Result<Settings, SettingsError> {
        match self.errors.into_iter().next() {
            Some(e) => Err(e),
            None => Ok(self.settings),
        }
    }
}
