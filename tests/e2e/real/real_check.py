#!/usr/bin/env python3
"""Checks of ptflame's output on real perf script text, computed from the
text itself (no expected output taken from ptflame).

  spans TRACE FOLDED   every thread's stacks (report --per-thread --plain)
                       sum to its span: first to last sample line of its tid
  stack FOLDED STACK   STACK (a regex over a whole folded line without its
                       value) occurs in FOLDED; prints the lines' sum
  nostack FOLDED RE    no folded line matches RE
"""
import re
import sys
from collections import defaultdict

LINE = re.compile(r'^\s*(?:\S.*?\s+)?(?:(\d+)/)?(\d+)\s+(?:\[\d+\]\s+)?(\d+)\.(\d{9}|\d{6}):')


def spans(path):
    first, last = {}, {}
    with open(path, errors='replace') as f:
        for line in f:
            m = LINE.match(line)
            if not m or 'instruction trace error' in line:
                continue
            tid = int(m.group(2))
            frac = m.group(4)
            ns = int(m.group(3)) * 10**9 + int(frac) * (1000 if len(frac) == 6 else 1)
            first.setdefault(tid, ns)
            last[tid] = ns
    return {t: last[t] - first[t] for t in first}


def folded(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            if not line:
                continue
            stack, _, val = line.rpartition(' ')
            out.append((stack, int(val)))
    return out


def main():
    cmd = sys.argv[1]
    if cmd == 'spans':
        want = spans(sys.argv[2])
        got = defaultdict(int)
        for stack, v in folded(sys.argv[3]):
            root = stack.split(';')[0]
            got[int(root.rsplit('-', 1)[1])] += v
        bad = 0
        for tid, span in sorted(want.items()):
            g = got.get(tid, 0)
            print(f'tid {tid}: span {span} ns, stacks {g} ns')
            if g != span:
                bad = 1
        for tid in got:
            if tid not in want:
                print(f'tid {tid}: in the report, not in the trace')
                bad = 1
        sys.exit(bad)
    if cmd in ('stack', 'nostack'):
        rx = re.compile(sys.argv[3])
        hits = [(s, v) for s, v in folded(sys.argv[2]) if rx.fullmatch(s)]
        if cmd == 'stack':
            print(sum(v for _, v in hits))
            sys.exit(0 if hits else 1)
        for s, v in hits:
            print(f'{s} {v}')
        sys.exit(1 if hits else 0)
    sys.exit(f'unknown command {cmd}')


main()
