#!/usr/bin/env python3
"""Check a stripped program's report against its unstripped twin's.

usage: fde_twin.py STRIPPED UNSTRIPPED STRIPPED_FOLDED UNSTRIPPED_FOLDED

The two binaries are one program linked with and without -s: the same code
at the same addresses. Both folded outputs are `report --plain
--no-inline` of a run traced from exec. Every "STRIPPED_BASENAME+0xADDR"
frame must be at the start of a function of the twin (nm: the FDE's start
is the function's), and with each replaced by that function's name, the
set of stacks must be the twin's. The functions without an FDE (crt's
frame_dummy, _init, ...) are "[unknown] (STRIPPED)" in the stripped run:
both sides write them "?" before comparing. Self times are not compared
(the two runs' argv differ, so the time in libc's string functions does).
A function's .cold part ("F.cold"; an FDE of its own) is F's code in the
twin, where its name says so; stripped, nothing does, and it is a frame of
its own that replaces F's like a tail call: named F here, both are F.
"""
import re
import subprocess
import sys


def nm(path):
    out = subprocess.run(["nm", "-C", "--defined-only", path], stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    syms = {}
    for line in out.splitlines():
        f = line.split(" ", 2)
        if len(f) == 3 and f[1] in "tTwW":
            syms.setdefault(int(f[0], 16), f[2])
    return syms


def fde_starts(path):
    out = subprocess.run(["readelf", "--debug-dump=frames", path], stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    return {int(m.group(1), 16) for m in re.finditer(r" FDE cie=\S+ pc=([0-9a-f]+)\.\.", out)}


def stacks(path):
    with open(path) as fh:
        return [line.rstrip("\n").rpartition(" ")[0] for line in fh if line.strip()]


def main(argv):
    stripped, twin, sfold, ufold = argv[1:5]
    base = stripped.rsplit("/", 1)[-1]
    syms, fdes = nm(twin), fde_starts(stripped)
    nofde = {n for a, n in syms.items() if a not in fdes}
    errs, named = [], 0

    def name(m):
        nonlocal named
        a = int(m.group(1), 16)
        if a not in syms:
            errs.append("%s is at no function start of %s" % (m.group(0), twin))
            return m.group(0)
        named += 1
        m = re.match(r"^(.+)\.cold(\.\d+)?$|^(.+) \[clone \.cold(\.\d+)?\]$", syms[a])
        if m and (m.group(1) or m.group(3)) in syms.values():
            return m.group(1) or m.group(3)
        return syms[a]

    def unnamed(f):
        # (a name of the twin's without FDE may be another binary's too:
        # libc's own __do_global_dtors_aux; both sides lose it alike)
        return f in nofde or (f.startswith("[unknown] (") and f.endswith("/%s)" % base))

    s = set()
    for st in stacks(sfold):
        st = re.sub(re.escape(base) + r"\+0x([0-9a-f]+)", name, st)
        s.add(";".join("?" if unnamed(f) else f for f in st.split(";")))
    u = {";".join("?" if unnamed(f) else f for f in st.split(";")) for st in stacks(ufold)}
    for x in sorted(s - u)[:10]:
        errs.append("only in the stripped run: " + x)
    for x in sorted(u - s)[:10]:
        errs.append("only in the twin's run: " + x)
    if not named:
        errs.append("no %s+0x... frame" % base)
    for e in errs:
        print("  " + e)
    print("fde_twin: %d stacks, %d FDE frames named, %d errors" % (len(s), named, len(errs)))
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
