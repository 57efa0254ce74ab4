#!/usr/bin/env python3
"""Measure `memctl export` / `memctl import` throughput on a big store.

    scripts/bench_export.py [--bin target/release] [--turns 5000] [--seed 11] [--embed]

Builds one store in a temp folder from a generated transcript (`scripts/gen_transcript.py
--turns N --seed S`), archived with `memctl ingest --no-embed` (hash vectors only; with
`--embed` the model embeds every chunk, which takes minutes, and the `--vectors` cases run).
Then each case runs as its own process under `/usr/bin/time -v` (wall time, peak RSS):

  export            memctl export --all-projects --out F.jsonl
  export_gz         ... --out F.jsonl.gz
  export_vectors    ... --vectors (with --embed)
  import            memctl import F.jsonl into a fresh data dir (hash embedder: chunks queued)
  import_gz         the same from F.jsonl.gz
  import_vectors    the --vectors file, with the model: vectors reused (with --embed)
  reimport          F.jsonl again into the store it was imported into (everything a duplicate)

MB/s is the size of the file read or written (compressed size for .gz); chunks/s the chunk
records. Prints one JSON object. Nothing here is a pass/fail test (tests/tests/
testsuite/export_roundtrip.rs and cli/tests/testsuite/export_process.rs are).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from benchlib import BenchDir, require_model
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd: list[str], env: dict, out=subprocess.PIPE) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, env=env, stdout=out, stderr=subprocess.PIPE)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.decode()[-2000:]}")
    return p


def timed(cmd: list[str], env: dict) -> tuple[float, int, str]:
    """(wall seconds, peak RSS kB, stdout) of one process."""
    t = time.monotonic()
    p = run(["/usr/bin/time", "-v", *cmd], env)
    wall = time.monotonic() - t
    m = re.search(rb"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    return wall, int(m.group(1)) if m else -1, p.stdout.decode()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(REPO, "target", "release"))
    ap.add_argument("--turns", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--embed", action="store_true", help="embed with the model (slow)")
    a = ap.parse_args()
    memctl = os.path.join(a.bin, "memctl")
    if not os.access(memctl, os.X_OK):
        sys.exit(f"{memctl} missing: cargo build --release -p memctl-hooks -p memctl-cli")
    if not os.access("/usr/bin/time", os.X_OK):
        sys.exit("/usr/bin/time missing (GNU time measures the peak RSS)")

    with BenchDir(prefix="memctl-bench-export-") as tmp:
        base = os.path.join(tmp, "base")
        env = dict(os.environ, MEMCTL_HOME=base, MEMCTL_RESIDENT="0", MEMCTL_BACKGROUND_EMBED="0")
        if a.embed:
            require_model(memctl, env, "bench_export --embed")
        hash_env = dict(env, MEMCTL_EMBEDDER="hash")
        transcript = os.path.join(tmp, "t.jsonl")
        with open(transcript, "wb") as f:
            run([sys.executable, os.path.join(REPO, "scripts", "gen_transcript.py"),
                 "--turns", str(a.turns), "--seed", str(a.seed)], env, out=f)
        t0 = time.monotonic()
        ingest = [memctl, "ingest", "--json"] + ([] if a.embed else ["--no-embed"]) + [transcript]
        report = json.loads(run(ingest, env if a.embed else hash_env).stdout)
        ingest_s = time.monotonic() - t0
        status = run([memctl, "status"], hash_env).stdout.decode()
        chunks = report.get("inserted")

        def export(name: str, file: str, extra: list[str], cenv: dict) -> dict:
            wall, rss, out = timed([memctl, "export", "--all-projects", "--out", file, *extra], cenv)
            size = os.path.getsize(file)
            return {"case": name, "wall_s": round(wall, 2), "peak_rss_mb": round(rss / 1024, 1),
                    "file_mb": round(size / 1e6, 1), "mb_per_s": round(size / 1e6 / wall, 1),
                    "chunks_per_s": round(chunks / wall), "said": out.strip()}

        def import_(name: str, file: str, home: str, cenv: dict) -> dict:
            ienv = dict(cenv, MEMCTL_HOME=home)
            wall, rss, out = timed([memctl, "import", file, "--json", "--quiet"], ienv)
            rep = json.loads(out)
            size = os.path.getsize(file)
            return {"case": name, "wall_s": round(wall, 2), "peak_rss_mb": round(rss / 1024, 1),
                    "file_mb": round(size / 1e6, 1), "mb_per_s": round(size / 1e6 / wall, 1),
                    "chunks_per_s": round(chunks / wall),
                    "imported": rep["chunks"]["imported"], "duplicates": rep["chunks"]["duplicates"],
                    "vectors_reused": rep["vectors_reused"], "vectors_queued": rep["vectors_queued"]}

        plain = os.path.join(tmp, "e.jsonl")
        gz = os.path.join(tmp, "e.jsonl.gz")
        cases = [export("export", plain, [], hash_env), export("export_gz", gz, [], hash_env)]
        if a.embed:
            vec = os.path.join(tmp, "v.jsonl")
            cases.append(export("export_vectors", vec, ["--vectors"], env))
        cases.append(import_("import", plain, os.path.join(tmp, "i1"), hash_env))
        cases.append(import_("import_gz", gz, os.path.join(tmp, "i2"), hash_env))
        if a.embed:
            cases.append(import_("import_vectors", vec, os.path.join(tmp, "i3"), env))
        cases.append(import_("reimport", plain, os.path.join(tmp, "i1"), hash_env))
        print(json.dumps({
            "turns": a.turns, "seed": a.seed, "embed": a.embed, "chunks": chunks,
            "ingest_s": round(ingest_s, 1),
            "store": [l for l in status.splitlines() if l.startswith(("file size", "chunks", "vectors"))],
            "cases": cases,
        }, indent=1))


if __name__ == "__main__":
    main()
