#!/usr/bin/env python3
"""memctl's own checks on a run of the e2e harness in tests/e2e/harness (stdlib only).

The harness's `expect` checks are substring searches over whole requests. They cannot say
*where* a fact came from: after compaction Claude Code itself re-attaches recently read files
and echoes the PreCompact output into the `/compact` command's stdout, so "the request holds
the file path" proves little. The checks here look at the exact text memctl printed (the hook
records), at the text outside memctl's `<memctl-context ...>` blocks, at tool results of
specific commands, and at the store and log memctl left behind.

    check.py validate <scenario.json>...
        check the memctl_checks of scenario files: an unknown key or a wrong type fails, naming
        the file and the field (a misspelt "contains" would otherwise check nothing)
    check.py render <scenario.json> <out.json> --repo REPO [--bin DIR]
        copy a scenario with {{MEMCTL_REPO}} / {{MEMCTL_BIN}} (the folder holding memctl and
        memctl-hook; default REPO/target/debug) substituted (the harness
        substitutes {{WORKDIR}}, {{HOME}}, {{OUTDIR}}, {{SESSION_ID}} itself; memctl_checks may
        also use {{SESSION_ID_8}}, the first 8 characters memctl prints)
    check.py prefix <scenario.json> --repo REPO [--bin DIR]
        print the hook command prefix for the scenario (memctl-hook, or a wrapper around it)
    check.py check <scenario.json> <outdir> --repo REPO [--bin DIR]
        evaluate the scenario's "memctl_checks"; exit 1 when one fails

Checks ("memctl_checks" in a scenario; every needle is a plain substring, {{...}} substituted):

  {"hooks_ok": true}
      every hook call exited 0, was not killed by the CLI, and printed a valid output for its
      event (SessionStart/UserPromptSubmit/PostToolUse*: empty or hookSpecificOutput JSON for
      that event; PreCompact: plain text, never JSON; every other event: nothing)
  {"cli_hook_outcomes_ok": true}
      every hook_response the CLI reported on stdout (stream-json) has outcome "success"
  {"steps_ok": true}
      every CLI process exited 0
  {"hook_context": "SessionStart", "where": {"source": "compact"}, "env": {"CCH_E2E_CHAOS": "none"},
   "contains": [..], "not_contains": [..], "count_min": 1, "reaches": "main"}
      each matching hook call printed additionalContext JSON holding every needle, and that
      exact text is in the first request of kind `reaches` sent after the call started
  {"hook_plain": "PreCompact", "where": {..}, "contains": [..], "not_contains": [..], "reaches": "compact"}
      the same for plain-text output (PreCompact instructions reach the summariser)
      ("where" matches payload fields; "env" matches the hook's recorded CLAUDE*/CCH_* variables,
      so a step's `env` can tag its hook calls)
  {"hook_silent": "SessionStart", "where": {"source": "startup"}, "count_min": 1}
      each matching call printed nothing
  {"outside_memctl_not_contains": [..], "requests": {..}}
      in the selected requests, with every <memctl-context ...>...</memctl-context> block cut
      out, none of the needles appear (the control: without memctl the model would not see it)
  {"request_has": [..], "requests": {..}}       every needle is in every selected request
  {"tool_result": {"command_contains": "memctl search"}, "contains": [..], "not_contains": [..]}
  {"tool_result": {"tool_name": "mcp__memctl__search", "input_contains": "bucket"}, ...}
      a tool_use (a Bash command containing the text; or a tool of that exact name whose JSON
      input contains the text) got a tool_result (seen in a later
      request) that holds every needle and none of the others
  {"store": {"chunk_contains": [..], "no_chunk_contains": [..], "session_contains": [..],
             "sessions_min": N, "data_dir": "..."}}
      read the store with the memctl CLI after the run: every chunk of every session
      (`memctl show <id> --json`), and the session records (`memctl show <session> --json`)
  {"hook_tool_output": "PostToolUse", "where": {"tool_name": "Bash"}, "contains": [..], "not_contains": [..],
   "count_min": 1, "reaches": "main"}
      each matching call that printed an updatedToolOutput (a swap in place) has every needle in
      its `stdout`, and the first request of kind `reaches` after the call carries exactly that
      text as the call's tool_result (the model got the digest, not the output)
  {"telemetry_matches_hooks": true, "removed_min": N}
      for every session and hook event, `memctl status --session S --json` reports exactly what
      the hook calls printed: calls, additionalContext characters (injected), PreCompact text
      (summariser) and the characters swap in place took out (the payload's output, or the
      client's 2 KB preview when it cut it, minus the digest)
  {"cli": ["swap", "list", "--json"], "contains": [..], "not_contains": [..], "data_dir": ".."}
      run the memctl CLI on the scenario's data dir; its stdout holds every needle, none of the others
  {"at_least": N, "of": [checks...]}
      a floor: at least N of the nested checks pass (each is listed as ok or MISS); for
      measurements whose honest result today is below all (recall-heldout)
  {"log_clean": true, "data_dir": ".."}   memctl.log has no ERROR line and no panic
  {"log_contains": "regex", "data_dir": ".."}

Request selection ("requests"): {"kind": "main", "min_step": 0, "max_step": 9,
"after_hook": {"hook": "SessionStart", "where": {...}}, "first": true}: `after_hook` keeps
requests sent after the first matching hook call started; `first` keeps only the first one.
The selection must not be empty.
"""

import argparse
import glob
import json
import os
import re
import subprocess
import sys

CONTEXT_RE = re.compile(r"<memctl-context(?:[\s/>][^>]*)?>.*?</memctl-context>", re.S)
JSON_OUTPUT_EVENTS = {"SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure"}
PLAIN_OUTPUT_EVENTS = {"PreCompact"}


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


def strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, list):
        for x in obj:
            yield from strings(x)
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from strings(v)


def has(obj, needle):
    return any(needle in s for s in strings(obj))


def load_jsonl(path):
    out = []
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    return out


def subset(d, want):
    """Every field of `want` is in `d` (nested objects: recursively, so a `where` can name one
    field of a tool's input)."""
    return isinstance(d, dict) and all(
        subset(d.get(k), v) if isinstance(v, dict) else d.get(k) == v for k, v in (want or {}).items())


def short(s, n=160):
    s = str(s).replace("\n", "\\n")
    return s if len(s) <= n else s[:n] + "..."


class Run:
    def __init__(self, outdir, scenario, repo, bindir):
        self.out = outdir
        self.scen = scenario
        self.repo = repo
        self.bin = bindir
        self.hooks = []
        for p in sorted(glob.glob(os.path.join(outdir, "hooks", "*.json"))):
            try:
                with open(p, encoding="utf-8") as f:
                    self.hooks.append(json.load(f))
            except ValueError:
                pass
        self.hooks.sort(key=lambda h: h.get("t_start", 0))
        self.reqs = sorted(load_jsonl(os.path.join(outdir, "requests.jsonl")), key=lambda r: r.get("seq", 0))
        sid = ""
        try:
            with open(os.path.join(outdir, "steps.json")) as f:
                steps = json.load(f)
            sid = steps.get("session_id", "")
            self.steps = steps.get("steps", [])
        except (OSError, ValueError):
            self.steps = []
        self.mapping = {"WORKDIR": os.path.join(outdir, "work"), "HOME": os.path.join(outdir, "home"),
                        "OUTDIR": outdir, "SESSION_ID": sid, "SESSION_ID_8": sid[:8], "MEMCTL_REPO": repo,
                        "MEMCTL_BIN": bindir}

    # ---- selection helpers ----
    def hook_calls(self, event, where=None, env=None):
        """Calls of `event` whose payload has the `where` fields and whose recorded environment
        (hook_tee keeps CLAUDE*, CCH_*, HOOK* variables) has the `env` ones."""
        return [h for h in self.hooks if h.get("event") == event and subset(h.get("stdin"), where)
                and subset(h.get("env"), env)]

    def select(self, sel):
        sel = sel or {}
        rs = [r for r in self.reqs if isinstance(r.get("body"), dict)]
        if sel.get("kind"):
            rs = [r for r in rs if r.get("kind") == sel["kind"]]
        rs = [r for r in rs if sel.get("min_step", -1) <= r.get("step", -1) <= sel.get("max_step", 10**9)]
        if sel.get("after_hook"):
            ah = sel["after_hook"]
            calls = self.hook_calls(ah["hook"], ah.get("where"), ah.get("env"))
            if not calls:
                return [], f"no {ah['hook']} call matching {ah.get('where')}"
            t0 = calls[0].get("t_start", 0)
            rs = [r for r in rs if r.get("t", 0) >= t0]
        if sel.get("first"):
            rs = rs[:1]
        return rs, "" if rs else f"no request matches {sel}"

    def first_after(self, t, kind):
        for r in self.reqs:
            if isinstance(r.get("body"), dict) and r.get("t", 0) >= t and (not kind or r.get("kind") == kind):
                return r
        return None

    def data_dir(self, check):
        d = check.get("data_dir") or (self.scen.get("env") or {}).get("MEMCTL_HOME")
        return subst(d, self.mapping) if d else os.path.join(self.out, "home", ".local", "share", "memctl")

    def memctl(self, data_dir, *args):
        exe = os.path.join(self.bin, "memctl")
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCTL_")}
        env["HOME"] = os.path.join(self.out, "home")
        env["MEMCTL_BACKGROUND_EMBED"] = "0"
        p = subprocess.run([exe] + list(args) + ["--data-dir", data_dir],
                           capture_output=True, text=True, env=env, timeout=120)
        if p.returncode != 0:
            raise RuntimeError(f"memctl {' '.join(args)} exited {p.returncode}: {short(p.stderr, 400)}")
        return p.stdout

    # ---- checks ----
    def check(self, c):
        """-> (ok, detail)"""
        if "at_least" in c:
            marks = []
            for sub in c["of"]:
                try:
                    ok, _ = self.check(sub)
                except Exception as e:  # noqa: BLE001 - a sub-check that cannot run is a miss
                    ok = False
                    sub = dict(sub, error=str(e))
                marks.append(("ok  " if ok else "MISS") + " " + short(json.dumps(sub, ensure_ascii=False), 120))
            n = sum(m.startswith("ok") for m in marks)
            return n >= c["at_least"], f"{n} of {len(marks)} passed (floor {c['at_least']}):\n        " + "\n        ".join(marks)
        if c.get("hooks_ok"):
            bad = []
            for h in self.hooks:
                ev = h.get("event")
                what = f"{ev}({(h.get('stdin') or {}).get('source') or (h.get('stdin') or {}).get('trigger') or ''})"
                if str(h.get("note") or "").startswith("terminated") or "exit_code" not in h:
                    bad.append(f"{what} killed/unfinished: {h.get('note')}")
                    continue
                if h.get("exit_code") != 0:
                    bad.append(f"{what} exit {h.get('exit_code')}: stderr {short(h.get('stderr'))}")
                out = h.get("stdout") or ""
                if ev in JSON_OUTPUT_EVENTS:
                    if out.strip():
                        try:
                            doc = json.loads(out)
                            hso = doc["hookSpecificOutput"]
                            replaced = ev == "PostToolUse" and isinstance(hso.get("updatedToolOutput"), dict)
                            if hso.get("hookEventName") != ev or not (isinstance(hso.get("additionalContext"), str) or replaced):
                                bad.append(f"{what} output for the wrong event / no text: {short(out)}")
                        except (ValueError, KeyError, TypeError):
                            bad.append(f"{what} printed invalid JSON: {short(out)}")
                elif ev in PLAIN_OUTPUT_EVENTS:
                    if out.lstrip().startswith("{"):
                        bad.append(f"{what} printed JSON where plain text is required: {short(out)}")
                elif out.strip():
                    bad.append(f"{what} should print nothing, printed {short(out)}")
            return not bad and bool(self.hooks), f"{len(self.hooks)} hook call(s); " + ("; ".join(bad[:8]) or "all fine")
        if c.get("cli_hook_outcomes_ok"):
            bad, n = [], 0
            for p in sorted(glob.glob(os.path.join(self.out, "steps", "*-stdout.jsonl"))):
                for e in load_jsonl(p):
                    if e.get("type") == "system" and e.get("subtype") == "hook_response":
                        n += 1
                        if e.get("outcome") != "success":
                            bad.append(f"{os.path.basename(p)[:2]}:{e.get('hook_name')} outcome={e.get('outcome')} "
                                       f"exit={e.get('exit_code')} stderr={short(e.get('stderr'), 200)}")
            return not bad and n > 0, f"{n} hook response(s); " + ("; ".join(bad[:8]) or "all success")
        if c.get("steps_ok"):
            bad = [f"step {s['step']} ({s['name']}) rc={s['rc']}" for s in self.steps if s.get("rc") != 0]
            return not bad and bool(self.steps), f"{len(self.steps)} step(s); " + ("; ".join(bad) or "all rc=0")
        for key, kind_default in (("hook_context", "main"), ("hook_plain", "compact")):
            if key in c:
                calls = self.hook_calls(c[key], c.get("where"), c.get("env"))
                lo = c.get("count_min", 1)
                if len(calls) < lo:
                    return False, f"{len(calls)} {c[key]} call(s) match {c.get('where')}, want >= {lo}"
                problems = []
                for h in calls:
                    out = h.get("stdout") or ""
                    if key == "hook_context":
                        try:
                            text = json.loads(out)["hookSpecificOutput"]["additionalContext"]
                        except (ValueError, KeyError, TypeError):
                            if c.get("contains"):
                                problems.append(f"call at {h.get('t_start')}: no additionalContext in stdout {short(out)}")
                            continue  # printing nothing satisfies a not_contains-only check
                    else:
                        text = out.strip()
                        if not text:
                            problems.append(f"call at {h.get('t_start')}: printed nothing")
                            continue
                    missing = [n for n in c.get("contains", []) if n not in text]
                    present = [n for n in c.get("not_contains", []) if n in text]
                    if missing:
                        problems.append(f"output lacks {missing}; output: {short(text, 1500)}")
                    if present:
                        problems.append(f"output holds {present}")
                    kind = c.get("reaches", kind_default)
                    if kind:
                        r = self.first_after(h.get("t_start", 0), kind)
                        if r is None:
                            problems.append(f"no {kind} request after the call")
                        elif not has(r["body"], text):
                            problems.append(f"output not found verbatim in request #{r['seq']} ({kind}, step {r.get('step')})")
                return not problems, f"{len(calls)} call(s); " + ("; ".join(problems) or "output ok and reached the model")
        if "hook_silent" in c:
            calls = self.hook_calls(c["hook_silent"], c.get("where"), c.get("env"))
            loud = [short(h.get("stdout")) for h in calls if (h.get("stdout") or "").strip()]
            ok = len(calls) >= c.get("count_min", 1) and not loud
            return ok, f"{len(calls)} call(s); printed: {loud[:3]}"
        if "outside_memctl_not_contains" in c:
            rs, why = self.select(c.get("requests"))
            if not rs:
                return False, why
            found = []
            for r in rs:
                for s in strings(r["body"]):
                    cut = CONTEXT_RE.sub("", s)
                    for n in c["outside_memctl_not_contains"]:
                        if n in cut:
                            i = cut.index(n)
                            found.append(f"#{r['seq']}: {n!r} in ...{short(cut[max(0, i - 120):i + 60], 220)}")
            return not found, f"{len(rs)} request(s) {[r['seq'] for r in rs][:8]}; " + ("; ".join(found[:4]) or "absent outside memctl blocks")
        if "request_has" in c:
            rs, why = self.select(c.get("requests"))
            if not rs:
                return False, why
            missing = [(r["seq"], n) for r in rs for n in c["request_has"] if not has(r["body"], n)]
            return not missing, f"{len(rs)} request(s) {[r['seq'] for r in rs][:8]}; missing {missing[:6]}"
        if "tool_result" in c:
            sel = c["tool_result"]
            want = sel.get("command_contains", "")
            want_name = sel.get("tool_name")
            want_input = sel.get("input_contains", "")
            ids = {}
            results = {}
            for r in self.reqs:
                for m in (r.get("body") or {}).get("messages") or []:
                    if not isinstance(m.get("content"), list):
                        continue
                    for b in m["content"]:
                        if not isinstance(b, dict):
                            continue
                        if b.get("type") == "tool_use":
                            inp = b.get("input") or {}
                            if (want in str(inp.get("command", "")) and want_name in (None, b.get("name"))
                                    and want_input in json.dumps(inp, ensure_ascii=False)):
                                ids[b.get("id")] = f"{b.get('name')} {json.dumps(inp, ensure_ascii=False)}"
                        if b.get("type") == "tool_result":
                            cont = b.get("content")
                            if isinstance(cont, list):
                                cont = "\n".join(x.get("text", "") for x in cont if isinstance(x, dict))
                            results[b.get("tool_use_id")] = (str(cont), bool(b.get("is_error")), r["seq"])
            got = [(ids[i],) + results[i] for i in ids if i in results]
            if not got:
                return False, f"no tool_result for a tool_use matching {sel!r} (matching tool_uses: {list(ids.values())})"
            problems = []
            for cmd, text, is_err, seq in got:
                missing = [n for n in c.get("contains", []) if n not in text]
                present = [n for n in c.get("not_contains", []) if n in text]
                if missing or present or (is_err and not c.get("error_ok")):
                    problems.append(f"req #{seq} `{short(cmd, 120)}` is_error={is_err} missing={missing} "
                                    f"unwanted={present}; result: {short(text, 1500)}")
            return not problems, f"{len(got)} result(s); " + ("; ".join(problems) or "ok")
        if "hook_tool_output" in c:
            calls = self.hook_calls(c["hook_tool_output"], c.get("where"), c.get("env"))
            problems, n = [], 0
            for h in calls:
                out = (h.get("stdout") or "").strip()
                if not out:
                    continue
                n += 1
                new = json.loads(out)["hookSpecificOutput"]["updatedToolOutput"]
                text = new.get("stdout", "")
                missing = [x for x in c.get("contains", []) if x not in text]
                present = [x for x in c.get("not_contains", []) if x in text]
                if missing or present:
                    problems.append(f"call at {h.get('t_start')}: missing={missing} unwanted={present}: {short(text, 600)}")
                tid = (h.get("stdin") or {}).get("tool_use_id")
                req = self.first_after(h.get("t_start", 0), c.get("reaches", "main"))
                got = None
                for m in ((req or {}).get("body") or {}).get("messages", []):
                    if isinstance(m.get("content"), list):
                        for b in m["content"]:
                            if b.get("type") == "tool_result" and b.get("tool_use_id") == tid:
                                cont = b.get("content")
                                if isinstance(cont, list):
                                    cont = "\n".join(x.get("text", "") for x in cont if isinstance(x, dict))
                                got = str(cont)
                if got is None:
                    problems.append(f"call at {h.get('t_start')}: no tool_result for {tid} in the next request")
                elif got.strip() != text.strip():
                    problems.append(f"call at {h.get('t_start')}: the model got {short(got, 300)} instead of the digest")
            if n < c.get("count_min", 1):
                problems.append(f"{n} replacing call(s), want >= {c.get('count_min', 1)} (of {len(calls)} matching)")
            return not problems, f"{n} replacement(s); " + ("; ".join(problems) or "each reached the model exactly")
        if c.get("telemetry_matches_hooks"):
            # What every hook call printed, per session and event, recomputed from the hook
            # records (the exact stdout and the payload), against `memctl status --json`.
            want = {}
            for h in self.hooks:
                out = (h.get("stdout") or "").strip()
                sid = (h.get("stdin") or {}).get("session_id")
                if not out or not sid:
                    continue
                ev = h.get("event")
                row = want.setdefault(sid, {}).setdefault(ev, {"calls": 0, "injected_chars": 0, "summarizer_chars": 0, "removed_chars": 0})
                row["calls"] += 1
                if ev in PLAIN_OUTPUT_EVENTS:
                    row["summarizer_chars"] += len(out)
                    continue
                hso = json.loads(out)["hookSpecificOutput"]
                if "updatedToolOutput" in hso:
                    resp = (h.get("stdin") or {}).get("tool_response") or {}
                    t = resp.get("stdout", "")
                    if resp.get("stderr"):
                        t += ("" if not t or t.endswith("\n") else "\n") + resp["stderr"]
                    before = 2048 + 260 if resp.get("persistedOutputPath") else len(t)
                    row["removed_chars"] += max(0, before - len(hso["updatedToolOutput"].get("stdout", "")))
                else:
                    row["injected_chars"] += len(hso.get("additionalContext", ""))
            problems, n = [], 0
            for sid, evs in want.items():
                rep = json.loads(self.memctl(self.data_dir(c), "status", "--session", sid, "--json")).get("session") or {}
                got = {r["hook"]: r for r in rep.get("hooks", [])}
                for ev, w in evs.items():
                    n += 1
                    g = {k: (got.get(ev) or {}).get(k) for k in w}
                    if g != w:
                        problems.append(f"{sid[:8]} {ev}: status says {g}, hooks printed {w}")
                extra = sorted(set(got) - set(evs))
                if extra:
                    problems.append(f"{sid[:8]}: status has hooks that printed nothing: {extra}")
            if c.get("removed_min") is not None and sum(
                    w.get("removed_chars", 0) for evs in want.values() for w in evs.values()) < c["removed_min"]:
                problems.append(f"fewer than {c['removed_min']} chars removed by swapping")
            return not problems and n > 0, f"{n} (session, hook) row(s) compared; " + ("; ".join(problems) or "all equal")
        if "cli" in c:
            out = self.memctl(self.data_dir(c), *c["cli"])
            missing = [x for x in c.get("contains", []) if x not in out]
            present = [x for x in c.get("not_contains", []) if x in out]
            return not missing and not present, f"memctl {' '.join(c['cli'])}: missing={missing} unwanted={present}; {short(out, 600)}"
        if "store" in c:
            st = c["store"]
            d = self.data_dir(st)
            sessions = json.loads(self.memctl(d, "sessions", "--json"))
            texts = []
            session_docs = []
            for s in sessions:
                raw = self.memctl(d, "show", s["session_id"], "--json")
                session_docs.append(raw)
                doc = json.loads(raw)
                for ch in doc.get("chunks", []):
                    cd = json.loads(self.memctl(d, "show", str(ch["id"]), "--json"))
                    texts.append((s["session_id"], ch["id"], json.dumps(cd["chunk"], ensure_ascii=False)))
            problems = []
            if len(sessions) < st.get("sessions_min", 1):
                problems.append(f"{len(sessions)} session(s) archived, want >= {st.get('sessions_min', 1)}")
            for n in st.get("session_contains", []):
                if not any(n in t for t in session_docs):
                    problems.append(f"no session record holds {n!r}")
            for n in st.get("chunk_contains", []):
                if not any(n in t for _, _, t in texts):
                    problems.append(f"no chunk holds {n!r}")
            for n in st.get("no_chunk_contains", []):
                hits = [(sid[:8], cid) for sid, cid, t in texts if n in t]
                if hits:
                    t = next(t for sid, cid, t in texts if n in t)
                    i = t.index(n)
                    problems.append(f"{n!r} archived in chunk(s) {hits[:5]}: ...{short(t[max(0, i - 200):i + 200], 420)}")
            return not problems, f"{len(sessions)} session(s), {len(texts)} chunk(s) in {d}; " + ("; ".join(problems) or "ok")
        if "log_clean" in c or "log_contains" in c:
            d = self.data_dir(c)
            logs = sorted(glob.glob(os.path.join(d, "logs", "*.log*")))
            text = ""
            for p in logs:
                with open(p, encoding="utf-8", errors="replace") as f:
                    text += f.read()
            if "log_contains" in c:
                m = re.search(c["log_contains"], text)
                return bool(m), f"{len(logs)} log file(s) in {d}; " + (f"found {short(m.group(0))}" if m else f"no match for {c['log_contains']!r}")
            bad = [l for l in text.splitlines() if re.search(r"\bERROR\b|panick", l)]
            return not bad, f"{len(logs)} log file(s) in {d}; " + ("; ".join(short(b, 300) for b in bad[:5]) or "no ERROR lines")
        return False, "unknown check"

    def run_all(self):
        results = []
        for c in self.scen.get("memctl_checks") or []:
            c = subst(c, self.mapping)
            try:
                ok, detail = self.check(c)
            except Exception as e:  # a check that cannot run fails, with the reason
                ok, detail = False, f"check raised {type(e).__name__}: {e}"
            results.append((ok, c, detail))
        return results


# ---- typed memctl_checks: a misspelt key would silently skip a needle, so unknown keys and
# wrong types fail (naming the file and the field) before anything runs.
STR, LIST, DICT, BOOL, INT = "string", "list of strings", "object", "boolean", "integer"
SELECTOR = {"kind": STR, "min_step": INT, "max_step": INT, "first": BOOL, "after_hook": "after_hook"}
AFTER_HOOK = {"hook": STR, "where": DICT, "env": DICT}
CHECK_SCHEMAS = {
    "hooks_ok": {},
    "cli_hook_outcomes_ok": {},
    "steps_ok": {},
    "hook_context": {"where": DICT, "env": DICT, "contains": LIST, "not_contains": LIST, "count_min": INT, "reaches": STR},
    "hook_plain": {"where": DICT, "env": DICT, "contains": LIST, "not_contains": LIST, "count_min": INT, "reaches": STR},
    "hook_silent": {"where": DICT, "env": DICT, "count_min": INT},
    "outside_memctl_not_contains": {"requests": "selector"},
    "request_has": {"requests": "selector"},
    "tool_result": {"contains": LIST, "not_contains": LIST, "error_ok": BOOL},
    "store": {},
    "hook_tool_output": {"where": DICT, "env": DICT, "contains": LIST, "not_contains": LIST, "count_min": INT, "reaches": STR},
    "cli": {"contains": LIST, "not_contains": LIST, "data_dir": STR},
    "telemetry_matches_hooks": {"data_dir": STR, "removed_min": INT},
    "log_clean": {"data_dir": STR},
    "log_contains": {"data_dir": STR},
    "at_least": {"of": "checks"},
}
CHECK_VALUE = {"hooks_ok": BOOL, "cli_hook_outcomes_ok": BOOL, "steps_ok": BOOL, "hook_context": STR,
               "hook_plain": STR, "hook_silent": STR, "outside_memctl_not_contains": LIST, "request_has": LIST,
               "tool_result": "tool_result", "store": "store", "log_clean": BOOL,
               "hook_tool_output": STR, "cli": LIST, "telemetry_matches_hooks": BOOL, "log_contains": STR,
               "at_least": INT}
TOOL_RESULT = {"command_contains": STR, "tool_name": STR, "input_contains": STR}
STORE = {"data_dir": STR, "sessions_min": INT, "chunk_contains": LIST, "no_chunk_contains": LIST, "session_contains": LIST}


class CheckSpecError(ValueError):
    pass


def _typed(value, kind, where):
    ok = {STR: lambda v: isinstance(v, str), BOOL: lambda v: isinstance(v, bool),
          INT: lambda v: isinstance(v, int) and not isinstance(v, bool), DICT: lambda v: isinstance(v, dict),
          LIST: lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v)}
    if kind == "checks":
        return  # validated by validate_list (nested checks)
    if kind in ok:
        if not ok[kind](value):
            raise CheckSpecError(f"{where}: expected {kind}, got {json.dumps(value)[:60]}")
        return
    schema = {"selector": SELECTOR, "after_hook": AFTER_HOOK, "tool_result": TOOL_RESULT, "store": STORE}[kind]
    if not isinstance(value, dict):
        raise CheckSpecError(f"{where}: expected an object, got {json.dumps(value)[:60]}")
    for k, v in value.items():
        if k not in schema:
            raise CheckSpecError(f"{where}.{k}: unknown key; known: {sorted(schema)}")
        _typed(v, schema[k], f"{where}.{k}")


def validate_checks(scen, source):
    """Raise CheckSpecError for a memctl_checks entry with an unknown key or a wrong type."""
    checks = scen.get("memctl_checks")
    if not isinstance(checks, list) or not checks:
        raise CheckSpecError(f"{source}: memctl_checks: a non-empty list of checks is required")
    validate_list(checks, f"{source}: memctl_checks")


def validate_list(checks, prefix):
    for i, c in enumerate(checks):
        where = f"{prefix}[{i}]"
        if not isinstance(c, dict):
            raise CheckSpecError(f"{where}: expected an object")
        kinds = [k for k in c if k in CHECK_SCHEMAS]
        if len(kinds) != 1:
            raise CheckSpecError(f"{where}: needs exactly one of {sorted(CHECK_SCHEMAS)}, has {kinds}")
        kind = kinds[0]
        allowed = dict(CHECK_SCHEMAS[kind], note=STR)
        for k, v in c.items():
            if k == kind:
                _typed(v, CHECK_VALUE[kind], f"{where}.{k}")
            elif k not in allowed:
                raise CheckSpecError(f"{where}.{k}: unknown key for a {kind!r} check; known: {sorted(allowed)}")
            else:
                _typed(v, allowed[k], f"{where}.{k}")
        if CHECK_VALUE[kind] == BOOL and c[kind] is not True:
            raise CheckSpecError(f"{where}.{kind}: must be true (a disabled check would pass silently)")
        if kind == "at_least":
            of = c.get("of")
            if not isinstance(of, list) or not of or not 1 <= c["at_least"] <= len(of):
                raise CheckSpecError(f"{where}: at_least needs a non-empty 'of' list and 1 <= at_least <= len(of)")
            validate_list(of, f"{where}.of")


def bindir(args):
    return args.bin or os.path.join(args.repo, "target", "debug")


def render(args):
    with open(args.scenario, encoding="utf-8") as f:
        scen = json.load(f)
    try:
        validate_checks(scen, args.scenario)
    except CheckSpecError as e:
        print(f"check.py: invalid memctl_checks: {e}", file=sys.stderr)
        return 2
    mapping = {"MEMCTL_REPO": args.repo, "MEMCTL_BIN": bindir(args)}
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(subst(scen, mapping), f, indent=1, ensure_ascii=False)
    return 0


def prefix(args):
    with open(args.scenario, encoding="utf-8") as f:
        scen = json.load(f)
    hook = os.path.join(bindir(args), "memctl-hook")
    wrapper = (scen.get("memctl_e2e") or {}).get("hook_wrapper")
    print(f"{os.path.join(args.repo, wrapper)} {hook}" if wrapper else hook)
    return 0


def check(args):
    with open(args.scenario, encoding="utf-8") as f:
        scen = json.load(f)
    validate_checks(scen, args.scenario)
    run = Run(os.path.abspath(args.outdir), scen, args.repo, bindir(args))
    results = run.run_all()
    lines = []
    for ok, c, detail in results:
        lines.append(f"{'PASS' if ok else 'FAIL'}  {short(json.dumps(c, ensure_ascii=False), 220)}\n      {detail}")
    npass = sum(1 for r in results if r[0])
    lines.append(f"memctl checks: {npass} passed, {len(results) - npass} failed")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(args.outdir, "memctl-checks.txt"), "w", encoding="utf-8") as f:
        f.write(text)
    print(text, end="")
    return 0 if results and npass == len(results) else 1


def validate(args):
    for p in args.scenarios:
        try:
            with open(p, encoding="utf-8") as f:
                validate_checks(json.load(f), p)
        except (OSError, ValueError) as e:
            print(f"check.py: invalid memctl_checks: {e}", file=sys.stderr)
            return 1
    return 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("validate")
    a.add_argument("scenarios", nargs="+")
    a = sub.add_parser("render")
    a.add_argument("scenario")
    a.add_argument("out")
    a.add_argument("--repo", required=True)
    a.add_argument("--bin")
    a = sub.add_parser("prefix")
    a.add_argument("scenario")
    a.add_argument("--repo", required=True)
    a.add_argument("--bin")
    a = sub.add_parser("check")
    a.add_argument("scenario")
    a.add_argument("outdir")
    a.add_argument("--repo", required=True)
    a.add_argument("--bin")
    args = ap.parse_args()
    return {"validate": validate, "render": render, "prefix": prefix, "check": check}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
