#!/usr/bin/env python3
"""Compare ptflame's output on kgen's recording with what kgen computed
from its own walk (tests/e2e/kernel/kgen.c).

  folded EXPECTED FOLDED   the stacks (report --plain) are exactly the
                           expected ones, each with exactly its self time
  calls EXPECTED TABLE     every expected function has its call count in
                           report --table --raw (its Calls column)
  total EXPECTED FOLDED    the stacks sum to the expected total; prints it
"""
import sys


def stacks(path):
    out = {}
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            if not line or line.startswith('calls '):
                continue
            stack, ns = line.rsplit(' ', 1)
            out[stack] = out.get(stack, 0) + int(ns)
    return out


def expected_calls(path):
    with open(path) as f:
        return {p[1]: int(p[2]) for p in (l.split() for l in f) if p[0] == 'calls'}


def main():
    mode, exp, got = sys.argv[1:4]
    if mode == 'folded':
        want, have = stacks(exp), stacks(got)
        bad = [f'{s}: want {want.get(s)}, got {have.get(s)}'
               for s in sorted(set(want) | set(have)) if want.get(s) != have.get(s)]
        if bad:
            print('\n'.join(bad))
            return 1
        return 0
    if mode == 'calls':
        table = {}
        with open(got) as f:
            for line in f:
                p = line.split()
                if len(p) >= 10 and p[0].isdigit():
                    table[p[-1]] = int(p[0])
        bad = [f'{n}: want {c} calls, got {table.get(n)}'
               for n, c in expected_calls(exp).items() if table.get(n) != c]
        if bad:
            print('\n'.join(bad))
            return 1
        return 0
    if mode == 'total':
        want, have = sum(stacks(exp).values()), sum(stacks(got).values())
        print(have)
        return 0 if want == have else 1
    return 2


sys.exit(main())
