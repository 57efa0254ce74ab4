#!/usr/bin/env python3
"""Record a multi-run Codex CLI or Gemini CLI session transcript, offline (stdlib only).

    scripts/record_agent_transcripts.py --agent codex|gemini --out DIR

Built on scripts/record_agent_hooks.py (same pinned packages, install cache and fakes of the
model APIs), with what the transcript decoders' tests need on top:

- every hook that can inject context (SessionStart, UserPromptSubmit, BeforeAgent) answers
  with an `additionalContext` holding a `<memctl-context>` block, as memctl's restore does;
- the project has an AGENTS.md (Codex injects it as a user message);
- the prompts run in ONE session: the first starts it, the others resume it
  (`codex exec resume --last`, `gemini --resume latest`);
- Gemini answers the tool prompt with text and a call in one message, and a prompt naming a
  "broken tool" with a call of a tool that does not exist.

Scenarios (the fixtures in tests/fixtures/agents/ were recorded with them):
  codex   a prompt; the tool prompt; the tool prompt with a nearly full context (compaction
          between the call and the answer)
          -> codex-0.171.0-resume-hooks-agentsmd-compact.jsonl (base_instructions stripped)
  gemini  a prompt; the tool prompt with a nearly full context (compression); the broken tool;
          a prompt after the compression
          -> gemini-0.61.0-resume-hooks-compress-toolerror.jsonl

The session's transcript is copied to `DIR/transcript.jsonl`, the hook payloads to
`DIR/<event>.jsonl`.
"""

from __future__ import annotations

import argparse
import http.server
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "record_agent_hooks", os.path.join(HERE, "record_agent_hooks.py"))
rah = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rah)
fa = rah.fa  # the fakes' base, the pinned CLIs and their set-up (tests/e2e/harness)


def usage(req: dict) -> dict:
    n = fa.usage_tokens(req)
    return {"input_tokens": n, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": n + 5}

INJECTING = ["BeforeAgent", "SessionStart", "UserPromptSubmit"]
BROKEN = "use the broken tool"
PROMPTS = {
    "codex": ["remember the flag FOO_BAR=42", rah.TOOL_PROMPT,
              f"{rah.TOOL_PROMPT}, {fa.COMPACT_MARK}"],
    "gemini": ["remember the flag FOO_BAR=42", f"{rah.TOOL_PROMPT}, {fa.COMPACT_MARK}", BROKEN,
               "what was the flag?"],
}


def recorder(root: str, out: str, events: list[str]) -> dict:
    """Hooks that append their stdin to `out/<event>.jsonl`; the injecting ones answer with a
    `<memctl-context>` additionalContext."""
    record = os.path.join(root, "record.py")
    with open(record, "w") as f:
        f.write("import json, sys\n"
                "ev = sys.argv[1]\n"
                f"with open({out!r} + '/' + ev + '.jsonl', 'a') as f:\n"
                "    f.write(sys.stdin.read().strip() + '\\n')\n"
                f"if ev in {INJECTING!r}:\n"
                "    ctx = '<memctl-context source=\"restore\">RESTORED_SECRET_CONTEXT from ' + ev"
                " + '</memctl-context>'\n"
                "    print(json.dumps({'hookSpecificOutput': {'hookEventName': ev,"
                " 'additionalContext': ctx}}))\n")
    return {e: [{"hooks": [{"type": "command", "command": f"{sys.executable} {record} {e}"}]}]
            for e in events}


class FakeResponses(fa.Fake):
    """As record_agent_hooks' fake, but the shell call answers the last *user-written* input
    (hook context now follows the prompt as developer messages)."""

    def do_POST(self):
        req, n = self.request_json()
        real = [i for i in req.get("input") or []
                if i.get("type") == "function_call_output"
                or (i.get("role") == "user" and "<environment_context>" not in json.dumps(i)
                    and "AGENTS.md" not in json.dumps(i))]
        last = real[-1] if real else {}
        if rah.TOOL_PROMPT in json.dumps(last) and last.get("type") != "function_call_output":
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


class FakeGemini(fa.Fake):
    """As record_agent_hooks' fake, plus text beside the shell call and the broken tool."""

    def do_POST(self):
        req, n = self.request_json()
        last = json.dumps((req.get("contents") or [{}])[-1])
        if "alt=sse" not in self.path:
            parts = [{"text": json.dumps({"complexity_reasoning": "simple",
                                          "complexity_score": 10})}]
        elif BROKEN in last and "functionResponse" not in last:
            parts = [{"functionCall": {"name": "no_such_tool", "args": {"x": 1}}}]
        elif rah.TOOL_PROMPT in last and "functionResponse" not in last:
            parts = [{"text": f"Running it now ({n})."},
                     {"functionCall": {"name": "run_shell_command",
                                       "args": {"command": "echo tool-output"}}}]
        else:
            parts = [{"text": f"Answer number {n}."}]
        chunk = {"candidates": [{"content": {"parts": parts, "role": "model"},
                                 "finishReason": "STOP", "index": 0}],
                 "usageMetadata": {"promptTokenCount": usage(req)["input_tokens"],
                                   "candidatesTokenCount": 5,
                                   "totalTokenCount": usage(req)["total_tokens"]}}
        if "alt=sse" in self.path:
            self.answer(f"data: {json.dumps(chunk)}\r\n\r\n".encode(), "text/event-stream")
        else:
            self.answer(json.dumps(chunk).encode(), "application/json")


def codex_setup(root: str, port: int, hooks: dict) -> tuple[dict, list[str]]:
    """record_agent_hooks' setup with the sandbox in the config: `exec resume` takes no
    `--sandbox` and would fall back to read-only."""
    env, args = rah.setup("codex", root, port, hooks)
    config = os.path.join(root, "home", ".codex", "config.toml")
    with open(config) as f:
        body = f.read()
    with open(config, "w") as f:
        f.write('sandbox_mode = "danger-full-access"\n' + body)
    return env, args


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--agent", choices=sorted(PROMPTS), required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    agent = rah.AGENTS[a.agent]
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    launcher = fa.install(a.agent)
    fake = FakeResponses if a.agent == "codex" else FakeGemini
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), fake)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory(prefix=f"memctl-{a.agent}-rec.") as root:
        hooks = recorder(root, out, agent["events"])
        port = server.server_address[1]
        env, args = (codex_setup(root, port, hooks) if a.agent == "codex"
                     else rah.setup("gemini", root, port, hooks))
        project = os.path.join(root, "project")
        os.makedirs(project)
        with open(os.path.join(project, "AGENTS.md"), "w") as f:
            f.write("# Project rules\nAGENTS_MD_MARKER: always use tabs.\n")
        for i, prompt in enumerate(PROMPTS[a.agent]):
            run = args
            if i > 0 and a.agent == "codex":
                run = ["exec", "resume", "--last", "--skip-git-repo-check",
                       "--dangerously-bypass-hook-trust"]
            elif i > 0:
                run = ["--resume", "latest", *args]
            subprocess.run([launcher, *run, prompt], cwd=project, env=env, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=180)
        found = rah.transcripts(root)
        if len(found) != 1:
            print(f"expected one session transcript, found {found}", file=sys.stderr)
            return 1
        shutil.copyfile(found[0], os.path.join(out, "transcript.jsonl"))
    server.shutdown()
    print(json.dumps({"out": out, "files": sorted(os.listdir(out))}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
