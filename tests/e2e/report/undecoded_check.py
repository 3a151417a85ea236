#!/usr/bin/env python3
"""A report of a recording whose library LIB could not be decoded (replaced
or deleted after recording) against the recording's truth log.

usage: undecoded_check.py TRUTH FOLDED LIB

Run with the original library back at LIB: truth_profile.py's model (nm
over each mapped file) then names its functions. In the report all of its
code is one frame, "[unknown] (LIB)", so in the truth's call paths each run
of its functions becomes that one frame. Checks:

  stacks  every stack of FOLDED, pseudo-frames ([lost], [kernel], ...)
          removed, is a contiguous sub-path of such a truth call path: no
          code is shown under a frame that was not its caller;
  times   no function gets more self time (the lines it is the leaf of)
          than the truth gives it in all its contexts, nor "[unknown]
          (LIB)" more than the truth's time in LIB's code (slack 1 % +
          100 ns): time the decoder cannot place is [lost], not a frame's.

Prints "wrong frames: N ns" (the self time above the truth's, summed) and
the total of [lost]; exits 1 on any error.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import truth_profile as tp  # noqa: E402

U = ("undecoded",)


def main(argv):
    truth, folded, lib = argv[1], argv[2], argv[3]
    unk = "[unknown] (%s)" % lib
    m = tp.load(truth)

    def tok(key):
        return U if isinstance(key, tuple) and key and key[0] == lib else key

    paths = set()
    for th in m.threads.values():
        for p in th.paths:
            q = []
            for k in p:
                t = tok(k)
                if not (t == U and q and q[-1] == U):
                    q.append(t)
            paths.add(tuple(q))
    keynames = {k: set(v) for k, v in tp.KEYNAMES.items()}
    for k, v in tp.ALIASNAMES.items():
        keynames.setdefault(k, set()).update(v)
    self_ns = {}        # token -> truth self time
    for th in m.threads.values():
        def visit(n):
            for k in n.kids.values():
                keynames.setdefault(k.key, set()).update(k.names)
                t = tok(k.key)
                self_ns[t] = self_ns.get(t, 0) + k.self_ns
                visit(k)
        for seg in th.segs:
            visit(seg)

    def match(name, t):
        if name == unk:
            return t == U
        return t != U and tp.names_match(name, keynames.get(t, ()))

    def real(name):
        return not name.startswith("[") or name == unk

    errs = 0
    got = {}            # leaf name -> report self time
    lost = 0
    for ln, frames, val, line in tp.parse_folded(folded):
        names = [tp.split_frame(f)[0] for f in frames]
        if names and names[-1] == "[lost]":
            lost += val
        kept = [n for n in names if real(n)]
        if not kept:
            continue
        if real(names[-1]):
            got[names[-1]] = got.get(names[-1], 0) + val
        if not any(all(match(kept[j], p[s + j]) for j in range(len(kept)))
                   for p in paths for s in range(len(p) - len(kept) + 1)):
            errs += 1
            print("  line %d: call path the program never had: %s" % (ln, line[:300]))
    wrong = 0
    for name, ns in sorted(got.items()):
        want = sum(v for t, v in self_ns.items() if match(name, t))
        if ns > want * 1.01 + 100:
            errs += 1
            wrong += ns - want
            print("  %s: %d ns of self time, the truth's %d" % (name, ns, want))
    print("undecoded: %d errors; wrong frames: %d ns; [lost] %d ns; truth in %s: %d ns"
          % (errs, wrong, lost, unk, self_ns.get(U, 0)))
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
