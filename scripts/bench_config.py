#!/usr/bin/env python3
"""What the config files cost a hook: `memctl-hook UserPromptSubmit` with a tiny payload,
timed from posix_spawn to wait4, without config files and with a user and a project file.

    python3 scripts/bench_config.py [--bin target/release] [--runs 200]

The two cases alternate call by call (so machine drift hits both alike). The transcript is
empty: the hook parses its payload, loads its settings, finds nothing to archive and exits,
which is the path where a settings cost would show most. Prints p50 / p95 wall and CPU ms per
case and the p50 difference. Needs `cargo build --release -p memctl-hooks -p memctl-cli`.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

USER_FILE = """# a user's config: budgets, switches, a summariser, paths
restore_chars = 3000
precompact_chars = 1500
restore_on_clear = "brief"
restore_on_startup = "off"
recall = true
recall_chars = 1200
memory_chars = 1200
context_window = 200000
autopilot_warn = 70
autopilot_critical = 85.5
summarizer_cmd = "llm -s 'Summarise this session'"
summarizer_timeout_secs = 60
log = "info"
"""

PROJECT_FILE = """# a team's project config
restore_chars = 3500
memory_dir = ".memctl/memory"
swap = true
auto_prune = false
restore_on_compact = "full"
"""


def run_once(hook, env, payload_path):
    fin = os.open(payload_path, os.O_RDONLY)
    fo = os.open(os.devnull, os.O_WRONLY)
    actions = [(os.POSIX_SPAWN_DUP2, fin, 0), (os.POSIX_SPAWN_DUP2, fo, 1),
               (os.POSIX_SPAWN_DUP2, fo, 2)]
    t0 = time.perf_counter()
    pid = os.posix_spawn(hook, [hook, "UserPromptSubmit"], env, file_actions=actions)
    _, status, ru = os.wait4(pid, 0)
    wall = (time.perf_counter() - t0) * 1000
    os.close(fin)
    os.close(fo)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"memctl-hook exited {status}")
    return wall, (ru.ru_utime + ru.ru_stime) * 1000


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release"))
    ap.add_argument("--runs", type=int, default=200)
    a = ap.parse_args()
    hook = os.path.join(a.bin, "memctl-hook")
    if not os.path.isfile(hook):
        sys.exit(f"{hook} not found: cargo build --release -p memctl-hooks -p memctl-cli")
    with tempfile.TemporaryDirectory() as tmp:
        transcript = os.path.join(tmp, "s.jsonl")
        open(transcript, "w").close()
        payload = os.path.join(tmp, "in.json")
        with open(payload, "w") as f:
            json.dump({"session_id": "bench-config", "transcript_path": transcript,
                       "cwd": tmp, "hook_event_name": "UserPromptSubmit", "prompt": "go on"}, f)
        base = {k: v for k, v in os.environ.items()
                if not k.startswith("MEMCTL_") and k not in ("CLAUDE_PROJECT_DIR", "XDG_CONFIG_HOME")}
        base.update({"MEMCTL_HOME": os.path.join(tmp, "data"), "MEMCTL_BACKGROUND_EMBED": "0",
                     "MEMCTL_RESIDENT": "0", "MEMCTL_EMBEDDER": "hash"})
        cases = {}
        for name, user, project in [("none", None, None), ("files", USER_FILE, PROJECT_FILE)]:
            root = os.path.join(tmp, name)
            os.makedirs(os.path.join(root, "xdg/memctl"))
            os.makedirs(os.path.join(root, "proj/.memctl"))
            if user:
                with open(os.path.join(root, "xdg/memctl/config.toml"), "w") as f:
                    f.write(user)
            if project:
                with open(os.path.join(root, "proj/.memctl/config.toml"), "w") as f:
                    f.write(project)
            env = dict(base, XDG_CONFIG_HOME=os.path.join(root, "xdg"),
                       CLAUDE_PROJECT_DIR=os.path.join(root, "proj"))
            cases[name] = (env, [], [])
        # The files are read (and accepted): the CLI, same loader, sees the project's value.
        got = subprocess.run([os.path.join(a.bin, "memctl"), "config", "get", "restore_chars"],
                             env=cases["files"][0], capture_output=True, text=True)
        if got.returncode != 0 or got.stdout.strip() != "3500":
            sys.exit(f"config files not in effect: {got}")
        for env, _, _ in cases.values():  # warm the page cache and the data dir
            for _ in range(5):
                run_once(hook, env, payload)
        for _ in range(a.runs):
            for env, walls, cpus in cases.values():
                w, c = run_once(hook, env, payload)
                walls.append(w)
                cpus.append(c)
        log = os.path.join(tmp, "data/logs/memctl.log")
        if os.path.exists(log) and "bad setting" in open(log).read():
            sys.exit("a config file was refused: the benchmark measured an error path")
    print(f"memctl-hook UserPromptSubmit, empty transcript, {a.runs} calls per case (alternating)")
    print(f"{'case':<6} {'p50 ms':>7} {'p95 ms':>7} {'CPU p50 ms':>10} {'CPU p95 ms':>10}")
    for name, (_, walls, cpus) in cases.items():
        print(f"{name:<6} {pct(walls, 50):>7.2f} {pct(walls, 95):>7.2f} "
              f"{pct(cpus, 50):>10.2f} {pct(cpus, 95):>10.2f}")
    dw = statistics.median(cases["files"][1]) - statistics.median(cases["none"][1])
    dc = statistics.median(cases["files"][2]) - statistics.median(cases["none"][2])
    print(f"files - none: {dw:+.2f} ms wall, {dc:+.2f} ms CPU (p50)")


if __name__ == "__main__":
    main()
