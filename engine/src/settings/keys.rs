//! The names memctl reads: environment variables and the config files' keys, one table.

/// Every `MEMCTL_*` variable memctl reads (the README's configuration list comes from here).
pub const KNOWN_VARS: &[&str] = &[
    "MEMCTL_HOME",
    "MEMCTL_CONFIG",
    "MEMCTL_EMBEDDER",
    "MEMCTL_MODEL_DIR",
    "MEMCTL_ORT_THREADS",
    "MEMCTL_EMBED_THREADS",
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
    "MEMCTL_SWAP_IN_PLACE",
    "MEMCTL_SWAP_IN_PLACE_CHARS",
    "MEMCTL_RECALL",
    "MEMCTL_RECALL_CHARS",
    "MEMCTL_RESIDENT",
    "MEMCTL_RESIDENT_IDLE_SECS",
    "MEMCTL_MCP_RESIDENT_VECTORS",
    "MEMCTL_ANN",
    "MEMCTL_ANN_MIN",
    "MEMCTL_ANN_SAVE_SECS",
    "MEMCTL_ANN_FREEZE_MIN",
    "MEMCTL_SUMMARIZER_CMD",
    "MEMCTL_SUMMARIZER_TIMEOUT_SECS",
    "MEMCTL_HOOK_INLINE_BYTES",
    "MEMCTL_HOOK_INLINE_PROMPT_ARCHIVE",
    "MEMCTL_HOOK_DEADLINE_MS",
    "MEMCTL_LOG",
    "MEMCTL_TEAM_URL",
    "MEMCTL_TEAM_URL_FILE",
    "MEMCTL_TEAM_CA_FILE",
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
    // scripts/pg.sh's server for the team tests (cli/tests/testsuite/team.rs).
    "MEMCTL_TEST_PG_URL",
    "MEMCTL_TEST_PG_TLS_URL",
    "MEMCTL_TEST_PG_TLS_DIR",
];

/// Whether a project file (`<project>/.memctl/config.toml`) may set a key.
///
/// Why a rule at all: a project file is committed and shared, so it arrives with every `git
/// clone`. Opening a cloned repository must not make memctl run a command, load a native
/// library or a model from a path the repository chose, or move the archive of the user's
/// conversations somewhere else; those keys belong to the user (user file or environment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProjectRule {
    /// A project may set it (a budget, a switch, a restore mode).
    Allowed,
    /// A project may set it to a relative path inside the project (no `..`), resolved against
    /// the project directory.
    InsideProject,
    /// Only the user may set it; the reason is shown in the error.
    Refused(&'static str),
}

/// One setting: its environment variable, its key in a config file, and where it may come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    /// The environment variable (`MEMCTL_RESTORE_CHARS`, `ORT_DYLIB_PATH`).
    pub var: &'static str,
    /// The key in a config file: the variable without `MEMCTL_`, in lower case.
    pub name: &'static str,
    /// A filesystem path (in a file: absolute or `~/...`, see [`super::file`]).
    pub path: bool,
    /// Whether a project file may set it.
    pub project: ProjectRule,
}

const fn key(var: &'static str, name: &'static str) -> Key {
    Key {
        var,
        name,
        path: false,
        project: ProjectRule::Allowed,
    }
}

const fn user_path(var: &'static str, name: &'static str, why: &'static str) -> Key {
    Key {
        var,
        name,
        path: true,
        project: ProjectRule::Refused(why),
    }
}

const fn user_text(var: &'static str, name: &'static str, why: &'static str) -> Key {
    Key {
        var,
        name,
        path: false,
        project: ProjectRule::Refused(why),
    }
}

/// Every setting a config file may hold, in the order `memctl config` lists them (the order
/// of [`KNOWN_VARS`], with `ORT_DYLIB_PATH` beside the model). `MEMCTL_CONFIG` is not one: it
/// says which file to read.
pub const KEYS: &[Key] = &[
    user_path(
        "MEMCTL_HOME",
        "home",
        "it moves the archive of every session; a repository must not choose where your conversations are stored",
    ),
    key("MEMCTL_EMBEDDER", "embedder"),
    user_path(
        "MEMCTL_MODEL_DIR",
        "model_dir",
        "it loads a model from that path",
    ),
    user_path(
        "ORT_DYLIB_PATH",
        "ort_dylib_path",
        "it loads a native library, which runs its code",
    ),
    key("MEMCTL_ORT_THREADS", "ort_threads"),
    key("MEMCTL_EMBED_THREADS", "embed_threads"),
    key("MEMCTL_BACKGROUND_EMBED", "background_embed"),
    key("MEMCTL_RESTORE_CHARS", "restore_chars"),
    key("MEMCTL_PRECOMPACT_CHARS", "precompact_chars"),
    key("MEMCTL_RESTORE_ON_COMPACT", "restore_on_compact"),
    key("MEMCTL_RESTORE_ON_RESUME", "restore_on_resume"),
    key("MEMCTL_RESTORE_ON_CLEAR", "restore_on_clear"),
    key("MEMCTL_RESTORE_ON_STARTUP", "restore_on_startup"),
    key("MEMCTL_MEMORY", "memory"),
    key("MEMCTL_MEMORY_CHARS", "memory_chars"),
    key("MEMCTL_MEMORY_FILE_CHARS", "memory_file_chars"),
    Key {
        var: "MEMCTL_MEMORY_DIR",
        name: "memory_dir",
        path: true,
        project: ProjectRule::InsideProject,
    },
    key("MEMCTL_CONTEXT_WINDOW", "context_window"),
    key("MEMCTL_AUTOPILOT_WARN", "autopilot_warn"),
    key("MEMCTL_AUTOPILOT_CRITICAL", "autopilot_critical"),
    key("MEMCTL_AUTOPILOT_NOTE", "autopilot_note"),
    key("MEMCTL_AUTO_PRUNE", "auto_prune"),
    key("MEMCTL_SWAP", "swap"),
    key("MEMCTL_SWAP_IN_PLACE", "swap_in_place"),
    key("MEMCTL_SWAP_IN_PLACE_CHARS", "swap_in_place_chars"),
    key("MEMCTL_RECALL", "recall"),
    key("MEMCTL_RECALL_CHARS", "recall_chars"),
    key("MEMCTL_RESIDENT", "resident"),
    key("MEMCTL_RESIDENT_IDLE_SECS", "resident_idle_secs"),
    key("MEMCTL_MCP_RESIDENT_VECTORS", "mcp_resident_vectors"),
    key("MEMCTL_ANN", "ann"),
    key("MEMCTL_ANN_MIN", "ann_min"),
    key("MEMCTL_ANN_SAVE_SECS", "ann_save_secs"),
    key("MEMCTL_ANN_FREEZE_MIN", "ann_freeze_min"),
    Key {
        var: "MEMCTL_SUMMARIZER_CMD",
        name: "summarizer_cmd",
        path: false,
        project: ProjectRule::Refused(
            "it runs a command: a cloned repository must not make memctl run one",
        ),
    },
    key("MEMCTL_SUMMARIZER_TIMEOUT_SECS", "summarizer_timeout_secs"),
    key("MEMCTL_HOOK_INLINE_BYTES", "hook_inline_bytes"),
    key(
        "MEMCTL_HOOK_INLINE_PROMPT_ARCHIVE",
        "hook_inline_prompt_archive",
    ),
    key("MEMCTL_HOOK_DEADLINE_MS", "hook_deadline_ms"),
    key("MEMCTL_LOG", "log"),
    user_text(
        "MEMCTL_TEAM_URL",
        "team_url",
        "it holds the team database's credentials, and a committed file is read by everyone who clones it",
    ),
    user_path(
        "MEMCTL_TEAM_URL_FILE",
        "team_url_file",
        "it says where the team database's credentials are read from",
    ),
    user_path(
        "MEMCTL_TEAM_CA_FILE",
        "team_ca_file",
        "it decides which certificate authority the team database's certificate is trusted from",
    ),
];

/// The setting named by a file key (`restore_chars`) or a variable (`MEMCTL_RESTORE_CHARS`).
pub fn find(name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|k| k.name == name || k.var == name)
}

/// The key a misspelt file key probably meant: `MEMCTL_RESTORE_CHARS`, `Restore-Chars` and
/// `restore_chars` all mean `restore_chars`.
pub(super) fn suggestion(name: &str) -> Option<&'static str> {
    let n = name.trim().to_ascii_lowercase().replace('-', "_");
    let n = n.strip_prefix("memctl_").unwrap_or(&n);
    KEYS.iter().find(|k| k.name == n).map(|k| k.name)
}

/// Whether a variable is memctl's (a knob or the repository's tooling).
pub(super) fn is_known(name: &str) -> bool {
    KNOWN_VARS.contains(&name)
        || TOOLING_VARS.iter().any(|t| {
            if t.ends_with('_') {
                name.starts_with(t)
            } else {
                name == *t
            }
        })
}
