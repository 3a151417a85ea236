#!/usr/bin/env python3
"""Checks `ptflame report --slowest N FUNC --raw` against the truth log.

usage: slowest_check.py TRUTH REPORT N FUNC K

From truth_profile.py's model of the truth log alone: the complete calls of
FUNC, slowest first (ties: earlier first). The report must list the first
min(N, count) of them: each one's thread, start and end (as --time takes
them) and duration within 0.1 %, and its subtree: the calls inside it
grouped by path below it, each path with the truth's call count and total
time (0.1 %) and first start offset. K: the index (0-based, in time order)
of the call made slow on purpose, which must be #1 (-1: none).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth_profile as tp  # noqa: E402

HEAD = re.compile(r"^#(\d+) (\S+) (\d+), tid (\d+) \(.*\), at (\d+)\.(\d{9}),(\d+)\.(\d{9})$")
LINE = re.compile(r"^   \+(\d+)\s+(\d+)\s+(\d+)  ( *)(\S.*)$")


def name_of(names, pseudo):
    if pseudo is not None:
        return {"kernel": "[kernel]", "irq": "[kernel]", "offcpu": "[off-cpu]",
                "preempt": "[preempted]"}[pseudo]
    return names


def truth_calls(m, func):
    out = []
    for th in m.threads.values():
        for i, (names, pseudo, t0, t1, complete, below) in enumerate(th.calls):
            if pseudo is None and complete and any(n == func or n.split("(")[0] == func
                                                   for n in names):
                out.append((th, i, t0, t1, len(below)))
    return out


def subtree(th, i, t0, t1, depth):
    """path (tuple of name sets / pseudo names) -> [calls, total, first]"""
    groups = {}
    for names, pseudo, s, e, complete, below in th.calls[:i]:
        if s < t0 or e > t1 or len(below) <= depth:
            continue
        path = tuple(frozenset(b) for b in below[depth + 1:]) + (
            name_of(names, pseudo) if pseudo is not None else frozenset(names),)
        g = groups.setdefault(path, [0, 0, s])
        g[0] += 1
        g[1] += e - s
        g[2] = min(g[2], s)
    return groups


def match(name, want):
    if isinstance(want, str):
        return tp.norm(name) == want
    return tp.names_match(name, want)


def close(a, b):
    return abs(a - b) <= max(b, 1) / 1000.0


def main(argv):
    truth, report, n, func, k = argv[1], argv[2], int(argv[3]), argv[4], int(argv[5])
    m = tp.load(truth)
    calls = truth_calls(m, func)
    by_time = sorted(calls, key=lambda c: c[2])
    want = sorted(calls, key=lambda c: (-(c[3] - c[2]), c[2]))[:n]
    with open(report) as fh:
        lines = fh.read().split("\n")
    blocks, cur = [], None
    for ln in lines:
        h = HEAD.match(ln)
        if h:
            cur = {"head": h, "lines": []}
            blocks.append(cur)
        elif cur is not None and LINE.match(ln):
            cur["lines"].append(LINE.match(ln))
    if len(blocks) != len(want):
        raise SystemExit("slowest: %d calls listed, the truth has %d" % (len(blocks), len(want)))
    if k >= 0 and (not want or want[0][2] != by_time[k][2]):
        raise SystemExit("slowest: the slowest call is not call %d of %s" % (k, func))
    for r, (b, w) in enumerate(zip(blocks, want)):
        th, i, t0, t1, depth = w
        h = b["head"]
        start = int(h.group(5)) * 10**9 + int(h.group(6))
        end = int(h.group(7)) * 10**9 + int(h.group(8))
        where = "#%d" % (r + 1)
        if int(h.group(4)) != th.tid:
            raise SystemExit("slowest: %s: tid %s, the truth's %d" % (where, h.group(4), th.tid))
        if not (close(start, t0) or abs(start - t0) <= (t1 - t0) / 1000.0) or \
                abs((end - start) - (t1 - t0)) > (t1 - t0) / 1000.0 or \
                int(h.group(3)) != end - start:
            raise SystemExit("slowest: %s: [%d,%d], the truth's [%d,%d]" % (where, start, end, t0, t1))
        # the subtree: lines after the first (the call itself) by path
        groups = subtree(th, i, t0, t1, depth)
        path = []
        first = b["lines"][0]
        if int(first.group(3)) != 1 or not match(first.group(5), frozenset(th.calls[i][0])):
            raise SystemExit("slowest: %s: first line %r is not the call" % (where, first.group(0)))
        # inline frames ("NAME (inlined)", from DWARF) are no calls of the
        # truth's: their lines are left out and what is under them counts
        # for the path without them (one truth path may so be several lines)
        got = {}
        for ln in b["lines"][1:]:
            lvl = len(ln.group(4)) // 2
            path = path[:lvl - 1] + [ln.group(5)]
            if ln.group(5).endswith(" (inlined)"):
                continue
            tpath = tuple(x for x in path if not x.endswith(" (inlined)"))
            g = got.setdefault(tpath, [0, 0, None])
            g[0] += int(ln.group(3))
            g[1] += int(ln.group(2))
            off = int(ln.group(1))
            g[2] = off if g[2] is None else min(g[2], off)
        for tpath, (ncalls, total, off) in got.items():
            cand = [p for p in groups if len(p) == len(tpath) and
                    all(match(a, w_) for a, w_ in zip(tpath, p))]
            if not cand:
                raise SystemExit("slowest: %s: %s is no path inside the truth's call" % (
                    where, ";".join(tpath)))
            g = groups[cand[0]]
            if ncalls != g[0] or abs(total - g[1]) > g[1] / 1000.0 or \
                    abs(off - (g[2] - t0)) > (t1 - t0) / 1000.0:
                raise SystemExit("slowest: %s: %s: %d calls, %d ns, at +%d; the truth: %d, %d, +%d"
                                 % (where, ";".join(tpath), ncalls, total, off, g[0], g[1],
                                    g[2] - t0))
        if len(got) != len(groups):
            raise SystemExit("slowest: %s: %d paths inside, the truth has %d" % (
                where, len(got), len(groups)))
    print("%d slowest of %d calls of %s equal to the truth%s" % (
        len(want), len(calls), func, ", #1 is call %d" % k if k >= 0 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
