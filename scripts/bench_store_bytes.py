#!/usr/bin/env python3
"""Store bytes per chunk with the model vectors in, several memctl builds side by side.

usage: bench_store_bytes.py <transcript.jsonl> <workdir> <label>=<memctl-hook> ...

Per label: an empty MEMCTL_HOME; the first archive through one whole UserPromptSubmit process
(inline, no deadline, no background embedder: as in bench_first_archive.py); then the sibling
`memctl embed-pending` until nothing is pending (from schema 4 on, the last one also runs the
quiet-moment reclaim: hash vectors of embedded chunks dropped, free pages given back by a
rewrite when they are worth it). Prints one JSON line per label: store_bytes, chunks,
chunk_text_bytes, transcript_bytes, bytes_per_chunk, the store size after the first archive.
Needs ORT_DYLIB_PATH and MEMCTL_MODEL_DIR (source .cache/env.sh). Stdlib only.
"""
import json, os, shutil, subprocess, sys
from benchlib import first_archive_env, remove_tree, require_model, write_ups_input

transcript, workdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
builds = [a.split("=", 1) for a in sys.argv[3:]]
for _label, _hook in builds:
    require_model(os.path.join(os.path.dirname(_hook), "memctl"), os.environ, "bench_store_bytes")
if not builds:
    sys.exit("usage: bench_store_bytes.py <transcript> <workdir> <label>=<memctl-hook> ...")
session, inp = write_ups_input(workdir, transcript)



def pending(memctl, env):
    st = subprocess.run([memctl, "status", "--json"], env=env, capture_output=True, text=True)
    if st.returncode != 0:
        sys.exit(f"memctl status failed: {st.stderr.strip()}")
    return json.loads(st.stdout).get("pending", 0)


for label, hook in builds:
    home = os.path.join(workdir, "home-" + label)
    remove_tree(home)
    env = first_archive_env(home)
    memctl = os.path.join(os.path.dirname(hook), "memctl")
    with open(inp, "rb") as fin:
        subprocess.run([hook, "UserPromptSubmit"], stdin=fin, env=env, cwd=workdir,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    store = os.path.join(home, "memctl.redb")
    archived = os.path.getsize(store)
    rounds = 0
    while pending(memctl, env) > 0:
        rounds += 1
        if rounds > 1000:
            sys.exit("embed-pending makes no progress")
        subprocess.run([memctl, "embed-pending"], env=env, capture_output=True, check=True)
    size = os.path.getsize(store)
    shown = subprocess.run([memctl, "show", session, "--json"], env=env, capture_output=True, text=True)
    chunks = json.loads(shown.stdout).get("chunks", []) if shown.returncode == 0 else []
    text_bytes = sum(len(c.get("text", "").encode()) for c in chunks)
    print(json.dumps({
        "label": label, "transcript": os.path.basename(transcript),
        "store_bytes": size, "store_bytes_after_first_archive": archived,
        "chunks": len(chunks), "chunk_text_bytes": text_bytes,
        "transcript_bytes": os.path.getsize(transcript),
        "bytes_per_chunk": round(size / len(chunks)) if chunks else None,
        "pending_after": pending(memctl, env),
    }), flush=True)
