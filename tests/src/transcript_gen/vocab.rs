//! The generator's vocabulary: projects, file trees, identifiers, phrasings and error texts of
//! three kinds of project (Rust, TypeScript, Python). The same lists as the reference generator
//! (`scripts/gen_transcript.py`), so that the synthetic sessions read like the ones the peer
//! benchmarks use: recurring file paths, tool names and error messages are what retrieval is
//! measured on.

/// The language of a synthetic project: picks its files, commands and error texts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    /// A Cargo workspace.
    Rust,
    /// A Node/TypeScript service with a web front end.
    Ts,
    /// A Python package.
    Python,
}

impl Lang {
    /// The short name the summaries print (`rust`, `ts`, `python`).
    pub fn name(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Ts => "ts",
            Lang::Python => "python",
        }
    }

    /// The project's files, relative to its root.
    pub fn files(self) -> &'static [&'static str] {
        match self {
            Lang::Rust => RUST_FILES,
            Lang::Ts => TS_FILES,
            Lang::Python => PY_FILES,
        }
    }

    /// Test, build and lint commands.
    pub fn test_cmds(self) -> &'static [&'static str] {
        match self {
            Lang::Rust => &[
                "cargo test",
                "cargo test -p core --lib",
                "cargo clippy --all-targets -- -D warnings",
                "cargo build --release",
                "cargo test --test integration_sync -- --nocapture",
                "cargo fmt --check",
            ],
            Lang::Ts => &[
                "npm test",
                "npx vitest run test/routes",
                "npx tsc --noEmit",
                "npm run lint",
                "npm run build",
                "npx vitest run --coverage",
            ],
            Lang::Python => &[
                "pytest -q",
                "pytest tests/test_scheduler.py -x -q",
                "mypy kiln",
                "ruff check .",
                "python -m kiln.cli --help",
                "pytest -q -k sqlite",
            ],
        }
    }

    /// Error templates: `{f}` file, `{l}` line, `{i}` identifier, `{I}` capitalised
    /// identifier, `{v}` verb, `{p}` project.
    pub fn errors(self) -> &'static [&'static str] {
        match self {
            Lang::Rust => &[
                "error[E0308]: mismatched types\n  --> {f}:{l}:17\n   |\n{l} |     let n: usize = {i}.len() as u32;\n   |            -----   ^^^^^^^^^^^^^^^^^^ expected `usize`, found `u32`\n   |            |\n   |            expected due to this",
                "error[E0502]: cannot borrow `self.{i}` as mutable because it is also borrowed as immutable\n  --> {f}:{l}:9",
                "thread 'sync::tests::{v}_{i}_roundtrip' panicked at {f}:{l}:5:\nassertion `left == right` failed\n  left: 3\n right: 4\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
                "error: could not compile `{p}` (lib) due to 2 previous errors; 1 warning emitted",
                "Error: database is locked (code 5) while calling {v}_{i} at {f}:{l}",
            ],
            Lang::Ts => &[
                "{f}:{l}:12 - error TS2345: Argument of type 'string | undefined' is not assignable to parameter of type 'string'.\n  Type 'undefined' is not assignable to type 'string'.",
                "TypeError: Cannot read properties of undefined (reading '{i}')\n    at {v}{I} ({f}:{l}:21)\n    at processTicksAndRejections (node:internal/process/task_queues:95:5)",
                "FAIL test/routes/users.test.ts\n  * GET /users > returns 404 for unknown id\n    expect(received).toBe(expected)\n    Expected: 404\n    Received: 500",
                "npm ERR! code ELIFECYCLE\nnpm ERR! errno 1\nnpm ERR! {p}@1.4.2 build: `tsc -p .`",
                "Error: SQLITE_BUSY: database is locked\n    at Database.prepare ({f}:{l}:8)",
            ],
            Lang::Python => &[
                "Traceback (most recent call last):\n  File \"{f}\", line {l}, in {v}_{i}\n    return self._{i}[key]\nKeyError: '{i}_id'",
                "FAILED tests/test_runner.py::test_{v}_{i} - AssertionError: assert 3 == 4",
                "sqlite3.OperationalError: database is locked\n  File \"{f}\", line {l}, in {v}",
                "mypy: {f}:{l}: error: Incompatible types in assignment (expression has type \"str | None\", variable has type \"str\")  [assignment]",
                "ImportError: cannot import name '{v}_{i}' from 'kiln.utils' ({f})",
            ],
        }
    }
}

/// Project names and languages; the seed picks one (`seed % len`), and `cwd` ends in its name,
/// which is how an appended transcript finds its project again.
pub const PROJECTS: &[(&str, Lang)] = &[
    ("orbit-sync", Lang::Rust),
    ("ledgerly", Lang::Ts),
    ("kiln-ci", Lang::Python),
    ("tessera-db", Lang::Rust),
    ("harbor-api", Lang::Ts),
    ("quill-notes", Lang::Python),
];

const RUST_FILES: &[&str] = &[
    "src/main.rs",
    "src/lib.rs",
    "src/config.rs",
    "src/error.rs",
    "src/cli.rs",
    "src/store/mod.rs",
    "src/store/sqlite.rs",
    "src/store/migrations.rs",
    "src/sync/mod.rs",
    "src/sync/protocol.rs",
    "src/sync/retry.rs",
    "src/auth/session.rs",
    "src/auth/token.rs",
    "src/api/handlers.rs",
    "src/api/routes.rs",
    "src/util/hash.rs",
    "src/util/time.rs",
    "crates/core/src/lib.rs",
    "crates/core/src/chunk.rs",
    "crates/core/src/index.rs",
    "tests/integration_sync.rs",
    "tests/store_roundtrip.rs",
    "benches/ingest.rs",
    "Cargo.toml",
    "crates/core/Cargo.toml",
    "README.md",
    ".github/workflows/ci.yml",
];

const TS_FILES: &[&str] = &[
    "src/index.ts",
    "src/server.ts",
    "src/config.ts",
    "src/errors.ts",
    "src/routes/users.ts",
    "src/routes/invoices.ts",
    "src/routes/health.ts",
    "src/services/billing.ts",
    "src/services/email.ts",
    "src/db/client.ts",
    "src/db/migrations/0007_add_currency.sql",
    "src/middleware/auth.ts",
    "src/middleware/rateLimit.ts",
    "src/utils/money.ts",
    "src/utils/dates.ts",
    "web/src/App.tsx",
    "web/src/components/InvoiceTable.tsx",
    "web/src/hooks/useSession.ts",
    "test/routes/users.test.ts",
    "test/services/billing.test.ts",
    "package.json",
    "tsconfig.json",
    "README.md",
    ".github/workflows/ci.yml",
];

const PY_FILES: &[&str] = &[
    "kiln/__init__.py",
    "kiln/cli.py",
    "kiln/config.py",
    "kiln/runner.py",
    "kiln/scheduler.py",
    "kiln/storage/sqlite.py",
    "kiln/storage/cache.py",
    "kiln/api/app.py",
    "kiln/api/schemas.py",
    "kiln/workers/pool.py",
    "kiln/utils/hashing.py",
    "kiln/utils/logging.py",
    "tests/test_runner.py",
    "tests/test_scheduler.py",
    "tests/conftest.py",
    "pyproject.toml",
    "README.md",
    "docs/architecture.md",
    ".github/workflows/ci.yml",
];

pub const IDENTS: &[&str] = &[
    "session",
    "token",
    "retry_policy",
    "chunk",
    "invoice",
    "ledger",
    "cursor",
    "batch",
    "manifest",
    "snapshot",
    "queue",
    "worker",
    "schema",
    "cache",
    "checkpoint",
    "digest",
    "payload",
    "handle",
    "pool",
    "budget",
    "window",
];

pub const VERBS: &[&str] = &[
    "load", "parse", "store", "flush", "compute", "validate", "render", "sync", "build", "resolve",
    "merge", "encode", "decode", "refresh", "prune", "index",
];

pub const FEATURES: &[&str] = &[
    "pagination",
    "rate limiting",
    "retry with exponential backoff",
    "a --dry-run flag",
    "structured JSON logging",
    "a health check endpoint",
    "request tracing ids",
    "soft delete",
    "an LRU cache",
    "graceful shutdown",
    "a config file loader",
    "CSV export",
    "optimistic locking",
    "webhook signature verification",
    "incremental re-indexing",
    "a progress bar",
    "a migration for the new column",
];

/// (chosen, rejected): the decisions the assistant explains.
pub const APPROACHES: &[(&str, &str)] = &[
    ("a bounded channel", "an unbounded Vec"),
    ("SQLite WAL mode", "a JSON file"),
    ("a content hash for dedup", "comparing full strings"),
    ("serde's #[serde(default)]", "manual Option handling"),
    ("zod schemas", "hand-written validators"),
    ("a single transaction", "per-row commits"),
    ("the existing retry helper", "a new ad-hoc loop"),
    ("dataclasses", "plain dicts"),
    ("an index on (session_id, chunk_index)", "a full scan"),
    (
        "streaming the file line by line",
        "reading it all into memory",
    ),
];

pub const REASONS: &[&str] = &[
    "it keeps memory bounded",
    "it avoids a second round trip",
    "the tests already rely on it",
    "it is what the rest of the codebase does",
    "it makes the failure mode explicit",
    "it halves the p95 latency in the benchmark",
    "it survives a crash mid-write",
];

pub const SHORT_PROMPTS: &[&str] = &[
    "continue",
    "yes, do that",
    "looks good, commit it",
    "run the tests again",
    "ok",
    "go ahead",
    "can you also update the README?",
    "what changed?",
    "try again",
    "undo that last change",
    "now push it",
    "lgtm, next",
];

/// `{f}` file, `{msg}` commit message.
pub const MISC_CMDS: &[&str] = &[
    "git status --short",
    "git diff --stat",
    "git log --oneline -5",
    "ls -la",
    "rg -n 'TODO' --max-count 5",
    "wc -l {f}",
    "git add -A && git commit -m '{msg}'",
    "sqlite3 .data/app.db '.schema'",
    "du -sh target node_modules 2>/dev/null",
];

pub const VERSIONS: &[&str] = &["2.0.14", "2.0.22", "2.0.31", "2.0.37"];
pub const BRANCHES: &[&str] = &["main", "feat/sync-retry", "fix/locking", "dev"];
pub const MODEL: &str = "claude-sonnet-4-5-20250929";
