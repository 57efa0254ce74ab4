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
import json
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests", "e2e", "harness"))
import fake_agents as fa  # noqa: E402  (the fakes and the pinned CLIs, shared with the e2e)
EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact",
          "PostCompact", "Stop"]
TOOL_PROMPT = "please run echo for me"


def script(agent: str):
    """A shell call when the last input is the tool prompt, else a message."""
    def answer(req: dict, n: int) -> fa.Turn:
        last = fa.last_input(req)
        if TOOL_PROMPT in json.dumps(last) and not fa.is_tool_result(last):
            if agent == "codex":
                return fa.Turn(tool="exec_command", args={"cmd": "echo tool-output"})
            return fa.Turn(tool="run_shell_command", args={"command": "echo tool-output"})
        return fa.Turn(text=f"Answer number {n}.")
    return answer


AGENTS = {
    "codex": {"events": EVENTS},
    "gemini": {"events": ["SessionStart", "SessionEnd", "BeforeAgent", "AfterAgent",
                          "BeforeModel", "AfterModel", "BeforeToolSelection", "BeforeTool",
                          "AfterTool", "PreCompress", "Notification"]},
}


def recorder(root: str, out: str, events: list[str]) -> dict:
    """Hook definitions, one per event, each appending its stdin to `out/<event>.jsonl`."""
    record = os.path.join(root, "record.py")
    with open(record, "w") as f:
        f.write("import sys\n"
                f"with open({out!r} + '/' + sys.argv[1] + '.jsonl', 'a') as f:\n"
                "    f.write(sys.stdin.read().strip() + '\\n')\n")
    return {e: [{"hooks": [{"type": "command", "command": f"{sys.executable} {record} {e}"}]}]
            for e in events}


def setup(agent: str, root: str, port: int, hooks: dict) -> tuple[dict, list[str]]:
    """Environment and headless command line (the agent's home under `root`)."""
    home = os.path.join(root, "home")
    if agent == "codex":
        fa.codex_config(os.path.join(home, ".codex"), port)
        with open(os.path.join(home, ".codex", "hooks.json"), "w") as f:
            json.dump({"hooks": hooks}, f, indent=1)
    else:
        fa.gemini_settings(home)
        path = os.path.join(home, ".gemini", "settings.json")
        with open(path) as f:
            settings = json.load(f)
        settings["hooks"] = hooks
        with open(path, "w") as f:
            json.dump(settings, f, indent=1)
    args = fa.agent_args(agent) + ([] if agent == "codex" else ["-p"])
    return fa.agent_env(agent, home, port), args


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
    launcher = fa.install(a.agent, a.version)
    server = fa.serve(a.agent, script(a.agent), None)
    with tempfile.TemporaryDirectory(prefix=f"memctl-{a.agent}-rec.") as root:
        hooks = recorder(root, out, agent["events"])
        env, args = setup(a.agent, root, server.server_address[1], hooks)
        project = os.path.join(root, "project")
        os.makedirs(project)
        for prompt in ["remember the flag FOO_BAR=42", TOOL_PROMPT,
                       f"{TOOL_PROMPT}, {fa.COMPACT_MARK}"]:
            subprocess.run([launcher, *args, prompt], cwd=project, env=env, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        shutil.copyfile(transcripts(root)[-1], os.path.join(out, "transcript.jsonl"))
    server.shutdown()
    print(json.dumps({"out": out, "files": sorted(os.listdir(out))}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
