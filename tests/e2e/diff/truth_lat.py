#!/usr/bin/env python3
"""Exact per-call latencies of functions from an emulator truth log.

usage: truth_lat.py TRUTH BINARY FUNC...

Pairs every `call` to FUNC with its `ret` (per thread, a shadow stack of
call targets; a ret pops the frame whose return address it goes to) and
prints, per function, one line:
    FUNC count avg p50 p90 p99 max
with nearest-rank percentiles (the value v such that ceil(p/100 * n)
durations are <= v) in ns. The function addresses come from the binary's
symbol table (nm) and the truth's mmap line for it (a PIE's text mapping).
"""
import math
import os
import subprocess
import sys


def main():
    truth, binary, funcs = sys.argv[1], sys.argv[2], sys.argv[3:]
    syms = {}
    for line in subprocess.run(["nm", binary], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] in funcs:
            syms[parts[2]] = int(parts[0], 16)
    base = None
    stacks = {}
    durs = {f: [] for f in funcs}
    addr2f = {}
    for line in open(truth):
        if line.startswith("#"):
            continue
        f = line.split()
        t, tid, ev = int(f[0]), f[3], f[4]
        if ev == "mmap" and base is None and (
                os.path.realpath(" ".join(f[8:])) == os.path.realpath(binary)):
            start, pgoff = int(f[5], 16), int(f[7], 16)
            base = start - pgoff
            addr2f = {base + v: n for n, v in syms.items()}
        elif ev == "call":
            stacks.setdefault(tid, []).append((int(f[5], 16), int(f[6], 16), t))
        elif ev == "ret":
            to = int(f[6], 16)
            st = stacks.get(tid, [])
            # the frame whose call site this ret returns to (<= 15 bytes on)
            for i in range(len(st) - 1, -1, -1):
                if 0 < to - st[i][0] <= 15:
                    callee, t0 = st[i][1], st[i][2]
                    del st[i:]
                    if callee in addr2f:
                        durs[addr2f[callee]].append(t - t0)
                    break
    for fn in funcs:
        d = sorted(durs[fn])
        if not d:
            print(fn, 0, "-", "-", "-", "-", "-")
            continue
        def pct(p):
            return d[max(1, math.ceil(p / 100 * len(d))) - 1]
        print(fn, len(d), round(sum(d) / len(d)), pct(50), pct(90), pct(99), d[-1])


if __name__ == "__main__":
    main()
