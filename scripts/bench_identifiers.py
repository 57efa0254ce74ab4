#!/usr/bin/env python3
"""Exact identifiers at rank 1, through the real CLI: generated transcripts (4 seeds x 150 turns,
`memctl-gen-transcript`) ingested with the model, every identifier (path:line, path, snake_case,
camelCase, PascalCase, SCREAMING_CASE, error code, ticket, hash) that 1-3 chunks hold asked bare
or in a sentence, `memctl search --queries -k 5`. Prints R@1 / R@5 per kind and the misses.

    python3 scripts/bench_identifiers.py [--bin target/release] [--gen target/debug/memctl-gen-transcript] [--mode hybrid]

The store is ingested once per binary into .cache/bench/identifiers/<binary mtime>; compare two
builds by pointing --bin at each (the tokenizer decides what the index holds, so each build
ingests its own store).
"""
import argparse, collections, json, os, random, re, subprocess, sys
ap = argparse.ArgumentParser()
ap.add_argument('--bin', default='target/release')
ap.add_argument('--gen', default='target/debug/memctl-gen-transcript')
ap.add_argument('--mode', default='hybrid')
args = ap.parse_args()
random.seed(7)
MEMCTL = os.path.abspath(os.path.join(args.bin, 'memctl'))
mode = args.mode
WORK = os.path.abspath(os.path.join('.cache/bench/identifiers', str(int(os.path.getmtime(MEMCTL)))))
if not os.path.exists(os.path.join(WORK, 'chunks.jsonl')):
    os.makedirs(WORK, exist_ok=True)
    files = []
    for s in (1, 2, 3, 4):
        f = os.path.join(WORK, f't{s}.jsonl')
        with open(f, 'wb') as out:
            subprocess.run([args.gen, '--turns', '150', '--seed', str(s)], stdout=out, check=True)
        files.append(f)
    subprocess.run([MEMCTL, 'ingest', '--quiet', '--data-dir', f'{WORK}/data', *files], check=True)
    subprocess.run([MEMCTL, 'export', '-q', '--data-dir', f'{WORK}/data', '--all-projects', '-o', f'{WORK}/chunks.jsonl'], check=True)
CLASSES = {
 'path_line': r'[\w./-]*\w\.\w+:\d+(?::\d+)?',
 'path': r'(?:[\w.-]+/)+[\w.-]+\.[A-Za-z]\w{0,5}',
 'file': r'\b[\w-]+\.(?:rs|ts|tsx|js|py|go|java|kt|toml|json|yaml|yml|md|sql|sh|rb|c|h|cpp)\b',
 'snake': r'\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b',
 'camel': r'\b[a-z]+(?:[A-Z][a-z0-9]+)+\b',
 'pascal': r'\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b',
 'screaming': r'\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b',
 'code': r'\b[A-Z]{1,4}\d{3,5}\b',
 'ticket': r'\b[A-Z][A-Z0-9]+-\d+\b',
 'hash': r'\b[0-9a-f]{7,40}\b',
}
def occurs(hay, needle):
    for m in re.finditer(re.escape(needle), hay):
        b = hay[m.start()-1] if m.start() > 0 else ' '
        a = hay[m.end()] if m.end() < len(hay) else ' '
        if not (b.isalnum() or b == '_') and not (a.isalnum() or a == '_'):
            return True
    return False
chunks = {}
for l in open(f'{WORK}/chunks.jsonl'):
    d = json.loads(l)
    if d.get('kind') == 'chunk':
        chunks[(d['session'], d['turn'], d['part'])] = d
texts = list(chunks.values())
cands = collections.defaultdict(set)
for c in texts:
    for cls, rx in CLASSES.items():
        for m in re.finditer(rx, c['text']):
            s = m.group(0)
            if cls == 'hash' and not (re.search(r'\d', s) and re.search(r'[a-f]', s)): continue
            cands[cls].add(s)
queries = []
for cls, ids in sorted(cands.items()):
    ids = sorted(ids); random.shuffle(ids)
    n = 0
    for s in ids:
        rel = [k for k, c in chunks.items() if occurs(c['text'], s)]
        if not 1 <= len(rel) <= 3: continue
        n += 1
        form = random.choice(['{}', 'what happened with {}?', 'where did we change {} before', 'the error in {} again'])
        queries.append({'qid': f'{cls}-{n}', 'query': form.format(s), 'id': s, 'cls': cls, 'rel': [list(k) for k in rel]})
        if n >= 25: break
with open(f'{WORK}/idq.jsonl', 'w') as f:
    for q in queries: f.write(json.dumps({'qid': q['qid'], 'query': q['query']}) + '\n')
out = subprocess.run([MEMCTL, 'search', '--data-dir', f'{WORK}/data', '--all-projects', '--queries', f'{WORK}/idq.jsonl', '-k', '5', '--mode', mode], capture_output=True, text=True, check=True)
res = {}
for l in out.stdout.splitlines():
    d = json.loads(l); res[d['qid']] = d['results']
per = collections.defaultdict(lambda: [0, 0, 0])
miss = []
for q in queries:
    r = res.get(q['qid'], [])
    got = [[x['session_id'], x.get('turn', None), x['part']] for x in r]
    hit = [occurs(x['text'], q['id']) for x in r]
    p = per[q['cls']]; p[2] += 1
    if hit[:1] == [True]: p[0] += 1
    else: miss.append((q['cls'], q['query'], len(q['rel']), hit))
    if any(hit[:5]): p[1] += 1
tot = [sum(v[i] for v in per.values()) for i in range(3)]
for k, v in sorted(per.items()): print(f'{k:10} R@1 {v[0]}/{v[2]}  R@5 {v[1]}/{v[2]}')
print(f'ALL ({mode}) R@1 {tot[0]}/{tot[2]} = {tot[0]/tot[2]:.3f}  R@5 {tot[1]/tot[2]:.3f}')
for m in miss[:40]: print('MISS', m)
