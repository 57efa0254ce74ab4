#!/usr/bin/env python3
"""Tokens a session keeps out of its context with swap in place.

    python3 scripts/bench_swap_in_place.py [--bin target/debug] [--turns 500] [--seed 7] [--in-place-chars N]
    python3 scripts/bench_swap_in_place.py --bin target/release --latency 40

`--latency N` instead times whole `memctl-hook PostToolUse` processes (spawn to exit, wall
time), N calls per case, the cases interleaved call by call: a 2 KB output (nothing stored), a
12 KB Read (stored, not in place), a 22 KB Bash output and a 78 KB one over the client's cut
(both swapped in place), in one store that grows as they run.

Two sessions, both through the real `memctl-hook PostToolUse` binary (a fresh data dir):

1. **Real commands on this repository** — what an agent working here runs: git log/show/diff,
   grep over the sources, a long find, cargo metadata, a test listing, a build log... Each
   output is fed as the Bash `tool_response` the client sends (outputs over the client's
   30,000-character cut get the client's `persistedOutputPath` file and a 30 KB head, as the
   real CLI does).
2. **A generated tool-heavy session** (`scripts/gen_transcript.py --turns N --seed S`): every
   Bash result in it.

For each output it prints what the model would have seen without memctl (the whole output, or
the client's 2 KB preview over its cut) and with it (the digest), in characters and estimated
tokens (chars / 4, the estimate `memctl status` uses), and the totals. The digest's bytes are
checked against the store: every swapped output comes back byte for byte.
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
CLIENT_CUT = 30_000
CLIENT_PREVIEW = 2048 + 260

COMMANDS = [
    "git log --stat -n 40",
    "git show --stat HEAD~1",
    "git diff HEAD~3 -- README.md",
    "grep -rn 'fn ' engine/src/swap",
    "grep -rn 'EngineError' engine/src | head -400",
    "find engine hooks tests -name '*.rs' | xargs wc -l",
    "ls -la engine/src engine/src/*/",
    "cat Cargo.lock | head -600",
    "git log --oneline -n 300",
    "python3 scripts/gen_transcript.py --turns 2 --seed 3",
    "git status --short",
    "ls",
]


IN_PLACE_CHARS = None


def hook(bin_dir, home, payload):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCTL_")}
    env.update(MEMCTL_HOME=home, MEMCTL_EMBEDDER="hash", MEMCTL_BACKGROUND_EMBED="0")
    if IN_PLACE_CHARS:
        env["MEMCTL_SWAP_IN_PLACE_CHARS"] = str(IN_PLACE_CHARS)
    p = subprocess.run([os.path.join(bin_dir, "memctl-hook"), "PostToolUse"], input=json.dumps(payload),
                       capture_output=True, text=True, env=env, timeout=60)
    if p.returncode != 0:
        sys.exit(f"memctl-hook exited {p.returncode}: {p.stderr}")
    return p.stdout.strip()


def feed(bin_dir, home, work, session, n, cmd, output):
    """One Bash call as the client reports it; returns (visible_before, visible_after)."""
    transcript = os.path.join(work, f"{session}.jsonl")
    open(transcript, "a").close()
    resp = {"stdout": output, "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False}
    before = len(output)
    if len(output) > CLIENT_CUT:
        results = os.path.join(work, session, "tool-results")
        os.makedirs(results, exist_ok=True)
        path = os.path.join(results, f"b{n:05d}.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write(output)
        resp.update(stdout=output[:CLIENT_CUT], persistedOutputPath=path, persistedOutputSize=len(output.encode()))
        before = CLIENT_PREVIEW
    payload = {"session_id": session, "transcript_path": transcript, "cwd": ROOT,
               "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": cmd},
               "tool_response": resp, "tool_use_id": f"toolu_{n}"}
    out = hook(bin_dir, home, payload)
    if not out:
        return before, before
    digest = json.loads(out)["hookSpecificOutput"]["updatedToolOutput"]["stdout"]
    return before, len(digest)


def report(name, rows):
    tot_b = sum(b for _, b, _ in rows)
    tot_a = sum(a for _, _, a in rows)
    swapped = [r for r in rows if r[2] != r[1]]
    print(f"\n== {name}: {len(rows)} Bash outputs, {len(swapped)} swapped in place ==")
    for cmd, b, a in rows:
        if b != a or b >= 4096:
            print(f"  {b:>7} -> {a:>6} chars  {cmd[:70]}")
    print(f"  total seen by the model: {tot_b:,} chars (~{tot_b // 4:,} tokens) without memctl, "
          f"{tot_a:,} (~{tot_a // 4:,} tokens) with swap in place: "
          f"{(tot_b - tot_a) // 4:,} tokens saved ({100 * (tot_b - tot_a) / max(tot_b, 1):.0f} %)")


def timed(bin_dir, home, payload):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCTL_")}
    env.update(MEMCTL_HOME=home, MEMCTL_EMBEDDER="hash", MEMCTL_BACKGROUND_EMBED="0")
    t0 = time.perf_counter()
    p = subprocess.Popen([os.path.join(bin_dir, "memctl-hook"), "PostToolUse"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    out, _ = p.communicate(json.dumps(payload).encode())
    wall = (time.perf_counter() - t0) * 1e3
    return wall, out


def latency(bin_dir, runs):
    with tempfile.TemporaryDirectory() as tmp:
        home, work = os.path.join(tmp, "home"), os.path.join(tmp, "projects")
        session = "lat-1"
        results = os.path.join(work, session, "tool-results")
        os.makedirs(results)
        transcript = os.path.join(work, f"{session}.jsonl")
        open(transcript, "w").close()

        def bash(n, text, persisted=False):
            resp = {"stdout": text, "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False}
            if persisted:
                path = os.path.join(results, f"b{n}.txt")
                with open(path, "w") as f:
                    f.write(text)
                resp.update(stdout=text[:CLIENT_CUT], persistedOutputPath=path, persistedOutputSize=len(text))
            return {"session_id": session, "transcript_path": transcript, "cwd": ROOT, "hook_event_name": "PostToolUse",
                    "tool_name": "Bash", "tool_input": {"command": f"run {n}"}, "tool_response": resp,
                    "tool_use_id": f"toolu_{n}"}

        def read(n, text):
            return {"session_id": session, "transcript_path": transcript, "cwd": ROOT, "hook_event_name": "PostToolUse",
                    "tool_name": "Read", "tool_input": {"file_path": f"/w/f{n}.rs"},
                    "tool_response": {"type": "text", "file": {"filePath": f"/w/f{n}.rs", "content": text}},
                    "tool_use_id": f"toolu_r{n}"}

        def log(n, lines):
            return "".join(f"test case_{n}_{i} ... ok ({i * 7 % 97} ms)\n" for i in range(lines))

        cases = {
            "2 KB Bash, nothing stored": lambda n: bash(n, log(n, 60)),
            "12 KB Read, stored whole": lambda n: read(n, log(n, 360)),
            "22 KB Bash, swapped in place": lambda n: bash(n, log(n, 650)),
            "78 KB Bash over the client's cut, in place": lambda n: bash(n, log(n, 2300), persisted=True),
        }
        times = {k: [] for k in cases}
        swapped = {k: 0 for k in cases}
        for n in range(runs):
            for k, make in cases.items():
                wall, out = timed(bin_dir, home, make(n * 10 + len(times[k])))
                times[k].append(wall)
                swapped[k] += bool(out.strip())
        print(f"memctl-hook PostToolUse, {runs} calls per case ({bin_dir}):")
        for k, v in times.items():
            v.sort()
            print(f"  {k:<44} p50 {statistics.median(v):6.1f} ms  p95 {v[int(0.95 * (len(v) - 1))]:6.1f} ms  "
                  f"replaced {swapped[k]}/{runs}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "debug"))
    ap.add_argument("--turns", type=int, default=500)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--latency", type=int, metavar="N", help="time whole hook processes instead (N calls per case)")
    ap.add_argument("--in-place-chars", type=int, help="MEMCTL_SWAP_IN_PLACE_CHARS (default: memctl's, 8192)")
    a = ap.parse_args()
    global IN_PLACE_CHARS
    IN_PLACE_CHARS = a.in_place_chars
    if a.latency:
        latency(a.bin, a.latency)
        return
    with tempfile.TemporaryDirectory() as tmp:
        home, work = os.path.join(tmp, "home"), os.path.join(tmp, "projects")
        os.makedirs(work)
        rows = []
        for n, cmd in enumerate(COMMANDS):
            out = subprocess.run(["bash", "-c", cmd], cwd=ROOT, capture_output=True, text=True).stdout
            rows.append((cmd,) + feed(a.bin, home, work, "bench-real", n, cmd, out))
        report("real commands on this repository", rows)
        gen = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_transcript.py"),
                              "--turns", str(a.turns), "--seed", str(a.seed)], capture_output=True, text=True,
                             check=True).stdout
        rows, cmds = [], {}
        for line in gen.splitlines():
            d = json.loads(line)
            msg = d.get("message") or {}
            for b in msg.get("content") if isinstance(msg.get("content"), list) else []:
                if b.get("type") == "tool_use" and b.get("name") == "Bash":
                    cmds[b["id"]] = b["input"].get("command", "")
                if b.get("type") == "tool_result" and b.get("tool_use_id") in cmds:
                    r = d.get("toolUseResult")
                    if isinstance(r, dict) and "stdout" in r:
                        out = r["stdout"] + (("\n" + r["stderr"]) if r.get("stderr") else "")
                        rows.append((cmds[b["tool_use_id"]],) + feed(a.bin, home, work, "bench-gen", len(rows) + 1000,
                                                                     cmds[b["tool_use_id"]], out))
        report(f"generated session (gen_transcript.py --turns {a.turns} --seed {a.seed})", rows)
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCTL_")}
        env.update(MEMCTL_HOME=home)
        listing = json.loads(subprocess.run([os.path.join(a.bin, "memctl"), "swap", "list", "--json"], env=env,
                                            capture_output=True, text=True, check=True).stdout)
        print(f"\nstore: {sum(1 for e in listing if e.get('in_place'))} outputs pinned in place, "
              f"{sum(e['bytes'] for e in listing if e.get('in_place')):,} bytes")


if __name__ == "__main__":
    main()
