#!/usr/bin/env python3
"""Checks a `ptflame report --timeline` JSON file.

usage: timeline_check.py check JSON [--min-ns N]
       timeline_check.py truth TRUTH JSON [--tids LIST] [--min-ns N]
                         [--time START_NS,END_NS] [--root FUNC]

check   the file parses as JSON (Chrome trace-event format: an object with
        "traceEvents"), every "X" event has name, cat, pid, tid and ts/dur
        in microseconds with at most 3 decimals, every thread with events
        is named by a "thread_name" and its process by a "process_name"
        metadata event, and each thread's events nest: sorted by start
        (longer first on a tie), every event lies within the enclosing one
        it starts in. With --min-ns no call is shorter than N ns.
        Prints "N events, T threads".
truth   against the emulator's truth log (truth_profile.py's model: every
        call, return, syscall, switch): per thread, the calls in the order
        they ended must be the model's, each with a name the function has,
        start and duration within 0.1 % of the call's duration, and the
        "inferred" mark exactly where the model saw no whole call.
        Prints the number of calls compared and the largest error. The
        options apply report's filters to the model the way report says
        they apply: only those threads; no call shorter than N ns; calls
        overlapping [START, END) cut to it (inferred when cut or ending at
        END); only FUNC's calls and those under one.
Times are read as exact decimals (ns), never through floats.
"""
import decimal
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth_profile as tp  # noqa: E402


def ns(v):
    d = decimal.Decimal(str(v)) * 1000
    if d != d.to_integral_value():
        raise SystemExit("timeline: %s us is no whole number of ns" % v)
    return int(d)


def load(path):
    with open(path) as fh:
        doc = json.load(fh, parse_float=decimal.Decimal)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise SystemExit("timeline: no traceEvents array")
    names, procs, by_tid = {}, {}, {}
    for e in doc["traceEvents"]:
        ph = e.get("ph")
        if ph == "M":
            if e.get("name") == "thread_name":
                names[(e["pid"], e["tid"])] = e["args"]["name"]
            elif e.get("name") == "process_name":
                procs[e["pid"]] = e["args"]["name"]
            continue
        if ph != "X":
            raise SystemExit("timeline: event of phase %r: %s" % (ph, e))
        for k in ("name", "cat", "pid", "tid", "ts", "dur"):
            if k not in e:
                raise SystemExit("timeline: event without %s: %s" % (k, e))
        t0, d = ns(e["ts"]), ns(e["dur"])
        if d < 0:
            raise SystemExit("timeline: negative duration: %s" % e)
        inferred = bool(e.get("args", {}).get("inferred"))
        by_tid.setdefault((e["pid"], e["tid"]), []).append(
            (e["name"], e["cat"], t0, t0 + d, inferred))
    return names, procs, by_tid


def check_nesting(key, evs):
    order = sorted(evs, key=lambda x: (x[2], -(x[3] - x[2])))
    stack = []
    for e in order:
        while stack and stack[-1][3] <= e[2] and not (stack[-1][3] == e[2] == e[3]
                                                      and stack[-1][2] == e[2]):
            stack.pop()
        if stack and e[3] > stack[-1][3]:
            raise SystemExit("timeline: tid %s: %s [%d,%d] overlaps %s [%d,%d] without nesting"
                             % (key[1], e[0], e[2], e[3], stack[-1][0], stack[-1][2],
                                stack[-1][3]))
        stack.append(e)


def cmd_check(path, min_ns):
    names, procs, by_tid = load(path)
    n = 0
    for key, evs in by_tid.items():
        if key not in names:
            raise SystemExit("timeline: tid %s has no thread_name" % key[1])
        if key[0] not in procs:
            raise SystemExit("timeline: pid %s has no process_name" % key[0])
        check_nesting(key, evs)
        for e in evs:
            if min_ns is not None and e[3] - e[2] < min_ns:
                raise SystemExit("timeline: %s lasts %d ns, under --min-ns %d"
                                 % (e[0], e[3] - e[2], min_ns))
        n += len(evs)
    print("%d events, %d threads" % (n, len(by_tid)))
    return 0


def pseudo_name(p):
    return {"kernel": "[kernel]", "irq": "[kernel]", "offcpu": "[off-cpu]",
            "preempt": "[preempted]"}[p]


def filtered(calls, min_ns, window, root):
    out = []
    for names, pseudo, t0, t1, complete, below in calls:
        if window:
            lo, hi = window
            if t0 >= hi or (t1 <= lo and not (t0 == t1 == lo)):
                continue
            if t0 < lo or t1 >= hi:
                complete = False
            t0, t1 = max(t0, lo), min(t1, hi)
        if root:
            path = below + ((names,) if pseudo is None else ())
            if not any(n == root or n.split("(")[0] == root for ns_ in path for n in ns_):
                continue
        if min_ns and t1 - t0 < min_ns:
            continue
        out.append((names, pseudo, t0, t1, complete))
    return out


def cmd_truth(truth, path, tids=None, min_ns=0, window=None, root=None):
    m = tp.load(truth)
    _, _, by_tid = load(path)
    got = {}
    for (pid, tid), evs in by_tid.items():
        got.setdefault(tid, []).extend(evs)
    n, worst = 0, 0.0
    for th in m.threads.values():
        if tids is not None and th.tid not in tids:
            continue
        want = filtered(th.calls, min_ns, window, root)
        # inline frames (DWARF) are no calls of the truth's: their nesting
        # is checked by "check"; here only the calls the truth knows
        have = [e for e in got.pop(th.tid, []) if not e[0].endswith(" (inlined)")]
        if len(want) != len(have):
            raise SystemExit("timeline: tid %d: %d calls, the truth has %d"
                             % (th.tid, len(have), len(want)))
        for i, (w, h) in enumerate(zip(want, have)):
            names, pseudo, t0, t1, complete = w
            if pseudo is not None:
                ok = tp.norm(h[0]) == pseudo_name(pseudo)
            else:
                ok = tp.names_match(h[0], names)
            where = "tid %d, call %d (%s [%d,%d])" % (th.tid, i, h[0], h[2], h[3])
            if not ok:
                raise SystemExit("timeline: %s: the truth has %s [%d,%d]" % (
                    where, pseudo_name(pseudo) if pseudo else "/".join(sorted(names)),
                    t0, t1))
            dur = t1 - t0
            tol = dur / 1000.0
            err = max(abs(h[2] - t0), abs((h[3] - h[2]) - dur))
            if err > tol:
                raise SystemExit("timeline: %s: start/duration off by %d ns; the truth has "
                                 "[%d,%d]" % (where, err, t0, t1))
            if dur:
                worst = max(worst, err / dur)
            if h[4] == complete:
                raise SystemExit("timeline: %s: %s, the truth says %s" % (
                    where, "inferred" if h[4] else "complete",
                    "complete" if complete else "inferred"))
            n += 1
    if got:
        raise SystemExit("timeline: threads the truth does not have: %s" % sorted(got))
    print("%d calls equal to the truth, max error %.4f %%" % (n, 100 * worst))
    return 0


def main(argv):
    if len(argv) >= 3 and argv[1] == "check":
        min_ns = None
        if "--min-ns" in argv:
            min_ns = int(argv[argv.index("--min-ns") + 1])
        return cmd_check(argv[2], min_ns)
    if len(argv) >= 4 and argv[1] == "truth":
        opt = {}
        for i, a in enumerate(argv):
            if a == "--tids":
                opt["tids"] = {int(x) for x in argv[i + 1].split(",")}
            elif a == "--min-ns":
                opt["min_ns"] = int(argv[i + 1])
            elif a == "--time":
                opt["window"] = tuple(int(x) for x in argv[i + 1].split(","))
            elif a == "--root":
                opt["root"] = argv[i + 1]
        return cmd_truth(argv[2], argv[3], **opt)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
