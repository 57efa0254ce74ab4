#!/usr/bin/env python3
"""An archive with near-duplicate turns: sessions of one project from gen_transcript.py, plus
the copies real archives fill up with, deterministic by seed.

    gen_dups.py --out DIR [--sessions 10] [--turns 24] [--seed 7]

Writes DIR/<session>.jsonl (Claude Code transcripts) and DIR/labels.json. Copies mixed in:
  * test runs repeated: the same command and result, run again in later turns and sessions
    with other timings, timestamps, pids, temp paths and build ids (`runs` groups);
  * questions asked again: the same question and answer, with another volatile value in the
    answer (a commit id, a time) (`asks` groups);
  * sessions that end re-running one suite (half of them), so that the latest turns a
    restore shows hold copies;
  * a resumed and a forked session: a new transcript that copies another's history (exact
    copies: the store keeps them once) and goes on with new turns;
  * with --near N (default 2): each variant of scripts/dups_near.py N times at random places:
    near-copies the fold key misses (`near` groups, two variants each, that must fold) and
    hard negatives (`neg` groups, in pairs named by `pair`, that must not fold together).
labels.json: {"project": cwd, "groups": {name: {"kind", "marker", "query"[, "pair"]}},
"sessions": [...]}.
A turn belongs to group `name` when its text holds the group's `marker`; turns holding no
marker are unique.
"""
import argparse
import importlib.util
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("gen_transcript", os.path.join(HERE, "gen_transcript.py"))
gt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gt)
_spec = importlib.util.spec_from_file_location("dups_near", os.path.join(HERE, "dups_near.py"))
near = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(near)
near.gt = gt

# (crate, test count, failures): one group per command, its result fixed.
RUNS = [
    ("billing-ledger", 42, 0), ("sync-retry", 17, 2), ("store-migrations", 63, 0),
    ("auth-token", 9, 1), ("api-routes", 28, 0), ("chunk-index", 112, 0),
]
ASKS = [
    ("Where is the retry backoff for the sync protocol configured?",
     "The backoff lives in `src/sync/retry.rs`: `RetryPolicy::default()` starts at 200 ms and "
     "doubles up to 5 attempts; `SYNC_MAX_BACKOFF` caps it."),
    ("Which migration added the ledger_entries index?",
     "Migration `0007_ledger_entries_idx` in `src/store/migrations.rs` adds it; it is applied by "
     "`migrate_up` on open."),
    ("How do I regenerate the API route table?",
     "Run `cargo xtask routes`; it rewrites `src/api/routes.rs` from the handler attributes."),
    ("What does the token refresh grace period default to?",
     "`TokenConfig::refresh_grace` defaults to 90 seconds, set in `src/auth/token.rs`."),
]


def run_output(rng, crate, n, failed, t):
    """A test run's output: what stays the same across runs and what does not."""
    tmp = "/tmp/.tmp%s" % "".join(rng.choice(gt.B62) for _ in range(6))
    build = "%07x" % rng.getrandbits(28)
    lines = [
        "   Compiling %s v0.4.2 (%s/%s)" % (crate, tmp, crate),
        "    Finished `test` profile [unoptimized + debuginfo] target(s) in %.2fs" % (rng.uniform(3, 90)),
        "     Running unittests src/lib.rs (target/debug/deps/%s-%s%s)" % (crate.replace("-", "_"), build, "%05x" % rng.getrandbits(20)),
        "",
        "running %d tests" % n,
    ]
    for i in range(failed):
        lines.append("test tests::case_%d ... FAILED" % i)
    lines += [
        "",
        "test result: %s. %d passed; %d failed; 0 ignored; 0 measured; 0 filtered out; finished in %.2fs"
        % ("FAILED" if failed else "ok", n - failed, failed, rng.uniform(0.05, 9)),
        "[pid %d] run at %s" % (rng.randrange(1000, 99999), gt.iso(t)),
    ]
    return "\n".join(lines)


def run_turn(g, crate, n, failed):
    """One turn: run the crate's tests, the output, a fixed answer."""
    rng = g.rng
    prompt = "Run the %s tests again and tell me whether they pass." % crate
    pending = g.write_user_prompt(prompt)
    tid = gt.rid(rng, "toolu_01", 22)
    cmd = "cargo test -p %s" % crate
    g.write_assistant([{"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": cmd}}],
                      "tool_use", pending)
    g.tick(2, 60)
    body = run_output(rng, crate, n, failed, g.t)
    g.emit(g.envelope("user", {"message": {"role": "user", "content": [
        {"tool_use_id": tid, "type": "tool_result", "content": body}]},
        "toolUseResult": {"stdout": body, "stderr": "", "interrupted": False, "isImage": False}}))
    verdict = ("All %d %s tests pass." % (n, crate) if not failed else
               "%d of %d %s tests fail: the retry case still times out." % (failed, n, crate))
    g.write_assistant([{"type": "text", "text": verdict}], "end_turn", gt.approx_tokens(body))


def ask_turn(g, question, answer):
    """One turn: a question asked before, the same answer with another volatile value."""
    pending = g.write_user_prompt(question)
    note = " (checked at commit %07x, %s)" % (g.rng.getrandbits(28), gt.iso(g.t))
    g.write_assistant([{"type": "text", "text": answer + note}], "end_turn", pending)


def session(seed, turns, project_seed, rng, copies, extra=()):
    """One session of the project: gen_transcript's turns with copies mixed in, and the turn
    builders `extra` at random places."""
    g = gt.Gen(seed, compact=False, extras=False)
    name, lang = gt.PROJECTS[project_seed % len(gt.PROJECTS)]
    g.project, g.lang, g.files = name, lang, gt.FILES_BY_LANG[lang]
    g.cwd = "/home/dev/src/%s" % name
    at = {}
    for build in extra:
        at.setdefault(rng.randrange(max(turns, 1)), []).append(build)
    for i in range(turns):
        for build in at.get(i, []):
            build(g)
        k = rng.random()
        if k < copies * 0.7:
            run_turn(g, *rng.choice(RUNS))
        elif k < copies:
            ask_turn(g, *rng.choice(ASKS))
        else:
            g.turn()
    if turns and rng.random() < 0.5:
        # A session that ends re-running one suite between small edits (a flaky test, a
        # check before committing): the latest turns a restore shows are copies.
        run = rng.choice(RUNS)
        for _ in range(rng.randrange(2, 4)):
            run_turn(g, *run)
            if rng.random() < 0.5:
                g.turn()
    return g


def continued(base_lines, g, new_turns, rng, copies):
    """A resumed or forked session: `base_lines` under `g`'s session id, then new turns."""
    out = []
    for line in base_lines:
        d = json.loads(line)
        if "sessionId" in d:
            d["sessionId"] = g.session
        out.append(json.dumps(d, ensure_ascii=False, separators=(",", ":")))
    last = json.loads(base_lines[-1])
    g.parent = last.get("uuid", g.parent)
    g.out = []
    for _ in range(new_turns):
        if rng.random() < copies:
            run_turn(g, *rng.choice(RUNS))
        else:
            g.turn()
    return out + g.out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--sessions", type=int, default=10)
    ap.add_argument("--turns", type=int, default=24)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--copies", type=float, default=0.3, help="share of turns that repeat a group")
    ap.add_argument("--near", type=int, default=2, help="times each near/neg variant is written")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(a.seed)
    project_seed = a.seed
    names = []
    written = {}
    variants = near.near_variants()
    # Near/neg turns spread over the sessions.
    nrng = random.Random(a.seed * 7919)
    builds = [v[5] for v in variants for _ in range(a.near)]
    nrng.shuffle(builds)
    extra = [[] for _ in range(a.sessions)]
    for b in builds:
        extra[nrng.randrange(a.sessions) if a.sessions else 0].append(b)
    for i in range(a.sessions):
        g = session(a.seed * 1000 + i, a.turns, project_seed, rng, a.copies, extra[i])
        written[g.session] = g.out
        names.append(g.session)
    # A resumed session (the whole history) and a fork (its first half), each going on.
    src = written[names[0]]
    for j, cut in enumerate([len(src), len(src) // 2]):
        g = session(a.seed * 1000 + 900 + j, 0, project_seed, rng, a.copies)
        g.t = gt._dt.datetime.strptime(json.loads(src[cut - 1])["timestamp"].rstrip("Z"),
                                       "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=gt._dt.timezone.utc)
        written[g.session] = continued(src[:cut], g, a.turns // 3, rng, a.copies)
        names.append(g.session)
    for sid, lines in written.items():
        with open(os.path.join(a.out, sid + ".jsonl"), "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
    groups = {}
    for crate, _, _ in RUNS:
        groups["run:" + crate] = {"kind": "run", "marker": "cargo test -p %s" % crate,
                                  "query": "did the %s tests pass" % crate}
    for q, _ in ASKS:
        groups["ask:" + q[:24]] = {"kind": "ask", "marker": q, "query": q}
    if a.near:
        for name, kind, marker, query, pair, _ in variants:
            groups[name] = {"kind": kind, "marker": marker, "query": query}
            if pair:
                groups[name]["pair"] = pair
    name, _ = gt.PROJECTS[project_seed % len(gt.PROJECTS)]
    with open(os.path.join(a.out, "labels.json"), "w", encoding="utf-8") as fh:
        json.dump({"project": "/home/dev/src/%s" % name, "groups": groups, "sessions": names}, fh, indent=1)


if __name__ == "__main__":
    main()
