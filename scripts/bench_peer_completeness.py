#!/usr/bin/env python3
"""Archive completeness of the peer after run_peer.sh: how many of the transcript's user
prompts appear (first 60 chars) in its SQLite archive. usage: bench_peer_completeness.py WORKDIR"""
import json, os, sqlite3, sys

work = sys.argv[1]
t = os.path.join(work, "transcript_plus2.jsonl")
prompts = []
for line in open(t, encoding="utf-8"):
    try:
        d = json.loads(line)
    except ValueError:
        continue
    if d.get("type") != "user" or d.get("isMeta") or d.get("isCompactSummary"):
        continue
    c = (d.get("message") or {}).get("content")
    if isinstance(c, str) and c:
        prompts.append(c)
    elif isinstance(c, list) and not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in c):
        txt = " ".join(b.get("text", "") for b in c if isinstance(b, dict) and b.get("type") == "text")
        if txt:
            prompts.append(txt)
db = None
for name in ("pre_compact", "ups_incr"):
    p = os.path.join(work, "snap", name, "transcript-archive.db")
    if os.path.exists(p):
        db = p
        break
# Same rule as bench_hooks.py: slash-command wrappers are not prompts; first line, 60 chars.
prompts = [p for p in prompts if not p.startswith("[Request interrupted") and not p.lstrip().startswith("<")]
found = 0
rows = 0
if db:
    c = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    rows = c.execute("select count(*) from transcript_entries").fetchone()[0]
    for p in prompts:
        key = p.strip().split("\n")[0][:60]
        if c.execute("select 1 from transcript_entries where instr(content, ?) > 0 limit 1", (key,)).fetchone():
            found += 1
print(json.dumps({"event": "completeness", "prompts": len(prompts), "turns_archived": found, "rows": rows,
                  "store_bytes": os.path.getsize(db) if db else 0}))
