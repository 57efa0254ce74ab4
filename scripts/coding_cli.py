#!/usr/bin/env python3
"""The coding query set through the memctl CLI: hits at rank 1 and in the top 5, per kind and mode.

  coding_cli.py BIN [FUSION]      BIN: a memctl binary; FUSION: a --fusion value for hybrid

Same data and scoring as tests/tests/testsuite/retrieval_quality.rs (the fixtures it ingests,
`tests/fixtures/queries/coding.jsonl`, a right answer = a turn whose text holds the needle), so a
fusion variant can be compared before it is made the default. Targets are read from the chunks
search lists (the best part of a long turn), so a needle in another part is not seen: noted.
"""
import collections
import json
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODES = ("lexical", "dense", "hybrid")


def search(bin_, env, qfile, mode, k, extra=()):
    out = subprocess.run([bin_, "search", "--queries", qfile, "--all-projects", "--mode", mode,
                          "-k", str(k), "--json", *extra],
                         env=env, capture_output=True, text=True, check=True).stdout
    return {r["qid"]: r["results"] for r in map(json.loads, out.splitlines())}


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    bin_ = argv[1]
    fusion = ["--fusion", argv[2]] if len(argv) == 3 else []
    with open(os.path.join(REPO, "tests/fixtures/queries/coding.jsonl"), encoding="utf-8") as f:
        qs = [json.loads(x) for x in f if x.strip()]
    home = tempfile.mkdtemp(prefix="memctl-coding-")
    env = dict(os.environ, MEMCTL_HOME=home)
    subprocess.run([bin_, "ingest", os.path.join(REPO, "tests/fixtures/sample"),
                    os.path.join(REPO, "engine/tests/fixtures/transcripts")],
                   env=env, check=True, capture_output=True)
    qfile = os.path.join(home, "queries.jsonl")
    with open(qfile, "w", encoding="utf-8") as f:
        for q in qs:
            f.write(json.dumps({"qid": q["qid"], "query": q["query"]}) + "\n")
    every = next(iter(search(bin_, env, qfile, "dense", 100000).values()))
    res = {m: search(bin_, env, qfile, m, 5, fusion if m == "hybrid" else ()) for m in MODES}
    tab, n = collections.Counter(), collections.Counter()
    for q in qs:
        tg = {(c["session_id"], c["turn_index"]) for c in every if q["needle"] in c["text"]}
        if len(tg) != q["turns"]:
            print(f"note: {q['qid']}: {len(tg)} of {q['turns']} target turns listed", file=sys.stderr)
        n[q["kind"]] += 1
        for m in MODES:
            pos = [i for i, r in enumerate(res[m][q["qid"]]) if (r["session_id"], r["turn_index"]) in tg]
            tab[(q["kind"], m, 1)] += bool(pos) and pos[0] == 0
            tab[(q["kind"], m, 5)] += bool(pos)
    for kind in sorted(n):
        cells = "  ".join(f"{m} {tab[(kind, m, 1)]}/{tab[(kind, m, 5)]}" for m in MODES)
        print(f"{kind} (n={n[kind]}, at 1 / in top 5): {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
