"""End-to-end scenarios with the real Codex CLI and Gemini CLI (stdlib only).

    python3 tests/e2e/harness/agents.py --bin DIR --outdir DIR [SCENARIO...]

`--bin` holds `memctl` and `memctl-hook`. Every scenario gets `<outdir>/<name>/` with a fresh
`home/` (the agents' HOME and, through it, memctl's data dir) and `work/` (the project). Hooks
and the MCP server are put in place by `memctl install --agent codex|gemini --user`, as a user
would. The CLIs run offline against the fakes of `fake_agents.py`, inside a private network
namespace when one can be made (as `driver.py`); every model request is kept in
`<scenario>/requests.jsonl`. Prints one PASS/FAIL line per scenario; exit 1 on any failure.

Scenarios:
  codex-compact   a shell output says a fact; Codex compacts in the same turn (a usage report
                  of a full context); memctl's restore after the compaction reaches the next
                  model request and holds the fact; the session is archived as Codex's
  codex-swap      a big shell output reaches the model as memctl's digest (the error line
                  in it, the filler not); `memctl swap show` gives the line back
  gemini-session  a shell output says a fact; `--resume latest` reloads the chat whole and
                  gets no restore (it would repeat it); a new session with restore on startup
                  gets the fact in memctl's block; the session is archived as Gemini's
  gemini-compress Gemini compresses its history (a full context reported); the next run
                  (`--resume latest`) gets the compressed-away fact in memctl's block only
  cross-agent     Claude Code (the real CLI, through driver.py) settles a decision; a new Codex
                  session of the same project gets it in memctl's startup restore and says a
                  second fact; a Gemini session gets the second in its restore and finds the
                  first with memctl's MCP search tool, whose answer reaches its next request;
                  Codex finds the Claude fact with the MCP tool too
  to-claude       the other way round: Gemini and Codex settle a fact each; a new Claude Code
                  session of the same project gets both in its first request (startup
                  restore and prompt recall)
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import driver  # noqa: E402  (netns helpers, the Claude Code CLI)
import fake_agents as fa  # noqa: E402
from fake_agents import Turn  # noqa: E402

STEP_TIMEOUT = float(os.environ.get("CCH_STEP_TIMEOUT", "180"))


class Failed(Exception):
    pass


class Ctx:
    """One scenario's folders, binaries and findings."""

    def __init__(self, name: str, outdir: str, bin_dir: str):
        self.name = name
        self.dir = os.path.join(outdir, name)
        self.home = os.path.join(self.dir, "home")
        self.work = os.path.join(self.dir, "work")
        self.bin = bin_dir
        self.requests = os.path.join(self.dir, "requests.jsonl")
        for d in (self.home, self.work):
            os.makedirs(d, exist_ok=True)

    def env(self, extra: dict | None = None) -> dict:
        env = dict(os.environ, HOME=self.home,
                   PATH=f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}")
        env.pop("XDG_DATA_HOME", None)
        env.update(extra or {})
        return env

    def memctl(self, *args: str, env: dict | None = None) -> str:
        r = subprocess.run([os.path.join(self.bin, "memctl"), *args], cwd=self.work,
                           env=self.env(env), capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise Failed(f"memctl {' '.join(args)}: rc={r.returncode}: {r.stderr.strip()[:500]}")
        return r.stdout

    def install(self, agent: str) -> None:
        out = self.memctl("install", "--agent", agent, "--user")
        with open(os.path.join(self.dir, f"install-{agent}.txt"), "w") as f:
            f.write(out)

    def run_agent(self, agent: str, prompt: str, script, extra_args: list[str] | None = None,
                  env: dict | None = None) -> None:
        """One headless run of the agent's CLI in the project, against a fresh fake."""
        server = fa.serve(agent, script, self.requests)
        try:
            port = server.server_address[1]
            if agent == "codex":
                fa.codex_config(os.path.join(self.home, ".codex"), port)
            elif not os.path.exists(os.path.join(self.home, ".gemini", "settings.json")):
                fa.gemini_settings(self.home)
            self.install(agent)
            run_env = fa.agent_env(agent, self.home, port)
            run_env.update(PATH=f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}")
            run_env.pop("XDG_DATA_HOME", None)
            run_env.update(env or {})
            argv = [fa.install(agent), *fa.agent_args(agent), *(extra_args or [])]
            argv += [prompt] if agent == "codex" else ["-p", prompt]
            log = open(os.path.join(self.dir, f"{agent}.log"), "a")
            r = subprocess.run(argv, cwd=self.work, env=run_env, stdout=log, stderr=log,
                               timeout=STEP_TIMEOUT)
            if r.returncode != 0:
                raise Failed(f"{agent} exited {r.returncode} (see {agent}.log)")
        finally:
            server.shutdown()

    def requests_since(self, first: int = 0) -> list[dict]:
        if not os.path.exists(self.requests):
            return []
        with open(self.requests) as f:
            return [r for r in map(json.loads, f) if r["n"] > first]

    def last_request_n(self) -> int:
        reqs = self.requests_since()
        return reqs[-1]["n"] if reqs else 0


def request_text(req: dict) -> str:
    """A request's JSON text with HTML entities undone: Gemini CLI escapes hook context
    (`&lt;memctl-context ...&gt;`) inside its `<hook_context>` parts."""
    return html.unescape(json.dumps(req["body"]))


def memctl_blocks(req: dict) -> list[str]:
    """memctl's `<memctl-context>` blocks in a request, as the model got them."""
    text = request_text(req)
    out, at = [], 0
    while (i := text.find("<memctl-context", at)) >= 0:
        j = text.find("</memctl-context>", i)
        j = len(text) if j < 0 else j
        out.append(text[i:j])
        at = j + 1
    return out


def outside_blocks(req: dict) -> str:
    """A request's text without memctl's blocks (what the model would have without memctl)."""
    text = request_text(req)
    for b in memctl_blocks(req):
        text = text.replace(b, "")
    return text


def expect_block(reqs: list[dict], facts: list[str], what: str) -> None:
    """Some request carries a memctl block holding every fact."""
    for r in reqs:
        for b in memctl_blocks(r):
            if all(f in b for f in facts):
                return
    raise Failed(f"{what}: no model request carried a memctl block with {facts} "
                 f"({len(reqs)} requests looked at)")


def expect_session(ctx: Ctx, agent: str, fact: str) -> None:
    """The store holds a session of `agent`, and searching for `fact` with `--agent` finds it."""
    sessions = json.loads(ctx.memctl("sessions", "--agent", agent, "--json"))
    if not sessions:
        raise Failed(f"no session of {agent} archived")
    found = json.loads(ctx.memctl("search", "--all-projects", "--agent", agent, "--json", fact))
    hits = found.get("results", [])
    if not any(fact in h.get("text", "") and h.get("agent") == agent for h in hits):
        raise Failed(f"memctl search --agent {agent} {fact!r} did not find it: {hits[:2]}")


def shell_call(agent: str, command: str) -> Turn:
    if agent == "codex":
        return Turn(tool="exec_command", args={"cmd": command})
    return Turn(tool="run_shell_command", args={"command": command})


def plant_then_answer(agent: str, command: str, answer: str):
    """A shell call for the user's prompt, then an answer."""
    def script(req: dict, n: int) -> Turn:
        if fa.is_tool_result(fa.last_input(req)):
            return Turn(text=answer)
        return shell_call(agent, command)
    return script


def codex_compact(ctx: Ctx) -> None:
    """The shell call's answer reports a full context: Codex runs the command, compacts (its
    summary is the fake's next answer, without the fact), then asks for the answer."""
    fact = "orca-17.internal"
    calls = []

    def script(req: dict, n: int) -> Turn:
        calls.append(n)
        if len(calls) == 1:
            return Turn(tool="exec_command", full_context=True, args={
                "cmd": f"echo 'error: deploy to {fact} failed: connection refused (port 8443)'"})
        return Turn(text="The deploy fails: the host refuses connections.", full_context=False)

    ctx.run_agent("codex", "The staging deploy keeps failing; run the deploy check.", script)
    reqs = ctx.requests_since()
    after = [r for r in reqs if memctl_blocks(r)]
    expect_block(after, [fact], "restore after Codex's compaction")
    if fact in outside_blocks(after[-1]):
        raise Failed("control: after the compaction the fact is in the request outside memctl's block")
    expect_session(ctx, "codex", fact)


def codex_swap(ctx: Ctx) -> None:
    """A big shell output (800 lines, an error near the end) reaches the model as memctl's
    digest, error line included. Codex hands hooks and the model the output's head and tail
    (~10 kB) only: that is what memctl stores, and `memctl swap show` gives its lines back."""
    err = "error: migration E-7731 failed at step 790 (lock timeout)"
    cmd = ("python3 -c \"for i in range(1, 801): print('" + err + "' if i == 790 else "
           "f'step {i}: compiled module m{i} ok')\"")
    ctx.run_agent("codex", "Run the migration build and tell me what fails.",
                  plant_then_answer("codex", cmd, "Step 790 fails: E-7731, a lock timeout."))
    outputs = [item.get("output") for r in ctx.requests_since()
               for item in r["body"].get("input", [])
               if isinstance(item, dict) and item.get("type") == "function_call_output"]
    if not outputs:
        raise Failed("no function_call_output reached the model")
    got = outputs[-1] if isinstance(outputs[-1], str) else json.dumps(outputs[-1])
    if err not in got or "memctl swap show" not in got:
        raise Failed(f"the model did not get memctl's digest with the error line: {got[:300]!r}")
    # Codex keeps ~150 head lines; the digest keeps 6.
    if "step 100: compiled" in got or len(got) > 2500:
        raise Failed(f"the model got the whole output ({len(got)} chars), not the digest")
    m = re.search(r"memctl swap show (\S+) --lines", got)
    n = re.search(r"(\d+)│ " + re.escape(err), got)
    if not m or not n:
        raise Failed(f"the digest names no swap id or no numbered error line: {got[:300]!r}")
    line = ctx.memctl("swap", "show", m.group(1), "--lines", n.group(1))
    if line.strip() != err:
        raise Failed(f"memctl swap show did not give the error line back: {line[:300]!r}")
    expect_session(ctx, "codex", "E-7731")


def gemini_session(ctx: Ctx) -> None:
    """A resumed Gemini chat is reloaded whole (no restore, which would repeat it); a new
    session with restore on startup gets the fact the first one's shell output said."""
    fact = "test_ledger_rounding"
    ctx.run_agent("gemini", "CI keeps failing on the ledger suite; find the flaky test.",
                  plant_then_answer("gemini", f"echo 'FAILED {fact}: assertion failed (flaky)'",
                                    f"{fact} is flaky: it reads the system clock. We decided "
                                    "to quarantine it until the clock is injected."))
    first = ctx.last_request_n()
    ctx.run_agent("gemini", "go on with the flaky test",
                  lambda req, n: Turn(text="Going on."), extra_args=["--resume", "latest"])
    resumed = [r for r in ctx.requests_since(first) if "alt=sse" in r["path"]]
    if not resumed or fact not in request_text(resumed[0]):
        raise Failed("the resumed chat did not carry its own history")
    if any(b for r in resumed for b in memctl_blocks(r) if 'kind="archived-data"' in b):
        raise Failed("a restore was added to a resumed chat that Gemini reloaded whole")
    first = ctx.last_request_n()
    ctx.run_agent("gemini", "anything I should know?", lambda req, n: Turn(text="Yes."),
                  env={"MEMCTL_RESTORE_ON_STARTUP": "1"})
    expect_block(ctx.requests_since(first), [fact], "Gemini's startup restore")
    expect_session(ctx, "gemini", fact)


def gemini_compress(ctx: Ctx) -> None:
    """Gemini CLI compresses its history (a nearly full context reported with a tool call);
    the compression is archived as one, so the next run (`--resume latest`) gets the fact the
    summary dropped in memctl's block, and nowhere else in its first request."""
    fact = "kite-42.internal"
    ctx.run_agent("gemini", "Why does the staging deploy fail?",
                  plant_then_answer("gemini", f"echo 'error: deploy to {fact} failed: TLS timeout'",
                                    "The host times out in the TLS handshake."))

    def full_then_answer(req: dict, n: int) -> Turn:
        if fa.is_tool_result(fa.last_input(req)):
            return Turn(text="Listed.")
        return Turn(tool="run_shell_command", args={"command": "ls"}, full_context=True)
    ctx.run_agent("gemini", "List the files, please.", full_then_answer,
                  extra_args=["--resume", "latest"])
    chats = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(ctx.home, ".gemini"))
             for f in fs if f.startswith("session-") and f.endswith(".jsonl")]
    if not any("Got it. Thanks for the additional context!" in open(c).read() for c in chats):
        raise Failed("Gemini CLI did not compress (no compressed history in its chat file)")
    first = ctx.last_request_n()
    ctx.run_agent("gemini", "Which host failed the deploy?", lambda req, n: Turn(text="That one."),
                  extra_args=["--resume", "latest"])
    main = [r for r in ctx.requests_since(first) if "alt=sse" in r["path"]]
    expect_block(main[:1], [fact], "memctl's block after Gemini's compression")
    if fact in outside_blocks(main[0]):
        raise Failed("control: the compressed history still holds the fact outside memctl's block")


def claude_step(ctx: Ctx, name: str, step: dict, expect: list, shared: bool) -> None:
    """One Claude Code run (the real CLI, through driver.py) of one step in this scenario's
    folders: with `shared`, the HOME and project the other agents already used (so one data
    dir and one project); else the driver's own, which the other agents then use."""
    scen = {"name": name, "description": name, "steps": [step], "expect": expect}
    path = os.path.join(ctx.dir, f"{name}.json")
    with open(path, "w") as f:
        json.dump(scen, f)
    out = os.path.join(ctx.dir, name)
    argv = [sys.executable, os.path.join(HERE, "driver.py"), "--hook-prefix",
            os.path.join(ctx.bin, "memctl-hook"), "--scenario", path, "--outdir", out]
    if shared:
        argv += ["--home", ctx.home, "--work", ctx.work]
    r = subprocess.run(argv, env=dict(os.environ, CCH_NO_NETNS="1"), capture_output=True,
                       text=True, timeout=STEP_TIMEOUT * 2)
    with open(os.path.join(ctx.dir, f"{name}-driver.log"), "w") as f:
        f.write(r.stdout + r.stderr)
    if r.returncode != 0:
        raise Failed(f"the Claude Code step {name} failed (rc={r.returncode}; {name}-driver.log)")
    if not shared:
        ctx.home, ctx.work = os.path.join(out, "home"), os.path.join(out, "work")


def claude_learns(ctx: Ctx, fact_prompt: str) -> None:
    """A Claude Code session that settles a decision; the other agents use its folders."""
    step = {"name": "claude-decides", "session": "new", "prompt": fact_prompt,
            "responses": [{"text": "Agreed and recorded."}]}
    claude_step(ctx, "claude", step, [], shared=False)


def mcp_search(agent: str, query: str, answer: str):
    """Call memctl's MCP search tool (whatever name the agent gives it), then answer."""
    def script(req: dict, n: int) -> Turn:
        if fa.is_tool_result(fa.last_input(req)):
            return Turn(text=answer)
        return Turn(tool_like=["memctl", "search"], args={"query": query, "scope": "all"})
    return script


def tool_result_holds(reqs: list[dict], fact: str) -> bool:
    for r in reqs:
        items = r["body"].get("input") or r["body"].get("contents") or []
        for item in items:
            if fa.is_tool_result(item) and fact in json.dumps(item):
                return True
    return False


def cross_agent(ctx: Ctx) -> None:
    claude_fact, codex_fact = "D-5120", "kestrel-train"
    claude_learns(ctx, f"We decided to freeze the billing schema until March (decision {claude_fact}).")
    restore = {"MEMCTL_RESTORE_ON_STARTUP": "1"}
    first = ctx.last_request_n()
    ctx.run_agent("codex", f"Anything to know? Also: the release train is called {codex_fact}.",
                  lambda req, n: Turn(text=f"Noted: {codex_fact}."), env=restore)
    expect_block(ctx.requests_since(first), [claude_fact], "Claude's decision in Codex's startup restore")
    first = ctx.last_request_n()
    ctx.run_agent("gemini", "What is the release train called, and what did we decide on billing?",
                  mcp_search("gemini", "billing schema decision", "Found it."), env=restore)
    reqs = ctx.requests_since(first)
    expect_block(reqs, [codex_fact], "Codex's fact in Gemini's startup restore")
    if not tool_result_holds(reqs, claude_fact):
        raise Failed("Gemini's MCP search result did not carry Claude's decision")
    first = ctx.last_request_n()
    ctx.run_agent("codex", "What did we decide on billing?",
                  mcp_search("codex", "billing schema decision", "Found it."))
    if not tool_result_holds(ctx.requests_since(first), claude_fact):
        raise Failed("Codex's MCP search result did not carry Claude's decision")
    expect_session(ctx, "codex", codex_fact)
    expect_no_feedback(ctx)


def to_claude(ctx: Ctx) -> None:
    """The other way round: Gemini's shell output and Codex's answer settle two facts; a new
    Claude Code session of the same project (same HOME, same folder) gets both in its first
    model request: the last session's (Codex's) in memctl's startup restore, Gemini's in the
    prompt-time recall for the question that needs it."""
    gemini_fact, codex_fact = "E-6120", "heron-9"
    ctx.run_agent("gemini", "Why does the nightly export fail?",
                  plant_then_answer("gemini", f"echo 'nightly export failed: quota error {gemini_fact}'",
                                    f"The export hits quota error {gemini_fact}."))
    ctx.run_agent("codex", f"Note: the fix goes out on the release train {codex_fact}.",
                  lambda req, n: Turn(text=f"Noted: release train {codex_fact}."))
    step = {"name": "claude-asks", "session": "new", "env": {"MEMCTL_RESTORE_ON_STARTUP": "1"},
            "prompt": "New session. Anything I should know about the nightly export?",
            "responses": [{"text": "Yes."}]}
    expect = [{"request_contains": gemini_fact, "kind": "main"},
              {"request_contains": codex_fact, "kind": "main"}]
    claude_step(ctx, "claude-asks", step, expect, shared=True)
    sessions = json.loads(ctx.memctl("sessions", "--json"))
    agents = sorted({s.get("agent") for s in sessions})
    if agents != ["claude", "codex", "gemini"]:
        raise Failed(f"the project's sessions are not one per agent: {agents}")


def expect_no_feedback(ctx: Ctx) -> None:
    """No archived chunk holds memctl's own restore or recall text, and the MCP lookups of both
    agents are archived as a one-line marker, not as copies of the archive."""
    found = json.loads(ctx.memctl("search", "--all-projects", "--mode", "lexical", "--json",
                                  "-k", "20", "billing schema decision"))
    texts = [h.get("text", "") for h in found.get("results", [])]
    if any("memctl-context" in t or "Archived context restored" in t for t in texts):
        raise Failed("a chunk holds memctl's own restored context")
    lookups = [t for t in texts if "[result: mcp" in t]
    if len(lookups) < 2 or not all("not archived again" in t for t in lookups):
        raise Failed(f"the agents' MCP lookups were archived as copies: {lookups}")


SCENARIOS = {"codex-compact": codex_compact, "codex-swap": codex_swap,
             "gemini-session": gemini_session, "gemini-compress": gemini_compress,
             "cross-agent": cross_agent, "to-claude": to_claude}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--outdir", required=True)
    ap.add_argument("--in-netns", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("scenarios", nargs="*")
    a = ap.parse_args()
    names = a.scenarios or list(SCENARIOS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        print(f"agents: unknown scenario(s) {unknown}; known: {list(SCENARIOS)}", file=sys.stderr)
        return 2
    for agent in fa.AGENTS:
        fa.install(agent)  # before the namespace: npm needs the registry
    driver.find_claude()
    if not a.in_netns and not os.environ.get("CCH_NO_NETNS"):
        flags = driver.netns_flags()
        if flags:
            argv = [sys.executable, os.path.abspath(__file__), "--in-netns", *sys.argv[1:]]
            return subprocess.run(["unshare", *flags, "--", *argv]).returncode
        print("agents: no private network namespace here; relying on the fakes alone",
              file=sys.stderr)
    if a.in_netns:
        subprocess.run(["ip", "link", "set", "lo", "up"], check=False)
    failed = []
    for name in names:
        t0 = time.monotonic()
        ctx = Ctx(name, os.path.abspath(a.outdir), os.path.abspath(a.bin))
        try:
            SCENARIOS[name](ctx)
            print(f"PASS  {name:<24} {time.monotonic() - t0:4.0f}s", flush=True)
        except (Failed, subprocess.TimeoutExpired, OSError) as e:
            failed.append(name)
            print(f"FAIL  {name:<24} {time.monotonic() - t0:4.0f}s  {e}", flush=True)
        for sock in _find(ctx.dir, "embedder.sock"):
            os.unlink(sock)
    return 1 if failed else 0


def _find(root: str, name: str) -> list[str]:
    return [os.path.join(d, name) for d, _, fs in os.walk(root) if name in fs]


if __name__ == "__main__":
    sys.exit(main())
