#!/usr/bin/env python3
"""Summarises a server's save timeline (bench/timeline.patch, CAIRN_TIMELINE=<file>).

    python3 bench/timeline/steps.py FILE FIRST LAST

FIRST and LAST pick saves by the order they took the workspace's lock (e.g. 4001 6001:
the timed 16-client updates of the update-and-create run in bench/README.md). Prints the
saves per second over that stretch, what each step under the lock took (median and sum),
what each group commit's flush took, how much of the stretch the lock was held by a save
or a flush, and the search file's catch-ups meanwhile.
"""
import re
import statistics as st
import sys
from collections import defaultdict

SAVE, FLUSH = 1_000_000_000, 2_000_000_000


def main(path, first, last):
    ev = defaultdict(list)
    for line in open(path):
        parts = line.split()
        if len(parts) == 3:
            ev[int(parts[0])].append((parts[1], int(parts[2])))
    saves = sorted((i for i in ev if i < SAVE and any(e == 'lock_acq' for e, _ in ev[i])),
                   key=lambda i: dict(ev[i])['lock_acq'])
    chosen = [i for i in saves[first:last] if 'release' in dict(ev[i])]
    t0 = dict(ev[chosen[0]])['lock_acq']
    t1 = max(dict(ev[i])['release'] for i in chosen)
    window = t1 - t0
    steps, held = defaultdict(list), []
    for i in chosen:
        seq = [(re.sub(r'_\d+$', '', e), t) for e, t in ev[i]]
        marks = dict(seq)
        held.append((marks['lock_acq'], marks['release']))
        for (e1, a), (e2, b) in zip(seq, seq[1:]):
            if e1 not in ('release', 'lock_req'):
                steps[f'{e1} -> {e2}'].append(b - a)
    print(f'{len(chosen)} saves in {window / 1e6:.2f} s: {len(chosen) / (window / 1e6):.0f}/s')
    print(f'  held by a save: median {st.median(b - a for a, b in held) / 1000:.3f} ms, '
          f'{sum(b - a for a, b in held) / 1e6:.2f} s in all')
    for k, v in sorted(steps.items(), key=lambda kv: -sum(kv[1])):
        if sum(v) > 0.01 * window:
            print(f'    {k:42s} median {st.median(v) / 1000:6.3f} ms, {sum(v) / 1e6:5.2f} s in all')
    flush_steps, sizes, spans = defaultdict(list), [], []
    for i in ev:
        if not SAVE <= i < FLUSH:
            continue
        seq = ev[i]
        start = dict(seq).get('flush_start')
        if start is None or not t0 <= start <= t1:
            continue
        sizes += [int(e[7:]) for e, _ in seq if e.startswith('flushed')]
        spans.append((seq[0][1], seq[-1][1]))
        for (e1, a), (e2, b) in zip(seq, seq[1:]):
            flush_steps[f'{e1} -> {re.sub(r"[0-9]+$", "", e2)}'].append(b - a)
    if sizes:
        print(f'  flushes: {len(sizes)}, {st.mean(sizes):.1f} saves each, '
              f'{sum(b - a for a, b in spans) / 1e6:.2f} s in all')
        for k, v in flush_steps.items():
            print(f'    {k:42s} median {st.median(v) / 1000:6.3f} ms, {sum(v) / 1e6:5.2f} s in all')
    busy, cur = 0, None
    for a, b in sorted(held + spans):
        if cur is None or a > cur[1]:
            busy += cur[1] - cur[0] if cur else 0
            cur = [a, b]
        else:
            cur[1] = max(cur[1], b)
    busy += cur[1] - cur[0]
    print(f'  the lock held (by a save or a flush): {busy / window * 100:.0f} % of the stretch')
    fts = [dict(ev[i]) for i in ev if i >= FLUSH]
    fts = [d['fts_end'] - d['fts_start'] for d in fts if 'fts_end' in d and t0 <= d['fts_start'] <= t1]
    if fts:
        print(f'  search file catch-ups: {len(fts)}, {sum(fts) / 1e6:.2f} s in all')


if __name__ == '__main__':
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
