#!/usr/bin/env python3
"""Archive completeness of the peer after run_peer.sh: how many of the transcript's user
prompts appear (first 60 chars) in its SQLite archive. usage: bench_peer_completeness.py WORKDIR"""
import json, os, sqlite3, sys

work = sys.argv[1]
t = os.path.join(work, "transcript_plus2.jsonl")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_prompts import prompt_keys  # noqa: E402

prompts = prompt_keys(t)
db = None
for name in ("pre_compact", "ups_incr"):
    p = os.path.join(work, "snap", name, "transcript-archive.db")
    if os.path.exists(p):
        db = p
        break
found = 0
rows = 0
if db:
    c = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    rows = c.execute("select count(*) from transcript_entries").fetchone()[0]
    for key in prompts:
        if c.execute("select 1 from transcript_entries where instr(content, ?) > 0 limit 1", (key,)).fetchone():
            found += 1
print(json.dumps({"event": "completeness", "prompts": len(prompts), "turns_archived": found, "rows": rows,
                  "store_bytes": os.path.getsize(db) if db else 0}))
