#!/usr/bin/env python3
"""Functions a reader can hold: no production function over 120 lines.

Scans every `*/src/**/*.rs` of the workspace except test files (`tests.rs`, `*_tests.rs`,
`tests/` folders) and inline `#[cfg(test)]` modules; a function runs from its `fn` line to
the closing brace at the same indentation. The functions that were longer when the check came
in are listed in LONG with their length then: each may only shrink (the check fails when one
grows, and says so when one fits, so that its entry is removed). Everything else must fit.

Usage: scripts/check_fn_len.py
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 120
# path:function -> lines when the check came in (to be split, then removed from here).
LONG = {
}
FN = re.compile(r"^(\s*)(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+(\w+)")
CFG_TEST = re.compile(r"^(\s*)#\[cfg\(test\)\]\s*$")


def is_test_file(p: Path) -> bool:
    return p.name == "tests.rs" or p.stem.endswith("_tests") or "tests" in p.parts[:-1]


def functions(path: Path):
    lines = path.read_text().split("\n")
    i, skip_indent = 0, None
    while i < len(lines):
        line = lines[i]
        t = CFG_TEST.match(line)
        if t and i + 1 < len(lines) and re.match(r"\s*(pub\s+)?mod\s+\w+\s*\{", lines[i + 1]):
            # Skip the inline test module: to its closing brace at the same indentation.
            ind = t.group(1)
            j = i + 2
            while j < len(lines) and lines[j] != ind + "}":
                j += 1
            i = j + 1
            continue
        m = FN.match(line)
        if m and not line.rstrip().endswith(";"):
            ind = m.group(1)
            j = i + 1
            while j < len(lines) and lines[j] != ind + "}" and not (
                lines[j].startswith(ind + "}") and len(lines[j]) - len(lines[j].lstrip()) == len(ind)
            ):
                j += 1
            yield m.group(2), i + 1, j - i + 1
        i += 1


def main() -> int:
    bad, seen = [], set()
    for path in sorted(ROOT.glob("*/src/**/*.rs")):
        rel = path.relative_to(ROOT)
        if "target" in rel.parts or is_test_file(rel):
            continue
        for name, line, n in functions(path):
            key = f"{rel}:{name}"
            allowed = LONG.get(key, LIMIT)
            if key in LONG:
                seen.add(key)
                if n <= LIMIT:
                    print(f"check_fn_len: {key} fits now ({n} lines): remove it from LONG")
            if n > allowed:
                bad.append(f"{rel}:{line}: fn {name} is {n} lines (allowed {allowed})")
    for b in bad:
        print(b)
    print(f"check_fn_len: {len(bad)} function(s) too long; {len(LONG)} listed to be split")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
