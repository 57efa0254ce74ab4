#!/usr/bin/env python3
"""Search at scale: where the time goes at 1e4, 1e5 (and 1e6) chunks in one project, with and
without the resident service's vector index, in one run.

    scripts/bench_scale.py [--sizes 10000,100000] [--queries 30] [--bin target/release]
                           [--cache .cache/bench/scale] [--seed 7] [--vectors mixed|model]

Stores: scripts/gen_scale_store.py --vectors mixed (real chunk lines and vocabulary; vectors
mixed from real all-MiniLM-L6-v2 embeddings of distinct texts) or --vectors model (near-copies
of the sample's 50 embeddings: the adversarial case for a graph), cached per size under --cache
(m<N> or s<N>; a store is made once; delete the folder to make it again). Per size, in this
order:

  cold       `memctl search --json` whole process, no service (MEMCTL_RESIDENT=0: the query
             model loads in process and the dense side scans at most the newest 200,000
             vectors): p50 / p95 ms
  build      `memctl embedder` started on the store with no saved index (the folder `ann/` is
             removed first): seconds until its index has read the whole store (its log line
             "vector index up to date"; the build from the store's int8 entries), and the
             service's RSS then
  warm       `memctl search --json` whole process with the service up: p50 / p95 ms, and the
             share of searches its index answered (`indexed`)
  lexical    `memctl search --mode lexical`: p50 ms
  mcp        `memctl mcp` (one server process, the service up): its `search` tool called once
             per query after a first untimed call, p50 / p95 ms per call as the client sees it,
             and the server's peak RSS
  hooks      with the service up, in the store's project: `memctl-hook SessionStart` with
             source compact (--hook-runs times), then `memctl-hook UserPromptSubmit` on 3 ×
             --hook-runs distinct questions (prompt recall searches the whole project after a
             compaction): p50 / p95 ms, and how many prompts got recalled context
  recall     dense top 10 through the index against the exact scan (a service with
             MEMCTL_ANN=0, same model and queries): recall@10, and how far the index's 10th
             cosine falls short of the exact 10th (near-ties make recall alone misleading)
  restart    service killed and started again: seconds until its index is up to date and
             answers again, and how many points it loaded from its saved files
  RSS        of the service: when its index has read the store (`service_rss_mb`), after
             the hooks and --save-wait (`saved_rss_mb`, the last figure while up: a quiet
             index is saved, and frozen when big enough; after a freeze the service exits
             once the base is saved, `service_exited`), and after a restart and the queries
             (`restart_rss_mb`)

`--steady`: per size, only what a service started on the index a previous run saved gives
(lexical, restart, warm, mcp, hooks, `restart_rss_mb`): the service as it runs most days,
without the first build's freeze and save beside the hooks.

Prints one JSON object per size and a Markdown table at the end (docs/perf/scale.md). Not a
pass/fail test.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import time

from bench_mcp import Server
from benchlib import dir_processes, stop_dir_processes

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROJECT = "/bench/scale"
WORDS = ["build", "error", "cache", "test", "deploy", "config", "index", "query", "shard",
         "migrate", "timeout", "retry", "parser", "schema", "token", "bucket", "release"]


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def env_for(home, **extra):
    env = dict(os.environ)
    env.update({"MEMCTL_HOME": home, "ORT_DISABLE_TELEMETRY": "1", "MEMCTL_LOG": "info"})
    env.update({k: str(v) for k, v in extra.items()})
    return env


def queries(n, seed):
    rng = random.Random(seed)
    return [" ".join(rng.sample(WORDS, rng.randint(2, 4))) for _ in range(n)]


def search(memctl, env, q, mode=None):
    cmd = [memctl, "search", "--json", "--project", PROJECT, "-k", "10"]
    if mode:
        cmd += ["--mode", mode]
    t = time.perf_counter()
    p = subprocess.run(cmd + [q], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ms = (time.perf_counter() - t) * 1000
    if p.returncode != 0:
        sys.exit(f"search failed: {p.stderr[-1500:]}")
    return ms, json.loads(p.stdout)


def ensure_store(a, n):
    home = os.path.join(a.cache, f"{'m' if a.vectors == 'mixed' else 's'}{n}")
    if os.path.exists(os.path.join(home, "memctl.redb")):
        return home
    os.makedirs(a.cache, exist_ok=True)
    t = time.time()
    venv = os.path.join(REPO, ".cache/venv/bin/python")
    py = venv if os.path.exists(venv) else sys.executable
    subprocess.run([py, os.path.join(REPO, "scripts/gen_scale_store.py"), "--chunks", str(n),
                    "--out", home, "--vectors", a.vectors, "--bin", a.bin, "--seed", str(a.seed)], check=True)
    print(f"store {n}: made in {time.time() - t:.0f} s", file=sys.stderr)
    return home


def start_service(memctl, env):
    """`memctl embedder` on the data dir. A service a hook started a moment before (a
    SessionStart starts one when none answers) holds the data dir's lock, and ours exits: end
    every process there and start again."""
    home = env["MEMCTL_HOME"]
    for _ in range(5):
        log = open(os.path.join(home, "bench-service.log"), "w")
        started = time.time()
        proc = subprocess.Popen([memctl, "embedder"], env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            proc.started = started
            return proc
        stop_dir_processes(home)
    sys.exit(f"bench_scale: the service did not stay up in {home} (see bench-service.log)")


def rss_mb(pid, field="VmRSS"):
    """A memory figure of /proc/PID/status in MB: VmRSS now, VmHWM the peak."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) / 1024
    return 0.0


def wait_indexed(memctl, env, q, limit, svc):
    """Seconds from the start of `svc` until its index has read the whole store (its log says
    "vector index up to date") and a search is answered by it (None: not within limit)."""
    t = svc.started
    log = os.path.join(env["MEMCTL_HOME"], "bench-service.log")
    while time.time() - t < limit:
        if svc.poll() is not None:
            sys.exit(f"bench_scale: the service exited (see {log})")
        with open(log, errors="replace") as f:
            done = "vector index up to date" in f.read()
        if done and search(memctl, env, q)[1].get("indexed"):
            return time.time() - t
        time.sleep(0.5)
    return None


def loaded_points(env):
    """Points the restarted service loaded from its files (its log line), 0 when none."""
    with open(os.path.join(env["MEMCTL_HOME"], "bench-service.log"), errors="replace") as f:
        for line in f:
            if "vector index loaded" in line and "points=" in line:
                return int(line.split("points=")[1].split()[0])
    return 0


def stop(proc, home):
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    stop_dir_processes(home)


def dense_top(memctl, env, qs):
    """Per query: the dense top 10 as (id, cosine) pairs."""
    out = []
    for q in qs:
        res = search(memctl, env, q, "dense")[1]["results"]
        out.append([(r["id"], r.get("dense") or 0.0) for r in res])
    return out


SAMPLE = os.path.join(REPO, "tests/fixtures/sample/db5b5fab-8f4d-4e27-9da1-494c73cf256d.jsonl")
TEMPLATES = ["what was the fix for the {} {} error?", "which {} failed after we changed the {}?",
             "how did we {} the {} with the retry?", "where is the {} {} configured?"]


def prompts(n, seed):
    """`n` distinct questions over the bench's words (recall never repeats a chunk it already
    injected since the last compaction, so repeating one prompt would measure less work)."""
    rng = random.Random(seed)
    return [rng.choice(TEMPLATES).format(*rng.sample(WORDS, 2)) for _ in range(n)]


def hook_run(hook, env, payload):
    """Wall ms of one hook process on `payload`, and whether it printed additional context."""
    t = time.perf_counter()
    p = subprocess.run([hook, payload["hook_event_name"]], input=json.dumps(payload), env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ms = (time.perf_counter() - t) * 1000
    if p.returncode != 0:
        sys.exit(f"hook failed: {p.stderr[-1500:]}")
    return ms, "additionalContext" in p.stdout


def mcp_warm(memctl, env, qs, out):
    """The MCP server's `search` tool, one process, every query after a first untimed call."""
    menv = dict(env, CLAUDE_PROJECT_DIR=PROJECT)
    s = Server(memctl, env["MEMCTL_HOME"], menv)
    s.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "bench_scale", "version": "1"}})
    s.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    s.call("search", {"query": qs[0], "k": 10})
    times = []
    for q in qs:
        t = time.perf_counter()
        s.call("search", {"query": q, "k": 10})
        times.append((time.perf_counter() - t) * 1000)
    out["mcp_p50_ms"], out["mcp_p95_ms"] = round(pct(times, 50), 1), round(pct(times, 95), 1)
    out["mcp_peak_rss_mb"] = round(rss_mb(s.p.pid, "VmHWM"))
    s.close()


def hooks_at_scale(a, env, out):
    """SessionStart(compact) and then UserPromptSubmit with prompt recall (on after a
    compaction) in the store's project, the service up; the first prompt archives the sample
    session there (not timed)."""
    hook = os.path.join(a.bin, "memctl-hook")
    work = os.path.join(env["MEMCTL_HOME"], "bench-hooks")
    os.makedirs(work, exist_ok=True)
    transcript = os.path.join(work, os.path.basename(SAMPLE))
    shutil.copyfile(SAMPLE, transcript)
    sid = os.path.basename(SAMPLE).removesuffix(".jsonl")
    base = {"session_id": sid, "transcript_path": transcript, "cwd": PROJECT}
    ups = dict(base, hook_event_name="UserPromptSubmit")
    hook_run(hook, env, dict(ups, prompt="continue"))
    wait_settled(env["MEMCTL_HOME"])
    ss = [hook_run(hook, env, dict(base, hook_event_name="SessionStart", source="compact"))[0]
          for _ in range(a.hook_runs)]
    out["compact_p50_ms"], out["compact_p95_ms"] = round(pct(ss, 50)), round(pct(ss, 95))
    runs = [hook_run(hook, env, dict(ups, prompt=q)) for q in prompts(3 * a.hook_runs, a.seed)]
    times = [ms for ms, _ in runs]
    out["ups_p50_ms"], out["ups_p95_ms"] = round(pct(times, 50)), round(pct(times, 95))
    out["ups_recalled"] = f"{sum(r for _, r in runs)}/{len(runs)}"
    wait_settled(env["MEMCTL_HOME"])


def save_wait(svc, seconds):
    """Watch the service for `seconds` while its quiet index is saved (and frozen when big
    enough; a freeze makes it exit once the base is saved, to give the memory back): its last
    RSS while up, in MB, and whether it exited."""
    last, t = 0.0, time.time()
    while time.time() - t < seconds and svc.poll() is None:
        last = rss_mb(svc.pid) or last
        time.sleep(0.5)
    return round(last), svc.poll() is not None


def wait_settled(home, limit=120):
    """Until only the service works in `home`: a hook's background jobs (archive, embed) end
    before the next timed step."""
    t = time.time()
    while time.time() - t < limit and len(dir_processes(home)) > 1:
        time.sleep(0.5)


def steady_size(a, n, qs):
    """`--steady`: the service as a user meets it most days, started on the index it saved
    (a run without `--steady` builds and saves it first): the lexical, warm, MCP and hook
    figures, the start, and the service's RSS at the end."""
    memctl = os.path.join(a.bin, "memctl")
    home = ensure_store(a, n)
    out = {"chunks": n, "steady": True}
    lex = [search(memctl, env_for(home, MEMCTL_RESIDENT="0"), q, "lexical")[0] for q in qs]
    out["lexical_p50_ms"] = round(pct(lex, 50), 1)
    env = env_for(home, MEMCTL_ANN="1", MEMCTL_ANN_MIN=a.ann_min)
    svc = start_service(memctl, env)
    restart = wait_indexed(memctl, env, qs[0], a.build_limit, svc)
    out["restart_s"] = None if restart is None else round(restart, 1)
    out["restart_loaded_points"] = loaded_points(env)
    warm = [search(memctl, env, q)[0] for q in qs]
    out["warm_p50_ms"], out["warm_p95_ms"] = round(pct(warm, 50), 1), round(pct(warm, 95), 1)
    mcp_warm(memctl, env, qs, out)
    hooks_at_scale(a, env, out)
    out["restart_rss_mb"] = round(rss_mb(svc.pid))
    stop(svc, home)
    return out


def bench_size(a, n, qs):
    memctl = os.path.join(a.bin, "memctl")
    home = ensure_store(a, n)
    out = {"chunks": n, "store_mb": round(os.path.getsize(os.path.join(home, "memctl.redb")) / 2**20)}
    cold = [search(memctl, env_for(home, MEMCTL_RESIDENT="0"), q)[0] for q in qs[:10]]
    out["cold_p50_ms"], out["cold_p95_ms"] = round(pct(cold, 50)), round(pct(cold, 95))
    lex = [search(memctl, env_for(home, MEMCTL_RESIDENT="0"), q, "lexical")[0] for q in qs]
    out["lexical_p50_ms"] = round(pct(lex, 50), 1)

    env = env_for(home, MEMCTL_ANN="1", MEMCTL_ANN_MIN=a.ann_min)
    shutil.rmtree(os.path.join(home, "ann"), ignore_errors=True)
    svc = start_service(memctl, env)
    build = wait_indexed(memctl, env, qs[0], a.build_limit, svc)
    out["index_build_s"] = None if build is None else round(build, 1)
    out["service_rss_mb"] = round(rss_mb(svc.pid))
    warm, indexed = [], 0
    for q in qs:
        ms, doc = search(memctl, env, q)
        warm.append(ms)
        indexed += bool(doc.get("indexed"))
    out["warm_p50_ms"], out["warm_p95_ms"] = round(pct(warm, 50), 1), round(pct(warm, 95), 1)
    out["indexed_share"] = round(indexed / len(qs), 2)
    ann = dense_top(memctl, env, qs)
    mcp_warm(memctl, env, qs, out)
    hooks_at_scale(a, env, out)
    out["saved_rss_mb"], out["service_exited"] = save_wait(svc, a.save_wait)
    stop(svc, home)

    svc = start_service(memctl, env)
    restart = wait_indexed(memctl, env, qs[0], a.build_limit, svc)
    out["restart_s"] = None if restart is None else round(restart, 1)
    out["restart_loaded_points"] = loaded_points(env)
    for q in qs:
        search(memctl, env, q)
    out["restart_rss_mb"] = round(rss_mb(svc.pid))
    stop(svc, home)

    exact_env = env_for(home, MEMCTL_ANN="0")
    svc = start_service(memctl, exact_env)
    time.sleep(3)
    exact = dense_top(memctl, exact_env, qs)
    stop(svc, home)
    hits = sum(len({i for i, _ in x} & {i for i, _ in y}) for x, y in zip(ann, exact))
    out["recall_at_10"] = round(hits / max(1, sum(len(y) for y in exact)), 3)
    # Under near-ties (the generated store's copies of one chunk sit at nearly equal cosines)
    # recall says little: the cosine the index's 10th hit falls short of the exact 10th.
    gaps = [y[-1][1] - x[-1][1] for x, y in zip(ann, exact) if x and y]
    out["cos10_shortfall"] = round(statistics.mean(gaps), 4) if gaps else None
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--bin", default=os.path.join(REPO, "target/release"))
    ap.add_argument("--cache", default=os.path.join(REPO, ".cache/bench/scale"))
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--vectors", choices=["mixed", "model"], default="mixed")
    ap.add_argument("--ann-min", default="5000", help="MEMCTL_ANN_MIN for the service")
    ap.add_argument("--build-limit", type=float, default=3600)
    ap.add_argument("--hook-runs", type=int, default=10, help="timed hook runs per prompt")
    ap.add_argument("--save-wait", type=float, default=35, help="seconds for the graph to be saved")
    ap.add_argument("--steady", action="store_true",
                    help="only the figures of a service started on its saved index")
    a = ap.parse_args()
    qs = queries(a.queries, a.seed)
    rows = []
    for n in [int(x) for x in a.sizes.split(",")]:
        row = (steady_size if a.steady else bench_size)(a, n, qs)
        print(json.dumps(row), flush=True)
        rows.append(row)
    cols = ["chunks", "store_mb", "cold_p50_ms", "cold_p95_ms", "warm_p50_ms", "warm_p95_ms",
            "indexed_share", "lexical_p50_ms", "mcp_p50_ms", "mcp_p95_ms", "mcp_peak_rss_mb",
            "ups_p50_ms", "ups_p95_ms", "ups_recalled",
            "compact_p95_ms", "recall_at_10", "cos10_shortfall", "index_build_s",
            "restart_s", "restart_loaded_points", "service_rss_mb", "saved_rss_mb",
            "service_exited", "restart_rss_mb"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(str(r.get(c)) for c in cols) + " |")


if __name__ == "__main__":
    main()
