#!/usr/bin/env python3
"""Near-duplicate folding, measured: the share of search results and of restore budget spent on
copies of a turn shown already, with folding (the default) and without (`--no-fold`), on the
archive of `gen_dups.py`; and the search time of both, alternated in one run.

    python3 scripts/bench_dups.py --bin target/release [--out DIR (default .cache/bench/dups)] [--rounds 5]
        [--sweep target/release/examples/fold_sweep]

A result is a copy when a result above it in the same list belongs to the same group
(labels.json: the group's marker is in the chunk's text); a restore line is a copy when a line
above it in the block shows a turn of the same group. Turns of no group are never copies.
Folded copies are counted by the kind of their group too: `near` (near-copies the fold key
misses, folded by similarity) and `neg` groups (hard negatives: a copy folded into a result of
another group is a wrong fold). With --sweep, runs the threshold sweep (engine example
fold_sweep) on the same archive and prints its table first.
Writes OUT/report.json and prints the table of docs/perf/retrieval.md.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, env, check=True):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if check and p.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), p.stderr))
    return p.stdout


def group_of(text, groups):
    for name, g in groups.items():
        if g["marker"] in text:
            return name
    return None


def copy_share(items):
    """items: [(group or None, weight)] in shown order -> (copy weight, total weight)."""
    seen, copies, total = set(), 0, 0
    for g, w in items:
        total += w
        if g is not None and g in seen:
            copies += w
        if g is not None:
            seen.add(g)
    return copies, total


def searches(memctl, env, labels, qfile, fold, k):
    cmd = [memctl, "search", "--queries", qfile, "--project", labels["project"], "-k", str(k)]
    if not fold:
        cmd.append("--no-fold")
    t0 = time.perf_counter()
    out = run(cmd, env)
    secs = time.perf_counter() - t0
    docs = [json.loads(l) for l in out.splitlines() if l.strip()]
    return docs, secs


def search_figures(docs, labels, by_id):
    """Copies among the results; folded copies, and those of another group than the shown
    result (a wrong fold)."""
    copies = total = folded = wrong = near = 0
    for d in docs:
        items = [(group_of(r["text"], labels["groups"]), 1) for r in d["results"]]
        c, t = copy_share(items)
        copies, total = copies + c, total + t
        for r, (g, _) in zip(d["results"], items):
            for cid in r.get("copy_ids", []):
                folded += 1
                if g is None or group_of(by_id.get(cid, ""), labels["groups"]) != g:
                    wrong += 1
                elif labels["groups"][g]["kind"] == "near":
                    near += 1
    return {"results": total, "copies": copies, "share": copies / max(total, 1),
            "folded": folded, "wrong_folds": wrong, "near_folded": near}


LINE = re.compile(r"^- \[(?:session (\w{8}) )?turn (\d+)")


def restore_figures(memctl, env, labels, fold, texts):
    copies = total = 0
    for sid in labels["sessions"]:
        cmd = [memctl, "restore", sid]
        if not fold:
            cmd.append("--no-fold")
        block = run(cmd, env)
        items = []
        for line in block.splitlines():
            m = LINE.match(line)
            if not m:
                continue
            prefix, turn = m.group(1), int(m.group(2))
            owner = next((s for s in labels["sessions"] if prefix and s.startswith(prefix)), sid)
            text = texts.get((owner, turn), "")
            items.append((group_of(text, labels["groups"]), len(line) + 1))
        c, t = copy_share(items)
        copies, total = copies + c, total + t
    return {"turn_line_chars": total, "copy_chars": copies, "share": copies / max(total, 1)}


def turn_texts(memctl, env, labels):
    """(session, turn) -> text, and chunk id -> text."""
    texts, by_id = {}, {}
    for sid in labels["sessions"]:
        doc = json.loads(run([memctl, "show", sid, "--json"], env))
        for c in doc["chunks"]:
            key = (sid, c["turn_index"])
            texts[key] = texts.get(key, "") + c["text"]
            by_id[c["id"]] = c["text"]
    return texts, by_id


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="directory holding memctl")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(HERE), ".cache", "bench", "dups"))
    ap.add_argument("--rounds", type=int, default=5, help="timed rounds of each mode, alternated")
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--sweep", help="the fold_sweep example binary: sweep the thresholds too")
    a = ap.parse_args()
    memctl = os.path.join(os.path.abspath(a.bin), "memctl")
    shutil.rmtree(a.out, ignore_errors=True)
    tdir, home = os.path.join(a.out, "transcripts"), os.path.join(a.out, "home")
    subprocess.run([sys.executable, os.path.join(HERE, "gen_dups.py"), "--out", tdir,
                    "--seed", str(a.seed)], check=True)
    labels = json.load(open(os.path.join(tdir, "labels.json")))
    env = dict(os.environ, MEMCTL_HOME=home, MEMCTL_ANN="0")
    run([memctl, "ingest", "--quiet", tdir], env)
    texts, by_id = turn_texts(memctl, env, labels)
    if a.sweep:
        print(run([os.path.abspath(a.sweep), os.path.join(tdir, "labels.json")], env))
    qfile = os.path.join(a.out, "queries.jsonl")
    queries = [g["query"] for g in labels["groups"].values()] + [
        "test run results", "which tests fail", "cargo test output", "retry backoff",
        "migration index", "token refresh", "route table", "tests pass"]
    with open(qfile, "w") as fh:
        for i, q in enumerate(queries):
            fh.write(json.dumps({"qid": i, "query": q}) + "\n")
    report = {"queries": len(queries), "k": a.k, "turns": len(texts),
              "in_groups": sum(1 for t in texts.values() if group_of(t, labels["groups"]))}
    for fold in (False, True):
        docs, _ = searches(memctl, env, labels, qfile, fold, a.k)
        report["search_fold" if fold else "search_nofold"] = search_figures(docs, labels, by_id)
        report["restore_fold" if fold else "restore_nofold"] = restore_figures(
            memctl, env, labels, fold, texts)
    # Timing: the same batch, both modes alternated, so machine load hits both alike.
    many = os.path.join(a.out, "queries_x5.jsonl")
    with open(many, "w") as fh:
        fh.write(open(qfile).read() * 5)
    secs = {True: [], False: []}
    for _ in range(a.rounds):
        for fold in (False, True):
            secs[fold].append(searches(memctl, env, labels, many, fold, a.k)[1])
    n = len(queries) * 5
    med = {f: sorted(v)[len(v) // 2] for f, v in secs.items()}
    report["batch_ms_per_query"] = {"nofold": med[False] * 1000 / n, "fold": med[True] * 1000 / n,
                                    "ratio": med[True] / med[False], "rounds": a.rounds}
    json.dump(report, open(os.path.join(a.out, "report.json"), "w"), indent=1)
    s0, s1 = report["search_nofold"], report["search_fold"]
    r0, r1 = report["restore_nofold"], report["restore_fold"]
    b = report["batch_ms_per_query"]
    print("archive: %d turns, %d in copy groups; %d queries, k=%d, %d restores"
          % (report["turns"], report["in_groups"], len(queries), a.k, len(labels["sessions"])))
    print("| | --no-fold | folded |")
    print("|---|---|---|")
    print("| search results that copy a result above them | %d of %d (%.1f %%) | %d of %d (%.1f %%) |"
          % (s0["copies"], s0["results"], 100 * s0["share"], s1["copies"], s1["results"], 100 * s1["share"]))
    print("| restore turn-line chars spent on copies | %d of %d (%.1f %%) | %d of %d (%.1f %%) |"
          % (r0["copy_chars"], r0["turn_line_chars"], 100 * r0["share"],
             r1["copy_chars"], r1["turn_line_chars"], 100 * r1["share"]))
    print("| folded copies (of another group: wrong folds; of near-copy groups) | - | %d (%d; %d) |"
          % (s1["folded"], s1["wrong_folds"], s1.get("near_folded", 0)))
    print("| search batch, ms per query (median of %d) | %.2f | %.2f (×%.3f) |"
          % (b["rounds"], b["nofold"], b["fold"], b["ratio"]))


if __name__ == "__main__":
    main()
