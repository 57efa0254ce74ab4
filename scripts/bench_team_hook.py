#!/usr/bin/env python3
"""What a hook costs when the team store is unreachable: `memctl-hook UserPromptSubmit` wall
time and output with `MEMCTL_TEAM_URL` pointing at a port nothing listens on, against the same
hook with no team store configured.

    scripts/bench_team_hook.py [--bin target/release] [--runs 20] [--seed 3]

Each run archives one new turn (the sample transcript grows by one prompt/answer pair per run,
so every hook has something to archive and, with a team store, starts `memctl sync
--background`, which then fails to connect, logs it and exits). Both data dirs start from the
same ingested sample. Prints one JSON object: p50/p95 ms per case, whether the outputs were
byte-identical, and the log lines the background syncs wrote. Not a pass/fail test
(cli/tests/testsuite/team.rs checks the behaviour).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from benchlib import require_model, stop_dir_processes

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SID = "db5b5fab-8f4d-4e27-9da1-494c73cf256d"
SAMPLE = os.path.join(REPO, f"tests/fixtures/sample/{SID}.jsonl")
PROJECT = "/home/dev/src/quill-notes"


def pct(xs, p):
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(p * len(xs)))], 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(REPO, "target/release"))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--seed", type=int, default=3)
    a = ap.parse_args()
    print(f"bench_team_hook: seed {a.seed}", file=sys.stderr)
    tmp = tempfile.mkdtemp(prefix="memctl-bench-team-hook.")
    env0 = {k: v for k, v in os.environ.items() if not k.startswith(("MEMCTL_", "PG"))}
    for k in ("MEMCTL_MODEL_DIR",):
        if k in os.environ:
            env0[k] = os.environ[k]
    env0["XDG_CONFIG_HOME"] = os.path.join(tmp, "no-config")
    require_model(os.path.join(a.bin, "memctl"), env0, "bench_team_hook")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    dead_port = s.getsockname()[1]
    s.close()
    dead = f"postgresql://alice:pw@127.0.0.1:{dead_port}/memctl"
    homes = {}
    for case in ("none", "unreachable"):
        home = os.path.join(tmp, case)
        env = dict(env0, MEMCTL_HOME=home)
        subprocess.run([os.path.join(a.bin, "memctl"), "ingest", SAMPLE], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        homes[case] = home
    lines = open(SAMPLE).read().splitlines(keepends=True)
    out = {"seed": a.seed, "runs": a.runs, "cases": {}}
    outputs = {}
    for case, home in homes.items():
        t = os.path.join(tmp, f"{case}-{SID}.jsonl")
        shutil.copy(SAMPLE, t)
        env = dict(env0, MEMCTL_HOME=home)
        if case == "unreachable":
            env["MEMCTL_TEAM_URL"] = dead
        times, outs = [], []
        for i in range(a.runs):
            with open(t, "a") as f:
                # One more turn: a prompt and an answer, new uuids.
                f.write(json.dumps({"type": "user", "uuid": f"b-{i}-u", "sessionId": SID,
                                    "cwd": PROJECT, "timestamp": "2025-10-24T18:00:00.000Z",
                                    "message": {"role": "user", "content": f"bench prompt {i} about the scheduler"}}) + "\n")
                f.write(json.dumps({"type": "assistant", "uuid": f"b-{i}-a", "parentUuid": f"b-{i}-u",
                                    "sessionId": SID, "cwd": PROJECT, "timestamp": "2025-10-24T18:00:01.000Z",
                                    "message": {"role": "assistant", "content": [{"type": "text", "text": f"answer {i}"}]}}) + "\n")
            payload = json.dumps({"session_id": SID, "transcript_path": t, "cwd": PROJECT,
                                  "hook_event_name": "UserPromptSubmit", "prompt": f"next {i}"})
            t0 = time.monotonic()
            p = subprocess.run([os.path.join(a.bin, "memctl-hook"), "UserPromptSubmit"],
                               input=payload.encode(), env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
            times.append((time.monotonic() - t0) * 1000)
            if p.returncode != 0:
                sys.exit(f"hook exited {p.returncode}")
            outs.append(p.stdout)
        outputs[case] = outs
        out["cases"][case] = {"p50_ms": pct(times, 0.5), "p95_ms": pct(times, 0.95),
                              "exit_codes": "all 0"}
    time.sleep(3)  # let the last background sync log its failure
    out["outputs_identical"] = outputs["none"] == outputs["unreachable"]
    log = os.path.join(homes["unreachable"], "logs", "memctl.log")
    team_lines = [l.strip() for l in open(log)] if os.path.exists(log) else []
    team_lines = [l for l in team_lines if "team sync" in l]
    out["background_sync_log_lines"] = len(team_lines)
    out["example_log_line"] = team_lines[-1][:300] if team_lines else None
    print(json.dumps(out, indent=2))
    stop_dir_processes(tmp)  # the background syncs, and whatever else the hooks started
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
