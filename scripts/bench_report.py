#!/usr/bin/env python3
"""Turn bench.sh's raw JSON lines into benches/results/<date>.md (tables with ratios) and a PNG
plot of hook latency vs transcript size for memctl and the peer.

usage: bench_report.py RAW.jsonl OUTDIR REPORT.md PLOT.png
"""
import json, os, platform, re, statistics, subprocess, sys
from collections import defaultdict

raw, outdir, report, plot = sys.argv[1:5]
rows = [json.loads(l) for l in open(raw) if l.strip()]

EVENTS = [("ups_first", "UserPromptSubmit (first, empty store)"), ("ups_incr", "UserPromptSubmit (+2 turns, incremental)"),
          ("pre_compact", "PreCompact"), ("session_start", "SessionStart(compact)"), ("status", "status")]

walls = defaultdict(list)      # (tool, size, event) -> all wall samples
cpu = defaultdict(list)        # user+sys medians
rss = defaultdict(list)
out_bytes = {}
complete = {}
for r in rows:
    key = (r["tool"], r["size"], r["event"])
    if r["event"] == "completeness":
        complete[(r["tool"], r["size"])] = r
        continue
    walls[key].extend(r.get("wall_ms_all", []))
    cpu[key].append(r.get("user_ms_median", 0) + r.get("sys_ms_median", 0))
    rss[key].append(r.get("peak_rss_kb_median", 0))
    out_bytes[key] = r.get("stdout_bytes")


def pct(v, p):
    v = sorted(v)
    if not v:
        return float("nan")
    i = min(len(v) - 1, max(0, int(round(p / 100 * (len(v) - 1)))))
    return v[i]


sizes = sorted({r["size"] for r in rows})
tools = sorted({r["tool"] for r in rows})
lines = []
cpuinfo = ""
try:
    cpuinfo = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
except (OSError, StopIteration):
    pass
rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
lines.append(f"# memctl benchmark results ({os.path.basename(report)[:-3]})\n")
lines.append(f"Machine: {os.cpu_count()} cores ({cpuinfo}), {platform.system()} {platform.release()}; memctl {rev}. "
             "Reproduce: `scripts/bench.sh`.\n")
lines.append("Whole-process hook latency, every run a fresh process from the same starting state "
             "(memctl: `scripts/bench_hooks.py`; peer: `../shared/peer/run_peer.sh`, claude-flow's "
             "context-persistence hook on Node), same transcripts (`gen_transcript.py --seed 42`), "
             "interleaved rounds. Ratio = peer p50 / memctl p50 (above 1: memctl faster).\n")
lines.append("| turns | event | memctl p50 ms | memctl p95 ms | peer p50 ms | peer p95 ms | ratio | memctl CPU ms | peer CPU ms | memctl RSS MB | peer RSS MB |")
lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
for n in sizes:
    for ev, label in EVENTS:
        m, p = walls.get(("memctl", n, ev), []), walls.get(("peer", n, ev), [])
        if not m and not p:
            continue
        mp50, pp50 = (statistics.median(m) if m else float("nan")), (statistics.median(p) if p else float("nan"))
        ratio = pp50 / mp50 if m and p and mp50 > 0 else float("nan")
        mc = statistics.median(cpu[("memctl", n, ev)]) if cpu.get(("memctl", n, ev)) else float("nan")
        pc = statistics.median(cpu[("peer", n, ev)]) if cpu.get(("peer", n, ev)) else float("nan")
        mr = statistics.median(rss[("memctl", n, ev)]) / 1024 if rss.get(("memctl", n, ev)) else float("nan")
        pr = statistics.median(rss[("peer", n, ev)]) / 1024 if rss.get(("peer", n, ev)) else float("nan")
        lines.append(f"| {n} | {label} | {mp50:.1f} | {pct(m, 95):.1f} | {pp50:.1f} | {pct(p, 95):.1f} | {ratio:.1f}× | {mc:.1f} | {pc:.1f} | {mr:.1f} | {pr:.1f} |")

lines.append("\n## Archive completeness (turns archived / user prompts in the transcript)\n")
lines.append("| turns | memctl | peer | memctl store bytes | peer store bytes | transcript bytes |")
lines.append("|---|---|---|---|---|---|")
for n in sizes:
    m, p = complete.get(("memctl", n)), complete.get(("peer", n))
    fm = f"{m['turns_archived']}/{m['prompts']}" if m else "-"
    fp = f"{p['turns_archived']}/{p['prompts']} (prompt text found)" if p else "-"
    lines.append(f"| {n} | {fm} | {fp} | {m['store_bytes'] if m else '-'} | {p['store_bytes'] if p else '-'} | {m['transcript_bytes'] if m else '-'} |")

crit = os.path.join(outdir, "criterion.txt")
if os.path.exists(crit):
    lines.append("\n## criterion (in-process; `cargo bench -p memctl-benches`)\n")
    lines.append("```")
    text = open(crit).read()
    for l in text.splitlines():
        if re.match(r"^[A-Za-z0-9_/.\- ]+\s+time:", l) or "thrpt:" in l or "recall" in l.lower():
            lines.append(l.rstrip())
    lines.append("```")
    lines.append("\nCompute bound: all-MiniLM-L6-v2 costs ≈ 22.4 MFLOP per token at 128 tokens; "
                 "see the embed group above for the measured sentences/s on one intra-op thread.")

# Write path and storage economy: the figures measured on main before that work (one run
# each), next to this run's; this
# run's numbers come from the JSON lines bench.sh wrote into OUTDIR.
ISSUE17 = {
    "first archive 5,000 turns": "6.3 s vs peer 1.85 s (0.29×)",
    "first archive 500 turns": "0.59× the peer",
    "bytes per chunk (with model vectors)": "≈ 17 KB",
    "first search with a 5,000-turn backlog": "91 s (embedded in the foreground)",
    "embedding, 1 thread": "11.7 chunks/s",
    "UserPromptSubmit p95, embedder running / not": "46 ms / 23 ms (2.0×)",
}


def jsonl(name):
    path = os.path.join(outdir, name)
    if not os.path.exists(path):
        return []
    out = []
    for l in open(path):
        l = l.strip()
        if l:
            try:
                out.append(json.loads(l))
            except ValueError:
                pass
    return out


def table(title, recs, repro):
    """A markdown table of JSON records: every scalar key, in first-seen order."""
    if not recs:
        return
    keys = []
    for r in recs:
        for k, v in r.items():
            if k not in keys and not isinstance(v, (list, dict)):
                keys.append(k)
    lines.append(f"\n### {title}\n\n{repro}\n")
    lines.append("| " + " | ".join(keys) + " |")
    lines.append("|" + "---|" * len(keys))
    for r in recs:
        lines.append("| " + " | ".join("-" if r.get(k) is None else str(r.get(k)) for k in keys) + " |")


fa = jsonl("first_archive.jsonl")
sb = jsonl("store_bytes.jsonl")
et = jsonl("embed_threads.jsonl")
sp = jsonl("search_pending.jsonl")
ct = jsonl("contention.jsonl")
if fa or sb or et or sp or ct:
    lines.append("\n## Write path and storage economy\n")
    lines.append("| figure | when the issue was filed | this run |")
    lines.append("|---|---|---|")
    for r in fa:
        if r.get("label") != "now":
            continue
        n = int(re.sub(r"\D", "", r.get("transcript", "")) or 0)
        peer = walls.get(("peer", n, "ups_first"), [])
        vs = ""
        if peer and r.get("wall_ms_median"):
            pm = statistics.median(peer)
            vs = f" vs peer {pm:,.0f} ms ({pm / r['wall_ms_median']:.2f}×)"
        key = f"first archive {n:,} turns"
        lines.append(f"| {key} | {ISSUE17.get(key, '-')} | {r['wall_ms_median']:,.0f} ms{vs}; "
                     f"{r.get('bytes_per_chunk') or '-'} B/chunk before model vectors |")
    for r in sb:
        bpc = r.get("bytes_per_chunk")
        if bpc:
            lines.append(f"| bytes per chunk (with model vectors), {r.get('transcript', '')} | "
                         f"{ISSUE17['bytes per chunk (with model vectors)']} | {bpc:,} B "
                         f"({r.get('store_bytes', 0):,} B store, {r.get('chunks')} chunks, "
                         f"{r.get('chunk_text_bytes') or 0:,} B chunk text, {r.get('transcript_bytes') or 0:,} B transcript) |")
    for r in sp:
        if r.get("label") == "now":
            lines.append(f"| search with {r.get('pending')} chunks pending ({r.get('transcript')}) | "
                         f"{ISSUE17['first search with a 5,000-turn backlog']} | p50 {r['wall_ms_p50']} ms, "
                         f"p95 {r['wall_ms_p95']} ms |")
    for r in et:
        cps = r.get("chunks_per_s")
        if cps:
            lines.append(f"| embedding, {r.get('threads')} thread(s) | {ISSUE17['embedding, 1 thread']} (1 thread) | "
                         f"{cps} chunks/s |")
    if ct:
        lines.append(f"| UserPromptSubmit p50/p95, embedder running / not | "
                     f"{ISSUE17['UserPromptSubmit p95, embedder running / not']} | see the table below |")
    table("First archive (`scripts/bench_first_archive.py`)", fa,
          "One whole `memctl-hook UserPromptSubmit` on the transcript, empty store, every turn archived.")
    table("Store bytes with model vectors (`scripts/bench_store_bytes.py`)", sb,
          "First archive, then the background embedder until nothing is pending.")
    table("Embedding throughput (`scripts/bench_embed_threads.py`)", et, "Real chunks of the transcript.")
    table("Search with every chunk pending (`scripts/bench_search_pending.py`)", sp,
          "Whole `memctl search --json` processes in hybrid mode; the background embedder is off.")
    table("UserPromptSubmit with and without a running embedder (`scripts/bench_embedder_contention.py`)", ct,
          "Whole hook processes; one turn appended before each call. `embedder`: the resident "
          "service busy embedding the backlog on its bulk thread.")

loc = sorted(f for f in os.listdir(os.path.dirname(report) or ".") if f.startswith("locomo-") and f.endswith(".md") and "sweep" not in f)
if loc:
    lines.append(f"\n## LoCoMo retrieval\n\nSee [{loc[-1]}]({loc[-1]}) (`scripts/locomo.sh`).")

open(report, "w").write("\n".join(lines) + "\n")

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    for ax, (ev, label) in zip(axes, [EVENTS[1], EVENTS[2], EVENTS[3]]):
        for tool, style in (("memctl", "o-"), ("peer", "s--")):
            xs = [n for n in sizes if walls.get((tool, n, ev))]
            ys = [statistics.median(walls[(tool, n, ev)]) for n in xs]
            if xs:
                ax.plot(xs, ys, style, label=tool)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("transcript turns")
        ax.set_ylabel("p50 wall ms (whole process)")
        ax.set_title(label)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(plot, dpi=110)
except ImportError:
    print("matplotlib missing: no plot", file=sys.stderr)
