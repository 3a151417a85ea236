#!/usr/bin/env python3
"""idle_ready.py TRUTH [MAX_PCT]: the truth log of a `record --emulate`
(tests/TRUTH.md) against the scheduler's rule that no thread waits ready
while a virtual CPU idles (record/emu_sched.c: wake-up and idle
balancing), within the context switch (RC_EMU_SWITCH_NS).

A thread is ready from a `switch-out preempt`, from a `wake` of it (one
instruction after), or from its `clone`/`fork`, until its next `switch-in`
(half a switch before its trace resumes). A CPU is busy from half a switch
before a `switch-in` to half a switch after the `switch-out` that ends it,
else idle. Prints each overlap of a ready wait with an idle CPU longer
than a switch (the first 10) and one summary line: the overlaps' total and
its share of the log's time span. Exit 1 when that share is over MAX_PCT
(default 5), 2 on a malformed log."""
import sys

SWITCH = 1000


def main():
    path = sys.argv[1]
    max_pct = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
    npi, ncpu, ev = 1, 1, []
    for ln in open(path):
        if ln.startswith('#'):
            for f in ln.split():
                if f.startswith('ns_per_insn='):
                    npi = int(f.split('=')[1])
                elif f.startswith('cpus='):
                    ncpu = int(f.split('=')[1])
            continue
        p = ln.split()
        if len(p) < 5:
            continue
        ev.append((int(p[0]), int(p[1]), int(p[3]), p[4], p[5:]))
    if not ev:
        print(f'{path}: no events')
        return 2
    ev = [e for _, e in sorted(enumerate(ev), key=lambda x: (x[1][0], x[0]))]
    first, last = ev[0][0], ev[-1][0]
    cpu_in, busy = {}, {c: [] for c in range(ncpu)}
    ready_since, ready, running = {}, [], set()
    for t, c, tid, e, a in ev:
        if e == 'switch-in':
            cpu_in[c] = t
            if tid in ready_since:
                ready.append((tid, ready_since.pop(tid), t))
            running.add(tid)
        elif e == 'switch-out':
            if c in cpu_in:
                busy.setdefault(c, []).append((cpu_in.pop(c) - SWITCH // 2, t + SWITCH // 2))
            running.discard(tid)
            if a and a[0] == 'preempt':
                ready_since[tid] = t
        elif e == 'wake':
            w = int(a[0])
            if w not in running:
                ready_since.setdefault(w, t + npi)
        elif e in ('clone', 'fork'):
            ready_since.setdefault(tid, t)
        elif e in ('exit', 'stop'):
            ready_since.pop(tid, None)
    for c, s in cpu_in.items():
        busy.setdefault(c, []).append((s - SWITCH // 2, last + SWITCH))
    bad, total = 0, 0
    for tid, s, e in ready:
        for c in range(ncpu):
            cur = s
            for bs, be in sorted(busy.get(c, [])):
                if be <= cur:
                    continue
                if bs >= e:
                    break
                if bs - cur > SWITCH:
                    bad += 1
                    total += bs - cur
                    if bad <= 10:
                        print(f'tid {tid} ready {s}..{e} while cpu {c} idle {cur}..{bs} ({bs - cur} ns)')
                cur = max(cur, be)
            if e - cur > SWITCH:
                bad += 1
                total += e - cur
                if bad <= 10:
                    print(f'tid {tid} ready {s}..{e} while cpu {c} idle {cur}..{e} ({e - cur} ns)')
    span = max(last - first, 1)
    pct = 100.0 * total / span
    print(f'{path}: {len(ready)} ready waits, {bad} beside an idle CPU, {total} ns of '
          f'{span} ({pct:.2f}%)')
    return 1 if pct > max_pct else 0


if __name__ == '__main__':
    sys.exit(main())
