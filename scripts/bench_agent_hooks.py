#!/usr/bin/env python3
"""Whole-process hook latency per agent: Claude Code, Codex CLI and Gemini CLI, in one run.

    scripts/bench_agent_hooks.py --bin target/release --out /tmp/agent-hooks [--turns 200] [--runs 15]

For each agent: a transcript of `--turns` turns in that agent's own format (the same prompts,
shell calls, outputs and answers for every agent; the lines are the real CLIs' lines from
tests/fixtures/agents/ with new text and ids), archived up to its last turn with `memctl
ingest` into a fresh data dir, which is then kept as the starting state. Every run of an event
starts from that state (the last turn not yet archived) and is one fork/exec of
`memctl-hook --agent A <Event>` with the payload the real CLI sent for that event
(tests/fixtures/payloads/, ids and paths replaced); wall time around fork/exec + wait.
Prints one JSON line per (agent, event) with p50/p95 in ms, then a Markdown table.
Stdlib only.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "scripts"))
from benchlib import remove_tree, stop_dir_processes  # noqa: E402
FIX = os.path.join(REPO, "tests", "fixtures")
SESSION = "5e551011-aaaa-4bbb-8ccc-000000000001"

# In an EVENTS filter: the recorded tool output replaced by an 800-line build log (32 kB) with
# an error near its end, in the agent's own response shape (swapped: in place for Claude Code
# and Codex, stored for Gemini CLI).
BIG = "_big"
BIG_LOG = "".join("error: migration E-7731 failed (lock timeout)\n" if i == 790
                  else f"step {i}: compiled module m{i} ok\n" for i in range(1, 801))

# (agent, label, event name in the payload fixture, filter on the recorded payload)
EVENTS = [
    ("claude", "prompt", "UserPromptSubmit", {}),
    ("claude", "before compact", "PreCompact", {}),
    ("claude", "start (compact)", "SessionStart", {"source": "compact"}),
    ("claude", "tool output", "PostToolUse", {}),
    ("claude", "big tool output (digest in place)", "PostToolUse", {BIG: True}),
    ("claude", "session end", "SessionEnd", {}),
    ("codex", "prompt", "UserPromptSubmit", {}),
    ("codex", "before compact", "PreCompact", {}),
    ("codex", "start (compact)", "SessionStart", {"source": "compact"}),
    ("codex", "tool output", "PostToolUse", {}),
    ("codex", "big tool output (digest in place)", "PostToolUse", {BIG: True}),
    ("codex", "turn end (Stop)", "Stop", {}),
    ("gemini", "prompt (BeforeAgent)", "BeforeAgent", {}),
    ("gemini", "before compress", "PreCompress", {}),
    ("gemini", "session start", "SessionStart", {}),
    ("gemini", "tool output (AfterTool)", "AfterTool", {}),
    ("gemini", "big tool output (stored)", "AfterTool", {BIG: True}),
    ("gemini", "turn end (AfterAgent)", "AfterAgent", {}),
    ("gemini", "session end", "SessionEnd", {}),
]


def turn_text(i: int) -> tuple[str, str, str, str]:
    """Prompt, shell command, its output (~1 KB) and the answer of turn `i`."""
    prompt = f"Turn {i}: why does the ledger export fail for account {1000 + i}?"
    cmd = f"cargo test -p ledger export_{i}"
    out = "\n".join(f"test export_{i}_{k} ... ok" for k in range(30)) + f"\nerror: E{i:04} in export"
    answer = f"The export of account {1000 + i} fails on E{i:04}; the fix is in src/export_{i}.rs."
    return prompt, cmd, out, answer


def ts(i: int, k: int) -> str:
    return f"2026-11-{1 + i // 1440 % 27:02d}T{i // 60 % 24:02d}:{i % 60:02d}:{k:02d}.000Z"


def claude_lines(cwd: str, n: int) -> list[dict]:
    out = []
    for i in range(n):
        p, cmd, res, ans = turn_text(i)
        base = {"sessionId": SESSION, "cwd": cwd}
        out += [
            {**base, "type": "user", "uuid": f"u{i}", "timestamp": ts(i, 0),
             "message": {"role": "user", "content": p}},
            {**base, "type": "assistant", "uuid": f"a{i}", "timestamp": ts(i, 1),
             "message": {"id": f"m{i}", "role": "assistant", "content": [
                 {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": cmd}}]}},
            {**base, "type": "user", "uuid": f"r{i}", "timestamp": ts(i, 2),
             "message": {"role": "user", "content": [
                 {"type": "tool_result", "tool_use_id": f"t{i}", "content": res}]}},
            {**base, "type": "assistant", "uuid": f"b{i}", "timestamp": ts(i, 3),
             "message": {"id": f"n{i}", "role": "assistant",
                         "content": [{"type": "text", "text": ans}]}},
        ]
    return out


def fixture_lines(name: str) -> list[dict]:
    with open(os.path.join(FIX, "agents", name)) as f:
        return [json.loads(line) for line in f if line.strip()]


def codex_lines(cwd: str, n: int) -> list[dict]:
    """Codex rollout lines: the recorded session_meta, then per turn the recorded shapes of a
    turn_context, the user's message, a function call, its output and the answer."""
    rec = fixture_lines("codex-0.171.0.jsonl")
    meta = copy.deepcopy(next(r for r in rec if r["type"] == "session_meta"))
    meta["payload"].update(id=SESSION, session_id=SESSION, cwd=cwd)
    ctx_t = next(r for r in rec if r["type"] == "turn_context")
    items = [r for r in rec if r["type"] == "response_item"]
    user_t = next(r for r in items if r["payload"].get("role") == "user"
                  and "user.text" in json.dumps(r["payload"]))
    call_t = next(r for r in items if r["payload"]["type"] == "function_call")
    out_t = next(r for r in items if r["payload"]["type"] == "function_call_output")
    # Not the compaction request's answer (`compaction_output`), which is no turn's reply.
    ans_t = next(r for r in items if r["payload"].get("role") == "assistant"
                 and not (r.get("metadata") or {}).get("compaction_output"))
    lines, o = [meta], 1
    for i in range(n):
        p, cmd, res, ans = turn_text(i)
        turn = f"turn-{i:06d}"
        made = []
        for tmpl, fill in ((ctx_t, None), (user_t, p), (call_t, cmd), (out_t, res), (ans_t, ans)):
            line = copy.deepcopy(tmpl)
            pl = line["payload"]
            if "turn_id" in pl:
                pl["turn_id"] = turn
            if tmpl is ctx_t:
                pl["cwd"] = cwd
            elif tmpl is user_t or tmpl is ans_t:
                pl["id"] = f"msg_{i}_{len(made)}"
                pl["content"][0]["text"] = fill
            elif tmpl is call_t:
                pl.update(id=f"fc_{i}", call_id=f"call_{i}", arguments=json.dumps({"cmd": fill}))
            else:
                pl.update(id=f"fco_{i}", call_id=f"call_{i}", output=fill)
            meta_pass = pl.get("internal_chat_message_metadata_passthrough")
            if isinstance(meta_pass, dict) and "turn_id" in meta_pass:
                meta_pass["turn_id"] = turn
            line["timestamp"] = ts(i, len(made))
            line["ordinal"] = o
            o += 1
            made.append(line)
        lines += made
    return lines


def gemini_lines(n: int) -> list[dict]:
    """Gemini chat lines: the header, then per turn the user's message, the model's tool call
    (written twice, as the CLI does), the tool's response and the answer."""
    lines = [{"sessionId": SESSION, "projectHash": "0" * 64, "startTime": ts(0, 0),
              "lastUpdated": ts(0, 0), "kind": "main"}]
    for i in range(n):
        p, cmd, res, ans = turn_text(i)
        call_id = f"run_shell_command__{i}"
        response = {"functionResponse": {"id": call_id, "name": "run_shell_command",
                                         "response": {"output": res}}}
        model = {"id": f"g{i}", "timestamp": ts(i, 1), "type": "gemini", "content": "",
                 "thoughts": [], "model": "gemini-3.8-flash"}
        lines += [
            {"id": f"u{i}", "timestamp": ts(i, 0), "type": "user", "content": [{"text": p}]},
            model,
            {**model, "toolCalls": [{"id": call_id, "name": "run_shell_command",
                                     "args": {"command": cmd}, "result": [response],
                                     "status": "success", "timestamp": ts(i, 2)}]},
            {"id": f"r{i}", "timestamp": ts(i, 2), "type": "user", "content": [response]},
            {"id": f"b{i}", "timestamp": ts(i, 3), "type": "gemini", "content": ans,
             "thoughts": [], "model": "gemini-3.8-flash"},
        ]
    return lines


def payload(agent: str, event: str, where: dict, transcript: str, cwd: str) -> dict:
    name = "claude.jsonl" if agent == "claude" else \
        {"codex": "codex-0.171.0.jsonl", "gemini": "gemini-0.61.0.jsonl"}[agent]
    with open(os.path.join(FIX, "payloads", name)) as f:
        for line in f:
            p = json.loads(line)
            if p.get("hook_event_name") == event and \
                    all(p.get(k) == v for k, v in where.items() if k != BIG):
                p.update(session_id=SESSION, transcript_path=transcript, cwd=cwd)
                if where.get(BIG):
                    if agent == "claude":  # the recorded call is a Read: make it Bash's
                        p.update(tool_name="Bash", tool_input={"command": "make migrate 2>&1"})
                    p["tool_response"] = {
                        "claude": {"stdout": BIG_LOG, "stderr": "", "interrupted": False,
                                   "isImage": False},
                        "codex": BIG_LOG,
                        "gemini": {"llmContent": BIG_LOG, "returnDisplay": BIG_LOG}}[agent]
                return p
    raise SystemExit(f"no recorded {agent} payload for {event} {where}")


def write_jsonl(path: str, lines: list[dict]) -> None:
    with open(path, "w") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")


def prepare(agent: str, out: str, bin_dir: str, turns: int) -> tuple[str, str, dict]:
    """The agent's transcript and the data dir holding every turn but the last."""
    root = os.path.join(out, agent)
    remove_tree(root)
    cwd = os.path.join(root, "project")
    os.makedirs(cwd)
    per_turn = {"claude": 4, "codex": 5, "gemini": 5}[agent]
    lines = {"claude": lambda: claude_lines(cwd, turns), "codex": lambda: codex_lines(cwd, turns),
             "gemini": lambda: gemini_lines(turns)}[agent]()
    name = {"claude": f"{SESSION}.jsonl", "codex": f"rollout-2026-11-28-{SESSION}.jsonl",
            "gemini": f"session-2026-11-28-{SESSION[:8]}.jsonl"}[agent]
    transcript = os.path.join(root, name)
    if agent == "gemini":
        # Where Gemini CLI keeps a chat, beside the file naming its project.
        tmp = os.path.join(root, ".gemini", "tmp", "project")
        os.makedirs(os.path.join(tmp, "chats"))
        with open(os.path.join(tmp, ".project_root"), "w") as f:
            f.write(cwd + "\n")
        transcript = os.path.join(tmp, "chats", name)
    write_jsonl(transcript, lines[:-per_turn])
    env = dict(os.environ, MEMCTL_HOME=os.path.join(root, "home"), MEMCTL_BACKGROUND_EMBED="0",
               MEMCTL_HOOK_INLINE_PROMPT_ARCHIVE="1")
    subprocess.run([os.path.join(bin_dir, "memctl"), "ingest", "--quiet", transcript],
                   env=env, check=True, cwd=cwd)
    write_jsonl(transcript, lines)
    snap = os.path.join(root, "snap")
    shutil.copytree(env["MEMCTL_HOME"], snap)
    return transcript, cwd, env


def run_event(bin_dir: str, agent: str, event: str, body: dict, env: dict, runs: int) -> list[float]:
    home, snap = env["MEMCTL_HOME"], os.path.join(os.path.dirname(env["MEMCTL_HOME"]), "snap")
    data = json.dumps(body).encode()
    times = []
    for _ in range(runs):
        # What the last run started (SessionStart starts the resident service) ends first:
        # neither its files nor its CPU belong to the next run.
        remove_tree(home)
        shutil.copytree(snap, home)
        t0 = time.perf_counter()
        r = subprocess.run([os.path.join(bin_dir, "memctl-hook"), "--agent", agent, event],
                           input=data, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           cwd=body["cwd"])
        times.append((time.perf_counter() - t0) * 1e3)
        if r.returncode != 0:
            raise SystemExit(f"{agent} {event}: exit {r.returncode}")
    stop_dir_processes(home)
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--runs", type=int, default=15)
    a = ap.parse_args()
    bin_dir, out = os.path.abspath(a.bin), os.path.abspath(a.out)
    prepared = {agent: prepare(agent, out, bin_dir, a.turns) for agent in ("claude", "codex", "gemini")}
    rows = []
    for agent, label, event, where in EVENTS:
        transcript, cwd, env = prepared[agent]
        body = payload(agent, event, where, transcript, cwd)
        t = sorted(run_event(bin_dir, agent, event, body, env, a.runs))
        row = {"agent": agent, "event": label, "hook": event, "runs": len(t),
               "p50_ms": round(statistics.median(t), 1),
               "p95_ms": round(t[min(len(t) - 1, int(round(0.95 * (len(t) - 1))))], 1)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    print("\n| agent | event | hook | p50 ms | p95 ms |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['agent']} | {r['event']} | {r['hook']} | {r['p50_ms']} | {r['p95_ms']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
