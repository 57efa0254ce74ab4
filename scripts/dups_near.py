"""Near-copies the fold key does not catch, and hard negatives that must not fold, for
gen_dups.py (imported by it).

Each variant is a turn builder. A `near` group has two variants that must fold together: a
test run where one more test passed (one progress line and the summary differ), an answer
re-generated with a few words changed, the same tool output with one more warning line. A
`neg` pair has two variants, each its own group, that must NOT fold: two different failures of
one suite behind the same boilerplate, two answers about different files in the same
template, the same question about different identifiers. A variant repeated keeps its text and
changes only volatile values (times, timings, ids), so its repeats fold by key.

A turn belongs to a group when its text holds the group's marker; markers are chosen so that
no variant's text holds another group's marker.
"""

# --------------------------------------------------------------------------- test runs

PYTEST_HEAD = [
    "============================= test session starts ==============================",
    "platform linux -- Python 3.11.6, pytest-7.4.3, pluggy-1.3.0",
    "rootdir: /home/dev/src/app",
    "configfile: pyproject.toml",
    "plugins: anyio-4.0.0, cov-4.1.0, xdist-3.3.1, timeout-2.2.0",
]


def pytest_pass(suite, files, passed, skipped, t_iso, secs):
    """A passing pytest run; `files` are (name, progress) lines."""
    lines = PYTEST_HEAD + ["collected %d items" % (passed + skipped), ""]
    lines += ["tests/%s/%s %s" % (suite, name, dots) for name, dots in files]
    lines += ["", "======================= %d passed, %d skipped in %.2fs ========================"
              % (passed, skipped, secs), "finished at %s" % t_iso]
    return "\n".join(lines)


def pytest_fail(suite, files, test, trace, passed, t_iso, secs):
    """A failing pytest run: the same boilerplate, one failure and its traceback."""
    lines = PYTEST_HEAD + ["collected %d items" % (passed + 1), ""]
    lines += ["tests/%s/%s %s" % (suite, name, dots) for name, dots in files]
    lines += ["", "=================================== FAILURES ===================================",
              "_________________________________ %s _________________________________" % test]
    lines += trace
    lines += ["=========================== short test summary info ============================",
              "FAILED tests/%s/%s" % (suite, test),
              "==================== 1 failed, %d passed in %.2fs ====================" % (passed, secs),
              "finished at %s" % t_iso]
    return "\n".join(lines)


INVOICE_FILES = [("test_totals.py", "..........s........."), ("test_discounts.py", "................"),
                 ("test_currency.py", "............s..."), ("test_pdf.py", "..........."),
                 ("test_rounding.py", "....................."), ("test_api.py", "...............s....")]


def invoice_files(one_more):
    """The invoice suite's progress lines; `one_more`: a skipped test now runs and passes."""
    files = list(INVOICE_FILES)
    if one_more:
        files[2] = ("test_currency.py", "................")
    return files


ORDERS_FILES = [("test_cart.py", "................"), ("test_checkout.py", "..............F..."),
                ("test_refunds.py", "............"), ("test_shipping.py", "...................")]

REFUND_TRACE = [
    "    def test_refund_rounding():",
    "        order = make_order(total=Decimal(\"10.005\"))",
    ">       assert refund(order).amount == Decimal(\"10.00\")",
    "E       AssertionError: assert Decimal('10.01') == Decimal('10.00')",
    "E        +  where Decimal('10.01') = Refund(amount=Decimal('10.01')).amount",
    "tests/orders/test_checkout.py:88: AssertionError",
]
TAX_TRACE = [
    "    def test_tax_region_lookup():",
    "        rates = load_rates(\"fixtures/rates.json\")",
    ">       assert rates[\"EU\"][\"DE\"] == 19",
    "E       KeyError: 'EU'",
    "src/orders/tax.py:41: in load_rates",
    "    return {r['region']: r for r in raw['regions']}",
    "tests/orders/test_checkout.py:131: KeyError",
]

SCHED_HEAD = [
    "   Compiling scheduler v0.9.0 (/home/dev/src/app/crates/scheduler)",
    "    Finished `test` profile [unoptimized + debuginfo] target(s) in {build:.2f}s",
    "     Running unittests src/lib.rs (target/debug/deps/scheduler-{hash})",
    "",
    "running 31 tests",
]
CRON_FAIL = [
    "test tests::cron_parse_dst ... FAILED",
    "",
    "failures:",
    "",
    "---- tests::cron_parse_dst stdout ----",
    "thread 'tests::cron_parse_dst' panicked at src/cron.rs:212:9:",
    "assertion `left == right` failed: next run skips the DST gap",
    "  left: 2025-03-30T03:30:00+02:00",
    " right: 2025-03-30T02:30:00+01:00",
]
QUEUE_FAIL = [
    "test tests::queue_fairness_under_load ... FAILED",
    "",
    "failures:",
    "",
    "---- tests::queue_fairness_under_load stdout ----",
    "thread 'tests::queue_fairness_under_load' panicked at src/queue.rs:77:5:",
    "tenant b starved: served 3 of 400 jobs while tenant a was served 397",
    "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
]


def sched_run(rng, fail, t_iso):
    head = "\n".join(SCHED_HEAD).format(build=rng.uniform(3, 60), hash="%016x" % rng.getrandbits(64))
    name = fail[0].split(" ")[1]
    tail = ["", "failures:", "    %s" % name, "",
            "test result: FAILED. 30 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; "
            "finished in %.2fs" % rng.uniform(0.1, 4), "run at %s" % t_iso]
    return head + "\n" + "\n".join(fail + tail)


# --------------------------------------------------------------------------- answers

EXPORT_Q = "How does the exporter decide when to flush a batch?"
EXPORT_A = [
    "The exporter flushes a batch when either limit is reached: `BatchConfig::max_items` (512 by "
    "default) or `BatchConfig::max_bytes` (1 MiB). A timer in `src/export/batch.rs` also flushes a "
    "partial batch after `linger`, so a quiet stream still goes out; on shutdown `Exporter::close` "
    "drains whatever is left before it returns.",
    "The exporter flushes a batch as soon as either limit is hit: `BatchConfig::max_items` (512 by "
    "default) or `BatchConfig::max_bytes` (1 MiB). A timer in `src/export/batch.rs` also sends a "
    "partial batch after `linger`, so a quiet stream still goes out; at shutdown `Exporter::close` "
    "drains whatever remains before it returns.",
]
LOCK_Q = "Why does the migration take the advisory lock first?"
LOCK_A = [
    "Because two app instances may start at once: `migrate_up` takes `pg_advisory_lock(42)` before "
    "it reads `schema_version`, so only one of them applies the pending migrations while the other "
    "waits and then sees the new version. Without the lock both would run `0007` and the second "
    "would fail on the existing index.",
    "Because two app instances can start together: `migrate_up` takes `pg_advisory_lock(42)` before "
    "it reads `schema_version`, so only one of them applies the pending migrations while the other "
    "blocks and then sees the new version. Without the lock both would run `0007` and the second "
    "one would fail on the existing index.",
]

WHERE_TEMPLATE = ("`{file}` handles {what}: `{fn}` is called from `{caller}` when {cond}, and "
                  "its tests live in `{tests}`.")
WHERE = [
    ("Where is cache eviction handled?", dict(
        file="src/cache/lru.rs", what="cache eviction", fn="LruCache::evict", caller="Store::put",
        cond="the cache holds more than `max_entries` items", tests="tests/lru.rs")),
    ("Where is log compaction handled?", dict(
        file="src/wal/compact.rs", what="log compaction", fn="Wal::compact", caller="Wal::append",
        cond="the segment passes `segment_bytes`", tests="tests/wal_compact.rs")),
    ("Which file defines the retry budget?", dict(
        file="src/net/budget.rs", what="the retry budget", fn="RetryBudget::withdraw",
        caller="Client::send", cond="a request fails with a retryable status",
        tests="tests/net_budget.rs")),
    ("Which file defines the upload quota?", dict(
        file="src/upload/quota.rs", what="the upload quota", fn="Quota::charge",
        caller="Uploader::put_part", cond="a part is accepted by the object store",
        tests="tests/upload_quota.rs")),
]

IDENT = [
    ("What does `parse_header` return on empty input?",
     "`parse_header` returns `Err(HeaderError::Empty)` on empty input: it reads the magic bytes "
     "first and `parse_header` never treats a missing header as valid."),
    ("What does `parse_footer` return on empty input?",
     "`parse_footer` returns `Ok(None)` on empty input: a stream may end without a footer and "
     "the reader then falls back to scanning the blocks."),
    ("Is `Session::refresh` safe to call concurrently?",
     "Yes: `Session::refresh` takes the token lock and re-checks the expiry inside it, so two "
     "concurrent calls make one request and the second reuses its token."),
    ("Is `Session::revoke` safe to call concurrently?",
     "No: `Session::revoke` drops the token without the lock, so a concurrent `refresh` can "
     "write a new token back after the revoke; callers must hold `Session::guard`."),
]


def near_variants():
    """[(group, kind, marker, query, pair, builder)]; builder(g) writes one turn."""
    out = []
    # One more test passed (a skipped test now runs): one progress line and the summary differ.
    for i, more in enumerate([False, True]):
        def inv(g, more=more):
            body = pytest_pass("invoice", invoice_files(more), 117 + more, 3 - more,
                               _iso(g), g.rng.uniform(2, 30))
            verdict = ("All invoice tests pass: %d passed, %d skipped."
                       % (117 + more, 3 - more))
            tool_turn(g, "Run the invoice tests.", "pytest tests/invoice -q", body, verdict)
        out.append(("near:invoice-run", "near", "pytest tests/invoice -q",
                    "did the invoice tests pass", None, inv))
    # The same build output with one more warning line.
    for warn in [False, True]:
        def build(g, warn=warn):
            lines = ["> web@3.2.0 build:web", "> vite build --mode production", "",
                     "vite v5.0.10 building for production...",
                     "transforming (%d) src/main.ts" % g.rng.randrange(900, 999)]
            if warn:
                lines.append("npm WARN deprecated inflight@1.0.6: This module is not supported, "
                             "and leaks memory.")
            lines += ["✓ 1043 modules transformed.", "rendering chunks...",
                      "computing gzip size...",
                      "dist/index.html                  0.46 kB │ gzip:  0.30 kB",
                      "dist/assets/index-%s.css   12.84 kB │ gzip:  3.21 kB" % _hex(g, 8),
                      "dist/assets/index-%s.js   241.77 kB │ gzip: 78.02 kB" % _hex(g, 8),
                      "✓ built in %.2fs" % g.rng.uniform(2, 9)]
            tool_turn(g, "Build the web bundle for production.", "npm run build:web",
                      "\n".join(lines), "The production bundle builds; dist/ is up to date.")
        out.append(("near:web-build", "near", "npm run build:web", "web bundle build output",
                    None, build))
    # Answers re-generated with a few words changed.
    for name, q, answers in [("near:export-flush", EXPORT_Q, EXPORT_A),
                             ("near:migration-lock", LOCK_Q, LOCK_A)]:
        for a in answers:
            out.append((name, "near", q, q, None, lambda g, q=q, a=a: answer_turn(g, q, a)))
    # Hard negatives: one failure each of the same suite behind the same boilerplate.
    for name, pair, test, trace in [
            ("neg:orders-refund", "neg:orders-tax", "test_refund_rounding", REFUND_TRACE),
            ("neg:orders-tax", "neg:orders-refund", "test_tax_region_lookup", TAX_TRACE)]:
        def orders(g, test=test, trace=trace):
            body = pytest_fail("orders", ORDERS_FILES, test, trace, 64, _iso(g),
                               g.rng.uniform(2, 30))
            tool_turn(g, "Run the orders tests.", "pytest tests/orders -q", body,
                      "One orders test fails: %s." % test)
        out.append((name, "neg", test, "which orders test fails", pair, orders))
    for name, pair, fail in [("neg:sched-cron", "neg:sched-queue", CRON_FAIL),
                             ("neg:sched-queue", "neg:sched-cron", QUEUE_FAIL)]:
        test = fail[0].split(" ")[1]
        def sched(g, fail=fail, test=test):
            tool_turn(g, "Run the scheduler tests.", "cargo test -p scheduler",
                      sched_run(g.rng, fail, _iso(g)), "One scheduler test fails: %s." % test)
        out.append((name, "neg", fail[0], "which scheduler test fails", pair, sched))
    # Hard negatives: answers in one template about different files; the same question about
    # different identifiers.
    for i, (q, f) in enumerate(WHERE):
        pair = WHERE[i ^ 1][0]
        a = WHERE_TEMPLATE.format(**f)
        out.append(("neg:" + q[:28], "neg", q, q, "neg:" + pair[:28],
                    lambda g, q=q, a=a: answer_turn(g, q, a)))
    for i, (q, a) in enumerate(IDENT):
        pair = IDENT[i ^ 1][0]
        out.append(("neg:" + q[:30], "neg", q, q, "neg:" + pair[:30],
                    lambda g, q=q, a=a: answer_turn(g, q, a)))
    return out


# --------------------------------------------------------------------------- turn writers
# Bound by gen_dups.py (its transcript generator): `gt`.
gt = None


def _iso(g):
    return gt.iso(g.t)


def _hex(g, n):
    return "".join(g.rng.choice("0123456789abcdef") for _ in range(n))


def tool_turn(g, prompt, cmd, body, verdict):
    """One turn: `prompt`, a Bash call of `cmd` whose output is `body`, then `verdict`."""
    pending = g.write_user_prompt(prompt)
    tid = gt.rid(g.rng, "toolu_01", 22)
    g.write_assistant([{"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": cmd}}],
                      "tool_use", pending)
    g.tick(2, 60)
    g.emit(g.envelope("user", {"message": {"role": "user", "content": [
        {"tool_use_id": tid, "type": "tool_result", "content": body}]},
        "toolUseResult": {"stdout": body, "stderr": "", "interrupted": False, "isImage": False}}))
    g.write_assistant([{"type": "text", "text": verdict}], "end_turn", gt.approx_tokens(body))


def answer_turn(g, question, answer):
    """One turn: a question and its answer, checked at another time."""
    pending = g.write_user_prompt(question)
    note = " (checked %s)" % gt.iso(g.t)
    g.write_assistant([{"type": "text", "text": answer + note}], "end_turn", pending)
