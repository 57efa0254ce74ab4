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
