"""After a run: the scenario's `expect` checks and summary.txt / summary.json.

Every failure names the step or the check, what was expected and what was seen, e.g.

    step 2 (failing-build): the CLI exited 1, expected 0; stderr: ...
    expect[4] hook PreCompact where {"trigger": "manual"}: expected 1..1 matching call(s), saw 0
        (PreCompact calls: [{"trigger": "auto", "exit_code": 0}])
"""

from __future__ import annotations

import collections
import dataclasses
import glob
import json
import os

from scenario import Expect, Response, Scenario


def response_json(r: Response) -> dict:
    """A typed response back to the plain JSON the fake API takes."""
    d = {k: v for k, v in dataclasses.asdict(r).items() if v is not None}
    return d


def load_jsonl(path: str) -> list:
    out = []
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    out.append({"_unparsed": line[:200]})
    return out


def strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, list):
        for x in obj:
            yield from strings(x)
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from strings(v)


def contains(obj, needle: str) -> bool:
    return any(needle in s for s in strings(obj))


def matches(d, want) -> bool:
    return isinstance(d, dict) and all(d.get(k) == v for k, v in (want or {}).items())


def short(x, n: int = 200) -> str:
    s = x if isinstance(x, str) else json.dumps(x, ensure_ascii=False)
    s = s.replace("\n", "\\n")
    return s if len(s) <= n else s[:n] + "..."


def killed(h: dict) -> bool:
    return str(h.get("note") or "").startswith("terminated")


def payload_brief(h: dict) -> dict:
    s = h.get("stdin") if isinstance(h.get("stdin"), dict) else {}
    b = {k: s[k] for k in ("source", "trigger", "reason", "tool_name") if k in s}
    b["exit_code"] = h.get("exit_code")
    if killed(h):
        b["note"] = h.get("note")
    return b


class Data:
    def __init__(self, out: str):
        self.out = out
        self.hooks = []
        for p in sorted(glob.glob(os.path.join(out, "hooks", "*.json"))):
            try:
                with open(p, encoding="utf-8") as f:
                    self.hooks.append(json.load(f))
            except ValueError:
                pass
        self.hooks.sort(key=lambda h: h.get("t_start", 0))
        self.reqs = sorted(load_jsonl(os.path.join(out, "requests.jsonl")), key=lambda r: r.get("seq", 0))
        self.transcripts = {os.path.basename(p): load_jsonl(p)
                            for p in sorted(glob.glob(os.path.join(out, "transcripts", "*.jsonl")))}
        self.lines = [l for ls in self.transcripts.values() for l in ls]


def check(e: Expect, d: Data) -> tuple[bool, str]:
    """-> (ok, what was seen)"""
    lo = e.count_min
    hi = e.count_max
    if e.hook is not None:
        calls = [h for h in d.hooks if h.get("event") == e.hook and matches(h.get("stdin"), e.where)]
        problems = []
        if e.exit_code is not None:
            problems += [f"exit_code {h.get('exit_code')} (want {e.exit_code})" for h in calls
                         if h.get("exit_code") != e.exit_code]
        if e.killed is not None:
            problems += [f"killed={killed(h)} (want {e.killed}): {h.get('note')}" for h in calls if killed(h) != e.killed]
        lo = 1 if lo is None else lo
        n_ok = lo <= len(calls) <= (hi if hi is not None else 10**9)
        all_calls = [payload_brief(h) for h in d.hooks if h.get("event") == e.hook]
        seen = f"saw {len(calls)} matching call(s)"
        if not n_ok:
            seen += f"; all {e.hook} calls: {short(all_calls, 600)}"
        if problems:
            seen += f"; {problems[:5]}"
        return n_ok and not problems, seen
    if e.request_contains is not None or e.request_not_contains is not None:
        needle = e.request_contains if e.request_contains is not None else e.request_not_contains
        pool = [r for r in d.reqs if isinstance(r.get("body"), dict) and (e.kind is None or r.get("kind") == e.kind)
                and (e.min_step if e.min_step is not None else -1) <= r.get("step", -1)
                <= (e.max_step if e.max_step is not None else 10**9)]
        hits = [r["seq"] for r in pool if contains(r["body"], needle)]
        seen = f"found in {len(hits)} of {len(pool)} selected request(s) {hits[:10]}"
        return (bool(hits) if e.request_contains is not None else not hits), seen
    if e.request_count is not None:
        f = e.request_count
        n = sum(1 for r in d.reqs if (f.step is None or r.get("step") == f.step) and (f.kind is None or r.get("kind") == f.kind))
        ok = (lo or 0) <= n <= (hi if hi is not None else 10**9)
        by_kind = collections.Counter(r.get("kind") for r in d.reqs if f.step is None or r.get("step") == f.step)
        return ok, f"saw {n} request(s) (that step by kind: {dict(by_kind)})"
    if e.transcript_contains is not None:
        n = sum(1 for l in d.lines if contains(l, e.transcript_contains))
        return n >= (lo or 1), f"saw {n} transcript line(s) holding it in {len(d.transcripts)} transcript(s)"
    if e.transcript_line is not None:
        n = sum(1 for l in d.lines if matches(l, e.transcript_line))
        return n >= (lo or 1), f"saw {n} matching line(s) in {len(d.transcripts)} transcript(s)"
    return False, "no check key"


def describe(i: int, e: Expect) -> str:
    key = e.check_key()
    d = {k: v for k, v in dataclasses.asdict(e).items() if v is not None and k != "note"}
    want = ""
    if key in ("hook", "request_count"):
        lo = e.count_min if e.count_min is not None else (1 if key == "hook" else 0)
        want = f"; expected {lo}..{e.count_max if e.count_max is not None else 'any'}"
    elif key in ("transcript_contains", "transcript_line"):
        want = f"; expected >= {e.count_min or 1} line(s)"
    elif key == "request_contains":
        want = "; expected in at least one request"
    elif key == "request_not_contains":
        want = "; expected in no request"
    return f"expect[{i}] {short(d, 240)}{want}" + (f" ({e.note})" if e.note else "")


def step_failures(results: list[dict], out: str) -> list[str]:
    bad = []
    for r in results:
        if r["rc"] == 0 or (r.get("expect_failure") and r["rc"] != "timeout"):
            continue
        err = ""
        p = os.path.join(out, "steps", f"{r['step']:02d}-stderr.txt")
        if os.path.exists(p):
            with open(p, encoding="utf-8", errors="replace") as f:
                err = f.read().strip()[-600:]
        want = "an exit (expect_failure)" if r.get("expect_failure") else "exit 0"
        bad.append(f"step {r['step']} ({r['name']}): the CLI ended with {r['rc']}, expected {want}"
                   + (f"; stderr: {short(err, 600)}" if err else ""))
    return bad


def evaluate(out: str, scen: Scenario, results: list[dict]) -> dict:
    d = Data(out)
    expectations = []
    failures = step_failures(results, out)
    for i, e in enumerate(scen.expect):
        try:
            ok, seen = check(e, d)
        except Exception as ex:  # a check that cannot run fails, with the reason
            ok, seen = False, f"check raised {type(ex).__name__}: {ex}"
        expectations.append({"index": i, "check": describe(i, e), "ok": ok, "seen": seen})
        if not ok:
            failures.append(f"{describe(i, e)}: {seen}")
    summary = {"steps": results, "expectations": expectations, "failures": failures,
               "hook_calls": [dict(payload_brief(h), event=h.get("event"), duration_ms=h.get("duration_ms"))
                              for h in d.hooks],
               "requests": [{"seq": r.get("seq"), "step": r.get("step"), "kind": r.get("kind"), "path": r.get("path"),
                             "answer": r.get("answer_source")} for r in d.reqs],
               "transcripts": {name: dict(collections.Counter(
                   f"{l.get('type')}/{l.get('subtype')}" if l.get("subtype") else str(l.get("type")) for l in ls))
                   for name, ls in d.transcripts.items()}}
    with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, ensure_ascii=False)
    lines = [f"scenario {scen.name}: {len(results)} step(s), {len(d.hooks)} hook call(s), {len(d.reqs)} request(s)", "",
             "== steps =="]
    for r in results:
        lines.append(f"step {r['step']:2d} {r['name']:<28} {r['mode']:<8} rc={r['rc']} {r['seconds']}s"
                     + (f" leftover processes ended: {r['leftover_processes_ended']}" if r["leftover_processes_ended"] else ""))
    lines += ["", "== hook calls (in order) =="]
    for h in summary["hook_calls"]:
        extra = " ".join(f"{k}={v!r}" for k, v in h.items() if k not in ("event", "exit_code", "duration_ms"))
        lines.append(f"{h['event']:<19} rc={h['exit_code']} {h['duration_ms']}ms {extra}")
    lines += ["", "== API requests =="]
    for r in summary["requests"]:
        lines.append(f"#{r['seq']:<3} step {r['step']:<2} {str(r['kind']):<12} {r['path']} answer={r['answer']}")
    lines += ["", "== transcripts =="]
    lines += [f"{n}: {t}" for n, t in summary["transcripts"].items()]
    lines += ["", "== expect =="]
    for x in expectations:
        lines.append(f"{'PASS' if x['ok'] else 'FAIL'}  {x['check']}\n      {x['seen']}")
    if failures:
        lines += ["", "== failures =="] + failures
    lines.append(f"expect: {sum(1 for x in expectations if x['ok'])} passed, "
                 f"{sum(1 for x in expectations if not x['ok'])} failed; steps failed: {len(failures) - sum(1 for x in expectations if not x['ok'])}")
    with open(os.path.join(out, "summary.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return summary
