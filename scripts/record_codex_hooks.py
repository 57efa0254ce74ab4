#!/usr/bin/env python3
"""Record what the real Codex CLI sends its hooks, offline (stdlib only).

    scripts/record_codex_hooks.py --out DIR [--codex-version 0.171.0]

Installs the pinned `@openai/codex` from the npm registry into `.cache/agents/codex-<version>`
(once), serves a scripted fake of the OpenAI Responses API (streaming) on loopback, and runs
`codex exec` twice in a scratch project with a hook on every event that appends its stdin to
`DIR/<event>.jsonl`:

  plain   one prompt, the fake answers with a message
  tool    a prompt the fake answers with an `exec_command` call, then a message

It then copies the tool run's rollout transcript to `DIR/rollout.jsonl`. Codex runs only hooks
the user has trusted; `--dangerously-bypass-hook-trust` stands in for that review here.

What this showed for 0.171.0 is in ARCHITECTURE.md ("Other agents") and in
tests/fixtures/payloads/codex-0.171.0.jsonl.
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
USAGE = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
         "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 105}


class FakeResponses(http.server.BaseHTTPRequestHandler):
    """POST /v1/responses: a function call when the last input item is the tool prompt, else a
    message; every answer is one server-sent-event stream."""
    protocol_version = "HTTP/1.1"
    count = 0

    def log_message(self, *args):
        pass

    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        FakeResponses.count += 1
        n = FakeResponses.count
        last = (req.get("input") or [{}])[-1]
        if TOOL_PROMPT in json.dumps(last) and last.get("type") != "function_call_output":
            item = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}",
                    "name": "exec_command", "arguments": json.dumps({"cmd": "echo tool-output"})}
        else:
            item = {"type": "message", "role": "assistant", "id": f"msg_{n}",
                    "content": [{"type": "output_text", "text": f"Answer number {n}."}]}
        events = [{"type": "response.created", "response": {"id": f"resp_{n}"}},
                  {"type": "response.output_item.done", "output_index": 0, "item": item},
                  {"type": "response.completed", "response": {"id": f"resp_{n}", "usage": USAGE}}]
        body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def install(version: str) -> str:
    """The `codex` launcher of the pinned package, installed once under .cache/agents."""
    prefix = os.path.join(REPO, ".cache", "agents", f"codex-{version}")
    launcher = os.path.join(prefix, "node_modules", ".bin", "codex")
    if not os.path.exists(launcher):
        os.makedirs(prefix, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", prefix, "--no-audit", "--no-fund",
                        f"@openai/codex@{version}"], check=True, stdout=subprocess.DEVNULL)
    return launcher


def codex_home(root: str, port: int, out: str) -> str:
    home = os.path.join(root, "codex-home")
    os.makedirs(home)
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write(f'model = "gpt-5"\nmodel_provider = "fake"\n'
                f'[model_providers.fake]\nname = "fake"\n'
                f'base_url = "http://127.0.0.1:{port}/v1"\nwire_api = "responses"\n'
                f'env_key = "FAKE_KEY"\n')
    record = os.path.join(root, "record.py")
    with open(record, "w") as f:
        f.write("import sys\n"
                f"with open({out!r} + '/' + sys.argv[1] + '.jsonl', 'a') as f:\n"
                "    f.write(sys.stdin.read().strip() + '\\n')\n")
    hooks = {e: [{"hooks": [{"type": "command",
                             "command": f"{sys.executable} {record} {e}"}]}] for e in EVENTS}
    with open(os.path.join(home, "hooks.json"), "w") as f:
        json.dump({"hooks": hooks}, f, indent=1)
    return home


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--codex-version", default="0.171.0")
    a = ap.parse_args()
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    codex = install(a.codex_version)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeResponses)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory(prefix="memctl-codex-rec.") as root:
        home = codex_home(root, server.server_address[1], out)
        project = os.path.join(root, "project")
        os.makedirs(project)
        env = dict(os.environ, CODEX_HOME=home, FAKE_KEY="offline")
        for prompt in ["remember the flag FOO_BAR=42", TOOL_PROMPT]:
            subprocess.run([codex, "exec", "--skip-git-repo-check",
                            "--dangerously-bypass-hook-trust", "--sandbox",
                            "danger-full-access", prompt],
                           cwd=project, env=env, check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=120)
        rollouts = sorted(
            (os.path.join(d, f) for d, _, fs in os.walk(os.path.join(home, "sessions"))
             for f in fs if f.endswith(".jsonl")), key=os.path.getmtime)
        shutil.copyfile(rollouts[-1], os.path.join(out, "rollout.jsonl"))
    server.shutdown()
    print(json.dumps({"out": out, "events": sorted(os.listdir(out))}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
