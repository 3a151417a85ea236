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
--tol-ns=N: a tighter time tolerance than the default (one MTC period +
1/8) for traces whose timing packets allow it; with --tol-share=P only
more than P % of the branches beyond it fail.
--walltime: every thread's decoded events span its traced wall time: the
last event is at the truth's last (its exit), the first at its start, or,
when the decoder lost that start (its first event is a LOST), at the
switch-in before it (the decoder cannot know when the lost trace began on
the CPU; its time is [lost] from the switch-in).
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


def load_span(path):
    """Per thread: (first, last) traced time as tests/e2e/report's model
    counts it (a start line to its last line before exit/stop), and the
    times of its switch-ins."""
    span, ins, traced = {}, defaultdict(list), set()
    for line in open(path):
        f = line.split()
        if line.startswith('#') or len(f) < 5 or f[4] in ('comm', 'mmap', 'exec'):
            continue
        t, tid, ev = int(f[0]), int(f[3]), f[4]
        if ev == 'switch-in':
            ins[tid].append(t)
        if ev == 'start':
            traced.add(tid)
            first, last = span.get(tid, (t, t))
            span[tid] = (first, max(last, t))
        elif tid in traced:
            span[tid] = (span[tid][0], max(span[tid][1], t))
            if ev in ('stop', 'exit'):
                traced.discard(tid)
    return span, ins


def check_span(truth, evpath, errors):
    span, ins = load_span(truth)
    got = {}
    for line in open(evpath):
        f = line.split()
        if line.startswith('#') or len(f) < 8:
            continue
        t, tid, kind = int(f[0]), int(f[3]), f[4]
        if tid not in got:
            got[tid] = [t, t, kind]
        got[tid][0] = min(got[tid][0], t)
        got[tid][1] = max(got[tid][1], t)
    for tid, (first, last) in sorted(span.items()):
        if tid not in got:
            continue        # reported as "no event at all"
        gfirst, glast, kind = got[tid]
        want = [first]
        if kind == 'lost':
            want = [max([t for t in ins[tid] if t <= first], default=first)]
        if gfirst not in want or glast != last:
            errors.append('tid %d: events span %d..%d (%s first), truth %d..%d (first %s)'
                          % (tid, gfirst, glast, kind, first, last,
                             '/'.join(str(w) for w in want)))


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
    share = None
    for a in sys.argv[1:]:
        if a.startswith('--tol-ns='):
            tol = int(a.split('=', 1)[1])
        elif a.startswith('--tol-share='):
            share = float(a.split('=', 1)[1])
    late = []
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
                (late if share is not None else errors).append('tid %d: branch %d (%s %#x->%#x): time %d, truth %d (tolerance %d)'
                              % ((tid, i) + g[:3] + (g[3], w[3], tol)))
                if share is None:
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
    if late and 100.0 * len(late) / max(1, len(dts)) > share:
        errors.append('%d of %d branch times beyond %d ns (more than %g %%)'
                      % (len(late), len(dts), tol, share))
        errors.extend(late[:5])
    if '--walltime' in sys.argv:
        check_span(args[0], args[1], errors)
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
