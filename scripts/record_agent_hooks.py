#!/usr/bin/env python3
"""Record what the real Codex CLI or Gemini CLI sends its hooks, offline (stdlib only).

    scripts/record_agent_hooks.py --agent codex|gemini --out DIR [--version V]

Installs the pinned npm package (`@openai/codex` 0.171.0, `@google/gemini-cli` 0.61.0) once,
where the e2e harness keeps Claude Code (`memctl-e2e/<agent>-<version>` in the cache dir), serves a scripted fake of the agent's model API on
loopback (the OpenAI Responses API, or the Gemini API's generateContent and
streamGenerateContent, both streaming as server-sent events), and runs the CLI headless twice
in a scratch project with a hook on every event that appends its stdin to `DIR/<event>.jsonl`:

  plain   one prompt, the fake answers with a message
  tool    a prompt the fake answers with a shell call, then a message
  compact the tool prompt again, with a usage report of a nearly full context: the agent
          compacts between the shell call and the answer

It then copies the last run's transcript (Codex's rollout, Gemini's chat file) to
`DIR/transcript.jsonl`. Codex runs only hooks the user has trusted and Gemini CLI only in a
trusted folder; `--dangerously-bypass-hook-trust` and `GEMINI_CLI_TRUST_WORKSPACE` stand in
for that review here.

What this showed is in ARCHITECTURE.md (beside the Claude Code adapter) and in
tests/fixtures/payloads/<agent>-<version>.jsonl.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact",
          "PostCompact", "Stop"]
TOOL_PROMPT = "please run echo for me"
# The fake reports a nearly full context for any request holding this, so the agent compacts
# (Codex: past `model_auto_compact_token_limit`; Gemini CLI: past its compression threshold,
# checked before each model call of a turn).
COMPACT_MARK = "then compact"
FULL_CONTEXT = 990_000


def usage(req: dict) -> dict:
    n = FULL_CONTEXT if COMPACT_MARK in json.dumps(req) else 100
    return {"input_tokens": n, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": n + 5}


class Fake(http.server.BaseHTTPRequestHandler):
    """What both fakes share: HTTP/1.1, silence, a request counter, one body per answer."""
    protocol_version = "HTTP/1.1"
    count = 0

    def log_message(self, *args):
        pass

    def request_json(self) -> tuple[dict, int]:
        """The request's JSON body and its number (1, 2, ...)."""
        req = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        Fake.count += 1
        return req, Fake.count

    def answer(self, body: bytes, ctype: str) -> None:
        self.send_response(200)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class FakeResponses(Fake):
    """POST /v1/responses: a function call when the last input item is the tool prompt, else a
    message; every answer is one server-sent-event stream."""

    def do_POST(self):
        req, n = self.request_json()
        last = (req.get("input") or [{}])[-1]
        if TOOL_PROMPT in json.dumps(last) and last.get("type") != "function_call_output":
            item = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}",
                    "name": "exec_command", "arguments": json.dumps({"cmd": "echo tool-output"})}
        else:
            item = {"type": "message", "role": "assistant", "id": f"msg_{n}",
                    "content": [{"type": "output_text", "text": f"Answer number {n}."}]}
        events = [{"type": "response.created", "response": {"id": f"resp_{n}"}},
                  {"type": "response.output_item.done", "output_index": 0, "item": item},
                  {"type": "response.completed",
                   "response": {"id": f"resp_{n}", "usage": usage(req)}}]
        body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
        self.answer(body, "text/event-stream")


class FakeGemini(Fake):
    """POST /v1beta/models/M:generateContent (the CLI's model router: a JSON verdict) and
    :streamGenerateContent?alt=sse (a `run_shell_command` call for the tool prompt, else a
    message)."""

    def do_POST(self):
        req, n = self.request_json()
        last = (req.get("contents") or [{}])[-1]
        if "alt=sse" not in self.path:
            part = {"text": json.dumps({"complexity_reasoning": "simple", "complexity_score": 10})}
        elif TOOL_PROMPT in json.dumps(last) and "functionResponse" not in json.dumps(last):
            part = {"functionCall": {"name": "run_shell_command",
                                     "args": {"command": "echo tool-output"}}}
        else:
            part = {"text": f"Answer number {n}."}
        chunk = {"candidates": [{"content": {"parts": [part], "role": "model"},
                                 "finishReason": "STOP", "index": 0}],
                 "usageMetadata": {"promptTokenCount": usage(req)["input_tokens"],
                                   "candidatesTokenCount": 5,
                                   "totalTokenCount": usage(req)["total_tokens"]}}
        if "alt=sse" in self.path:
            self.answer(f"data: {json.dumps(chunk)}\r\n\r\n".encode(), "text/event-stream")
        else:
            self.answer(json.dumps(chunk).encode(), "application/json")


AGENTS = {
    "codex": {"package": "@openai/codex", "version": "0.171.0", "bin": "codex",
              "fake": FakeResponses, "events": EVENTS},
    "gemini": {"package": "@google/gemini-cli", "version": "0.61.0", "bin": "gemini",
               "fake": FakeGemini,
               "events": ["SessionStart", "SessionEnd", "BeforeAgent", "AfterAgent",
                          "BeforeModel", "AfterModel", "BeforeToolSelection", "BeforeTool",
                          "AfterTool", "PreCompress", "Notification"]},
}


def install(agent: dict, version: str) -> str:
    """The launcher of the pinned package, installed once beside the e2e harness's Claude Code
    (`CCH_CACHE`, else `${XDG_CACHE_HOME:-~/.cache}/memctl-e2e`, as tests/e2e/harness/driver.py)
    with the same npm flags."""
    cache = os.environ.get("CCH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "memctl-e2e")
    prefix = os.path.join(cache, f"{agent['bin']}-{version}")
    launcher = os.path.join(prefix, "node_modules", ".bin", agent["bin"])
    if not os.path.exists(launcher):
        os.makedirs(prefix, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", prefix, "--no-audit", "--no-fund",
                        "--ignore-scripts", "--loglevel=error", f"{agent['package']}@{version}"],
                       check=True, stdout=subprocess.DEVNULL)
    return launcher


def recorder(root: str, out: str, events: list[str]) -> dict:
    """Hook definitions, one per event, each appending its stdin to `out/<event>.jsonl`."""
    record = os.path.join(root, "record.py")
    with open(record, "w") as f:
        f.write("import sys\n"
                f"with open({out!r} + '/' + sys.argv[1] + '.jsonl', 'a') as f:\n"
                "    f.write(sys.stdin.read().strip() + '\\n')\n")
    return {e: [{"hooks": [{"type": "command", "command": f"{sys.executable} {record} {e}"}]}]
            for e in events}


def codex_setup(root: str, port: int, hooks: dict) -> tuple[dict, list[str]]:
    """Environment and headless command line for Codex."""
    home = os.path.join(root, "codex-home")
    os.makedirs(home)
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write(f'model = "gpt-5"\nmodel_provider = "fake"\n'
                f'model_auto_compact_token_limit = {FULL_CONTEXT // 2}\n'
                f'[model_providers.fake]\nname = "fake"\n'
                f'base_url = "http://127.0.0.1:{port}/v1"\nwire_api = "responses"\n'
                f'env_key = "FAKE_KEY"\n')
    with open(os.path.join(home, "hooks.json"), "w") as f:
        json.dump({"hooks": hooks}, f, indent=1)
    env = dict(os.environ, CODEX_HOME=home, FAKE_KEY="offline")
    return env, ["exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust",
                 "--sandbox", "danger-full-access"]


def gemini_setup(root: str, port: int, hooks: dict) -> tuple[dict, list[str]]:
    """Environment and headless command line for Gemini CLI (its home is HOME/.gemini)."""
    home = os.path.join(root, "gemini-home")
    os.makedirs(os.path.join(home, ".gemini"))
    settings = {"hooks": hooks, "security": {"auth": {"selectedType": "gemini-api-key"}}}
    with open(os.path.join(home, ".gemini", "settings.json"), "w") as f:
        json.dump(settings, f, indent=1)
    env = dict(os.environ, HOME=home, GEMINI_API_KEY="offline",
               GOOGLE_GEMINI_BASE_URL=f"http://127.0.0.1:{port}",
               GEMINI_CLI_TRUST_WORKSPACE="true")
    return env, ["--approval-mode", "yolo", "-p"]


def transcripts(root: str) -> list[str]:
    """Every transcript the agent wrote under `root`, oldest first."""
    found = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs
             if f.endswith(".jsonl") and ("rollout-" in f or "session-" in f)]
    return sorted(found, key=os.path.getmtime)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--agent", choices=sorted(AGENTS), required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--version", help="the npm package version (default: the pinned one)")
    a = ap.parse_args()
    agent = AGENTS[a.agent]
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    launcher = install(agent, a.version or agent["version"])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), agent["fake"])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory(prefix=f"memctl-{a.agent}-rec.") as root:
        hooks = recorder(root, out, agent["events"])
        setup = codex_setup if a.agent == "codex" else gemini_setup
        env, args = setup(root, server.server_address[1], hooks)
        project = os.path.join(root, "project")
        os.makedirs(project)
        for prompt in ["remember the flag FOO_BAR=42", TOOL_PROMPT,
                       f"{TOOL_PROMPT}, {COMPACT_MARK}"]:
            subprocess.run([launcher, *args, prompt], cwd=project, env=env, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        shutil.copyfile(transcripts(root)[-1], os.path.join(out, "transcript.jsonl"))
    server.shutdown()
    print(json.dumps({"out": out, "files": sorted(os.listdir(out))}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
