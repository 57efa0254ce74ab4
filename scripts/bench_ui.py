#!/usr/bin/env python3
"""Page load times of `memctl ui` on a large store.

    python3 scripts/bench_ui.py [--bin target/release] [--turns 5000] [--seed 5000] [--requests 50]

Generates one session of N turns (`scripts/gen_transcript.py --turns N --seed S`), ingests it
with the real `memctl ingest` (real model, real redb) into a fresh data dir, starts the real
`memctl ui`, then times whole HTTP requests (connect to last byte, wall time) of each page,
interleaved round by round: the timeline, the session's first, middle and last page of turns,
the tool-output list and a lexical search. The health page is left out (it runs `doctor`, which
loads the model on purpose). Prints p50 / p95 / max per page in milliseconds. The ingest of
5,000 turns with the real model takes ~15 minutes on the shared 2-core machine.
"""

import argparse
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
from benchlib import BenchDir, require_model
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def env_for(home):
    env = dict(os.environ)
    env.update(
        MEMCTL_HOME=home,
        MEMCTL_BACKGROUND_EMBED="0",
        MEMCTL_RESIDENT="0",
        XDG_CONFIG_HOME=os.path.join(home, "no-config"),
    )
    env.setdefault("ORT_DYLIB_PATH", os.path.join(ROOT, ".cache/onnxruntime/libonnxruntime.so.1.31.1"))
    env.setdefault("MEMCTL_MODEL_DIR", os.path.join(ROOT, "models/all-MiniLM-L6-v2"))
    return env


def timed_get(port, path, cookie):
    t0 = time.perf_counter()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request("GET", path, headers={"Cookie": cookie, "Host": f"127.0.0.1:{port}"})
    r = c.getresponse()
    body = r.read()
    dt = (time.perf_counter() - t0) * 1000
    c.close()
    if r.status != 200:
        sys.exit(f"GET {path}: {r.status} {body[:300]!r}")
    return dt, len(body)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release"))
    ap.add_argument("--turns", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=5000)
    ap.add_argument("--requests", type=int, default=50)
    a = ap.parse_args()
    memctl = os.path.join(a.bin, "memctl")
    if not os.access(memctl, os.X_OK):
        sys.exit(f"{memctl} not found: cargo build --release -p memctl-hooks -p memctl-cli --bin memctl")
    with BenchDir(prefix="memctl-bench-ui-") as tmp:
        home = os.path.join(tmp, "home")
        env = env_for(home)
        require_model(memctl, env, "bench_ui", cwd=tmp)
        t = os.path.join(tmp, "bench.jsonl")
        with open(t, "w") as f:
            subprocess.run([sys.executable, os.path.join(ROOT, "scripts/gen_transcript.py"),
                            "--turns", str(a.turns), "--seed", str(a.seed)], stdout=f, check=True)
        t0 = time.perf_counter()
        subprocess.run([memctl, "ingest", t], env=env, check=True, stdout=subprocess.DEVNULL)
        print(f"ingested {a.turns} generated turns (seed {a.seed}) in {time.perf_counter() - t0:.1f} s")
        sessions = json.loads(subprocess.run([memctl, "sessions", "--json"], env=env, check=True,
                                             capture_output=True, text=True).stdout)
        sid = sessions[0]["session_id"]
        turns = sessions[0]["turns"]
        status = json.loads(subprocess.run([memctl, "status", "--json"], env=env, check=True,
                                           capture_output=True, text=True).stdout)
        print(f"store: {status['chunks']} chunks, {status['file_bytes'] / 1e6:.1f} MB, session {sid[:8]} with {turns} turns")
        ui = subprocess.Popen([memctl, "ui"], env=env, stdout=subprocess.PIPE, text=True)
        try:
            line = ui.stdout.readline()
            m = re.search(r"http://127\.0\.0\.1:(\d+)(/[0-9a-f]+)/\?t=([0-9a-f]+)", line)
            if not m:
                sys.exit(f"memctl ui printed {line!r}")
            port, base, token = int(m.group(1)), m.group(2), m.group(3)
            # The session cookie the printed URL sets (its value is not the token).
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            c.request("GET", f"{base}/?t={token}", headers={"Host": f"127.0.0.1:{port}"})
            r = c.getresponse()
            r.read()
            cookie = (r.getheader("set-cookie") or "").split(";")[0]
            c.close()
            if r.status != 200 or not cookie:
                sys.exit(f"opening the printed URL: {r.status}, cookie {cookie!r}")
            q = urllib.parse.quote
            pages = {
                "timeline /": f"{base}/",
                "session, first turns": f"{base}/session?id={q(sid)}",
                "session, middle turns": f"{base}/session?id={q(sid)}&from={turns // 2}",
                "session, last turns": f"{base}/session?id={q(sid)}&from={max(turns - 1, 0)}",
                "tool outputs /swap": f"{base}/swap",
                "search (lexical)": f"{base}/search?q=" + q("token refresh race") + "&mode=lexical",
            }
            for p in pages.values():  # warm: first touch of the file's pages
                timed_get(port, p, cookie)
            times = {k: [] for k in pages}
            sizes = {}
            for _ in range(a.requests):
                for k, p in pages.items():
                    dt, n = timed_get(port, p, cookie)
                    times[k].append(dt)
                    sizes[k] = n
            print(f"{a.requests} requests per page, wall time per whole request (ms):")
            print(f"{'page':<24} {'p50':>7} {'p95':>7} {'max':>7} {'KB':>6}")
            for k, v in times.items():
                v.sort()
                p95 = v[min(len(v) - 1, int(round(0.95 * (len(v) - 1))))]
                print(f"{k:<24} {statistics.median(v):>7.1f} {p95:>7.1f} {v[-1]:>7.1f} {sizes[k] / 1024:>6.0f}")
        finally:
            ui.terminate()
            ui.wait()


if __name__ == "__main__":
    main()
