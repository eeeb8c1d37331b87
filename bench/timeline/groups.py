#!/usr/bin/env python3
"""Summarises a server's group and flush steps (bench/groups-trace.patch, CAIRN_TRACE=1).

    python3 bench/timeline/groups.py SERVER_ERR [MIN_GROUP]

SERVER_ERR is the server's stderr (`server.err` in the data directory `cairn-bench
--keep` leaves). Prints how many groups of each size ran, then the median and mean of
each step: for lone saves (groups of one), small groups, and large ones (MIN_GROUP saves
or more, 8 by default: under 16 clients a batch is a lone save and a group of the other
15); and for the flushes of batches holding MIN_GROUP saves or more. A group's rows and
objects are timed from the end of its read (a lone save's from the lock), side by side.
"""
import collections
import statistics as st
import sys


def main(path, big):
    events = []
    for line in open(path):
        if not line.startswith('TR '):
            continue
        parts = line.split()
        kv = dict(x.split('=', 1) for x in parts[3:] if '=' in x)
        events.append((int(parts[1]), parts[2], kv))
    sizes = collections.Counter()
    steps = collections.defaultdict(list)
    group = flush = None
    for t, name, kv in events:
        if name == 'group_start':
            n = int(kv['n'])
            sizes[n] += 1
            group = {'n': n, 'start': t}
        elif group and name == 'group_read':
            group['read'] = t
        elif group and name == 'rows_done':
            group['rows'] = t
        elif group and name == 'objects_done':
            group['objects'] = t
        elif group and name in ('group_written', 'lone_written'):
            n = group['n']
            kind = 'large group' if n >= big else ('lone save' if n == 1 else 'small group')
            base = group.get('read', group['start'])
            if 'read' in group:
                steps[f'{kind}: lock to read'].append(group['read'] - group['start'])
            if 'rows' in group:
                steps[f'{kind}: rows'].append(group['rows'] - base)
            if 'objects' in group:
                steps[f'{kind}: objects'].append(group['objects'] - base)
            steps[f'{kind}: lock to written'].append(t - group['start'])
            group = None
        elif name == 'flush_start':
            flush = {'start': t} if int(kv['saves']) >= big else None
        elif flush and name == 'flush_synced':
            flush['synced'] = t
        elif flush and name == 'flush_committed':
            if 'synced' in flush:
                steps['flush: barrier and branch move'].append(flush['synced'] - flush['start'])
                steps['flush: database commit'].append(t - flush['synced'])
            steps['flush: in all'].append(t - flush['start'])
            flush = None
    print('groups by size:', ', '.join(f'{n}: {c}' for n, c in sorted(sizes.items())))
    for name, times in steps.items():
        print(f'{name:40s} n={len(times):6d}  median {st.median(times) / 1000:7.2f} ms'
              f'  mean {st.mean(times) / 1000:7.2f} ms')


if __name__ == '__main__':
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 8)
