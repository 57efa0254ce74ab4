#!/usr/bin/env python3
"""Measure `memctl forget` on a big store: the forget itself and the rewrite of the store file.

    scripts/bench_forget.py [--bin target/release] [--turns 5000] [--small 200] [--seed 11]
                            [--word test_sync_digest] [--embed]

Builds one store in a temp folder from two generated transcripts (`memctl-gen-transcript`,
seeds S and S+1: a `--turns` session and a `--small` one), archived with `memctl ingest`
(`--no-embed`, hash vectors only, unless `--embed`: then the model embeds every chunk, which
takes minutes). Then, each case on a fresh copy of that store, runs `memctl forget ... --json`
and measures the whole process (wall time), with the report's own figures:

  small session   --session <small>: a few hundred chunks out of thousands
  text            --text <a word a few turns say> (reads every chunk)
  big session     --session <big>: most of the store
  dry run         the first case without --yes (a read transaction, no rewrite)

`rewrite_ms` is the fresh-file copy that leaves no forgotten byte (engine/src/store/rewrite.rs),
`bytes_before` / `bytes_after` the store file around it. Prints one JSON object. Nothing here is
a pass/fail test (cli/tests/testsuite/forget_process.rs and engine/src/forget/tests.rs are).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from benchlib import BenchDir, remove_tree, require_model
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd: list[str], env: dict, out=subprocess.PIPE) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, env=env, stdout=out, stderr=subprocess.PIPE)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.decode()[-2000:]}")
    return p


def session_of(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        for line in f:
            sid = json.loads(line).get("sessionId")
            if sid:
                return sid
    sys.exit(f"no sessionId in {path}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(REPO, "target", "release"))
    ap.add_argument("--turns", type=int, default=5000)
    ap.add_argument("--small", type=int, default=200)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--word", default="test_sync_digest",
                    help="the text case's word (a few turns of the seed-11 transcript say it)")
    ap.add_argument("--embed", action="store_true", help="embed with the model (slow)")
    a = ap.parse_args()
    memctl = os.path.join(a.bin, "memctl")
    gen = os.path.join(a.bin, "memctl-gen-transcript")
    for b in (memctl, gen):
        if not os.access(b, os.X_OK):
            sys.exit(f"{b} missing: cargo build --release -p memctl-hooks -p memctl-cli -p memctl-tests")

    with BenchDir(prefix="memctl-bench-forget-") as tmp:
        base_home = os.path.join(tmp, "base")
        env = dict(os.environ, MEMCTL_HOME=base_home, MEMCTL_RESIDENT="0",
                   MEMCTL_BACKGROUND_EMBED="0")
        if not a.embed:
            env["MEMCTL_EMBEDDER"] = "hash"
        else:
            require_model(memctl, env, "bench_forget --embed")
        paths = []
        for seed, turns in ((a.seed, a.turns), (a.seed + 1, a.small)):
            path = os.path.join(tmp, f"gen-{seed}.jsonl")
            with open(path, "wb") as f:
                run([gen, "--turns", str(turns), "--seed", str(seed)], env, out=f)
            paths.append(path)
        big, small = (session_of(p) for p in paths)
        t0 = time.monotonic()
        ingest = [memctl, "ingest", "--json"] + ([] if a.embed else ["--no-embed"]) + paths
        report = json.loads(run(ingest, env).stdout)
        ingest_s = time.monotonic() - t0
        status = run([memctl, "status"], env).stdout.decode()

        def case(name: str, args: list[str]) -> dict:
            home = os.path.join(tmp, name)
            shutil.copytree(base_home, home)
            cenv = dict(env, MEMCTL_HOME=home)
            t = time.monotonic()
            rep = json.loads(run([memctl, "forget", *args, "--json"], cenv).stdout)
            wall = time.monotonic() - t
            rw = rep.get("rewrite") or {}
            remove_tree(home)
            return {"case": name, "args": args, "wall_ms": round(wall * 1000),
                    "chunks": rep["chunks"], "turns": rep["turns"],
                    "rewrite_ms": rw.get("millis"), "rows": rw.get("rows"),
                    "bytes_before": rw.get("bytes_before"), "bytes_after": rw.get("bytes_after")}

        cases = [
            case("dry_run", ["--session", small]),
            case("small_session", ["--session", small, "--yes"]),
            case("text", ["--text", a.word, "--yes"]),
            case("big_session", ["--session", big, "--yes"]),
        ]
        print(json.dumps({
            "turns": a.turns, "small": a.small, "seed": a.seed, "embed": a.embed,
            "chunks": report.get("inserted"), "ingest_s": round(ingest_s, 1),
            "store": [l for l in status.splitlines() if l.startswith(("file size", "chunks", "vectors", "pending"))],
            "cases": cases,
        }, indent=1))


if __name__ == "__main__":
    main()
