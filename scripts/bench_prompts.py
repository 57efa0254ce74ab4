"""The one completeness rule of scripts/bench.sh, shared by memctl's and the peer's measurement:
the user prompts of a transcript (not tool results, meta lines, compact summaries, interruption
markers or slash-command wrappers), each keyed by its first line's first 60 characters."""
from benchlib import json_lines


def prompt_keys(path):
    keys = []
    for d in json_lines(path):
        if d.get("type") != "user" or d.get("isMeta") or d.get("isCompactSummary"):
            continue
        c = (d.get("message") or {}).get("content")
        if isinstance(c, list):
            if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in c):
                continue
            c = " ".join(b.get("text", "") for b in c if isinstance(b, dict) and b.get("type") == "text")
        # "[Request interrupted by user]" marks the turn it interrupts; it opens no turn.
        if not isinstance(c, str) or not c or c.startswith("[Request interrupted") or c.lstrip().startswith("<"):
            continue
        keys.append(c.strip().split("\n")[0][:60])
    return keys
