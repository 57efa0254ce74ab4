"""Process helpers of the harness: everything it starts is ended by PID, never by name."""

from __future__ import annotations

import os
import signal
import subprocess
import time


def end_process(p: subprocess.Popen, grace_s: float = 5.0) -> None:
    """End one child process by its PID: SIGTERM, then SIGKILL after `grace_s`."""
    if p.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 10.0)):
        try:
            os.kill(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def end_group(p: subprocess.Popen, grace_s: float = 5.0) -> None:
    """End a child started with start_new_session=True and every process left in its group
    (the group's id is the child's PID). Safe after the leader exited: the id stays reserved
    while any member of the group lives."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(p.pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        deadline = time.time() + (grace_s if sig == signal.SIGTERM else 10.0)
        while time.time() < deadline:
            if p.poll() is not None and not group_alive(p.pid):
                return
            time.sleep(0.05)
    try:
        p.wait(10)
    except subprocess.TimeoutExpired:
        pass


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def pids_with_env(needle: str, exclude: set[int]) -> list[int]:
    """PIDs whose environment holds the entry `needle` (e.g. "CCH_RUN_ID=<id>")."""
    want = needle.encode() + b"\0"
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) in exclude:
            continue
        try:
            with open(f"/proc/{d}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        if env.startswith(want) or b"\0" + want in env:
            found.append(int(d))
    return found


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()[:200]
    except OSError:
        return ""


def sweep_run(run_id: str) -> list[str]:
    """End, by PID, the processes still carrying CCH_RUN_ID=<run_id> (hooks or background jobs a
    CLI run left behind). Returns "<pid> <command line>" of each one found."""
    me = {os.getpid(), os.getppid()}
    found = pids_with_env(f"CCH_RUN_ID={run_id}", me)
    if not found:
        return []
    described = [f"{pid} {cmdline(pid)}".strip() for pid in found]
    for pid in found:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    deadline = time.time() + 2.0
    alive = found
    while alive and time.time() < deadline:
        time.sleep(0.1)
        alive = [pid for pid in alive if _alive(pid)]
    for pid in alive:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return described


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except (OSError, IndexError):
        return False
