#!/usr/bin/env python3
"""Count the tests one run of scripts/test.sh executed, by kind, from its log.

    python3 scripts/test_counts.py LOG

Kinds: unit (`src/` unit tests of every crate), integration (memctl-tests' suite
`tests/tests/testsuite/`, the engine in-process with real redb files and the
real model), process (memctl-cli's suite `cli/tests/testsuite/`: the real binaries spawned as
processes), doc (doc-tests), e2e (scenarios with the real Claude Code CLI). Printed as one table so
that a drop between two CI runs is visible at a glance. Exits 1 when the log shows no cargo test
result at all (a run that executed nothing is not a pass).

The two suites are one binary each, both `Running tests/testsuite/main.rs` (the path is relative
to the package): a suite's tests are classified one by one, by the module their name starts with
(`kill_trials::...` is cli/tests/testsuite/kill_trials.rs), from the `test NAME ... ok` lines.
"""
import os
import re
import sys

RUNNING = re.compile(r"^\s*Running (\S+)")
DOC = re.compile(r"^\s*Doc-tests (\S+)")
TEST = re.compile(r"^test (\S+) \.\.\. (ok|FAILED|ignored)")
RESULT = re.compile(
    r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored; (\d+) measured; (\d+) filtered out"
)
E2E = re.compile(r"^e2e: (\d+) passed, (\d+) failed")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


SUITES = {"process": ("cli", "tests", "testsuite"), "integration": ("tests", "tests", "testsuite")}


def kind_of(target: str) -> str:
    """The kind of a whole test binary; `suite` for one whose tests are classified by module."""
    if target == "unittests":
        return "unit"
    if target.endswith("testsuite/main.rs"):
        return "suite"
    return "integration"


def kind_of_test(name: str) -> str | None:
    """The kind of one test of a suite, by the file of its first module; None for main.rs's."""
    module = name.split("::", 1)[0]
    for kind, parts in SUITES.items():
        d = os.path.join(ROOT, *parts)
        path = os.path.join(d, module)
        if os.path.isfile(path + ".rs") or os.path.isdir(path):
            return kind
    return None


def count_suite(counts: dict, tests: list) -> None:
    """Add a suite's `(name, column)` tests; main.rs's own take the kind of the suite's others."""
    kinds = [kind_of_test(name) for name, _ in tests]
    known = [k for k in kinds if k]
    suite = max(set(known), key=known.count) if known else "integration"
    for (_, column), kind in zip(tests, kinds):
        counts[kind or suite][column] += 1


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    counts = {k: [0, 0, 0] for k in ("unit", "integration", "process", "doc", "e2e")}
    current = None
    suite_tests = []
    results = 0
    with open(sys.argv[1], encoding="utf-8", errors="replace") as log:
        for line in log:
            line = line.rstrip("\n")
            if m := RUNNING.match(line):
                current = kind_of(m.group(1))
            elif DOC.match(line):
                current = "doc"
            elif (m := TEST.match(line)) and current == "suite":
                suite_tests.append((m.group(1), {"ok": 0, "FAILED": 1, "ignored": 2}[m.group(2)]))
            elif (m := RESULT.match(line)) and current == "suite":
                count_suite(counts, suite_tests)
                suite_tests = []
                results += 1
                current = None
            elif (m := RESULT.match(line)) and current:
                passed, failed, ignored = (int(m.group(i)) for i in (1, 2, 3))
                c = counts[current]
                c[0] += passed
                c[1] += failed
                c[2] += ignored
                results += 1
                current = None
            elif m := E2E.match(line):
                counts["e2e"][0] += int(m.group(1))
                counts["e2e"][1] += int(m.group(2))
    print("tests executed:")
    print(f"  {'kind':<12} {'passed':>7} {'failed':>7} {'ignored':>8}")
    total = [0, 0, 0]
    for kind, (p, f, i) in counts.items():
        print(f"  {kind:<12} {p:>7} {f:>7} {i:>8}")
        total = [total[0] + p, total[1] + f, total[2] + i]
    print(f"  {'total':<12} {total[0]:>7} {total[1]:>7} {total[2]:>8}")
    if results == 0:
        print("test_counts: no `test result:` line in the log: nothing ran", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
