#!/usr/bin/env python3
"""The hook command of every event: runs the hook under test and records the call.

    hook_tee.py <Event> <command prefix ...>

Claude Code runs this for each hook call with the payload on stdin. It runs
`<command prefix> <Event>` (through /bin/sh -c, exactly as given, in its own process group) with
that payload, passes the command's stdout, stderr and exit code back unchanged, and writes one
record to $CCH_CAPTURE_DIR/<ns>-<pid>-<Event>.json:

    event, t_start, pid, argv, command, env (CLAUDE*, CCH_*, HOOK* variables), stdin_raw,
    stdin (the parsed payload, or null), transcript_at_call ({exists, bytes, lines} of the
    payload's transcript_path when the call started), stdout, stderr, exit_code, duration_ms,
    note ("terminated by signal N after M ms" when the CLI ended the hook, e.g. at its timeout)

The record is written before the command runs too (without exit_code), so a hook the CLI kills
still leaves a trace.
"""

import json
import os
import signal
import subprocess
import sys
import time

# A hook never needs longer than this; the CLI's own timeout normally ends us first.
OWN_TIMEOUT_S = float(os.environ.get("CCH_WRAPPED_TIMEOUT", "600"))


class Recorder:
    def __init__(self, event: str):
        self.dir = os.environ.get("CCH_CAPTURE_DIR") or ""
        self.path = os.path.join(self.dir, f"{time.time_ns()}-{os.getpid()}-{event}.json") if self.dir else ""
        self.rec: dict = {}

    def write(self) -> None:
        if not self.path:
            return
        os.makedirs(self.dir, exist_ok=True)
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(self.rec, f, indent=1, ensure_ascii=False)
        os.replace(tmp, self.path)


def transcript_state(payload):
    tp = payload.get("transcript_path") if isinstance(payload, dict) else None
    if not isinstance(tp, str) or not tp:
        return None
    try:
        with open(tp, "rb") as f:
            data = f.read()
        return {"exists": True, "bytes": len(data), "lines": data.count(b"\n")}
    except OSError:
        return {"exists": False}


def main() -> int:
    if len(sys.argv) < 3:
        print("usage: hook_tee.py <Event> <command prefix ...>", file=sys.stderr)
        return 2
    event, prefix = sys.argv[1], sys.argv[2:]
    t0 = time.time()
    rec = Recorder(event)
    child = None

    def on_signal(signum, frame):
        # The CLI ends a hook past its timeout: end our command's group, note it, go.
        if child is not None and child.poll() is None:
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except OSError:
                pass
        rec.rec["note"] = f"terminated by signal {signum} after {int((time.time() - t0) * 1000)} ms"
        try:
            rec.write()
        finally:
            os._exit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)

    raw = sys.stdin.buffer.read()
    try:
        payload = json.loads(raw.decode("utf-8"))
    except ValueError:
        payload = None
    command = " ".join(prefix) + " " + event
    rec.rec = {
        "event": event,
        "t_start": t0,
        "pid": os.getpid(),
        "argv": sys.argv,
        "command": command,
        "cwd_of_process": os.getcwd(),
        "env": {k: v for k, v in os.environ.items() if k.startswith(("CLAUDE", "CCH_", "HOOK"))},
        "stdin_raw": raw.decode("utf-8", "replace"),
        "stdin": payload,
        "transcript_at_call": transcript_state(payload),
    }
    rec.write()
    child = subprocess.Popen(["/bin/sh", "-c", command], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = child.communicate(input=raw, timeout=OWN_TIMEOUT_S)
        rc = child.returncode
        note = None
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        out, err = child.communicate()
        rc, note = 124, f"hook_tee: the command ran past {OWN_TIMEOUT_S}s and was killed"
    rec.rec.update({"stdout": out.decode("utf-8", "replace"), "stderr": err.decode("utf-8", "replace"),
                    "exit_code": rc, "duration_ms": int((time.time() - t0) * 1000)})
    if note:
        rec.rec["note"] = note
    rec.write()
    sys.stdout.buffer.write(out)
    sys.stdout.flush()
    sys.stderr.buffer.write(err)
    sys.stderr.flush()
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    sys.exit(main())
