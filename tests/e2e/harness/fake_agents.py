"""Scripted fakes of the Codex and Gemini model APIs on loopback, and the pinned CLIs (stdlib).

Used by `agents.py` (the e2e scenarios of Codex CLI and Gemini CLI) and by
`scripts/record_agent_hooks.py`. Each fake answers from a `Script`: a function of the request
(its JSON) and its number that returns what the model says next, as a neutral `Turn` (text, or
one tool call by a name the request offers). Every request is appended to `requests.jsonl`.
A request holding `COMPACT_MARK` reports a nearly full context, so the agent compacts.
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import threading
from dataclasses import dataclass, field
from typing import Callable

COMPACT_MARK = "then compact"
FULL_CONTEXT = 990_000

AGENTS = {
    "codex": {"package": "@openai/codex", "version": "0.171.0", "bin": "codex"},
    "gemini": {"package": "@google/gemini-cli", "version": "0.61.0", "bin": "gemini"},
}


@dataclass
class Turn:
    """What the fake model says: text, or a call of `tool` (a name the request offers, or the
    first offered name holding every word of `tool_like`) with `args`."""
    text: str = ""
    tool: str | None = None
    tool_like: list[str] = field(default_factory=list)
    args: dict = field(default_factory=dict)
    # Report a nearly full context with this answer (None: when the request holds
    # COMPACT_MARK), so that the agent compacts after it.
    full_context: bool | None = None


Script = Callable[[dict, int], Turn]


def offered_tools(req: dict) -> list[str]:
    """Tool names a Responses or Gemini request offers; a tool of a Responses namespace (Codex
    offers each MCP server's tools as one, `mcp__<server>`) as `<namespace>/<name>`."""
    names = []
    for t in req.get("tools") or []:
        if t.get("type") == "namespace":
            names += [f"{t['name']}/{x.get('name', '')}" for x in t.get("tools") or []]
        elif t.get("name"):
            names.append(t["name"])
        for d in t.get("functionDeclarations") or []:
            names.append(d.get("name", ""))
    return names


def resolve_tool(turn: Turn, req: dict) -> str | None:
    if turn.tool:
        return turn.tool
    if turn.tool_like:
        names = offered_tools(req)
        for name in names:
            if all(w in name for w in turn.tool_like):
                return name
        # An agent may offer an MCP tool under its bare name when nothing else is called so.
        if turn.tool_like[-1] in names:
            return turn.tool_like[-1]
    return None


def usage_tokens(req: dict, turn: Turn | None = None) -> int:
    full = turn.full_context if turn and turn.full_context is not None \
        else COMPACT_MARK in json.dumps(req)
    return FULL_CONTEXT if full else 100


class Fake(http.server.BaseHTTPRequestHandler):
    """What both fakes share: HTTP/1.1, silence, the request log, one body per answer."""
    protocol_version = "HTTP/1.1"
    script: Script = staticmethod(lambda req, n: Turn(text=f"Answer number {n}."))
    log_path: str | None = None
    count = 0
    lock = threading.Lock()

    def log_message(self, *args):
        pass

    def request_json(self) -> tuple[dict, int]:
        req = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        with Fake.lock:
            Fake.count += 1
            n = Fake.count
            if self.log_path:
                with open(self.log_path, "a") as f:
                    f.write(json.dumps({"n": n, "path": self.path, "body": req}) + "\n")
        return req, n

    def answer(self, body: bytes, ctype: str) -> None:
        self.send_response(200)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class FakeResponses(Fake):
    """POST /v1/responses (Codex): one server-sent-event stream per answer."""

    def do_POST(self):
        req, n = self.request_json()
        turn = type(self).script(req, n)
        tool = resolve_tool(turn, req)
        if tool:
            item = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}",
                    "name": tool, "arguments": json.dumps(turn.args)}
            if "/" in tool:
                item["namespace"], item["name"] = tool.split("/", 1)
        else:
            item = {"type": "message", "role": "assistant", "id": f"msg_{n}",
                    "content": [{"type": "output_text", "text": turn.text or f"Answer number {n}."}]}
        used = usage_tokens(req, turn)
        events = [{"type": "response.created", "response": {"id": f"resp_{n}"}},
                  {"type": "response.output_item.done", "output_index": 0, "item": item},
                  {"type": "response.completed", "response": {"id": f"resp_{n}", "usage": {
                      "input_tokens": used, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": used + 5}}}]
        body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
        self.answer(body, "text/event-stream")


class FakeGemini(Fake):
    """POST /v1beta/models/M:generateContent (the CLI's model router: a JSON verdict) and
    :streamGenerateContent?alt=sse (the script's turn)."""

    def do_POST(self):
        req, n = self.request_json()
        turn = None
        if "alt=sse" not in self.path:
            part = {"text": json.dumps({"complexity_reasoning": "simple", "complexity_score": 10})}
        else:
            turn = type(self).script(req, n)
            tool = resolve_tool(turn, req)
            part = ({"functionCall": {"name": tool, "args": turn.args}} if tool
                    else {"text": turn.text or f"Answer number {n}."})
        used = usage_tokens(req, turn)
        chunk = {"candidates": [{"content": {"parts": [part], "role": "model"},
                                 "finishReason": "STOP", "index": 0}],
                 "usageMetadata": {"promptTokenCount": used, "candidatesTokenCount": 5,
                                   "totalTokenCount": used + 5}}
        if "alt=sse" in self.path:
            self.answer(f"data: {json.dumps(chunk)}\r\n\r\n".encode(), "text/event-stream")
        else:
            self.answer(json.dumps(chunk).encode(), "application/json")


def serve(agent: str, script: Script, log_path: str | None) -> http.server.ThreadingHTTPServer:
    """Start the agent's fake on a free loopback port (a daemon thread)."""
    base = FakeResponses if agent == "codex" else FakeGemini
    handler = type(f"Scripted{base.__name__}", (base,),
                   {"script": staticmethod(script), "log_path": log_path})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def last_input(req: dict) -> dict:
    """The last input item (Codex) or content (Gemini) of a request."""
    items = req.get("input") or req.get("contents") or [{}]
    return items[-1] if isinstance(items, list) and items else {}


def is_tool_result(item: dict) -> bool:
    text = json.dumps(item)
    return item.get("type") in ("function_call_output", "custom_tool_call_output") or \
        "functionResponse" in text


def install(agent: str, version: str | None = None) -> str:
    """The launcher of the pinned npm package, installed once beside the e2e harness's Claude
    Code (`CCH_CACHE`, else `${XDG_CACHE_HOME:-~/.cache}/memctl-e2e`), with the same npm flags."""
    spec = AGENTS[agent]
    version = version or spec["version"]
    cache = os.environ.get("CCH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "memctl-e2e")
    prefix = os.path.join(cache, f"{spec['bin']}-{version}")
    launcher = os.path.join(prefix, "node_modules", ".bin", spec["bin"])
    if not os.path.exists(launcher):
        os.makedirs(prefix, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", prefix, "--no-audit", "--no-fund",
                        "--ignore-scripts", "--loglevel=error", f"{spec['package']}@{version}"],
                       check=True, stdout=subprocess.DEVNULL)
    return launcher


def codex_config(home: str, port: int) -> None:
    """`$CODEX_HOME/config.toml` naming the fake as the model provider (before `memctl
    install` adds its MCP server to the same file)."""
    os.makedirs(home, exist_ok=True)
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write(f'model = "gpt-5"\nmodel_provider = "fake"\n'
                f'model_auto_compact_token_limit = {FULL_CONTEXT // 2}\n\n'
                f'[model_providers.fake]\nname = "fake"\n'
                f'base_url = "http://127.0.0.1:{port}/v1"\nwire_api = "responses"\n'
                f'env_key = "FAKE_KEY"\n')


def gemini_settings(home: str) -> None:
    """`~/.gemini/settings.json` choosing API-key auth (before `memctl install`)."""
    os.makedirs(os.path.join(home, ".gemini"), exist_ok=True)
    with open(os.path.join(home, ".gemini", "settings.json"), "w") as f:
        json.dump({"security": {"auth": {"selectedType": "gemini-api-key"}}}, f, indent=1)


def agent_env(agent: str, home: str, port: int) -> dict:
    """The environment a CLI runs with: its home, the fake's address, a dummy key."""
    env = dict(os.environ, HOME=home)
    if agent == "codex":
        env.update(CODEX_HOME=os.path.join(home, ".codex"), FAKE_KEY="offline")
    else:
        env.update(GEMINI_API_KEY="offline", GOOGLE_GEMINI_BASE_URL=f"http://127.0.0.1:{port}",
                   GEMINI_CLI_TRUST_WORKSPACE="true")
    return env


def agent_args(agent: str) -> list[str]:
    """The headless command line before the prompt. Codex runs only hooks the user trusted and
    Gemini CLI only in a trusted folder: the flag and `GEMINI_CLI_TRUST_WORKSPACE` stand in for
    that review."""
    if agent == "codex":
        return ["exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust",
                "--sandbox", "danger-full-access"]
    return ["--approval-mode", "yolo"]
