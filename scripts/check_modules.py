#!/usr/bin/env python3
"""Module cycles: no top-level module of a crate may depend, through any chain, on itself.

For every crate under the workspace (a directory with Cargo.toml and src/lib.rs), each
top-level module is a node; an edge A -> B means non-test code of A (comments aside) names `crate::B` (or
reaches B through `super::`). The crate root (lib.rs) only re-exports and is not a node. Test
code (`#[cfg(test)]` modules, inline or in their own files) is left out: tests may reach across.
Prints every strongly connected component of more than one module with the edges inside it.

No crate has a cycle, and CI runs this with no allowance. `--allow CRATE=N` lets a crate keep
one cycle of at most N modules (for a branch mid-way through cutting one): the check fails when
a cycle grows, a second one appears, or a crate without an allowance gets one.

Usage: scripts/check_modules.py [--allow CRATE=N ...] [crate_dir ...]
       (default: every crate of the workspace)
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MOD_DECL = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", re.M)
CFG_TEST = re.compile(
    r"#\[cfg\((?:test|all\(test[^\]]*)\)\]\s*((?:#\[[^\]]*\]\s*)*)"
    r"(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*([;{])"
)
COMMENT = re.compile(r"(^|\s)//.*$", re.M)
PATH_ATTR = re.compile(r'#\[path\s*=\s*"([^"]+)"\]')
PATH = re.compile(r"\b((?:crate|super)(?:::\w+|::\{[^}]*\})+)")


def module_path(src: Path, file: Path) -> list[str]:
    parts = list(file.relative_to(src).with_suffix("").parts)
    if parts[-1] == "mod":
        parts.pop()
    return parts


def strip_inline_tests(text: str) -> tuple[str, set[str]]:
    """Text without inline `#[cfg(test)] mod x { ... }` blocks; names of test-only `mod x;`."""
    test_files = set()
    out, pos = [], 0
    for m in CFG_TEST.finditer(text):
        if m.start() < pos:
            continue
        if m.group(3) == ";":
            attr = PATH_ATTR.search(m.group(1))
            test_files.add(attr.group(1) if attr else m.group(2))
            continue
        depth, i = 0, m.end() - 1
        while i < len(text):
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        out.append(text[pos:m.start()])
        pos = i + 1
    out.append(text[pos:])
    return "".join(out), test_files


def targets(expr: str, here: list[str]) -> set[str]:
    """Top-level modules a `crate::...`/`super::...` path expression names."""
    segs = expr.split("::")
    if segs[0] == "crate":
        base, rest = [], segs[1:]
    else:
        base = list(here)
        while segs and segs[0] == "super":
            base = base[:-1]
            segs = segs[1:]
        rest = segs
    if base:
        return {base[0]}
    if not rest:
        return set()
    head = rest[0]
    if head.startswith("{"):
        inner = "::".join(rest)[1:].split("}")[0]
        return {p.strip().split("::")[0] for p in inner.split(",") if p.strip() and p.strip() != "self"}
    return {head}


def graph(crate: Path) -> dict[str, dict[str, str]]:
    src = crate / "src"
    edges: dict[str, dict[str, str]] = {}
    test_only: set[Path] = set()
    files = sorted(p for p in src.rglob("*.rs") if "bin" not in p.relative_to(src).parts[:1])
    texts = {}
    for f in files:
        # Comments (doc links included) name modules without depending on them.
        text, tests = strip_inline_tests(COMMENT.sub(r"\1", f.read_text()))
        texts[f] = text
        d = f.parent if f.name in ("mod.rs", "lib.rs") else f.with_suffix("")
        for t in tests:
            if t.endswith(".rs"):  # a #[path]: relative to the declaring file's directory
                test_only.add(f.parent / t)
            else:
                test_only.update({d / f"{t}.rs", d / t})
    for f in files:
        if f.name == "lib.rs" and f.parent == src:
            continue
        if any(f == t or t in f.parents for t in test_only):
            continue
        here = module_path(src, f)
        node = here[0]
        for m in PATH.finditer(texts[f]):
            for t in targets(m.group(1), here):
                if t != node and ((src / f"{t}.rs").exists() or (src / t).is_dir()):
                    edges.setdefault(node, {}).setdefault(t, f"{f.relative_to(ROOT)}: {' '.join(m.group(1).split())}")
        edges.setdefault(node, {})
    return edges


def sccs(edges: dict[str, dict[str, str]]) -> list[list[str]]:
    index, low, stack, on, out = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return [c for c in out if len(c) > 1]


def main() -> int:
    args, allow = sys.argv[1:], {}
    while args and args[0] == "--allow":
        name, _, n = args[1].partition("=")
        allow[name] = int(n)
        args = args[2:]
    crates = [Path(a).resolve() for a in args] or sorted(
        p.parent.parent for p in ROOT.glob("*/src/lib.rs")
    )
    bad = 0
    for crate in crates:
        edges = graph(crate)
        cycles = sccs(edges)
        budget = allow.get(crate.name, 0)
        for comp in cycles:
            allowed = len(cycles) == 1 and len(comp) <= budget
            bad += not allowed
            what = f"allowed (at most {budget})" if allowed else "NOT allowed"
            print(f"{crate.name}: module cycle through {len(comp)} modules, {what}: {', '.join(comp)}")
            for a in comp:
                for b, why in sorted(edges[a].items()):
                    if b in comp:
                        print(f"    {a} -> {b}   ({why})")
        if budget and not cycles:
            print(f"{crate.name}: no cycle left: drop its --allow")
        print(f"{crate.name}: {len(edges)} modules, {sum(map(len, edges.values()))} edges")
    if bad:
        print(f"check_modules: {bad} cycle(s) beyond the allowance")
        return 1
    print("check_modules: no module cycle beyond the allowance")
    return 0


if __name__ == "__main__":
    sys.exit(main())
