#!/usr/bin/env python3
"""Compare decoder/'s branch events (dc_events output) with the emulator's
truth log (tests/TRUTH.md), per thread.

exact (default): the call/ret/jump sequence of every thread equals the
truth's exactly, each event's time is within the tolerance (one MTC period,
from the events' stats line), TRACE_OFF(SYSCALL) and switch-outs (block /
preempt) match the truth's counts.
--lossy: data was lost on purpose: every decoded call/ret/jump sequence is
a subsequence of the truth's (nothing invented), most of the truth is
there (any part of it with --few), every thread has events, and LOST
events were reported.
"""
import sys
from collections import defaultdict

OFF = {1: 'syscall', 2: 'fault', 3: 'block', 4: 'preempt', 5: 'end'}


def load_truth(path):
    br, sysc, sw = defaultdict(list), defaultdict(list), defaultdict(lambda: defaultdict(int))
    for line in open(path):
        if line.startswith('#'):
            continue
        f = line.split()
        if len(f) < 5:
            continue
        t, tid, ev = int(f[0]), int(f[3]), f[4]
        if ev in ('call', 'ret', 'jump'):
            br[tid].append((ev, int(f[5], 16), int(f[6], 16), t))
        elif ev == 'syscall':
            sysc[tid].append(int(f[5]))
        elif ev == 'switch-out':
            sw[tid][f[5]] += 1
    return br, sysc, sw


def load_events(path):
    br, off, lost, stats = defaultdict(list), defaultdict(lambda: defaultdict(int)), 0, {}
    nrs = defaultdict(list)
    seen = set()
    for line in open(path):
        f = line.split()
        if line.startswith('# stats'):
            stats.update({f[i]: int(f[i + 1]) for i in range(2, len(f) - 1, 2)
                          if f[i + 1].isdigit()})
            continue
        if line.startswith('#') or len(f) < 8:
            continue
        t, tid, kind, reason = int(f[0]), int(f[3]), f[4], int(f[5])
        seen.add(tid)
        if kind in ('call', 'ret', 'jump'):
            br[tid].append((kind, int(f[6], 16), int(f[7], 16), t))
        elif kind == 'off':
            off[tid][OFF.get(reason, '?')] += 1
            if reason == 1:
                nrs[tid].append(int(f[10]) if len(f) > 10 else -1)
        elif kind == 'lost':
            lost += 1
    stats['seen'] = seen
    return br, off, lost, stats, nrs


def main():
    lossy = '--lossy' in sys.argv
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    tbr, tsys, tsw = load_truth(args[0])
    dbr, doff, lost, stats, dnrs = load_events(args[1])
    known = 0
    # a branch without a packet of its own (direct call, compressed return)
    # carries the time of the last timing packet: up to one MTC period
    # early, plus a little for the MTC-to-TSC estimate (as for perf)
    mtc = stats.get('mtc_period_ns', 0) or 1000
    tol = mtc + mtc // 8
    errors = []
    dts = []
    ntruth = sum(len(v) for v in tbr.values())
    ndec = sum(len(v) for v in dbr.values())
    for tid in sorted(set(tbr) | set(dbr)):
        want, got = tbr.get(tid, []), dbr.get(tid, [])
        if lossy:
            i = 0
            for g in got:
                while i < len(want) and want[i][:3] != g[:3]:
                    i += 1
                if i == len(want):
                    errors.append('tid %d: decoded %s %#x->%#x is not in the truth (in order)'
                                  % ((tid,) + g[:3]))
                    break
                i += 1
            continue
        if len(want) != len(got):
            errors.append('tid %d: %d branches decoded, truth has %d' % (tid, len(got), len(want)))
        for i, (w, g) in enumerate(zip(want, got)):
            if w[:3] != g[:3]:
                errors.append('tid %d: branch %d: decoded %s %#x->%#x, truth %s %#x->%#x'
                              % ((tid, i) + g[:3] + w[:3]))
                break
            dts.append(abs(w[3] - g[3]))
            if abs(w[3] - g[3]) > tol:
                errors.append('tid %d: branch %d (%s %#x->%#x): time %d, truth %d (tolerance %d)'
                              % ((tid, i) + g[:3] + (g[3], w[3], tol)))
                break
        if doff[tid]['syscall'] != len(tsys.get(tid, [])):
            errors.append('tid %d: %d TRACE_OFF(SYSCALL), truth has %d syscalls'
                          % (tid, doff[tid]['syscall'], len(tsys.get(tid, []))))
        # syscall numbers read from the code (mov $NR,%eax; syscall) must
        # be the ones the program made
        for i, (w, g) in enumerate(zip(tsys.get(tid, []), dnrs.get(tid, []))):
            if g >= 0:
                known += 1
                if g != w:
                    errors.append('tid %d: syscall %d decoded as %d, truth %d' % (tid, i, g, w))
                    break
        for k in ('block', 'preempt'):
            if doff[tid][k] != tsw[tid][k]:
                errors.append('tid %d: %d switch-outs (%s) decoded, truth %d'
                              % (tid, doff[tid][k], k, tsw[tid][k]))
    if lossy:
        # a thread whose trace was all lost still has events (LOST)
        for tid in tbr:
            if tid not in stats['seen']:
                errors.append('tid %d: no event at all' % tid)
        if not lost:
            errors.append('no LOST event although data was lost')
        if ndec * 2 < ntruth and '--few' not in sys.argv:
            errors.append('only %d of %d branches decoded' % (ndec, ntruth))
    if not ntruth:
        errors.append('the truth log has no branches')
    for e in errors[:10]:
        print('truthcmp: ' + e, file=sys.stderr)
    dt = ' (time error max %d, mean %.1f ns)' % (max(dts), sum(dts) / len(dts)) if dts else ''
    if not lossy:
        dt += ', %d of %d syscall numbers known' % (known, sum(len(v) for v in tsys.values()))
    print('truthcmp: %d threads, %d truth branches, %d decoded, %d lost, tolerance %d ns%s: %s'
          % (len(tbr), ntruth, ndec, lost, tol, dt, 'FAIL' if errors else 'ok'))
    return 1 if errors else 0


sys.exit(main())
