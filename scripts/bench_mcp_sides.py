#!/usr/bin/env python3
"""Where an MCP search's time goes: one `memctl mcp` server, its `search` tool per query (the
client's view, `bench_scale.mcp_warm`), on one store of `bench_scale.py`, three ways in one
run: the service with its vector index, the service embedding the query only (the MCP
process scans the vectors), and no service (the model loads in the MCP process).

    scripts/bench_mcp_sides.py [--store .cache/bench/scale/m10000] [--bin target/release]
                               [--queries 30] [--seed 7] [--ann-min 5000]

Prints one JSON object per condition. The store must exist (`bench_scale.py` makes it).
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_scale as bs  # noqa: E402
from benchlib import stop_dir_processes  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", default=os.path.join(bs.REPO, ".cache/bench/scale/m10000"))
    ap.add_argument("--bin", default=os.path.join(bs.REPO, "target/release"))
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--ann-min", default="5000")
    a = ap.parse_args()
    memctl = os.path.join(a.bin, "memctl")
    qs = bs.queries(a.queries, a.seed)
    conditions = [
        ("service with its index", bs.env_for(a.store, MEMCTL_ANN="1", MEMCTL_ANN_MIN=a.ann_min), True),
        ("service embedding only", bs.env_for(a.store, MEMCTL_ANN="0"), True),
        ("no service (model in the MCP process)", bs.env_for(a.store, MEMCTL_RESIDENT="0"), False),
    ]
    for label, env, service in conditions:
        stop_dir_processes(a.store)
        if service:
            svc = bs.start_service(memctl, env)
            if env.get("MEMCTL_ANN") == "1":
                bs.wait_indexed(memctl, env, qs[0], 600, svc)
            else:
                time.sleep(3)
        out = {"condition": label}
        bs.mcp_warm(memctl, env, qs, out)
        print(json.dumps(out), flush=True)
    stop_dir_processes(a.store)
    return 0


if __name__ == "__main__":
    sys.exit(main())
