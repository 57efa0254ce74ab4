#!/usr/bin/env python3
"""Runs one end-to-end scenario: the real Claude Code CLI against the fake Messages API.

    driver.py --hook-prefix CMD --scenario FILE --outdir DIR

1. Finds the CLI: $CCH_CLAUDE_BIN, else `@anthropic-ai/claude-code@$CC_VERSION` (default
   PINNED_VERSION) installed with `npm install --ignore-scripts` into
   ${CCH_CACHE:-${XDG_CACHE_HOME:-~/.cache}/memctl-e2e}/<version> on first use; the native binary
   of the platform package is run.
2. Re-runs itself in a private network namespace that only has loopback (`unshare -n`, or
   `unshare -rn` without root), unless CCH_NO_NETNS=1; without a namespace it warns and relies
   on the CLI's no-traffic settings and a dead proxy.
3. Starts fake_api.py on 127.0.0.1, writes settings.json wiring every hook event to
   `python3 hook_tee.py <Event> <CMD>`, and runs each step as one CLI process (own process
   group, fresh HOME = DIR/home, cwd DIR/work). After each step, processes still carrying this
   run's CCH_RUN_ID are ended by PID; at the end the fake server is ended by PID.
4. Copies the transcripts, writes steps.json, evaluates the scenario's `expect` (expect.py) and
   writes summary.txt / summary.json.

Exit code: 0 when every step exited as expected and every `expect` check passed; 1 otherwise;
2 for a usage, setup or scenario-file error. Python 3.11 stdlib only.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import expect  # noqa: E402
import procs  # noqa: E402
from scenario import HOOK_EVENTS, Scenario, ScenarioError, Step, load  # noqa: E402

PINNED_VERSION = "2.1.330"
API_KEY = "sk-ant-fake-e2e-key-0123456789abcdef0123"
TOOL_EVENTS = {"PreToolUse", "PostToolUse", "PostToolUseFailure"}

# The CLI talks to nothing but ANTHROPIC_BASE_URL with these (checked with strace by the
# reference harness); whatever honours a proxy and ignores them goes to a dead port.
QUIET_ENV = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_BUG_COMMAND": "1",
    "DISABLE_NON_ESSENTIAL_MODEL_CALLS": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
    "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
    "CLAUDE_CODE_ENABLE_TELEMETRY": "0",
    "CLAUDE_CODE_IDE_SKIP_AUTO_INSTALL": "1",
    "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
    "CLAUDE_CODE_USE_BEDROCK": "",
    "CLAUDE_CODE_USE_VERTEX": "",
    "IS_SANDBOX": "1",
    "HTTP_PROXY": "http://127.0.0.1:9",
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "http_proxy": "http://127.0.0.1:9",
    "https_proxy": "http://127.0.0.1:9",
    "NO_PROXY": "127.0.0.1,localhost",
    "no_proxy": "127.0.0.1,localhost",
}
# A developer's own Claude settings must not leak in.
DROP_ENV = ("CLAUDE_CONFIG_DIR", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_MODEL", "CLAUDECODE",
            "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_OAUTH_TOKEN")



def feed_paced(p: subprocess.Popen, stdin: bytes, so, deadline: float) -> None:
    """Write a `prompts` step's stream-json lines one at a time, the next only after the CLI
    printed the previous turn's `result` event: the way a person types at the terminal. Written
    all at once, the CLI queues them and folds the later prompts into the first tool turn.
    Everything the CLI prints is still copied to the step's stdout file. Raises TimeoutExpired
    past `deadline`."""
    import queue
    import threading
    results: queue.Queue = queue.Queue()

    def pump() -> None:
        assert p.stdout is not None
        for raw in p.stdout:
            so.write(raw)
            so.flush()
            try:
                if json.loads(raw).get("type") == "result":
                    results.put(1)
            except (ValueError, AttributeError):
                pass
        results.put(None)  # the CLI closed its stdout

    th = threading.Thread(target=pump, daemon=True)
    th.start()
    assert p.stdin is not None
    for line in stdin.decode().splitlines():
        p.stdin.write((line + "\n").encode())
        p.stdin.flush()
        try:
            got = results.get(timeout=max(0.1, deadline - time.time()))
        except queue.Empty:
            raise subprocess.TimeoutExpired(p.args, deadline) from None
        if got is None:
            break
    p.stdin.close()
    p.wait(timeout=max(0.1, deadline - time.time()))
    th.join(5)

class SetupError(Exception):
    pass


def log(msg: str) -> None:
    print(f"[driver] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------- the CLI


def native_binary(root: str) -> str | None:
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower())
    if arch is None:
        return None
    libc = "-musl" if os.path.exists("/etc/alpine-release") or glob.glob("/lib/ld-musl-*") else ""
    for cand in (f"@anthropic-ai/claude-code-linux-{arch}{libc}/claude", f"@anthropic-ai/claude-code-linux-{arch}/claude"):
        p = os.path.join(root, "node_modules", cand)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def find_claude() -> str:
    if os.environ.get("CCH_CLAUDE_BIN"):
        return os.environ["CCH_CLAUDE_BIN"]
    version = os.environ.get("CC_VERSION") or PINNED_VERSION
    cache = os.environ.get("CCH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "memctl-e2e")
    root = os.path.join(cache, version)
    found = native_binary(root)
    if found:
        return found
    if shutil.which("npm") is None:
        raise SetupError(f"npm is needed once to install @anthropic-ai/claude-code@{version} into {root}")
    log(f"installing @anthropic-ai/claude-code@{version} into {root} (first run only)")
    os.makedirs(root, exist_ok=True)
    pkg = os.path.join(root, "package.json")
    if not os.path.exists(pkg):
        with open(pkg, "w") as f:
            json.dump({"name": "memctl-e2e-claude", "private": True}, f)
    # --ignore-scripts: the native binary comes from the platform package (an optional
    # dependency); the wrapper's postinstall is not needed.
    r = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error",
                        f"@anthropic-ai/claude-code@{version}"], cwd=root)
    found = native_binary(root)
    if r.returncode != 0 or not found:
        raise SetupError(f"npm install of @anthropic-ai/claude-code@{version} in {root} failed (rc={r.returncode}) "
                         "or left no native binary for this platform")
    return found


# ---------------------------------------------------------------------------- the namespace


def netns_flags() -> list[str] | None:
    """unshare flags that give a private network namespace here, or None."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return None
    for flags in (["-n"], ["-rn"]):
        r = subprocess.run(["unshare", *flags, "ip", "link", "set", "lo", "up"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r.returncode == 0:
            return flags
    return None


def run_in_netns(flags: list[str], argv: list[str], env: dict) -> int:
    """Run this script again inside `unshare <flags>` (unshare execs it: the child's PID is the
    inner driver's). A SIGTERM/SIGINT is passed on to that PID; the inner driver then ends its
    own processes; a second signal, or no exit within 30 s, kills it."""
    child = subprocess.Popen(["unshare", *flags, "--", sys.executable, os.path.abspath(__file__), *argv], env=env)
    signals: list[int] = []

    def forward(signum, frame):
        signals.append(signum)
        try:
            os.kill(child.pid, signal.SIGTERM if len(signals) == 1 else signal.SIGKILL)
        except OSError:
            pass

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    while True:
        try:
            rc = child.wait(timeout=30 if signals else None)
            break
        except subprocess.TimeoutExpired:
            os.kill(child.pid, signal.SIGKILL)
    return 128 + signals[0] if signals else rc


# ---------------------------------------------------------------------------- a run


class Run:
    def __init__(self, scen_path: str, outdir: str, hook_prefix: str, claude: str, step_timeout: float,
                 home: str | None = None, work: str | None = None):
        self.out = outdir
        self.home = home or os.path.join(outdir, "home")
        self.work = work or os.path.join(outdir, "work")
        self.tmp = os.path.join(outdir, "tmp")
        self.hooks_dir = os.path.join(outdir, "hooks")
        self.steps_dir = os.path.join(outdir, "steps")
        for d in (self.home, self.work, self.tmp, self.hooks_dir, self.steps_dir):
            os.makedirs(d, exist_ok=True)
        self.requests = os.path.join(outdir, "requests.jsonl")
        open(self.requests, "a").close()
        self.scen_path = scen_path
        self.claude = claude
        self.hook_prefix = hook_prefix
        self.step_timeout = step_timeout
        self.run_id = uuid.uuid4().hex
        # a first parse (no placeholders yet) gives the session id; then the real one
        raw: Scenario = load(scen_path)
        self.session_id = raw.session_id or str(uuid.uuid4())
        self.mapping = {"WORKDIR": self.work, "HOME": self.home, "OUTDIR": outdir, "SESSION_ID": self.session_id}
        self.scen: Scenario = load(scen_path, self.mapping)
        self.server: subprocess.Popen | None = None
        self.port = 0
        self.results: list[dict] = []

    # ---- setup ----
    def hook_command(self, event: str) -> str:
        tee = os.path.join(HERE, "hook_tee.py")
        return f"{shlex.quote(sys.executable)} {shlex.quote(tee)} {event} {self.hook_prefix}"

    def settings(self, events: list[str], timeout_s) -> dict:
        hooks = {}
        for ev in events:
            h = {"type": "command", "command": self.hook_command(ev)}
            if timeout_s:
                h["timeout"] = timeout_s
            entry = {"hooks": [h]}
            if ev in TOOL_EVENTS:
                entry["matcher"] = "*"
            hooks[ev] = [entry]
        return {"hooks": hooks}

    def prepare(self) -> None:
        for rel, content in self.scen.files.items():
            p = os.path.join(self.work, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w", encoding="utf-8") as f:
                f.write(content)
        # ~/.claude.json as after onboarding: key approved, work folder trusted
        with open(os.path.join(self.home, ".claude.json"), "w") as f:
            json.dump({"hasCompletedOnboarding": True, "numStartups": 1, "theme": "dark",
                       "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
                       "projects": {self.work: {"hasTrustDialogAccepted": True,
                                                "hasCompletedProjectOnboarding": True}}}, f, indent=1)
        self.write_json("settings.json", self.settings(self.scen.hook_events or HOOK_EVENTS, self.scen.hook_timeout_s))

    def write_json(self, rel: str, obj) -> str:
        p = os.path.join(self.out, rel)
        with open(p, "w", encoding="utf-8") as f:
            json.dump(obj, f, indent=1, ensure_ascii=False)
        return p

    def start_server(self) -> None:
        port_file = os.path.join(self.out, "fake_api.port")
        err = open(os.path.join(self.out, "fake_api.stderr"), "w")
        self.server = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "fake_api.py"), "--log", self.requests, "--port-file", port_file,
             "--max-seconds", str(self.scen.max_seconds or 1800)], stdout=err, stderr=err)
        err.close()
        deadline = time.time() + 10
        while not os.path.exists(port_file):
            if self.server.poll() is not None or time.time() > deadline:
                raise SetupError(f"the fake API did not start (rc={self.server.poll()}); see {self.out}/fake_api.stderr")
            time.sleep(0.05)
        with open(port_file) as f:
            self.port = int(f.read())
        log(f"fake API on 127.0.0.1:{self.port} (pid {self.server.pid}), session {self.session_id}, run {self.run_id}")

    def stop_server(self) -> None:
        if self.server is None:
            return
        try:
            self.control("/_control/shutdown", {})
            self.server.wait(5)
        except Exception:
            pass
        procs.end_process(self.server)

    def control(self, path: str, obj: dict) -> dict:
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=json.dumps(obj).encode(),
                                     headers={"content-type": "application/json"}, method="POST")
        with urllib.request.urlopen(req, timeout=5) as r:
            return json.loads(r.read())

    def base_env(self) -> dict:
        env = {k: v for k, v in os.environ.items() if k not in DROP_ENV and not k.startswith("CCH_IN_")}
        env.update(QUIET_ENV)
        env.update({
            "HOME": self.home,
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{self.port}",
            "ANTHROPIC_API_KEY": API_KEY,
            "CCH_CAPTURE_DIR": self.hooks_dir,
            "CCH_RUN_ID": self.run_id,
            "CLAUDE_CODE_TMPDIR": self.tmp,
            "TMPDIR": self.tmp,
        })
        env.update(self.scen.env)
        return env

    # ---- steps ----
    def command(self, i: int, step: Step, mode: str) -> tuple[list[str], bytes | None]:
        sd = self.steps_dir
        settings = os.path.join(self.out, "settings.json")
        if step.hook_events is not None or step.hook_timeout_s is not None:
            settings = self.write_json(os.path.join("steps", f"{i:02d}-settings.json"), self.settings(
                step.hook_events or self.scen.hook_events or HOOK_EVENTS,
                step.hook_timeout_s if step.hook_timeout_s is not None else self.scen.hook_timeout_s))
        cmd = [self.claude, "-p", "--output-format", "stream-json", "--verbose", "--include-hook-events",
               "--settings", settings, "--debug-file", os.path.join(sd, f"{i:02d}-debug.log")]
        sid = step.session_id or self.session_id
        cmd += {"new": ["--session-id", sid], "resume": ["--resume", sid], "continue": ["--continue"],
                "fork": ["--resume", sid, "--fork-session"]}[mode]
        cmd += self.scen.args if self.scen.args is not None else Scenario.DEFAULT_ARGS
        cmd += step.args
        if step.prompts is not None:  # several user messages, one process
            cmd += ["--input-format", "stream-json"]
            lines = [json.dumps({"type": "user", "message": {"role": "user", "content": p}}) for p in step.prompts]
            return cmd, ("\n".join(lines) + "\n").encode()
        return cmd + ["--", step.prompt if step.prompt is not None else "hello"], None

    def run_step(self, i: int, step: Step, mode: str) -> dict:
        name = self.scen.step_name(i)
        self.control("/_control/step", {
            "step": i, "name": name,
            "responses": [expect.response_json(r) for r in step.responses],
            "compact_summary": step.compact_summary or self.scen.compact_summary,
            "compact_re": self.scen.compact_re, "default_text": self.scen.default_text,
            "side_rules": [{"match": r.match, "response": expect.response_json(r.response)} for r in self.scen.side_rules],
        })
        cmd, stdin = self.command(i, step, mode)
        env = self.base_env()
        env.update(step.env)
        with open(os.path.join(self.steps_dir, f"{i:02d}-cmd.json"), "w") as f:
            json.dump({"cmd": cmd, "cwd": self.work, "mode": mode, "step_env": step.env}, f, indent=1)
        what = step.prompts if step.prompts is not None else step.prompt
        log(f"step {i} ({name}): {mode}: {what!r}")
        t0 = time.time()
        timeout = step.timeout_s or self.step_timeout
        with open(os.path.join(self.steps_dir, f"{i:02d}-stdout.jsonl"), "wb") as so, \
                open(os.path.join(self.steps_dir, f"{i:02d}-stderr.txt"), "wb") as se:
            paced = step.prompts is not None
            p = subprocess.Popen(cmd, cwd=self.work, env=env, stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE if paced else so, stderr=se, start_new_session=True)
            rc: int | str
            try:
                if paced:
                    feed_paced(p, stdin or b"", so, t0 + timeout)
                else:
                    p.communicate(input=stdin, timeout=timeout)
                rc = p.returncode
            except subprocess.TimeoutExpired:
                log(f"step {i} ({name}): no exit after {timeout}s; ending process group {p.pid}")
                rc = "timeout"
            finally:
                procs.end_group(p)  # the CLI and whatever is left in its group
        left = procs.sweep_run(self.run_id)
        if left:
            log(f"step {i} ({name}): ended {len(left)} leftover process(es) of this run by PID: {left}")
        res = {"step": i, "name": name, "mode": mode, "rc": rc, "seconds": round(time.time() - t0, 2),
               "expect_failure": step.expect_failure, "leftover_processes_ended": len(left)}
        log(f"step {i} ({name}): rc={rc} in {res['seconds']}s")
        time.sleep(0.3)  # let the hooks' records settle
        return res

    def run(self) -> int:
        self.prepare()
        try:
            self.start_server()
            for i, step in enumerate(self.scen.steps):
                mode = step.session or ("new" if i == 0 else "resume")
                self.results.append(self.run_step(i, step, mode))
        finally:
            procs.sweep_run(self.run_id)
            self.stop_server()
            self.collect()
        return self.evaluate()

    # ---- after the run ----
    def collect(self) -> None:
        projects = os.path.join(self.home, ".claude", "projects")
        tdir = os.path.join(self.out, "transcripts")
        os.makedirs(tdir, exist_ok=True)
        for p in glob.glob(os.path.join(projects, "*", "**", "*.jsonl"), recursive=True):
            parts = os.path.relpath(p, projects).split(os.sep)[1:]  # drop the project folder
            shutil.copyfile(p, os.path.join(tdir, "__".join(parts)))
        self.write_json("steps.json", {"session_id": self.session_id, "run_id": self.run_id, "steps": self.results})

    def evaluate(self) -> int:
        report = expect.evaluate(self.out, self.scen, self.results)
        failures = report["failures"]
        for line in failures:
            log(f"FAIL {line}")
        n = len(report["expectations"])
        log(f"{n - sum(1 for x in report['expectations'] if not x['ok'])}/{n} expect check(s) passed; "
            f"{len(self.results)} step(s); see {self.out}/summary.txt")
        return 1 if failures else 0


def on_term(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")  # unwinds through Run.run()'s cleanup


def main() -> int:
    ap = argparse.ArgumentParser(description="Run one e2e scenario with the real Claude Code CLI.")
    ap.add_argument("--hook-prefix", required=True, help="command that runs a hook: '<prefix> <Event>'")
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--outdir", required=True, help="a new or empty folder")
    ap.add_argument("--home", help="HOME of the run (default <outdir>/home): another agent's, to share its data dir")
    ap.add_argument("--work", help="the project folder (default <outdir>/work): another agent's project")
    ap.add_argument("--claude", help="the claude binary (default: installed on first use)")
    ap.add_argument("--step-timeout", type=float, default=float(os.environ.get("CCH_STEP_TIMEOUT", "180")))
    a = ap.parse_args()
    outdir = os.path.abspath(a.outdir)
    scen_path = os.path.abspath(a.scenario)
    inside = os.environ.get("CCH_IN_NETNS") == "1"
    try:
        load(scen_path)  # a bad scenario fails here, before anything is installed or started
        if not inside:
            if os.path.isdir(outdir) and os.listdir(outdir):
                raise SetupError(f"outdir {outdir} is not empty; give a new or empty folder")
            os.makedirs(outdir, exist_ok=True)
            claude = a.claude or find_claude()
            version = subprocess.run([claude, "--version"], capture_output=True, text=True, timeout=60)
            with open(os.path.join(outdir, "claude-version.txt"), "w") as f:
                f.write(version.stdout + version.stderr)
            log(f"claude: {claude} ({version.stdout.strip()})")
            flags = None if os.environ.get("CCH_NO_NETNS") == "1" else netns_flags()
            with open(os.path.join(outdir, "network.txt"), "w") as f:
                f.write(f"unshare {' '.join(flags)}\n" if flags else "no namespace\n")
            if flags:
                log(f"running inside a private network namespace (unshare {' '.join(flags)})")
                argv = ["--hook-prefix", a.hook_prefix, "--scenario", scen_path, "--outdir", outdir,
                        "--claude", claude, "--step-timeout", str(a.step_timeout)]
                argv += ["--home", a.home] if a.home else []
                argv += ["--work", a.work] if a.work else []
                return run_in_netns(flags, argv, dict(os.environ, CCH_IN_NETNS="1"))
            log("WARNING: no network namespace (CCH_NO_NETNS=1, or no unshare/ip/permission); relying on "
                "the CLI's no-traffic settings and a dead proxy")
        else:
            r = subprocess.run(["ip", "link", "set", "lo", "up"], capture_output=True, text=True)
            if r.returncode != 0:
                raise SetupError(f"cannot bring loopback up in the namespace: {r.stderr.strip()}")
            claude = a.claude
        signal.signal(signal.SIGTERM, on_term)
        home = os.path.abspath(a.home) if a.home else None
        work = os.path.abspath(a.work) if a.work else None
        return Run(scen_path, outdir, a.hook_prefix, claude, a.step_timeout, home, work).run()
    except ScenarioError as e:
        log(f"invalid scenario: {e}")
        return 2
    except SetupError as e:
        log(f"setup failed: {e}")
        return 2
    except KeyboardInterrupt as e:
        log(f"interrupted ({e}); every process of the run was ended")
        return 130


if __name__ == "__main__":
    sys.exit(main())
