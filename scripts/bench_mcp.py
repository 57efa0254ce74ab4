#!/usr/bin/env python3
"""Measure `memctl mcp` as Claude Code sees it (stdlib only).

    scripts/bench_mcp.py [--bin target/release] [--turns 500] [--seed 7] [--runs 5] [--warm 20]
                         [--embedder hash]

`--embedder hash` builds and searches the store in the hash embedder's space (MEMCTL_EMBEDDER=hash):
every chunk has a vector at once, so large stores (1e4-1e5 chunks) can be measured without hours
of model embedding; the dense scan costs the same per vector in either space (384-d int8 blocks).

Builds a store in a temp folder from a generated transcript (scripts/gen_transcript.py, its cwd
is the project), then per run spawns `memctl mcp` in that project and measures:

  cold start   spawn → the answer to `tools/list` (initialize + initialized + tools/list): what
               Claude Code waits for at start-up
  first search the first `search` call of the process (opens the store; loads the model unless
               the resident embedder answers)
  warm search  median / p90 of the next `--warm` searches (varied queries)
  tokens/hit   chars/4 of each hit's JSON, and of a whole search answer (k=5)

Prints one JSON object. Nothing here is a pass/fail test (cli/tests/testsuite/mcp_process.rs is).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time

from benchlib import BenchDir, require_model, stop_dir_processes

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUERIES = ["why did the build fail", "sqlite database is locked", "p95 latency benchmark",
           "which files did we touch for soft delete", "structured JSON logging", "mypy error",
           "pytest takes longer on CI", "content hash for dedup", "graceful shutdown",
           "stale cache entry root cause"]


class Server:
    def __init__(self, binary: str, project: str, env: dict):
        self.p = subprocess.Popen([binary, "mcp"], cwd=project, env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 1

    def send(self, msg: dict) -> None:
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError(f"server closed stdout during {method}")
            msg = json.loads(line)
            if msg.get("id") == rid:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg["result"]

    def call(self, tool: str, args: dict) -> dict:
        r = self.request("tools/call", {"name": tool, "arguments": args})
        if r.get("isError"):
            raise RuntimeError(f"{tool}: {r.get('content')}")
        return r["structuredContent"]

    def close(self) -> None:
        self.p.stdin.close()
        self.p.wait(timeout=30)


def base_env() -> dict:
    """The caller's environment without its memctl settings, except where the model is: a
    binary outside a checkout finds no model without MEMCTL_MODEL_DIR and would measure lexical
    + hash search."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith("MEMCTL_") or k == "MEMCTL_MODEL_DIR"}


def store_env(tmp: str, embedder: str | None) -> tuple[str, dict]:
    """The project (the generated transcript's cwd) and the environment that reaches the store."""
    data = os.path.join(tmp, "data")
    with open(os.path.join(tmp, "t.jsonl")) as f:
        project = next(json.loads(l)["cwd"] for l in f if '"cwd"' in l)
    env = base_env()
    env.pop("CLAUDE_PROJECT_DIR", None)
    env["MEMCTL_HOME"] = data
    env["CLAUDE_PROJECT_DIR"] = project  # the generated transcript's cwd need not exist here
    if embedder:
        env["MEMCTL_EMBEDDER"] = embedder
    return project, env


def build_store(binary_dir: str, tmp: str, turns: int, seed: int, embedder: str | None) -> tuple[str, dict]:
    transcript = os.path.join(tmp, "t.jsonl")
    with open(transcript, "w") as f:
        subprocess.run([sys.executable, os.path.join(REPO, "scripts/gen_transcript.py"), "--turns",
                        str(turns), "--seed", str(seed)], stdout=f, check=True)
    project, env = store_env(tmp, embedder)
    subprocess.run([os.path.join(binary_dir, "memctl"), "ingest", "--quiet", transcript], env=env, check=True)
    return project, env


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(REPO, "target/release"), help="folder with memctl")
    ap.add_argument("--turns", type=int, default=500)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--warm", type=int, default=20)
    ap.add_argument("--embedder", choices=["hash"], help="store and queries in the hash space")
    ap.add_argument("--resident", choices=["on", "off", "both"], default="on",
                    help="MEMCTL_MCP_RESIDENT_VECTORS for the server; both: alternate runs with "
                         "and without, reported side by side")
    ap.add_argument("--keep", metavar="DIR",
                    help="build the store in DIR once and reuse it on later runs with the same "
                         "--turns/--seed/--embedder (a 1e5-chunk store takes a long time to build)")
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    binary = os.path.join(a.bin, "memctl")
    with contextlib.ExitStack() as stack:
        tmp = a.keep or stack.enter_context(BenchDir(prefix="memctl-bench-mcp-"))
        os.makedirs(tmp, exist_ok=True)
        if not a.embedder:
            require_model(binary, base_env(), "bench_mcp", cwd=tmp)
        stack.callback(stop_dir_processes, tmp)  # a resident embedder the searches started
        stamp = os.path.join(tmp, "built.json")
        want = {"turns": a.turns, "seed": a.seed, "embedder": a.embedder}
        t_build = time.perf_counter()
        if a.keep and os.path.exists(stamp) and json.load(open(stamp)) == want:
            project, env = store_env(tmp, a.embedder)
            build_s = None
        else:
            project, env = build_store(a.bin, tmp, a.turns, a.seed, a.embedder)
            build_s = round(time.perf_counter() - t_build, 1)
            with open(stamp, "w") as f:
                json.dump(want, f)
        status = subprocess.run([binary, "status"], env=env, capture_output=True, text=True, check=True)
        chunks = next((int(l.split()[1]) for l in status.stdout.splitlines() if l.startswith("chunks:")), None)
        modes = ["on", "off"] if a.resident == "both" else [a.resident]
        cold, first, hit_tokens, answer_tokens, notes = [], [], [], [], set()
        warm = {m: [] for m in modes}
        for run in range(a.runs * len(modes)):
            mode = modes[run % len(modes)]
            env_run = dict(env, MEMCTL_MCP_RESIDENT_VECTORS="1" if mode == "on" else "0")
            t0 = time.perf_counter()
            s = Server(binary, tmp, env_run)
            s.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "bench_mcp", "version": "0"}})
            s.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            s.request("tools/list", {})
            cold.append((time.perf_counter() - t0) * 1000)
            t1 = time.perf_counter()
            s.call("search", {"query": QUERIES[0]})
            first.append((time.perf_counter() - t1) * 1000)
            for i in range(a.warm):
                t2 = time.perf_counter()
                out = s.call("search", {"query": QUERIES[(i + 1) % len(QUERIES)], "k": 5})
                warm[mode].append((time.perf_counter() - t2) * 1000)
                if out.get("note"):
                    notes.add(out["note"])
                answer_tokens.append(len(json.dumps(out, separators=(",", ":"))) / 4)
                hit_tokens += [len(json.dumps(h, separators=(",", ":"), ensure_ascii=False)) / 4 for h in out["hits"]]
            s.close()
    q = lambda xs, p: sorted(xs)[min(len(xs) - 1, int(p * len(xs)))]
    print(json.dumps({
        "binary": binary, "turns": a.turns, "chunks": chunks, "embedder": a.embedder or "model",
        "runs": a.runs, "store_build_s": build_s,
        "cold_start_ms": {"median": round(statistics.median(cold), 1), "max": round(max(cold), 1)},
        "first_search_ms": {"median": round(statistics.median(first), 1), "max": round(max(first), 1)},
        "warm_search_ms": {f"resident_vectors_{m}": {"median": round(statistics.median(w), 1),
                                                       "p90": round(q(w, 0.9), 1)}
                           for m, w in warm.items()},
        "tokens_per_hit": {"median": round(statistics.median(hit_tokens), 1), "max": round(max(hit_tokens), 1)},
        "tokens_per_search_answer_k5": {"median": round(statistics.median(answer_tokens), 1)},
        "notes": sorted(notes),  # a degraded search (no model) says so here
    }, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
