#!/usr/bin/env python3
"""Count the tests one run of scripts/test.sh executed, by kind, from its log.

    python3 scripts/test_counts.py LOG

Kinds: unit (`src/` unit tests of every crate), integration (`tests/tests/*.rs`, `engine/tests/*.rs`:
the engine in-process with real redb files and the real model), process (`cli/tests/*.rs`: the
real binaries spawned as processes), doc (doc-tests), e2e (scenarios with the real Claude Code
CLI). Printed as one table so that a drop between two CI runs is visible at a glance. Exits 1 when
the log shows no cargo test result at all (a run that executed nothing is not a pass).
"""
import os
import re
import sys

RUNNING = re.compile(r"^\s*Running (\S+)")
DOC = re.compile(r"^\s*Doc-tests (\S+)")
RESULT = re.compile(
    r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored; (\d+) measured; (\d+) filtered out"
)
E2E = re.compile(r"^e2e: (\d+) passed, (\d+) failed")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def kind_of(target: str) -> str:
    if target == "unittests":
        return "unit"
    # `Running tests/concurrency.rs (target/debug/deps/...)`: the path is relative to its package.
    name = os.path.basename(target)
    if os.path.exists(os.path.join(ROOT, "cli", "tests", name)):
        return "process"
    return "integration"


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    counts = {k: [0, 0, 0] for k in ("unit", "integration", "process", "doc", "e2e")}
    current = None
    results = 0
    with open(sys.argv[1], encoding="utf-8", errors="replace") as log:
        for line in log:
            line = line.rstrip("\n")
            if m := RUNNING.match(line):
                current = kind_of(m.group(1))
            elif DOC.match(line):
                current = "doc"
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
