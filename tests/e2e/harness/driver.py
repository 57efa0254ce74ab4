#!/usr/bin/env python3
"""Runs one scenario: fake API server + real Claude Code CLI + recording hooks.

memctl's end-to-end harness (adapted from the project's reference harness; it lives here so
that a clone of the repository alone runs its tests).

Called by run-scenario.sh (which also puts the run in a private network
namespace when it can).  Python stdlib only.

    driver.py --claude BIN --hook-prefix PREFIX --scenario FILE --outdir DIR
"""

import argparse
import glob
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenario  # noqa: E402  (typed scenario files, next to this one)

HERE = os.path.dirname(os.path.abspath(__file__))
API_KEY = "sk-ant-fake-harness-key-0123456789abcdef"

ALL_EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure",
              "Stop", "PreCompact", "PostCompact", "SessionEnd", "SubagentStop", "Notification"]
TOOL_EVENTS = {"PreToolUse", "PostToolUse", "PostToolUseFailure"}

# Environment that keeps the CLI from reaching anything but ANTHROPIC_BASE_URL.
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
    # the full-screen CLI otherwise fetches / git-clones the official plugin marketplace
    "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL": "1",
    "CLAUDE_CODE_USE_BEDROCK": "",
    "CLAUDE_CODE_USE_VERTEX": "",
    # anything that ignores the variables above and honours a proxy goes nowhere
    "HTTP_PROXY": "http://127.0.0.1:9",
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "http_proxy": "http://127.0.0.1:9",
    "https_proxy": "http://127.0.0.1:9",
    "NO_PROXY": "127.0.0.1,localhost",
    "no_proxy": "127.0.0.1,localhost",
}


def log(*a):
    print("[driver]", *a, file=sys.stderr, flush=True)


def subst(obj, mapping):
    if isinstance(obj, str):
        for k, v in mapping.items():
            obj = obj.replace("{{" + k + "}}", v)
        return obj
    if isinstance(obj, list):
        return [subst(x, mapping) for x in obj]
    if isinstance(obj, dict):
        return {k: subst(v, mapping) for k, v in obj.items()}
    return obj


def post(port, path, obj, timeout=5):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(obj).encode(),
                                 headers={"content-type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read().decode())


def end_group(p):
    """End a CLI process and its process group (it was started in a new session)."""
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, None)):
        try:
            os.killpg(p.pid, sig)
        except OSError:
            pass
        try:
            p.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def get_state(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/_control/state", timeout=5) as r:
        return json.loads(r.read().decode())


def activity(port, capture):
    """Something that changes while the CLI works: request count, hook records."""
    files = os.listdir(capture)
    size = sum(os.path.getsize(os.path.join(capture, f)) for f in files if not f.endswith(".tmp"))
    return (get_state(port)["seq"], len(files), size)


def wait_idle(port, capture, idle_s, min_s, max_s):
    t0 = time.time()
    last, since = activity(port, capture), time.time()
    while time.time() - t0 < max_s:
        time.sleep(0.25)
        now = activity(port, capture)
        if now != last:
            last, since = now, time.time()
        elif time.time() - t0 >= min_s and time.time() - since >= idle_s:
            return True
    return False


def run_interactive(cmd, work, env, step, i, steps_dir, port, capture, timeout):
    """Drive the full-screen CLI in a private tmux server: type each prompt, wait
    until requests and hook calls go quiet, capture the screen, then /exit."""
    sock = os.path.join(env.get("CLAUDE_CODE_TMPDIR") or "/tmp", f"tmux-{i:02d}.sock")
    if len(sock) > 100:  # unix socket path limit
        sock = f"/tmp/cch-tmux-{os.getpid()}-{i}.sock"
    tm = ["tmux", "-S", sock, "-f", "/dev/null"]
    rcfile = os.path.join(steps_dir, f"{i:02d}-rc.txt")
    script = os.path.join(steps_dir, f"{i:02d}-run.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\n")
        f.write(f"cd {shlex.quote(work)}\n")
        f.write(" ".join(shlex.quote(c) for c in cmd)
                + f" 2> {shlex.quote(os.path.join(steps_dir, f'{i:02d}-stderr.txt'))}\n")
        f.write(f"echo $? > {shlex.quote(rcfile)}\n")
    os.chmod(script, 0o755)
    if os.path.exists(rcfile):
        os.remove(rcfile)
    tenv = dict(env)
    tenv["TERM"] = "xterm-256color"
    tenv.pop("TMUX", None)
    subprocess.run(tm + ["new-session", "-d", "-s", "cch", "-x", "160", "-y", "50", script], env=tenv, check=True)
    srv_pid = None
    try:
        srv_pid = int(subprocess.run(tm + ["display-message", "-p", "#{pid}"], capture_output=True,
                                     text=True).stdout.strip() or 0) or None
    except ValueError:
        pass

    def pane(tag):
        r = subprocess.run(tm + ["capture-pane", "-p", "-t", "cch"], capture_output=True, text=True)
        with open(os.path.join(steps_dir, f"{i:02d}-pane-{tag}.txt"), "w") as f:
            f.write(r.stdout)
        return r.stdout

    def keys(text):
        subprocess.run(tm + ["send-keys", "-t", "cch", "-l", text], check=False)
        time.sleep(0.3)
        subprocess.run(tm + ["send-keys", "-t", "cch", "Enter"], check=False)

    t_end = time.time() + timeout
    rc = "timeout"
    try:
        for _ in range(80):  # the input box is ready
            if "\u276f" in pane("start") or os.path.exists(rcfile):
                break
            time.sleep(0.25)
        wait_idle(port, capture, 1.5, 1.0, 20)
        for k, prompt in enumerate(step.get("prompts") or [step.get("prompt", "hello")]):
            if os.path.exists(rcfile) or time.time() > t_end:
                break
            keys(prompt)
            wait_idle(port, capture, step.get("wait_idle_s", 2.5), 1.5, max(5, min(120, t_end - time.time())))
            pane(f"{k:02d}")
        if step.get("exit", True) and not os.path.exists(rcfile):
            keys("/exit")
        while time.time() < t_end and not os.path.exists(rcfile):
            time.sleep(0.25)
        pane("end")
        if os.path.exists(rcfile):
            rc = int(open(rcfile).read().strip() or -1)
    finally:
        subprocess.run(tm + ["kill-server"], check=False, capture_output=True)
        if srv_pid:
            try:
                os.kill(srv_pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.remove(sock)
        except OSError:
            pass
    return rc


def seed_config(home, work, api_key):
    """~/.claude.json as after onboarding, with the fake key approved and the work
    folder trusted, so the full-screen CLI opens straight to its prompt."""
    p = os.path.join(home, ".claude.json")
    if os.path.exists(p):
        return
    with open(p, "w") as f:
        json.dump({"hasCompletedOnboarding": True, "numStartups": 1, "theme": "dark",
                   "customApiKeyResponses": {"approved": [api_key[-20:]], "rejected": []},
                   "projects": {work: {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}}},
                  f, indent=2)


def on_term(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def sweep(run_id, keep=()):
    """End leftover processes of this run (hooks Claude Code left behind), by PID.
    They are recognised by the CCH_RUN_ID=<run_id> entry in their environment."""
    needle = f"CCH_RUN_ID={run_id}".encode() + b"\0"
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        pid = int(d)
        if pid == os.getpid() or pid in keep:
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if needle in f.read():
                    found.append(pid)
        except OSError:
            pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in found:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        if found and sig == signal.SIGTERM:
            time.sleep(0.5)
    return found


def build_settings(hook_cmd_for, events, timeout_s, extra):
    hooks = {}
    for ev in events:
        h = {"type": "command", "command": hook_cmd_for(ev)}
        if timeout_s:
            h["timeout"] = timeout_s
        entry = {"hooks": [h]}
        if ev in TOOL_EVENTS:
            entry["matcher"] = "*"
        hooks[ev] = [entry]
    s = {"hooks": hooks}
    for k, v in (extra or {}).items():
        s[k] = v
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--claude", required=True)
    ap.add_argument("--hook-prefix", default="capture")
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--outdir", required=True)
    ap.add_argument("--step-timeout", type=float, default=180)
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, on_term)

    out = os.path.abspath(a.outdir)
    os.makedirs(out, exist_ok=True)
    home = os.path.join(out, "home")
    work = os.path.join(out, "work")
    capture = os.path.join(out, "hooks")
    steps_dir = os.path.join(out, "steps")
    for d in (home, work, capture, steps_dir):
        os.makedirs(d, exist_ok=True)
    req_log = os.path.join(out, "requests.jsonl")
    open(req_log, "a").close()

    try:
        scen = scenario.load(a.scenario)
    except scenario.ScenarioError as e:
        log(f"invalid scenario: {e}")
        sys.exit(2)
    session_id = scen.get("session_id") or str(uuid.uuid4())
    mapping = {"WORKDIR": work, "HOME": home, "OUTDIR": out, "SESSION_ID": session_id}
    scen = subst(scen, mapping)

    for rel, content in (scen.get("files") or {}).items():
        p = os.path.join(work, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", encoding="utf-8") as f:
            f.write(content)
    if scen.get("git_init"):
        subprocess.run(["git", "init", "-q", work], check=False)

    # ---- settings with hooks for every event ----
    tee = os.path.join(HERE, "hooks", "hook_tee.py")
    prefix = a.hook_prefix.strip()

    def hook_cmd_for(ev):
        base = f"python3 {shlex.quote(tee)} {ev}"
        return base if prefix in ("", "capture") else f"{base} {prefix}"

    events = scen.get("hook_events") or ALL_EVENTS
    settings = build_settings(hook_cmd_for, events, scen.get("hook_timeout_s"), scen.get("settings_extra"))
    settings_path = os.path.join(out, "settings.json")
    with open(settings_path, "w") as f:
        json.dump(settings, f, indent=2)

    # ---- fake API server ----
    port_file = os.path.join(out, "fake_api.port")
    if os.path.exists(port_file):
        os.remove(port_file)
    srv_err = open(os.path.join(out, "fake_api.stderr"), "w")
    srv = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_api.py"), "--log", req_log,
                            "--port-file", port_file, "--max-seconds", str(scen.get("max_seconds", 1500))],
                           stdout=srv_err, stderr=srv_err)
    with open(os.path.join(out, "pids.txt"), "a") as f:
        f.write(f"fake_api {srv.pid}\n")
    for _ in range(100):
        if os.path.exists(port_file):
            break
        time.sleep(0.05)
    port = int(open(port_file).read())
    log("fake API on 127.0.0.1:%d, session %s" % (port, session_id))

    run_id = uuid.uuid4().hex
    env = dict(os.environ)
    env.update(QUIET_ENV)
    env.update({
        "HOME": home,
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
        "ANTHROPIC_API_KEY": API_KEY,
        "CCH_CAPTURE_DIR": capture,
        "CCH_HOOK_BEHAVIOR": json.dumps(scen.get("hook_behavior") or {}),
        "IS_SANDBOX": "1",
        "CCH_RUN_ID": run_id,
        "CLAUDE_CODE_TMPDIR": os.path.join(out, "tmp"),
        "TMPDIR": os.path.join(out, "tmp"),
    })
    os.makedirs(os.path.join(out, "tmp"), exist_ok=True)
    seed_config(home, work, API_KEY)
    env.pop("CLAUDE_CONFIG_DIR", None)
    env.pop("ANTHROPIC_AUTH_TOKEN", None)
    for k, v in (scen.get("env") or {}).items():
        env[k] = v

    results = []
    started = False
    try:
        for i, step in enumerate(scen.get("steps") or []):
            name = step.get("name") or f"step{i}"
            post(port, "/_control/script", {
                "step": i, "step_name": name,
                "responses": step.get("responses") or [],
                "side_rules": scen.get("side_rules"),
                "compact_summary": step.get("compact_summary") or scen.get("compact_summary"),
                "compact_re": scen.get("compact_re"),
                "default_text": scen.get("default_text"),
            })
            behavior = dict(scen.get("hook_behavior") or {})
            behavior.update(step.get("hook_behavior") or {})
            env["CCH_HOOK_BEHAVIOR"] = json.dumps(behavior)
            mode = step.get("session", "new" if not started else "resume")
            step_settings = settings_path
            if any(k in step for k in ("hook_timeout_s", "hook_events", "settings_extra")):
                st = build_settings(hook_cmd_for, step.get("hook_events") or events,
                                    step.get("hook_timeout_s", scen.get("hook_timeout_s")),
                                    step.get("settings_extra", scen.get("settings_extra")))
                step_settings = os.path.join(steps_dir, f"{i:02d}-settings.json")
                with open(step_settings, "w") as f:
                    json.dump(st, f, indent=2)
            interactive = bool(step.get("interactive"))
            cmd = [a.claude] + ([] if interactive else ["-p", "--output-format", "stream-json", "--verbose"])
            cmd += ["--settings", step_settings, "--debug-file", os.path.join(steps_dir, f"{i:02d}-debug.log")]
            if not interactive and not step.get("no_include_hook_events"):
                cmd.append("--include-hook-events")
            if mode == "new":
                cmd += ["--session-id", step.get("session_id", session_id)]
            elif mode == "resume":
                cmd += ["--resume", step.get("session_id", session_id)]
            elif mode == "continue":
                cmd += ["--continue"]
            elif mode == "fork":
                cmd += ["--resume", step.get("session_id", session_id), "--fork-session"]
            cmd += scen.get("args", ["--allowedTools", "Bash Read Write Edit Glob Grep"])
            cmd += step.get("args", [])
            stdin_data = None
            if interactive:
                pass  # prompts are typed into the full-screen UI
            elif "prompts" in step:  # several user messages in one process (stream-json input)
                cmd += ["--input-format", "stream-json"]
                lines = [json.dumps({"type": "user", "message": {"role": "user", "content": p}})
                         for p in step["prompts"]]
                stdin_data = ("\n".join(lines) + "\n").encode()
            else:
                cmd += ["--", step.get("prompt", "hello")]
            step_env = dict(env)
            step_env.update(step.get("env") or {})
            with open(os.path.join(steps_dir, f"{i:02d}-cmd.json"), "w") as f:
                json.dump({"cmd": cmd, "cwd": work, "mode": mode}, f, indent=2)
            log(f"step {i} ({name}): {mode}: {(step.get('prompt') or step.get('prompts'))!r}")
            t0 = time.time()
            if interactive:
                rc = run_interactive(cmd, work, step_env, step, i, steps_dir, port, capture,
                                     step.get("timeout_s", a.step_timeout))
                left = sweep(run_id)
                started = True
                results.append({"step": i, "name": name, "mode": mode + "+interactive", "rc": rc,
                                "seconds": round(time.time() - t0, 2), "leftover_processes_ended": len(left)})
                log(f"step {i} rc={rc} in {results[-1]['seconds']}s")
                time.sleep(step.get("sleep_after_s", 0.3))
                continue
            so = open(os.path.join(steps_dir, f"{i:02d}-stdout.jsonl"), "wb")
            se = open(os.path.join(steps_dir, f"{i:02d}-stderr.txt"), "wb")
            p = subprocess.Popen(cmd, cwd=work, env=step_env, stdin=subprocess.PIPE, stdout=so, stderr=se,
                                 start_new_session=True)
            with open(os.path.join(out, "pids.txt"), "a") as f:
                f.write(f"claude-step{i} {p.pid}\n")
            try:
                p.communicate(input=stdin_data, timeout=step.get("timeout_s", a.step_timeout))
                rc = p.returncode
            except subprocess.TimeoutExpired:
                log(f"step {i} timed out; ending process group {p.pid}")
                end_group(p)
                rc = "timeout"
            except BaseException:
                end_group(p)
                raise
            so.close()
            se.close()
            left = sweep(run_id)
            if left:
                log(f"step {i}: ended {len(left)} leftover process(es): {left}")
            started = True
            results.append({"step": i, "name": name, "mode": mode, "rc": rc, "seconds": round(time.time() - t0, 2),
                            "leftover_processes_ended": len(left)})
            log(f"step {i} rc={rc} in {results[-1]['seconds']}s")
            time.sleep(step.get("sleep_after_s", 0.3))
    finally:
        sweep(run_id)
        try:
            post(port, "/_control/shutdown", {}, timeout=2)
        except Exception:
            pass
        try:
            srv.wait(5)
        except subprocess.TimeoutExpired:
            srv.terminate()
            try:
                srv.wait(5)
            except subprocess.TimeoutExpired:
                srv.kill()
        srv_err.close()

    # ---- collect ----
    tdir = os.path.join(out, "transcripts")
    os.makedirs(tdir, exist_ok=True)
    for pth in glob.glob(os.path.join(home, ".claude", "projects", "*", "**", "*.jsonl"), recursive=True):
        rel = os.path.relpath(pth, os.path.join(home, ".claude", "projects"))
        # <project-dir-name>/<session>.jsonl -> <session>.jsonl ; subagents keep their path
        parts = rel.split(os.sep)[1:]
        dst = os.path.join(tdir, "__".join(parts))
        shutil.copyfile(pth, dst)
    with open(os.path.join(out, "steps.json"), "w") as f:
        json.dump({"session_id": session_id, "steps": results}, f, indent=2)
    an = subprocess.run([sys.executable, os.path.join(HERE, "analyze.py"), out, a.scenario], check=False)
    bad = [r for r in results if r["rc"] != 0 and not (scen.get("steps")[r["step"]].get("expect_failure"))]
    if bad:
        log(f"steps that failed: {[r['step'] for r in bad]}")
    return 1 if bad or an.returncode != 0 else 0


if __name__ == "__main__":
    sys.exit(main())
