#!/usr/bin/env python3
"""Wake records of an emulated recording against its truth log.

usage: wakes.py match TRUTH PERF_SCRIPT_OUT [--none|--any]
       wakes.py waits TRUTH [--expect WAKEE<-WAKER:N ...]

match  the file's sched:sched_waking records, as Debian's perf prints them
       (`perf script --ns -F trace:tid,cpu,time,event,trace`), are the
       truth's "wake" lines one to one: waker tid, cpu, time (ns) and wakee
       tid (the payload's pid at offset 24, which perf prints as pid=);
       at least one, or none at all with --none, or any number, none
       too, with --any.
waits  every wake line is written during a wait of its wakee (after the
       wakee's syscall line, before its sysret line: the emulators write
       it when they end that wait; or between its interrupt and iret lines:
       qemu's join of a thread gone on the host, record/qemu.c join_wait);
       at most one wake per wait; the
       wakee's sysret comes one instruction plus half a context switch
       after the wake at the earliest. The wake's time may be before the
       wait began: it is the waker's clock, and two virtual CPUs' clocks
       are not one (the wait then lasts one instruction). --expect: at least N wakes of thread WAKEE by thread
       WAKER, threads named T0, T1, ... in the order the truth first names
       them (T0: the first traced thread, the program's main thread; "*"
       any thread; by order rather than comm, so that one expectation
       holds however a backend learns names).
"""
import re
import sys
from collections import Counter, defaultdict

SWITCH_NS = 1000


def truth_lines(path):
    with open(path) as fh:
        for line in fh:
            f = line.split()
            if len(f) >= 5 and not line.startswith("#"):
                yield int(f[0]), int(f[1]), int(f[2]), int(f[3]), f[4], f[5:]


def truth_wakes(path):
    return [(tid, cpu, t, int(a[0])) for t, cpu, pid, tid, ev, a in truth_lines(path)
            if ev == "wake"]


PERF_RE = re.compile(r"^\s*(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d{9}):\s+sched:sched_waking:"
                     r".*\spid=(\d+)\s")


def cmd_match(truth, perf_out, none, any_count=False):
    want = Counter(truth_wakes(truth))
    got = Counter()
    with open(perf_out) as fh:
        for line in fh:
            if "sched:sched_waking" not in line:
                continue
            m = PERF_RE.match(line)
            if not m:
                print("unparsed perf line: %s" % line.rstrip())
                return 1
            got[(int(m.group(1)), int(m.group(2)),
                 int(m.group(3)) * 10**9 + int(m.group(4)), int(m.group(5)))] += 1
    missing, extra = want - got, got - want
    for k in sorted(missing)[:10]:
        print("  truth wake without record: waker %d cpu %d t %d wakee %d" % k)
    for k in sorted(extra)[:10]:
        print("  record without truth wake: waker %d cpu %d t %d wakee %d" % k)
    print("match: %d truth wakes, %d records, %d missing, %d extra"
          % (sum(want.values()), sum(got.values()), sum(missing.values()),
             sum(extra.values())))
    return 1 if missing or extra or (not any_count and (not want) != none) else 0


def cmd_waits(truth, expects):
    comm = {}
    order = {}
    waits = defaultdict(list)   # tid -> [[t_syscall, t_sysret or None, nwakes, woken at]]
    wakes = []
    errs = []
    for t, cpu, pid, tid, ev, a in truth_lines(truth):
        order.setdefault(tid, "T%d" % len(order))
        if ev == "comm":
            comm[tid] = " ".join(a)
        elif ev in ("syscall", "interrupt"):
            waits[tid].append([t, None, 0, None])
        elif ev in ("sysret", "sigreturn", "iret", "exit", "stop") and waits[tid] and \
                waits[tid][-1][1] is None:
            w = waits[tid][-1]
            w[1] = t
            if w[3] is not None and t < w[3] + 1 + SWITCH_NS // 2:
                errs.append("wait of %d at %d: back at %d, woken at %d" % (tid, w[0], t, w[3]))
        elif ev == "wake":
            waker, wakee = tid, int(a[0])
            wakes.append((t, waker, wakee))
            w = waits[wakee][-1] if waits[wakee] else None
            if w is None or w[1] is not None:
                errs.append("wake of %d by %d at %d: in no wait of %d" % (wakee, waker, t, wakee))
                continue
            w[2] += 1
            w[3] = t
            if w[2] > 1:
                errs.append("wait of %d at %d: %d wakes" % (wakee, w[0], w[2]))
    edges = Counter()
    for t, waker, wakee in wakes:
        edges[(order.get(wakee, "?"), order.get(waker, "?"))] += 1
    for e in expects:
        m = re.fullmatch(r"(.+)<-(.+):(\d+)", e)
        if not m:
            errs.append("bad --expect %r" % e)
            continue
        n = sum(v for (a, b), v in edges.items()
                if m.group(1) in (a, "*") and m.group(2) in (b, "*"))
        if n < int(m.group(3)):
            errs.append("%d wakes of %s by %s, want >= %s (all: %s)"
                        % (n, m.group(1), m.group(2), m.group(3), dict(edges)))
    for e in errs[:20]:
        print("  " + e)
    names = {v: "%s(%s)" % (v, comm.get(k, "?")) for k, v in order.items()}
    print("waits: %d wakes, %d errors; edges %s" % (len(wakes), len(errs),
          ", ".join("%s<-%s:%d" % (names.get(k[0], k[0]), names.get(k[1], k[1]), v)
                    for k, v in sorted(edges.items()))))
    return 1 if errs or not wakes else 0


def main(argv):
    if len(argv) >= 4 and argv[1] == "match":
        return cmd_match(argv[2], argv[3], "--none" in argv, "--any" in argv)
    if len(argv) >= 3 and argv[1] == "waits":
        ex = [argv[i + 1] for i in range(3, len(argv) - 1) if argv[i] == "--expect"]
        return cmd_waits(argv[2], ex)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
