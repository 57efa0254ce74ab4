#!/usr/bin/env python3
"""Synthetic Claude Code transcript (JSONL) generator -- stdlib only, deterministic by seed.

    gen_transcript.py --turns N --seed S [--layout combined|split] [--no-compact] > t.jsonl
    gen_transcript.py --append-to t.jsonl --turns 2 --seed S >> t.jsonl

A "turn" is one real user prompt followed by the assistant's agentic loop
(0..6 tool_use / tool_result round trips) ending in a text-only assistant
message (stop_reason end_turn), as Claude Code writes them.

Line kinds emitted (all shapes as in real ~/.claude/projects/*/<session>.jsonl):
  * file-history-snapshot        (before each prompt, as Claude Code 2.x does)
  * user   (prompt; string content, sometimes [{"type":"text"}] blocks)
  * assistant (message.content = [thinking?, text?, tool_use...], usage{...})
  * user   (tool_result blocks + top-level toolUseResult)
  * system compact_boundary + user isCompactSummary (auto-compaction when the
    simulated context passes --compact-at tokens; disable with --no-compact)
  * rare: slash-command meta lines, "[Request interrupted by user]"
  * CLI bookkeeping the real client writes (unless --no-extras): `queue-operation` before a
    prompt, `attachment` lines in the chain after it (`hook_success` and
    `hook_additional_context`, i.e. a hook's output written back: never conversation),
    `last-prompt`, and a line of a type no parser knows yet (must be skipped, never fatal)

memctl's copy of the project's reference generator (tests and benches need nothing outside the
repository). The extras come from a second random stream, so `--no-extras` gives exactly the
reference generator's bytes for the same arguments (what the peer benchmarks compare on).

--layout combined : one line per API message holding all its content blocks (default)
--layout split    : one line per content block sharing message.id / requestId
                    (what Claude Code's streaming writer does in practice)

--append-to FILE  : read FILE, continue its chain (parentUuid, sessionId, cwd,
                    timestamps, context size) and print only the new lines.
"""
import argparse
import datetime as _dt
import json
import os
import sys
import random
import uuid as _uuid

B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

PROJECTS = [
    ("orbit-sync", "rust"), ("ledgerly", "ts"), ("kiln-ci", "python"),
    ("tessera-db", "rust"), ("harbor-api", "ts"), ("quill-notes", "python"),
]

RUST_FILES = [
    "src/main.rs", "src/lib.rs", "src/config.rs", "src/error.rs", "src/cli.rs",
    "src/store/mod.rs", "src/store/sqlite.rs", "src/store/migrations.rs",
    "src/sync/mod.rs", "src/sync/protocol.rs", "src/sync/retry.rs",
    "src/auth/session.rs", "src/auth/token.rs", "src/api/handlers.rs",
    "src/api/routes.rs", "src/util/hash.rs", "src/util/time.rs",
    "crates/core/src/lib.rs", "crates/core/src/chunk.rs", "crates/core/src/index.rs",
    "tests/integration_sync.rs", "tests/store_roundtrip.rs", "benches/ingest.rs",
    "Cargo.toml", "crates/core/Cargo.toml", "README.md", ".github/workflows/ci.yml",
]
TS_FILES = [
    "src/index.ts", "src/server.ts", "src/config.ts", "src/errors.ts",
    "src/routes/users.ts", "src/routes/invoices.ts", "src/routes/health.ts",
    "src/services/billing.ts", "src/services/email.ts", "src/db/client.ts",
    "src/db/migrations/0007_add_currency.sql", "src/middleware/auth.ts",
    "src/middleware/rateLimit.ts", "src/utils/money.ts", "src/utils/dates.ts",
    "web/src/App.tsx", "web/src/components/InvoiceTable.tsx",
    "web/src/hooks/useSession.ts", "test/routes/users.test.ts",
    "test/services/billing.test.ts", "package.json", "tsconfig.json",
    "README.md", ".github/workflows/ci.yml",
]
PY_FILES = [
    "kiln/__init__.py", "kiln/cli.py", "kiln/config.py", "kiln/runner.py",
    "kiln/scheduler.py", "kiln/storage/sqlite.py", "kiln/storage/cache.py",
    "kiln/api/app.py", "kiln/api/schemas.py", "kiln/workers/pool.py",
    "kiln/utils/hashing.py", "kiln/utils/logging.py", "tests/test_runner.py",
    "tests/test_scheduler.py", "tests/conftest.py", "pyproject.toml",
    "README.md", "docs/architecture.md", ".github/workflows/ci.yml",
]
FILES_BY_LANG = {"rust": RUST_FILES, "ts": TS_FILES, "python": PY_FILES}

IDENTS = ["session", "token", "retry_policy", "chunk", "invoice", "ledger", "cursor",
          "batch", "manifest", "snapshot", "queue", "worker", "schema", "cache",
          "checkpoint", "digest", "payload", "handle", "pool", "budget", "window"]
VERBS = ["load", "parse", "store", "flush", "compute", "validate", "render", "sync",
         "build", "resolve", "merge", "encode", "decode", "refresh", "prune", "index"]
FEATURES = ["pagination", "rate limiting", "retry with exponential backoff", "a --dry-run flag",
            "structured JSON logging", "a health check endpoint", "request tracing ids",
            "soft delete", "an LRU cache", "graceful shutdown", "a config file loader",
            "CSV export", "optimistic locking", "webhook signature verification",
            "incremental re-indexing", "a progress bar", "a migration for the new column"]
APPROACHES = [("a bounded channel", "an unbounded Vec"), ("SQLite WAL mode", "a JSON file"),
              ("a content hash for dedup", "comparing full strings"),
              ("serde's #[serde(default)]", "manual Option handling"),
              ("zod schemas", "hand-written validators"), ("a single transaction", "per-row commits"),
              ("the existing retry helper", "a new ad-hoc loop"),
              ("dataclasses", "plain dicts"), ("an index on (session_id, chunk_index)", "a full scan"),
              ("streaming the file line by line", "reading it all into memory")]
REASONS = ["it keeps memory bounded", "it avoids a second round trip", "the tests already rely on it",
           "it is what the rest of the codebase does", "it makes the failure mode explicit",
           "it halves the p95 latency in the benchmark", "it survives a crash mid-write"]
SHORT_PROMPTS = ["continue", "yes, do that", "looks good, commit it", "run the tests again",
                 "ok", "go ahead", "can you also update the README?", "what changed?",
                 "try again", "undo that last change", "now push it", "lgtm, next"]

ERRORS = {
    "rust": [
        "error[E0308]: mismatched types\n  --> {f}:{l}:17\n   |\n{l} |     let n: usize = {i}.len() as u32;\n   |            -----   ^^^^^^^^^^^^^^^^^^ expected `usize`, found `u32`\n   |            |\n   |            expected due to this",
        "error[E0502]: cannot borrow `self.{i}` as mutable because it is also borrowed as immutable\n  --> {f}:{l}:9",
        "thread 'sync::tests::{v}_{i}_roundtrip' panicked at {f}:{l}:5:\nassertion `left == right` failed\n  left: 3\n right: 4\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
        "error: could not compile `{p}` (lib) due to 2 previous errors; 1 warning emitted",
        "Error: database is locked (code 5) while calling {v}_{i} at {f}:{l}",
    ],
    "ts": [
        "{f}:{l}:12 - error TS2345: Argument of type 'string | undefined' is not assignable to parameter of type 'string'.\n  Type 'undefined' is not assignable to type 'string'.",
        "TypeError: Cannot read properties of undefined (reading '{i}')\n    at {v}{I} ({f}:{l}:21)\n    at processTicksAndRejections (node:internal/process/task_queues:95:5)",
        "FAIL test/routes/users.test.ts\n  * GET /users > returns 404 for unknown id\n    expect(received).toBe(expected)\n    Expected: 404\n    Received: 500",
        "npm ERR! code ELIFECYCLE\nnpm ERR! errno 1\nnpm ERR! {p}@1.4.2 build: `tsc -p .`",
        "Error: SQLITE_BUSY: database is locked\n    at Database.prepare ({f}:{l}:8)",
    ],
    "python": [
        "Traceback (most recent call last):\n  File \"{f}\", line {l}, in {v}_{i}\n    return self._{i}[key]\nKeyError: '{i}_id'",
        "FAILED tests/test_runner.py::test_{v}_{i} - AssertionError: assert 3 == 4",
        "sqlite3.OperationalError: database is locked\n  File \"{f}\", line {l}, in {v}",
        "mypy: {f}:{l}: error: Incompatible types in assignment (expression has type \"str | None\", variable has type \"str\")  [assignment]",
        "ImportError: cannot import name '{v}_{i}' from 'kiln.utils' ({f})",
    ],
}

TEST_CMDS = {"rust": ["cargo test", "cargo test -p core --lib", "cargo clippy --all-targets -- -D warnings",
                      "cargo build --release", "cargo test --test integration_sync -- --nocapture", "cargo fmt --check"],
             "ts": ["npm test", "npx vitest run test/routes", "npx tsc --noEmit", "npm run lint",
                    "npm run build", "npx vitest run --coverage"],
             "python": ["pytest -q", "pytest tests/test_scheduler.py -x -q", "mypy kiln", "ruff check .",
                        "python -m kiln.cli --help", "pytest -q -k sqlite"]}
MISC_CMDS = ["git status --short", "git diff --stat", "git log --oneline -5", "ls -la",
             "rg -n 'TODO' --max-count 5", "wc -l {f}", "git add -A && git commit -m '{msg}'",
             "sqlite3 .data/app.db '.schema'", "du -sh target node_modules 2>/dev/null"]


def rid(rng, prefix, n):
    return prefix + "".join(rng.choice(B62) for _ in range(n))


def ruuid(rng):
    return str(_uuid.UUID(int=rng.getrandbits(128), version=4))


def iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


def approx_tokens(s):
    return max(1, int(len(s) / 3.6))


class Gen:
    def __init__(self, seed, layout="combined", compact=True, compact_at=160000, state=None, extras=True):
        self.extras = extras
        self.xrng = random.Random("extras:%d" % seed)
        self.rng = random.Random(seed)
        rng = self.rng
        self.layout = layout
        self.compact = compact
        self.compact_at = compact_at
        name, lang = PROJECTS[seed % len(PROJECTS)]
        self.project, self.lang = name, lang
        self.files = FILES_BY_LANG[lang]
        self.cwd = "/home/dev/src/%s" % name
        self.session = ruuid(rng)
        self.version = rng.choice(["2.0.14", "2.0.22", "2.0.31", "2.0.37"])
        self.branch = rng.choice(["main", "feat/sync-retry", "fix/locking", "dev"])
        self.model = "claude-sonnet-4-5-20250929"
        self.t = _dt.datetime(2025, 10, 1, 9, 0, 0, tzinfo=_dt.timezone.utc) + _dt.timedelta(
            minutes=rng.randrange(0, 60 * 24 * 30))
        self.parent = None
        self.context = 15500 + rng.randrange(0, 3000)   # system prompt + tools + CLAUDE.md
        self.base_context = self.context
        self.file_cache = {}
        self.turn_no = 0
        if state:
            self.__dict__.update(state)
        self.out = []

    # ------------------------------------------------------------------ helpers
    def tick(self, lo, hi):
        self.t += _dt.timedelta(milliseconds=self.rng.randrange(int(lo * 1000), int(hi * 1000)))
        return iso(self.t)

    def envelope(self, typ, extra=None):
        u = ruuid(self.rng)
        d = {"parentUuid": self.parent, "isSidechain": False, "userType": "external",
             "cwd": self.cwd, "sessionId": self.session, "version": self.version,
             "gitBranch": self.branch, "type": typ}
        if extra:
            d.update(extra)
        d["uuid"] = u
        d["timestamp"] = self.tick(0.05, 2.5)
        self.parent = u
        return d

    def emit(self, d):
        self.out.append(json.dumps(d, ensure_ascii=False, separators=(",", ":")))

    def abspath(self, rel):
        return self.cwd + "/" + rel

    def ident(self):
        return self.rng.choice(VERBS) + "_" + self.rng.choice(IDENTS)

    def file_lines(self, rel):
        if rel in self.file_cache:
            return self.file_cache[rel]
        r = random.Random("%s:%s" % (self.project, rel))
        n = r.randrange(25, 220)
        lines = []
        lang = self.lang
        for i in range(n):
            k = r.random()
            fn = r.choice(VERBS) + "_" + r.choice(IDENTS)
            if rel.endswith((".toml", ".json", ".yml", ".md", ".sql")):
                lines.append(r.choice([
                    "name = \"%s\"" % fn, "version = \"0.%d.%d\"" % (r.randrange(9), r.randrange(20)),
                    "  - run: %s" % r.choice(TEST_CMDS[lang]), "## %s" % fn.replace("_", " ").title(),
                    "ALTER TABLE %ss ADD COLUMN %s TEXT;" % (r.choice(IDENTS), fn), "",
                    "  \"%s\": \"^%d.%d.0\"," % (r.choice(IDENTS), r.randrange(1, 9), r.randrange(20))]))
            elif lang == "rust":
                lines.append(r.choice([
                    "pub fn %s(&self, %s: &%s) -> Result<%s> {" % (fn, r.choice(IDENTS), r.choice(IDENTS).title(), r.choice(IDENTS).title()),
                    "    let %s = self.%s.get(&key).ok_or(Error::NotFound)?;" % (r.choice(IDENTS), r.choice(IDENTS)),
                    "    // TODO: handle partial writes", "}", "", "use crate::%s::%s;" % (r.choice(IDENTS), r.choice(IDENTS).title()),
                    "#[derive(Debug, Clone, Serialize, Deserialize)]", "    tx.commit()?;",
                    "    tracing::debug!(%s = ?%s, \"%s\");" % (r.choice(IDENTS), r.choice(IDENTS), fn),
                    "impl %s for %s {" % (r.choice(IDENTS).title(), r.choice(IDENTS).title())] if k < .95 else ["#[cfg(test)]", "mod tests {"]))
            elif lang == "ts":
                lines.append(r.choice([
                    "export async function %s(%s: %s): Promise<%s> {" % (fn, r.choice(IDENTS), r.choice(IDENTS).title(), r.choice(IDENTS).title()),
                    "  const %s = await db.query(sql`SELECT * FROM %ss WHERE id = ${id}`);" % (r.choice(IDENTS), r.choice(IDENTS)),
                    "  // TODO: validate currency", "}", "", "import { %s } from './%s';" % (fn, r.choice(IDENTS)),
                    "  if (!%s) throw new NotFoundError('%s');" % (r.choice(IDENTS), r.choice(IDENTS)),
                    "  logger.info({ %s }, '%s');" % (r.choice(IDENTS), fn), "  return res.status(200).json(%s);" % r.choice(IDENTS)]))
            else:
                lines.append(r.choice([
                    "def %s(self, %s: %s) -> %s:" % (fn, r.choice(IDENTS), r.choice(IDENTS).title(), r.choice(IDENTS).title()),
                    "    %s = self._%s.get(key)" % (r.choice(IDENTS), r.choice(IDENTS)), "    # TODO: handle timeouts", "",
                    "from kiln.%s import %s" % (r.choice(IDENTS), r.choice(IDENTS).title()),
                    "    if %s is None:\n        raise KeyError(%r)" % (r.choice(IDENTS), r.choice(IDENTS)),
                    "    log.debug(\"%s\", extra={\"%s\": %s})" % (fn, r.choice(IDENTS), r.choice(IDENTS)),
                    "    return %s" % r.choice(IDENTS)]))
        self.file_cache[rel] = lines
        return lines

    def numbered(self, lines, start=1):
        return "\n".join("%6d\u2192%s" % (i + start, l) for i, l in enumerate(lines))

    def error_text(self, rel=None):
        rel = rel or self.rng.choice(self.files)
        tmpl = self.rng.choice(ERRORS[self.lang])
        i, v = self.rng.choice(IDENTS), self.rng.choice(VERBS)
        return tmpl.format(f=rel, l=self.rng.randrange(5, 400), i=i, v=v, I=i.title(), p=self.project)

    # ------------------------------------------------------------------ content
    def user_prompt(self):
        r = self.rng
        rel = r.choice(self.files)
        fn = self.ident()
        k = r.random()
        if k < 0.16:
            return r.choice(SHORT_PROMPTS)
        if k < 0.32:
            return "The build is failing with this:\n```\n%s\n```\nCan you fix it? Don't change the public API of %s." % (
                self.error_text(rel), rel)
        if k < 0.46:
            return "Add %s to `%s` in %s. It should be covered by a test and %s." % (
                r.choice(FEATURES), fn, rel, r.choice(["not break existing callers", "be off by default",
                                                        "log at debug level only", "respect the config file"]))
        if k < 0.58:
            a, b = r.choice(APPROACHES)
            return "Refactor `%s` in %s to use %s instead of %s. Keep the behaviour identical." % (fn, rel, a, b)
        if k < 0.68:
            return "Why does `%s` take %d seconds on CI but only %d locally? Look at %s." % (
                r.choice(TEST_CMDS[self.lang]), r.randrange(40, 400), r.randrange(3, 30), rel)
        if k < 0.76:
            return "Rename `%s` to `%s` everywhere, including the docs and tests." % (fn, self.ident())
        if k < 0.84:
            return "Review %s and tell me whether the error handling in `%s` is right.\nI'm worried about the case where %s." % (
                rel, fn, r.choice(["the connection drops mid-transaction", "the file is empty",
                                   "two workers race on the same key", "the config is missing"]))
        if k < 0.90:
            return "Here is the log from production:\n```\n%s\n%s\n```\nWhat is going on?" % (
                self.error_text(rel), "\n".join("%s WARN %s: retrying (attempt %d)" % (
                    iso(self.t), fn, j + 1) for j in range(r.randrange(2, 8))))
        if k < 0.95:
            return "Write the migration for the `%ss` table adding `%s` (nullable), and update the queries in %s." % (
                r.choice(IDENTS), self.ident(), rel)
        return "Let's plan the next step: %s. What files would you touch and in what order?" % r.choice(FEATURES)

    def assistant_lead(self, rel):
        r = self.rng
        return r.choice([
            "I'll start by reading %s to see how it is structured." % rel,
            "Let me look at the failing code path first.",
            "Let me search for all the call sites before changing anything.",
            "I'll run the tests to reproduce the problem.",
            "Let me check the current state of the working tree.",
            "I'll read the relevant file and then make the change.",
        ])

    def assistant_mid(self, rel):
        r = self.rng
        a, b = r.choice(APPROACHES)
        return r.choice([
            "The error comes from `%s` in %s: it assumes the value is always present." % (self.ident(), rel),
            "Found it. The %s is rebuilt on every call, which explains the slowdown." % r.choice(IDENTS),
            "I decided to use %s instead of %s because %s." % (a, b, r.choice(REASONS)),
            "Now I'll update the test to cover the new branch.",
            "That compiles. Let me run the full suite.",
            "Choosing %s rather than %s here, since %s." % (a, b, r.choice(REASONS)),
            "",
        ])

    def assistant_final(self, touched):
        r = self.rng
        k = r.random()
        if k < 0.25:
            a, b = r.choice(APPROACHES)
            head = "Done. I took the approach of %s rather than %s, because %s." % (a, b, r.choice(REASONS))
        elif k < 0.5:
            head = "All %d tests pass now." % r.randrange(12, 480)
        elif k < 0.7:
            head = "The root cause was %s." % r.choice(["a missing `await`", "an off-by-one in the cursor",
                                                        "a stale cache entry", "the lock being held across an await point",
                                                        "a mismatched column type", "an unhandled None"])
        else:
            head = "Here's a summary of the changes:"
        bullets = ["- `%s`: %s" % (f, r.choice(["added %s" % r.choice(FEATURES), "fixed error handling in `%s`" % self.ident(),
                                                  "renamed `%s`" % self.ident(), "new test for `%s`" % self.ident(),
                                                  "removed dead code", "tightened types"])) for f in touched[:4]]
        tail = r.choice(["", "\n\nWant me to commit this?", "\n\nNext, I'd suggest adding %s." % r.choice(FEATURES),
                         "\n\nNote: `%s` still has a TODO for %s." % (r.choice(self.files), r.choice(FEATURES))])
        return head + ("\n\n" + "\n".join(bullets) if bullets else "") + tail

    # ------------------------------------------------------------------ tool calls
    def tool_call(self, rel, phase):
        """Return (name, input, result_text, is_error, toolUseResult, touched_rel)."""
        r = self.rng
        path = self.abspath(rel)
        k = r.random()
        if phase == 0:
            name = r.choice(["Read", "Read", "Grep", "Bash", "Glob"])
        else:
            name = r.choice(["Read", "Edit", "Edit", "Bash", "Bash", "Grep", "Write", "TodoWrite"]) if k < 0.97 else "Read"
        if name == "Read":
            lines = self.file_lines(rel)
            off, lim = 1, len(lines)
            inp = {"file_path": path}
            if len(lines) > 150 and r.random() < 0.5:
                off = r.randrange(1, len(lines) - 60)
                lim = 60
                inp.update({"offset": off, "limit": lim})
            body = self.numbered(lines[off - 1:off - 1 + lim], off)
            tur = {"type": "text", "file": {"filePath": path, "content": "\n".join(lines[off - 1:off - 1 + lim]),
                                             "numLines": min(lim, len(lines)), "startLine": off, "totalLines": len(lines)}}
            return name, inp, body, False, tur, None
        if name == "Edit":
            lines = self.file_lines(rel)
            j = r.randrange(0, len(lines))
            old = lines[j] if lines[j].strip() else "}"
            new = old.replace("Result<", "anyhow::Result<") if "Result<" in old else old + "  // " + self.ident()
            inp = {"file_path": path, "old_string": old, "new_string": new}
            if r.random() < 0.1:
                inp["replace_all"] = True
            lo = max(0, j - 4)
            snippet = self.numbered(lines[lo:j] + [new] + lines[j + 1:j + 5], lo + 1)
            if r.random() < 0.06:
                err = "<tool_use_error>String to replace not found in file.\nString: %s</tool_use_error>" % old
                return name, inp, err, True, "Error: String to replace not found in file.", None
            body = "The file %s has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n%s" % (path, snippet)
            tur = {"filePath": path, "oldString": old, "newString": new, "originalFile": "\n".join(lines),
                   "structuredPatch": [{"oldStart": j + 1, "oldLines": 1, "newStart": j + 1, "newLines": 1,
                                        "lines": ["-" + old, "+" + new]}], "userModified": False,
                   "replaceAll": bool(inp.get("replace_all"))}
            lines[j] = new
            return name, inp, body, False, tur, rel
        if name == "Write":
            content = "\n".join(self.file_lines(rel)[: r.randrange(10, 40)])
            inp = {"file_path": path, "content": content}
            return name, inp, "File created successfully at: %s" % path, False, {
                "type": "create", "filePath": path, "content": content, "structuredPatch": []}, rel
        if name == "Grep":
            pat = r.choice(IDENTS + VERBS)
            mode = r.choice(["files_with_matches", "content", "files_with_matches"])
            inp = {"pattern": pat, "path": r.choice([self.cwd, self.abspath(os.path.dirname(rel) or ".")]),
                   "output_mode": mode}
            if mode == "content":
                inp["-n"] = True
                hits = ["%s:%d:%s" % (self.abspath(f), r.randrange(1, 300), r.choice(self.file_lines(f)))
                        for f in r.sample(self.files, min(len(self.files), r.randrange(1, 9)))]
                body = "\n".join(hits)
                tur = {"mode": "content", "numFiles": 0, "filenames": [], "content": body, "numLines": len(hits)}
            else:
                fs = [self.abspath(f) for f in r.sample(self.files, r.randrange(0, 7))]
                body = ("Found %d files\n" % len(fs) + "\n".join(fs)) if fs else "No files found"
                tur = {"mode": "files_with_matches", "filenames": fs, "numFiles": len(fs)}
            return name, inp, body, False, tur, None
        if name == "Glob":
            pat = r.choice(["**/*.rs", "src/**/*.ts", "**/test_*.py", "**/*.toml", "**/*.md"])
            fs = [self.abspath(f) for f in r.sample(self.files, r.randrange(1, 12))]
            return name, {"pattern": pat}, "\n".join(fs), False, {
                "filenames": fs, "durationMs": r.randrange(3, 90), "numFiles": len(fs), "truncated": False}, None
        if name == "TodoWrite":
            todos = [{"content": "%s %s" % (r.choice(["Fix", "Add", "Test", "Refactor", "Document"]), self.ident()),
                      "status": r.choice(["pending", "in_progress", "completed"]),
                      "activeForm": "Working on %s" % self.ident()} for _ in range(r.randrange(2, 6))]
            return name, {"todos": todos}, ("Todos have been modified successfully. Ensure that you continue to use the todo "
                                            "list to track your progress. Please proceed with the current tasks if applicable"), False, {
                "oldTodos": [], "newTodos": todos}, None
        # Bash
        if r.random() < 0.6:
            cmd = r.choice(TEST_CMDS[self.lang])
        else:
            cmd = r.choice(MISC_CMDS).format(f=rel, msg="%s: %s" % (r.choice(["fix", "feat", "refactor", "test"]),
                                                                      self.ident().replace("_", " ")))
        inp = {"command": cmd, "description": r.choice(["Run the test suite", "Check build", "Show working tree status",
                                                        "Run linter", "Inspect schema", "Commit changes"])}
        if r.random() < 0.1:
            inp["timeout"] = 600000
        fail = r.random() < 0.22
        if fail:
            out = "\n".join(self.error_text(rel) for _ in range(r.randrange(1, 3)))
            body = "Exit code %d\n%s" % (r.choice([1, 1, 2, 101]), out)
            return "Bash", inp, body, True, "Error: " + body, None
        n = r.randrange(3, 160)
        if cmd.startswith(("cargo test", "pytest", "npm test", "npx vitest")):
            body = "\n".join("test %s::%s ... ok" % (r.choice(IDENTS), self.ident()) for _ in range(n)) + \
                   "\n\ntest result: ok. %d passed; 0 failed; 0 ignored; finished in %.2fs" % (n, r.random() * 20)
        elif cmd.startswith("git"):
            body = "\n".join(" M %s" % f for f in r.sample(self.files, r.randrange(1, 6)))
        else:
            body = "\n".join("%s %s" % (r.choice(IDENTS), r.randrange(1, 99999)) for _ in range(r.randrange(1, 20)))
        return "Bash", inp, body, False, {"stdout": body, "stderr": "", "interrupted": False, "isImage": False}, None

    # ------------------------------------------------------------------ message writers
    def usage(self, out_tokens, new_tokens):
        cache_create = max(0, new_tokens)
        u = {"input_tokens": self.rng.randrange(1, 12),
             "cache_creation_input_tokens": cache_create,
             "cache_read_input_tokens": self.context,
             "cache_creation": {"ephemeral_5m_input_tokens": cache_create, "ephemeral_1h_input_tokens": 0},
             "output_tokens": out_tokens, "service_tier": "standard"}
        return u

    def write_assistant(self, blocks, stop_reason, pending_tokens):
        out_tokens = sum(approx_tokens(json.dumps(b)) for b in blocks)
        usage = self.usage(out_tokens, pending_tokens)
        self.context += pending_tokens + out_tokens
        mid = rid(self.rng, "msg_01", 22)
        req = rid(self.rng, "req_011C", 18)
        groups = [blocks] if self.layout == "combined" else [[b] for b in blocks]
        for gi, g in enumerate(groups):
            last = gi == len(groups) - 1
            msg = {"id": mid, "type": "message", "role": "assistant", "model": self.model, "content": g,
                   "stop_reason": stop_reason if last else None, "stop_sequence": None, "usage": usage}
            self.emit(self.envelope("assistant", {"message": msg, "requestId": req}))

    def x_uuid(self):
        return str(_uuid.UUID(int=self.xrng.getrandbits(128), version=4))

    def x_common(self):
        return {"isSidechain": False, "userType": "external", "entrypoint": "cli", "cwd": self.cwd,
                "sessionId": self.session, "version": self.version, "gitBranch": self.branch,
                "timestamp": iso(self.t)}

    def x_chained(self, d):
        u = self.x_uuid()
        line = {"parentUuid": self.parent}
        line.update(d)
        line.update(self.x_common())
        line["uuid"] = u
        self.parent = u
        self.emit(line)

    def extras_before_prompt(self, text):
        if not self.extras or self.xrng.random() >= 0.3:
            return
        self.emit({"type": "queue-operation", "operation": "enqueue", "timestamp": iso(self.t),
                   "sessionId": self.session, "content": text})

    def extras_after_prompt(self):
        if not self.extras or self.xrng.random() >= 0.2:
            return
        marker = "memctl restored context %08x" % self.xrng.getrandbits(32)
        self.x_chained({"type": "attachment", "attachment": {
            "type": "hook_success", "hookName": "UserPromptSubmit", "toolUseID": self.x_uuid(),
            "hookEvent": "UserPromptSubmit", "content": "", "exitCode": 0, "durationMs": self.xrng.randrange(2, 90),
            "stdout": json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                                         "additionalContext": marker}}),
            "stderr": "", "command": "memctl-hook UserPromptSubmit"}})
        self.x_chained({"type": "attachment", "attachment": {
            "type": "hook_additional_context", "content": [marker], "hookName": "UserPromptSubmit",
            "toolUseID": "UserPromptSubmit", "hookEvent": "UserPromptSubmit"},
            "rendered": [{"content": "<system-reminder>\nUserPromptSubmit hook additional context: %s\n</system-reminder>" % marker}],
            "renderedRole": "system"})

    def extras_after_turn(self, prompt):
        if not self.extras:
            return
        if self.xrng.random() < 0.1:
            self.emit({"type": "last-prompt", "lastPrompt": prompt, "leafUuid": self.parent, "sessionId": self.session})
        if self.xrng.random() < 0.02:
            self.emit({"type": "future-line-kind", "sessionId": self.session, "timestamp": iso(self.t),
                       "payload": {"note": "a line type this parser does not know yet"}})

    def write_user_prompt(self, text):
        self.emit({"type": "file-history-snapshot", "messageId": ruuid(self.rng),
                   "snapshot": {"messageId": ruuid(self.rng), "trackedFileBackups": {}, "timestamp": iso(self.t)},
                   "isSnapshotUpdate": False})
        self.t += _dt.timedelta(seconds=self.rng.randrange(8, 900))
        self.extras_before_prompt(text)
        content = text if self.rng.random() < 0.8 else [{"type": "text", "text": text}]
        self.emit(self.envelope("user", {"message": {"role": "user", "content": content}}))
        self.extras_after_prompt()
        return approx_tokens(text)

    def maybe_compact(self):
        if not self.compact or self.context < self.compact_at:
            return
        pre = self.context
        t = self.tick(20, 90)
        u = ruuid(self.rng)
        self.emit({"parentUuid": None, "logicalParentUuid": self.parent, "isSidechain": False, "userType": "external",
                   "cwd": self.cwd, "sessionId": self.session, "version": self.version, "gitBranch": self.branch,
                   "type": "system", "subtype": "compact_boundary", "content": "Conversation compacted", "isMeta": False,
                   "timestamp": t, "uuid": u, "level": "info", "compactMetadata": {"trigger": "auto", "preTokens": pre}})
        self.parent = u
        summary = ("This session is being continued from a previous conversation that ran out of context. "
                   "The conversation is summarized below:\nAnalysis:\nThe user is working on %s (%s).\n\nSummary:\n"
                   "1. Primary Request and Intent:\n   %s\n2. Key Technical Concepts:\n%s\n3. Files and Code Sections:\n%s\n"
                   "4. Errors and fixes:\n   - %s\n5. Pending Tasks:\n   - %s\n6. Current Work:\n   %s\n"
                   "Please continue the conversation from where we left it off without asking the user any further questions.") % (
            self.project, self.lang, self.user_prompt().split("\n")[0],
            "\n".join("   - %s" % f for f in self.rng.sample(FEATURES, 4)),
            "\n".join("   - %s: %s" % (self.abspath(f), self.ident()) for f in self.rng.sample(self.files, 5)),
            self.error_text().split("\n")[0], self.rng.choice(FEATURES), self.assistant_mid(self.rng.choice(self.files)) or "n/a")
        self.emit(self.envelope("user", {"message": {"role": "user", "content": summary},
                                         "isVisibleInTranscriptOnly": True, "isCompactSummary": True}))
        self.context = self.base_context + approx_tokens(summary)

    def turn(self):
        r = self.rng
        self.turn_no += 1
        self.maybe_compact()
        if r.random() < 0.01:   # slash command noise (meta lines)
            cmd = r.choice(["/cost", "/context", "/model"])
            self.emit(self.envelope("user", {"message": {"role": "user", "content":
                      "<command-name>%s</command-name>\n<command-message>%s</command-message>\n<command-args></command-args>" % (cmd, cmd[1:])}}))
            self.emit(self.envelope("user", {"message": {"role": "user", "content":
                      "<local-command-stdout>Total cost: $%.2f</local-command-stdout>" % (r.random() * 40)}, "isMeta": True}))
        prompt = self.user_prompt()
        pending = self.write_user_prompt(prompt)
        rel = r.choice(self.files)
        n_tools = r.choice([0, 1, 1, 2, 2, 3, 3, 3, 4, 5, 6])
        touched = []
        for step in range(n_tools):
            blocks = []
            if step == 0 and r.random() < 0.25:
                blocks.append({"type": "thinking", "thinking": "The user wants me to %s. First I should inspect %s and check how `%s` is used." % (
                    r.choice(["fix the failure", "add the feature", "refactor this", "investigate"]), rel, self.ident()),
                               "signature": rid(r, "Eq", 120)})
            lead = self.assistant_lead(rel) if step == 0 else self.assistant_mid(rel)
            if lead and r.random() < 0.85:
                blocks.append({"type": "text", "text": lead})
            name, inp, body, is_err, tur, t_rel = self.tool_call(rel if r.random() < 0.7 else r.choice(self.files), step)
            tid = rid(r, "toolu_01", 22)
            blocks.append({"type": "tool_use", "id": tid, "name": name, "input": inp})
            self.write_assistant(blocks, "tool_use", pending)
            self.tick(0.2, 25)
            res = {"tool_use_id": tid, "type": "tool_result", "content": body}
            if is_err:
                res["is_error"] = True
            self.emit(self.envelope("user", {"message": {"role": "user", "content": [res]}, "toolUseResult": tur}))
            pending = approx_tokens(body)
            if t_rel:
                touched.append(t_rel)
        if r.random() < 0.01:
            self.emit(self.envelope("user", {"message": {"role": "user", "content": [
                {"type": "text", "text": "[Request interrupted by user]"}]}}))
            self.extras_after_turn(prompt)
            return
        self.write_assistant([{"type": "text", "text": self.assistant_final(touched or [rel])}], "end_turn", pending)
        self.extras_after_turn(prompt)

    def state_from_file(self, path):
        last = None
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                line = line.strip()
                if not line:
                    continue
                try:
                    d = json.loads(line)
                except ValueError:
                    continue
                if "uuid" in d and d.get("sessionId"):
                    last = d
                    self.turn_no += 1 if (d.get("type") == "user" and isinstance(d.get("message", {}).get("content"), str)) else 0
                msg = d.get("message") or {}
                if isinstance(msg, dict) and msg.get("role") == "assistant" and isinstance(msg.get("usage"), dict):
                    u = msg["usage"]
                    self.context = u.get("cache_read_input_tokens", 0) + u.get("cache_creation_input_tokens", 0) + u.get("output_tokens", 0)
        if last is None:
            raise SystemExit("append-to: no chained line found in %s" % path)
        self.parent = last["uuid"]
        self.session = last["sessionId"]
        self.cwd = last.get("cwd", self.cwd)
        for name, lang in PROJECTS:
            if self.cwd.rstrip("/").endswith("/" + name):
                self.project, self.lang, self.files = name, lang, FILES_BY_LANG[lang]
        self.version = last.get("version", self.version)
        self.branch = last.get("gitBranch", self.branch)
        ts = last["timestamp"].rstrip("Z")
        self.t = _dt.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=_dt.timezone.utc)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--turns", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--layout", choices=["combined", "split"], default="combined")
    ap.add_argument("--no-compact", action="store_true")
    ap.add_argument("--compact-at", type=int, default=160000)
    ap.add_argument("--append-to", metavar="FILE")
    ap.add_argument("--no-extras", action="store_true",
                    help="no CLI bookkeeping lines: the reference generator's exact output")
    a = ap.parse_args()
    g = Gen(a.seed, a.layout, not a.no_compact, a.compact_at, extras=not a.no_extras)
    if a.append_to:
        # different stream than the base transcript, but still deterministic
        g.rng.seed("append:%d:%d" % (a.seed, os.path.getsize(a.append_to)))
        g.state_from_file(a.append_to)
    w = sys.stdout
    for _ in range(a.turns):
        g.turn()
        if len(g.out) > 256:
            w.write("\n".join(g.out) + "\n")
            g.out = []
    if g.out:
        w.write("\n".join(g.out) + "\n")


if __name__ == "__main__":
    main()
