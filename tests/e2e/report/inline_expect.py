#!/usr/bin/env python3
"""The expected inline frames of one function of an emulated recording,
from sources that share no code with ptflame.

usage: inline_expect.py check BIN FUNC NS_PER_INSN INSNS TRUTH FOLDED

BIN          the traced program (with DWARF)
FUNC         the function whose inline frames are checked (e.g. main)
INSNS        `perf script --itrace=i1i -F ip,sym,symoff` of the recording:
             perf's own decoder, every instruction executed, in order
TRUTH        the emulator's truth log (tests/TRUTH.md): every call
FOLDED       `ptflame report` output (annotated folded)

binutils' addr2line -i (its own DWARF reader) gives each address of FUNC
its chain of inlined functions. The instructions FUNC's own frame executed
(perf's samples in FUNC, in order) each take NS_PER_INSN ns of its inline
context, the emulator's clock: that is each inline frame's self time. An
inline frame is entered when the instruction before in FUNC's frame was
not in it (a call from FUNC and its return do not leave it). The calls
made from inlined code come from the truth log's call lines, placed by
their call instruction's address. Checked against every report line whose
stack runs through FUNC: frames below FUNC, names and call counts, and self
times exactly.
"""
import re
import subprocess
import sys

ANNOT = re.compile(r"^(.*):([0-9]+)(\(inferred\)|,avg:[0-9]+)$")


def split_frame(fr):
    m = ANNOT.match(fr)
    return (m.group(1), int(m.group(2))) if m else (fr, None)


def sym_addr(binary, func):
    out = subprocess.run(["nm", binary], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[2] == func and f[1] in "tT":
            return int(f[0], 16)
    sys.exit("no symbol %s in %s" % (func, binary))


def chains(binary, addrs):
    """vaddr -> tuple of inlined function names, outermost first."""
    out = subprocess.run(["addr2line", "-a", "-i", "-f", "-e", binary] +
                         ["0x%x" % a for a in addrs],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    res, cur, names = {}, None, []
    i = 0
    while i < len(out):
        if out[i].startswith("0x"):
            if cur is not None:
                res[cur] = names
            cur, names = int(out[i], 16), []
            i += 1
            continue
        names.append(out[i])       # function, then its file:line
        i += 2
    if cur is not None:
        res[cur] = names
    # innermost first, the out-of-line function last: keep the inlined ones
    return {a: tuple(reversed(n[:-1])) for a, n in res.items()}


def main():
    if len(sys.argv) != 8 or sys.argv[1] != "check":
        sys.exit(__doc__)
    binary, func, ns = sys.argv[2], sys.argv[3], int(sys.argv[4])
    insns_path, truth_path, folded_path = sys.argv[5:8]
    start = sym_addr(binary, func)

    seq = []            # FUNC's own instructions: (vaddr), and the load bias
    bias = None
    first = True        # the first traced instruction: the span starts
    untimed = 0         # as it retires, it takes no time
    pat = re.compile(r"^\s*([0-9a-f]+)\s+(\S+)\+0x([0-9a-f]+)")
    with open(insns_path) as fh:
        for line in fh:
            m = pat.match(line)
            if m and first and m.group(2) == func:
                untimed = 1
            first = first and not m
            if not m or m.group(2) != func:
                continue
            ip, off = int(m.group(1), 16), int(m.group(3), 16)
            if bias is None:
                bias = ip - (start + off)
            seq.append(start + off)
    if not seq:
        sys.exit("no instruction of %s in %s" % (func, insns_path))
    ch = chains(binary, sorted(set(seq)))

    self_ns, calls = {}, {}
    prev = ()
    for i, a in enumerate(seq):
        c = ch[a]
        self_ns[c] = self_ns.get(c, 0) + (ns if i >= untimed else 0)
        k = 0
        while k < len(prev) and k < len(c) and prev[k] == c[k]:
            k += 1
        for j in range(k, len(c)):          # entered from outside
            calls[c[:j + 1]] = calls.get(c[:j + 1], 0) + 1
        prev = c
    callees = {}        # (inline chain, callee vaddr) -> calls
    lo, hi = min(seq) + bias, max(seq) + bias
    with open(truth_path) as fh:
        for line in fh:
            f = line.split()
            if len(f) >= 7 and f[4] == "call":
                frm, to = int(f[5], 16), int(f[6], 16)
                if lo <= frm <= hi and frm - bias in ch:
                    key = (ch[frm - bias], to)
                    callees[key] = callees.get(key, 0) + 1

    # the report: lines through FUNC, from FUNC on
    got_self, got_calls, errs = {}, {}, []
    with open(folded_path) as fh:
        for line in fh:
            stack, _, val = line.rstrip("\n").rpartition(" ")
            frames = [split_frame(f) for f in stack.split(";")]
            idx = [i for i, (n, _) in enumerate(frames) if n == func]
            if not idx:
                continue
            fr = frames[idx[0] + 1:]
            inl = []
            for n, c in fr:
                if not n.endswith(" (inlined)"):
                    break
                inl.append(n[:-len(" (inlined)")])
                got_calls[tuple(inl)] = c
            inl = tuple(inl)
            rest = fr[len(inl):]
            if not rest:
                got_self[inl] = got_self.get(inl, 0) + int(val)
            else:
                got_calls[(inl, rest[0][0])] = rest[0][1]
    for c, v in sorted(self_ns.items()):
        g = got_self.get(c, 0)
        if g != v:
            errs.append("%s: self %d ns, expected %d" % (";".join((func,) + c), g, v))
    for c, v in sorted(calls.items()):
        g = got_calls.get(c)
        if g != v:
            errs.append("%s: %s calls, expected %d" % (";".join((func,) + c), g, v))
    for c in got_self:
        if c not in self_ns:
            errs.append("%s: unexpected inline context" % ";".join((func,) + c))
    names = {}
    out = subprocess.run(["nm", binary], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "tT":
            names[int(f[0], 16) + bias] = f[2]
    for (c, to), v in sorted(callees.items()):
        name = names.get(to, "?")
        g = got_calls.get((c, name))
        if g != v:
            errs.append("%s;%s: %s calls, expected %d" %
                        (";".join((func,) + tuple(x + " (inlined)" for x in c)), name, g, v))
    if errs:
        print("\n".join(errs))
        sys.exit(1)
    print("%s: %d inline contexts, %d instructions, self times and calls exact" %
          (func, len(self_ns), len(seq)))


if __name__ == "__main__":
    main()
