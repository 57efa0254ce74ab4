#!/usr/bin/env python3
"""Glue for scripts/locomo.sh (stdlib only): LoCoMo queries -> memctl batch search -> run files.

  locomo_run.py queries  DATA OUT.jsonl            memctl --queries file (qid, query, project)
  locomo_run.py coverage DATA DUMP.jsonl           every LoCoMo line must be in some chunk
  locomo_run.py convert  MEMCTL_OUT.jsonl RUN.jsonl [--first-line]
  locomo_run.py table    RESULTS_DIR LABEL=SCORE.json ... [--reference README.md]
  locomo_run.py categories RESULTS_DIR LABEL=SCORE.json ...   per LoCoMo category (2 = temporal)

DATA is a to_transcripts.py --out directory. The project of a LoCoMo conversation is the `cwd`
to_transcripts.py writes into its transcripts, read from the first line of each transcript.

Run files (reference_eval.py --score-run): one chunk = the list of its `line_uuids`, so a memctl
turn chunk (a user line + the assistant reply) counts as a hit when ANY of its lines is
evidence: the same granularity as the reference's "pair" chunking. `--first-line` keeps only
the chunk's first line (a stricter, one-line-per-result view, comparable to "turn" chunking).
"""
import glob
import json
import os
import re
import sys


def load_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def project_of(data):
    """sample_id -> cwd written in that conversation's transcripts."""
    out = {}
    for proj in sorted(glob.glob(os.path.join(data, "projects", "*"))):
        files = sorted(glob.glob(os.path.join(proj, "*.jsonl")))
        if not files:
            continue
        with open(files[0], encoding="utf-8") as f:
            out[os.path.basename(proj)] = json.loads(f.readline())["cwd"]
    return out


def cmd_queries(data, out_path):
    cwd = project_of(data)
    qs = load_jsonl(os.path.join(data, "queries.jsonl"))
    with open(out_path, "w", encoding="utf-8") as f:
        for q in qs:
            f.write(json.dumps({"qid": q["qid"], "query": q["question"],
                                "project": cwd[q["sample_id"]]}, ensure_ascii=False) + "\n")
    print(f"{len(qs)} queries ({sum(q['has_evidence'] for q in qs)} with evidence) -> {out_path}",
          file=sys.stderr)


def cmd_coverage_queries(data, out_path):
    """One dense query per project with a k large enough to list all its chunks."""
    cwd = project_of(data)
    with open(out_path, "w", encoding="utf-8") as f:
        for sample, c in cwd.items():
            f.write(json.dumps({"qid": sample, "query": "hello", "project": c}) + "\n")


def cmd_coverage(data, dump):
    mapping = load_jsonl(os.path.join(data, "mapping.jsonl"))
    seen, n_chunks, one_line, by_role = set(), 0, 0, {}
    for row in load_jsonl(dump):
        for r in row["results"]:
            n_chunks += 1
            lu = r.get("line_uuids") or []
            seen.update(lu)
            one_line += len(lu) == 1
    role = {m["uuid"]: m["role"] for m in mapping}
    missing = [m for m in mapping if m["uuid"] not in seen]
    for m in missing:
        by_role[m["role"]] = by_role.get(m["role"], 0) + 1
    first_asst = sum(1 for m in mapping if m["line_index"] == 0 and m["role"] == "assistant")
    print(f"coverage: {len(mapping) - len(missing)}/{len(mapping)} LoCoMo lines are in a stored chunk "
          f"({n_chunks} chunks listed, {one_line} one-line chunks; {first_asst} sessions open with the "
          f"assistant speaker = preamble turns)", file=sys.stderr)
    if missing:
        print(f"coverage: MISSING {len(missing)} lines by role {by_role}, e.g. {missing[0]}", file=sys.stderr)
        return 1
    del role
    return 0


def cmd_convert(src, dst, first_line=False):
    n = 0
    with open(dst, "w", encoding="utf-8") as f:
        for row in load_jsonl(src):
            res = []
            for r in row["results"]:
                lu = list(r.get("line_uuids") or []) or [r["turn_uuid"]]
                res.append(lu[:1] if first_line else lu)
            f.write(json.dumps({"qid": row["qid"], "results": res}) + "\n")
            n += 1
    print(f"{n} run rows -> {dst}", file=sys.stderr)


def reference_rows(readme):
    """The 'Reference numbers' table of ../shared/bench/locomo/README.md, label -> 6 cells."""
    rows = {}
    if not readme or not os.path.exists(readme):
        return rows
    with open(readme, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\|\s*((?:bm25|dense|hybrid)/(?:turn|pair))\s*\|(.*)\|\s*$", line)
            if m:
                cells = [c.strip() for c in m.group(2).split("|")]
                if len(cells) == 6:
                    rows[m.group(1)] = cells
    return rows


def cmd_table(results_dir, pairs, readme=None):
    ks = (1, 5, 10)
    head = "| config | n | " + " | ".join(f"turn R@{k}" for k in ks) + " | " + \
        " | ".join(f"sess R@{k}" for k in ks) + " |"
    lines = [head, "|" + "---|" * 8]
    for pair in pairs:
        label, path = pair.split("=", 1)
        met = json.load(open(os.path.join(results_dir, path), encoding="utf-8"))["metrics"]["overall"]
        cells = [f"{met[f'turn_recall@{k}']:.3f}" for k in ks] + \
                [f"{met[f'session_recall@{k}']:.3f}" for k in ks]
        lines.append(f"| {label} | {met['n']} | " + " | ".join(cells) + " |")
    ref = reference_rows(readme)
    for label in ("bm25/pair", "dense/pair", "hybrid/pair", "bm25/turn", "dense/turn", "hybrid/turn"):
        if label in ref:
            lines.append(f"| reference {label} | 1982 | " + " | ".join(ref[label]) + " |")
    print("\n".join(lines))


# LoCoMo's category numbers (queries.jsonl `category`) and the names the scorer groups by.
CATEGORIES = ((1, "multi-hop"), (2, "temporal"), (3, "open-domain"), (4, "single-hop"),
              (5, "adversarial"))


def cmd_categories(results_dir, pairs):
    """One row per retriever and LoCoMo category: turn R@1/5/10 and session R@5."""
    lines = ["| config | category | n | turn R@1 | turn R@5 | turn R@10 | sess R@5 |",
             "|" + "---|" * 7]
    for pair in pairs:
        label, path = pair.split("=", 1)
        met = json.load(open(os.path.join(results_dir, path), encoding="utf-8"))["metrics"]
        for num, name in CATEGORIES:
            m = met.get(name)
            if not m:
                continue
            cells = [f"{m[f'turn_recall@{k}']:.3f}" for k in (1, 5, 10)] + \
                [f"{m['session_recall@5']:.3f}"]
            lines.append(f"| {label} | {num} {name} | {m['n']} | " + " | ".join(cells) + " |")
    print("\n".join(lines))


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, args = argv[1], argv[2:]
    if cmd == "queries":
        cmd_queries(*args)
    elif cmd == "coverage-queries":
        cmd_coverage_queries(*args)
    elif cmd == "coverage":
        return cmd_coverage(*args)
    elif cmd == "convert":
        cmd_convert(args[0], args[1], "--first-line" in args[2:])
    elif cmd == "categories":
        cmd_categories(args[0], args[1:])
    elif cmd == "table":
        readme = None
        if "--reference" in args:
            i = args.index("--reference")
            readme = args[i + 1]
            args = args[:i] + args[i + 2:]
        cmd_table(args[0], args[1:], readme)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
