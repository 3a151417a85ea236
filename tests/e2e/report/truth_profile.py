#!/usr/bin/env python3
"""The expected profile of an emulated recording, from its truth log alone.

usage: truth_profile.py expect TRUTH [--per-thread] [--wakers[=N]]
       truth_profile.py compare TRUTH FOLDED [--per-thread] [--no-time]
                        [--no-comm] [--slack-ns N] [--only-tids LIST]
                        [--show-plt] [--wakers[=N]]
       truth_profile.py same TRUTH FOLDED_A FOLDED_B [--slack-ns N]
                        [--jump-only-ok]
       truth_profile.py walltime TRUTH [--perf-data FILE]
       truth_profile.py paths TRUTH FOLDED
       truth_profile.py wakes TRUTH TIMELINE

An independent model of DESIGN.md section 4 (it shares no code with
ptflame): its own stack machine over the truth log's call/ret/jump/syscall/
sysret/signal/sigreturn/switch lines (tests/TRUTH.md), its own symbolizer
(nm over each mapped file and its build-id debug file, objdump for the
`x@plt` stubs, readelf for the load segments and for the .eh_frame FDEs
that make functions of code no symbol names: "file+0xSTART").

expect   prints the expected annotated folded profile (one name per
         function; aliases are possible, compare knows them).
compare  checks a `ptflame report` output against it: every line's stack
         must be an expected context, every frame's call count equal, the
         "(inferred)" mark where no call of the context was complete, every
         expected leaf context present, and each line's self time within
         the tolerance below. Prints the max relative error seen.
same     checks that two reports of one recording (decoded directly and
         via perf script text) have the same stacks and call counts, and
         self times within the floor below.
walltime prints "TID NS" per thread: its traced wall time (first event with
         an ip to its last event; from its clone/fork line when it has one,
         else from its switch-in when the AUX data
         holding its first packet was dropped: needs --perf-data, whose
         AUX records perf reads).
wakes    checks `report --wakers --timeline` JSON: its [off-cpu] spans that
         a wake ended, with their waker and wake time, and the flow arrows
         from the waker's thread, are exactly the model's (--wakers) waits
         that a wake ended.
paths    checks that every stack of FOLDED, pseudo-frames removed, is a
         contiguous sub-path of a call path the program really had (for
         traces with lost data, whose contexts can legitimately differ).

--wakers (expect, compare) models `report --wakers` from the truth's
"wake" lines: under the [off-cpu] frame of a wait that a wake line ended
(the wake of its thread written while it was off its CPU, else the one
stamped between its switch-out, less one context switch, and its
switch-in), a frame "[woken by COMM-TID]" (the waker's comm at the wake,
its tid), then the waker's user stack at its last syscall at or before the
wake (the waking one: root first, callers inferred later included, the
innermost frame the function that issued it, no [kernel]). Every frame there counts the waits attributed
through it (compare checks those counts, not "(inferred)" marks there) and
the leaf holds their blocked time, which
leaves the [off-cpu] frame itself; a wait without a wake line stays plain
[off-cpu]. Without --wakers the wake lines change nothing. --wakers=N
follows chains N threads deep (Model.chain says which part goes where,
the rule of doc/DESIGN.md, modelled here on the truth's own waits).

Inline frames ("NAME (inlined)", report's default) are folded back into
their function before any check (parse_folded): the truth log has no
instructions, only calls, so this oracle checks everything but them;
tests/e2e/report/inline.sh checks the inline frames themselves.

Pseudo-frames (how truth events map to ptflame's):
  syscall .. sysret/sigreturn      -> [kernel] (ptflame cannot name the
                                      syscall from PT alone: any "[kernel]
                                      NAME" is compared as "[kernel]")
  switch-out block .. switch-in    -> [off-cpu]   (on top of [kernel])
  switch-out preempt .. switch-in  -> [preempted] (on top of a [kernel]
                                      from the async PGD 1 ns before the
                                      switch to the PGE 500 ns after the
                                      switch-in: tests/TRUTH.md)
  interrupt .. iret                -> [kernel] (an asynchronous exit:
                                      --inject-interrupts)
  signal while in user mode        -> a zero-length [kernel] call (the
                                      kernel entry that delivers it; PT shows
                                      TIP.PGD there), then the handler
  signal handler's ret to a function not on the stack (the sigreturn
  trampoline) replaces the handler frame, also a ret into a trampoline
  (by name) from a frame not known as a handler (its entry unseen);
  sigreturn pops to the function of its ip.
A thread's trace starts at its "start" line, or, for a child of
--follow-fork that has none (the qemu backend), at the sysret of the fork in
it; after an exec, at the new program's first sysret or start line, with a
new stack whatever functions the old one held. A thread with a "clone" or
"fork" line (made during the recording) lives from that line: at its root a
[kernel] from there to its trace's start, and on it a [preempted] from there
to its first switch-in (its wait on a run queue for its first run; with
--wakers ended by its creator, the line's parent tid: [woken by COMM-TID]
and the creator's stack at its clone, as for a wake line, in no chain);
without a switch-in before its start, the [kernel] alone (Model.birth).
A ret to a frame further down pops to it (longjmp, unwinding); a ret from
the root frame to a function not on the stack creates an inferred caller
above everything seen so far (the trace started mid-stack). A jump into
the middle of a function further down pops to it; out of an unwinder
(longjmp, _Unwind_RaiseException and the other landing-pad jumpers; not
_Unwind_DeleteException, which tail-calls) into the middle of one not on
the stack, that function
is above the root: all frames end and it becomes their inferred caller, as
a ret from the root makes one; any other jump to another
function (its entry: tail call, PLT; or its middle: shared code such as
mempcpy entering memmove) replaces the top frame and starts a call of the
new one, except that a PLT stub's jump (x@plt, the PLT header, the lazy
resolver when it made no call) goes on as the same call in its target
(report's default; --show-plt here models report --show-plt). A function's
.cold part (F.cold, F.cold.N, "F(int) [clone .cold]", when exactly one
function of the file is named F) is F's code: its addresses are F's (key,
names, entry), so the jumps between them change no frame, its calls are
F's callees and its return is F's. Calls are
"complete" when both their start and their end were seen.

Time tolerance. compare: each line's self time within 0.1 % of the truth
(criterion 1, literally: --slack-ns defaults to 0). The emulator's PT
carries a CYC with every packet, and the decoder interpolates the branches
that take no packet (direct calls, jumps) by instruction count between
timed ones, so its branch times are exact, and so must be every stack.
same (two decodings of one file) and traces without CYC need a floor: PT
does not time-stamp branches, a decoder learns the time of a branch only
from the timing packet that goes with the next packet the trace has (a full
TNT, a TIP, a PGD...), and MTC alone resolves 256 ns. There a line passes
when
    |report - truth| <= truth / 1000 + 2 * SLACK * (stretches of its self time)
with SLACK = --slack-ns (default 256 for same): a stretch is each time the
context got time after another one had (it was entered, or a callee or the
kernel returned to it), at least once per time it was entered; both its ends
are events a coarse clock may place up to one MTC period off. The thread
sums (walltime) are always exact.
"""
import bisect
import json
import os
import re
import subprocess
import sys
from collections import defaultdict

# ---------------------------------------------------------------- symbols


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       universal_newlines=True)
    return r.stdout


class ElfSyms:
    """Function ranges of one ELF file, keyed by start vaddr."""

    def __init__(self, path):
        self.path = path
        self.loads = []      # (p_offset, p_vaddr, p_filesz)
        self.funcs = {}      # start -> [size, set(names)]
        self.starts = []
        self.labels = set()  # starts of labels only (STT_NOTYPE): lookup
        self.fdes = None     # [(start, end)] of .eh_frame, read when needed
        self.plts = []       # PLT sections' [lo, hi): no FDE function there
        if not os.path.isfile(path):
            return
        for line in run(["readelf", "-lW", path]).splitlines():
            f = line.split()
            if f and f[0] == "LOAD":
                self.loads.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
        files = [path]
        m = re.search(r"Build ID: ([0-9a-f]+)", run(["readelf", "-n", path]))
        if m:
            bid = m.group(1)
            dbg = "/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])
            if os.path.isfile(dbg):
                files.append(dbg)
        self.sections = []
        for line in run(["readelf", "-SW", path]).splitlines():
            m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
            if m and int(m.group(2), 16):
                a = int(m.group(2), 16)
                self.sections.append((a, a + int(m.group(3), 16)))
                if m.group(1).startswith(".plt"):
                    self.plts.append(self.sections[-1])
        notype, typed = set(), set()
        for fpath in files:
            for dyn in ([], ["-D"]):
                for demangle in ([], ["-C"]):
                    self._nm(["nm", "-S", "--defined-only"] + dyn + demangle + [fpath])
            for line in run(["readelf", "-Ws", fpath]).splitlines():
                f = line.split()
                if len(f) >= 8 and f[0][:-1].isdigit() and f[6] not in ("UND", "ABS"):
                    (notype if f[3] == "NOTYPE" else typed).add(int(f[1], 16))
        self.labels = notype - typed
        self._plt(path)
        self.starts = sorted(self.funcs)
        self.home = self._cold_homes()

    def _cold_homes(self):
        """start -> start of the function whose .cold part starts there
        (gcc's F.cold, F.cold.N, C++ "F(int) [clone .cold]"): the one
        function (not a label) named F in this file, by any of the part's
        names, mangled ones included (a C++ destructor's deleting and
        complete variants demangle alike: _ZN4BaseD0Ev.cold is D0's);
        none when no name or more than one function has it."""
        by_name = defaultdict(set)
        for start, (size, names) in self.funcs.items():
            if start not in self.labels:
                for n in names:
                    by_name[n].add(start)

        def base(names):
            out = set()
            for n in names:
                m = COLD_RE.match(n)
                if m:
                    out.add(m.group(1) or m.group(2))
            return out

        home = {}
        for start, (size, names) in self.funcs.items():
            if start in self.labels:
                continue
            cur, seen = start, {start}
            while True:
                b = base(self.funcs[cur][1])
                if not b:
                    break
                # a name that one function has decides (the mangled one
                # where the demangled is shared); two such disagreeing: none
                cands = set().union(*(c for c in (by_name.get(n, set()) for n in b)
                                      if len(c) == 1))
                if len(cands) != 1 or (cands & seen):
                    cur = None
                    break
                cur = cands.pop()
                seen.add(cur)
            if cur is not None and cur != start:
                home[start] = cur
        return home

    def _add(self, start, size, name):
        ent = self.funcs.setdefault(start, [0, set()])
        ent[0] = max(ent[0], size)
        ent[1].add(name)
        if "@" in name and not name.endswith("@plt"):
            ent[1].add(name.split("@")[0])

    def _nm(self, cmd):
        for line in run(cmd).splitlines():
            f = line.split(None, 3)
            if len(f) == 4 and len(f[2]) == 1 and f[2] in "TtWwiI":
                self._add(int(f[0], 16), int(f[1], 16), f[3])
            elif len(f) >= 3 and len(f[1]) == 1 and f[1] in "TtWwiI":
                # no size (hand-written asm: _init, _start, crtstuff's
                # __do_global_dtors_aux): up to the next symbol
                self._add(int(f[0], 16), 0, line.split(None, 2)[2])

    def _plt(self, path):
        for dm in ([], ["-C"]):
            out = run(["objdump", "-d", "-w"] + dm + ["-j", ".plt", "-j", ".plt.sec",
                                                      "-j", ".plt.got", path])
            stubs = [(int(m.group(1), 16), m.group(2)) for m in
                     re.finditer(r"^([0-9a-f]+) <(.+@plt)>:", out, re.M)
                     if not re.search(r"@plt[-+]0x", m.group(2))]
            starts = sorted(set(a for a, _ in stubs))
            for a, name in stubs:
                # a stub is 16 bytes, or 8 in a .plt.got without IBT: it
                # ends at the next stub or at its section's end, never in
                # the code after it (main at the start of .text)
                end = a + 16
                k = bisect.bisect_right(starts, a)
                if k < len(starts):
                    end = min(end, starts[k])
                for lo, hi in self.plts:
                    if lo <= a < hi:
                        end = min(end, hi)
                self._add(a, end - a, name)
        # the lazy PLT's header (PLT0, jumps to the resolver): "[.plt]"
        for line in run(["readelf", "-SW", path]).splitlines():
            f = line.replace("[ ", "[").split()
            if len(f) > 5 and f[1] == ".plt":
                self._add(int(f[3], 16), 16, "[.plt]")

    def fde(self, vaddr):
        """Start of the function an FDE of .eh_frame makes of vaddr, code
        no symbol names: the FDE's range must hold no symbol (function or
        label) nor lie in a symbol's room, nor in a PLT section; else
        None."""
        if self.fdes is None:
            self.fdes, sec = [], None
            for line in run(["readelf", "--debug-dump=frames", self.path]).splitlines():
                m = re.match(r"Contents of the (\S+) section", line)
                if m:
                    sec = m.group(1)
                m = re.search(r" FDE cie=\S+ pc=([0-9a-f]+)\.\.([0-9a-f]+)", line)
                if m and sec == ".eh_frame":
                    self.fdes.append((int(m.group(1), 16), int(m.group(2), 16)))
            self.fdes.sort()
        i = bisect.bisect_right(self.fdes, (vaddr, float("inf"))) - 1
        if i < 0 or not self.fdes[i][0] <= vaddr < self.fdes[i][1]:
            return None
        s, e = self.fdes[i]
        j = bisect.bisect_left(self.starts, s)
        if j < len(self.starts) and self.starts[j] < e:
            return None
        if self.lookup(s) or self.lookup(e - 1):
            return None
        if any(lo < e and s < hi for lo, hi in self.plts):
            return None
        return s

    def vaddr(self, off):
        for poff, pvaddr, fsz in self.loads:
            if poff <= off < poff + fsz:
                return off - poff + pvaddr
        return None

    def lookup(self, vaddr):
        """(start, names) of the function holding vaddr, or None. A label
        (hand-written asm's entry points: ld.so's _start) names only code
        that no function symbol's room holds, up to the next symbol."""
        i = bisect.bisect_right(self.starts, vaddr) - 1
        label = None
        while i >= 0:
            start = self.starts[i]
            size, names = self.funcs[start]
            is_label = start in self.labels
            if size == 0:
                # unsized (asm): up to the next symbol (a function's: the
                # next function's), within its section
                j = i + 1
                while not is_label and j < len(self.starts) and self.starts[j] in self.labels:
                    j += 1
                end = self.starts[j] if j < len(self.starts) else None
                for lo, hi in self.sections:
                    if lo <= start < hi and (end is None or end > hi):
                        end = hi
                size = end - start if end else 0
            if start <= vaddr < start + max(size, 1):
                if not is_label:
                    # a .cold part is its function's code: its start, names
                    h = self.home.get(start)
                    if h is not None:
                        return h, self.funcs[h][1]
                    return start, names
                label = label or (start, names)
            if vaddr - start > 1 << 20:
                break
            i -= 1        # a shorter symbol may hide a larger one (nested)
        return label


def vdso_image():
    """This process's vDSO as a file (the kernel's vDSO is the same for
    every process of this boot, so it is the recorded program's too)."""
    import tempfile
    for line in open("/proc/self/maps"):
        if line.rstrip().endswith("[vdso]"):
            lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
            with open("/proc/self/mem", "rb") as mem:
                mem.seek(lo)
                data = mem.read(hi - lo)
            f = tempfile.NamedTemporaryFile(prefix="vdso", suffix=".so", delete=False)
            f.write(data)
            f.close()
            return f.name
    return None


class Symbolizer:
    def __init__(self):
        self.maps = defaultdict(list)   # pid -> [(start, len, pgoff, path)]
        self.elfs = {}
        self.cache = {}

    def mmap(self, pid, start, length, pgoff, path):
        self.maps[pid].append((start, length, pgoff, path))
        self.cache = {}

    def exec(self, pid):
        self.maps[pid] = []
        self.cache = {}

    def func(self, pid, ip):
        """key, start, names of the function holding ip."""
        ck = (pid, ip)
        if ck in self.cache:
            return self.cache[ck]
        res = (("?", ip), ip, frozenset(["[unknown]"]))
        for start, length, pgoff, path in reversed(self.maps[pid]):
            if start <= ip < start + length:
                elf = self.elfs.get(path)
                if elf is None:
                    real = vdso_image() if path == "[vdso]" else path
                    elf = self.elfs[path] = ElfSyms(real or path)
                    if path == "[vdso]" and real:
                        os.unlink(real)
                va = elf.vaddr(ip - start + pgoff)
                hit = elf.lookup(va) if va is not None else None
                fde = elf.fde(va) if va is not None and not hit else None
                if hit:
                    fstart = hit[0] - va + ip
                    res = ((path, hit[0]), fstart, frozenset(hit[1]))
                elif fde is not None:
                    res = ((path, fde), fde - va + ip,
                           frozenset(["%s+0x%x" % (os.path.basename(path), fde)]))
                    FDE_KEYS.add(res[0])
                else:
                    res = ((path, None), None, frozenset(["[unknown] (%s)" % path]))
                break
        self.cache[ck] = res
        return res

# ---------------------------------------------------------------- the tree


# a function's .cold part's name: F.cold, F.cold.N, "F(int) [clone .cold]"
COLD_RE = re.compile(r"^(?:(.+)\.cold(?:\.\d+)?|(.+) \[clone \.cold(?:\.\d+)?\])$")

# the keys of functions only an .eh_frame FDE makes (Symbolizer.func)
FDE_KEYS = set()

# every key's names, also of nodes a folded PLT stub left empty (removed)
KEYNAMES = {}
# key -> names of the labels a function of that key ran on into (Frame.alias):
# report names the frame after the label from then on
ALIASNAMES = {}


class Node:
    __slots__ = ("key", "names", "parent", "kids", "calls", "complete",
                 "self_ns", "entries", "spans")

    def __init__(self, key, names, parent):
        self.key, self.names, self.parent = key, names, parent
        if names:
            KEYNAMES.setdefault(key, set()).update(names)
        self.kids = {}
        self.calls = self.complete = self.self_ns = self.entries = 0
        # stretches of self time (it got time, after another node had):
        # each begins and ends at an event a coarse clock may misplace
        self.spans = 0

    def child(self, key, names):
        n = self.kids.get(key)
        if n is None:
            n = self.kids[key] = Node(key, names, self)
        return n

    def merge_from(self, other):
        self.calls += other.calls
        self.complete += other.complete
        self.self_ns += other.self_ns
        self.entries += other.entries
        self.spans += other.spans
        for k, o in other.kids.items():
            self.child(k, o.names).merge_from(o)


# sigreturn trampolines (libc's, the vdso's)
SIGTRAMPS = frozenset(["__restore_rt", "__restore", "__kernel_rt_sigreturn",
                       "__vdso_rt_sigreturn"])
# the emulator's context switch (RC_EMU_SWITCH_NS; tests/TRUTH.md)
SWITCH_NS = 1000
PSEUDO = {"kernel": "[kernel]", "offcpu": "[off-cpu]", "preempt": "[preempted]"}


class Frame:
    __slots__ = ("node", "key", "pseudo", "started", "handler", "stub", "t0", "wake",
                 "alias", "called", "self0", "spans0", "came_from", "site")

    def __init__(self, node, key, pseudo=None, started=True, handler=False, t0=None):
        self.node, self.key, self.pseudo = node, key, pseudo
        self.started, self.handler = started, handler
        self.stub = False
        self.t0 = t0
        self.wake = None        # --wakers: (time, waker tid) that ended it
        self.alias = None       # a label the function ran on into (ev_ret)
        self.called = False     # a frame went on top of it (a stub that
                                # called stays a frame of its own)
        self.came_from = None   # the function it jumped out of (replace)
        self.site = None        # the ip of the last call it made
        # its node's self time and spans when it became that node: what
        # this call of a stub adds, to move on when it jumps on
        self.self0, self.spans0 = node.self_ns, node.spans

    def holds(self, key):
        return self.pseudo is None and key in (self.key, self.alias)


# libgcc's entry points that jump to a landing pad
UNWINDERS = frozenset("_Unwind_" + n for n in
                      ("RaiseException", "Resume", "Resume_or_Rethrow", "ForcedUnwind"))

# report --show-plt: PLT stubs stay frames of their own
SHOW_PLT = False


def is_unwinder(names):
    """a function that jumps into a frame further down (longjmp, libgcc's
    landing-pad jumpers)"""
    return any("longjmp" in n or n.replace("_SjLj_", "_") in UNWINDERS for n in names)


def is_stub(names):
    return any(n.endswith("@plt") or n.startswith("_dl_runtime_resolve") for n in names)


def unnamed(names):
    return not names or any(n.startswith("[") for n in names)


class Thread:
    def __init__(self, pid, tid):
        self.pid, self.tid = pid, tid
        self.segs = []
        self.seg_parts = []     # each seg's part of the thread's life
        self.part = 0           # the current one (execs split them)
        self.part_names = []    # the names of the parts execs ended
        self.comms_from = 0     # the current part's comms: comms[comms_from:]
        self.split_at = None    # an exec's comms_from for the next part
        self.stack = []
        self.first = self.last = None
        self.last_node = None
        self.traced = False
        self.comm = None
        self.anomalies = []
        self.paths = set()
        self.resume_at = None
        # every call as it ended: (names, pseudo, start, end, complete,
        # names of the frames below it, pseudo-frames too), for report
        # --timeline and --slowest (timeline_check.py, slowest_check.py)
        self.calls = []
        self.seg_t0 = None
        self.comms = []         # (time, name) from its comm lines
        self.sys_stacks = []    # (time, top user frame's node) per syscall
        self.waits = []         # (offcpu node, blocked ns, wake) when --wakers
        # (preempted node, ns, (its creation, the creator), t0) of its
        # wait for its first run (--wakers; no chains go through it)
        self.births = []
        self.born = None        # (time, creator tid) of its clone/fork line
        self.born_in = None     # its first switch-in after that, untraced
        self.pending_wakes = []  # (time, waker tid) not yet given to a wait

    # accounting
    def account(self, t):
        if not self.traced:
            return
        if t > self.last:
            if self.stack:
                n = self.stack[-1].node
                n.self_ns += t - self.last
                if n is not self.last_node:
                    n.spans += 1
                    self.last_node = n
            else:
                self.last_node = None
            self.last = t

    def push(self, key, names, pseudo=None, started=True, handler=False):
        parent = self.stack[-1].node if self.stack else self.segs[-1]
        n = parent.child(key, names)
        n.calls += 1
        n.entries += 1
        if self.stack:
            self.stack[-1].called = True
        self.stack.append(Frame(n, key, pseudo, started, handler, self.last))
        self.note_path()

    def replace(self, key, names):
        """The top frame's function jumps on to key's (a tail call, a PLT
        stub's jump). Without --show-plt a stub (x@plt, the lazy resolver,
        the unnamed PLT header between them) whose call made no calls (this
        call: not what its node did before) is the same call going on in
        key: the frame takes key's node, this call's self time in the stub
        moves along, one call of the stub's context becomes one of key's."""
        top = self.stack[-1]
        old = top.node
        if not SHOW_PLT and top.pseudo is None and not top.called and \
                (top.stub or is_stub(old.names) or unnamed(old.names)):
            n = old.parent.child(key, names)
            mine, spans = old.self_ns - top.self0, old.spans - top.spans0
            old.self_ns -= mine
            old.spans -= spans
            top.self0, top.spans0 = n.self_ns, n.spans
            n.self_ns += mine
            n.spans += spans
            if self.last_node is old:
                self.last_node = n
            old.calls -= 1
            old.entries -= 1
            n.calls += 1
            n.entries += 1
            if not old.calls and not old.kids and not old.self_ns:
                del old.parent.kids[old.key]
            top.node, top.key = n, key
            top.stub = is_stub(names) or unnamed(names)
            self.note_path()
            return
        handler = top.handler
        self.pop()
        self.push(key, names, handler=handler)
        self.stack[-1].came_from = top.key

    def pop(self, complete=True):
        fr = self.stack.pop()
        if complete and fr.started:
            fr.node.complete += 1
        self.calls.append((fr.node.names, fr.pseudo, fr.t0, self.last,
                           complete and fr.started,
                           tuple(f.node.names for f in self.stack)))

    def note_path(self):
        self.paths.add(tuple(fr.key for fr in self.stack if fr.pseudo is None))

    def new_segment(self):
        while self.stack:
            self.pop(complete=False)
        self.segs.append(Node(None, None, None))
        self.seg_parts.append(self.part)
        self.seg_t0 = self.last

    def part_name(self, lo, hi=None):
        """the last comm of comms[lo:hi], else the one before it"""
        names = [c for _, c in self.comms[lo:hi]] or [c for _, c in self.comms[:lo]]
        return names[-1] if names else self.comm

    def split(self):
        """the first event after an exec: the part of the thread's life
        before it ends (report --per-thread: a root frame each, named by
        its last comm; --comm: the parts that had it), when code of the
        old program ran in it (a function frame at a root, not only
        [kernel], [off-cpu] and the like)"""
        if self.split_at is None:
            return
        if any(any(not n.startswith("[") for k in seg.kids.values() for n in k.names)
               for seg, p in zip(self.segs, self.seg_parts) if p == self.part):
            self.part_names.append(self.part_name(self.comms_from, self.split_at))
            self.part += 1
            if self.segs:
                self.seg_parts[-1] = self.part
        self.comms_from, self.split_at = self.split_at, None

    def names_of_parts(self):
        """each part's name, the current one's last"""
        cur = self.part_name(self.comms_from, self.split_at)
        return self.part_names + [cur]

    def find(self, key, below_top=True):
        """index of the nearest frame holding key (below the top)."""
        end = len(self.stack) - (1 if below_top else 0)
        for i in range(end - 1, -1, -1):
            if self.stack[i].holds(key):
                return i
        return None

    def pop_to(self, i):
        while len(self.stack) > i + 1:
            self.pop()

    def underflow(self, key, names):
        """ret from the root to a function not on the stack."""
        self.pop()
        root = self.segs[-1]
        f = Node(key, names, root)
        f.calls = 1
        f.entries = 1
        for k, kid in list(root.kids.items()):
            kid.parent = f
            f.kids[k] = kid
        root.kids = {key: f}
        self.stack.append(Frame(f, key, None, started=False, t0=self.seg_t0))
        # the paths seen so far get the new caller in front
        self.paths = {(key,) + p for p in self.paths}
        self.note_path()

    def top_user(self):
        return self.stack and self.stack[-1].pseudo is None


class Model:
    def __init__(self, wakers=0):
        self.sym = Symbolizer()
        self.threads = {}
        self.comms = {}
        self.wakers = wakers
        # jumps into or out of FDE functions that the log lacks (repair)
        self.fde_unlogged, self.fde_unlogged_first = 0, None

    def thread(self, pid, tid):
        th = self.threads.get(tid)
        if th is None:
            th = self.threads[tid] = Thread(pid, tid)
        return th

    def f(self, pid, ip):
        key, start, names = self.sym.func(pid, ip)
        return key, start, names

    def feed(self, line):
        fl = line.split(" ")
        if len(fl) < 5 or line.startswith("#"):
            return
        t, pid, tid, ev, args = int(fl[0]), int(fl[2]), int(fl[3]), fl[4], fl[5:]
        if ev == "mmap":
            self.sym.mmap(pid, int(args[0], 16), int(args[1], 16), int(args[2], 16),
                          " ".join(args[3:]))
            return
        th = self.thread(pid, tid)
        if ev == "comm":
            th.comm = " ".join(args)
            th.comms.append((t, th.comm))
            return
        if ev == "wake":
            # stamped with the waker's time, written when the wakee's wait
            # ended: not an event of the waker's own timeline
            self.ev_wake(t, tid, int(args[0]))
            return
        if ev == "exec":
            self.sym.exec(pid)
            th.exec_pending = True
            th.split_at = len(th.comms)
            return
        if ev == "switch-in":
            th.switched_in = (t, int(fl[1]))
            if not th.traced and th.born is not None and th.born_in is None:
                th.born_in = t
        if ev == "clone":
            th.born = (t, int(args[0]))
            return
        if ev == "start":
            th.account(t)
            if not th.traced:
                th.traced = True
                th.first = th.last = t
                th.start_cpu = int(fl[1])
                th.first_switch_in = getattr(th, "switched_in", None)
                if self.birth(th, t):
                    th.pop()    # its [kernel] ends where its trace starts
            ip = int(args[0], 16)
            key, start, names = self.f(pid, ip)
            th.new_segment()
            th.split()
            # the new image's first traced instruction after an exec (the
            # stepper runs it natively to its start symbol, as from
            # launch): its stack begins here, not again at its first sysret
            th.exec_pending = False
            th.push(key, names, started=(start == ip))
            return
        if ev == "fork":
            th.forked = True
            th.born = (t, int(args[1]))
            return
        if not th.traced:
            if not (ev == "sysret" and getattr(th, "forked", False)):
                return
            # a child of --follow-fork has no start line: its trace begins
            # where the fork returns in it, in the middle of a function
            # (its stack comes from its returns, as after any sysret)
            th.traced = True
            th.first = th.last = t
            th.start_cpu = int(fl[1])
            th.first_switch_in = getattr(th, "switched_in", None)
            self.birth(th, t)
        if th.stack and th.stack[-1].pseudo == "irq" and th.resume_at is not None \
                and (t > th.resume_at or (t == th.resume_at and ev not in ("stop", "exit"))):
            # preempted in user mode: its trace resumed (PGE) 500 ns after
            # the switch-in (tests/TRUTH.md), back in user mode from there;
            # not when it stops or is killed at that very time: the PGE
            # comes with its next instruction, and there is none
            th.account(th.resume_at)
            th.pop()
        th.resume_at = None
        if ev in ("switch-out", "stop", "exit") and th.top_user() and \
                (ev != "switch-out" or args[:1] == ["preempt"]):
            # preempted, stopped or killed in user mode: the kernel entry
            # (an async TIP.PGD, no line of its own) was 1 ns before
            th.account(t - 1)
            th.push("[kernel]", frozenset(["[kernel]"]), pseudo="irq")
        th.account(t)
        if ev in ("call", "ret", "jump", "syscall", "signal", "interrupt") and \
                th.stack and th.stack[-1].pseudo == "irq":
            th.anomalies.append("user-mode event before the resume at %d" % t)
            th.pop()
        getattr(self, "ev_" + ev.replace("-", "_"), self.ev_other)(th, t, args)

    def ev_other(self, th, t, args):
        pass

    def birth(self, th, t):
        """The thread's first traced event at t, made by a clone or fork
        line (born) during the recording: its life began there. From then
        to its first switch-in it waited on a run queue for its first run
        (wake_up_new_task): [preempted], its creator the waker (--wakers);
        in the kernel all along until t: both under a [kernel] at its root
        (the first thread of the recording, exec'd from nothing of ours,
        has no such line: it starts at its first event). True when it
        made that [kernel] (open, for the caller to end)."""
        b, th.born = th.born, None
        if b is None or b[0] >= t:
            return False
        t0, creator = b
        th.first = th.last = th.born_at = t0
        th.new_segment()
        th.push("[kernel]", frozenset(["[kernel]"]), pseudo="kernel")
        t1 = th.born_in
        if t1 is not None and t0 < t1 <= t:
            th.push("preempt", frozenset([PSEUDO["preempt"]]), pseudo="preempt")
            fr = th.stack[-1]
            th.account(t1)
            if self.wakers:
                th.births.append((fr.node, t1 - t0, (t0, creator), t0))
            th.pop()
        th.account(t)
        return True

    def repair(self, th, src):
        """A branch from src: src's function must be the top frame. The truth
        logs a jump only when the emulator's symbols see it leave a function
        (they read the build-id debug file as nm here does); if ours still
        see more, a jump from the top function to src's went unlogged (tail
        call) and src's replaces it."""
        if not th.top_user():
            return
        key, start, names = self.f(th.pid, src)
        if not th.stack[-1].holds(key):
            if key in FDE_KEYS or th.stack[-1].key in FDE_KEYS:
                # the emulator reads the same FDEs: it logs every such jump
                self.fde_unlogged += 1
                self.fde_unlogged_first = self.fde_unlogged_first or "%s -> %s before %#x" % (
                    pick(th.stack[-1].node.names), pick(names), src)
            th.replace(key, names)

    def ev_call(self, th, t, args):
        self.repair(th, int(args[0], 16))
        key, start, names = self.f(th.pid, int(args[1], 16))
        if th.stack:
            th.stack[-1].site = int(args[0], 16)
        th.push(key, names)

    def ev_ret(self, th, t, args):
        self.repair(th, int(args[0], 16))
        key, start, names = self.f(th.pid, int(args[1], 16))
        i = th.find(key)
        if i is not None:
            th.pop_to(i)
        elif th.stack[-1].handler or names & SIGTRAMPS:
            # a handler returns into the sigreturn trampoline, which is no
            # caller of it (also when the handler's entry was not seen)
            th.pop()
            th.push(key, names)
        elif len(th.stack) == 1:
            th.underflow(key, names)
        elif (th.stack[-2].site is None or 0 < int(args[1], 16) - th.stack[-2].site <= 15) \
                and th.stack[-2].holds(self.f(th.pid, int(args[1], 16) - 1)[0]):
            # the call was the last instruction of its function's symbol:
            # the caller runs on into the label that follows (ld.so's
            # _start into _dl_start_user), no call of it; only just after
            # the caller's last call (an instruction is at most 15 bytes):
            # swapcontext also returns into the first byte of a coroutine
            # whose function follows the caller's
            th.pop()
            th.stack[-1].alias = key
            ALIASNAMES.setdefault(th.stack[-1].key, set()).update(names)
        else:
            th.anomalies.append("ret to a function not on the stack at %d" % t)
            th.pop()
            th.pop()
            th.push(key, names, started=False)

    def ev_jump(self, th, t, args):
        self.repair(th, int(args[0], 16))
        to = int(args[1], 16)
        key, start, names = self.f(th.pid, to)
        i = th.find(key)
        if th.top_user() and th.stack[-1].holds(key):
            # within the function: between it and its .cold part (the log
            # has the jump, to another symbol), no call
            return
        if start is None:
            # no symbol there (a lazy PLT's header jumping to the resolver,
            # a stub): a new function of its own, entered here
            th.replace(key, names)
        elif i is None and start != to and th.stack[-1].pseudo is None and \
                is_unwinder(th.stack[-1].node.names):
            # an unwinder jumping into a function not on the stack: a frame
            # above the root (the trace started below the setjmp); every
            # frame ends, the function is an inferred caller of them all
            while len(th.stack) > 1:
                th.pop()
            th.underflow(key, names)
        elif start == to or i is None:
            # a tail call; into the middle of a function not on the stack
            # too (ld.so's mempcpy jumps into memmove's body): the frame's
            # whole life is seen from here, so it is a complete call
            th.replace(key, names)
        elif th.stack[-1].came_from == key and th.stack[-1].pseudo is None and \
                not is_unwinder(th.stack[-1].node.names):
            # back into the function this frame jumped out of (a .cold
            # part rejoining its hot part), which is further down too
            # (recursion): the same call goes on, no unwinding
            th.replace(key, names)
        else:
            th.pop_to(i)

    def ev_syscall(self, th, t, args):
        self.repair(th, int(args[1], 16))
        if self.wakers:
            top = [fr.node for fr in th.stack if fr.pseudo is None]
            th.sys_stacks.append((t, top[-1] if top else None))
        th.push("[kernel]", frozenset(["[kernel]"]), pseudo="kernel")

    def leave_kernel(self, th):
        while th.stack and th.stack[-1].pseudo is not None:
            th.pop()

    def to_ip(self, th, ip):
        """user code resumes at ip: its function is the top or further down."""
        key, start, names = self.f(th.pid, ip)
        if th.stack and th.stack[-1].holds(key):
            return
        i = th.find(key, below_top=False)
        if i is not None:
            th.pop_to(i)
        else:
            # e.g. sigreturn from a handler whose interrupted frame was never
            # seen (trace started in the handler, or lost): the trampoline
            # is nobody's caller; a new stack segment starts here
            th.new_segment()
            th.push(key, names, started=False)

    def ev_sysret(self, th, t, args):
        self.leave_kernel(th)
        if getattr(th, "exec_pending", False):
            th.exec_pending = False
            key, start, names = self.f(th.pid, int(args[1], 16))
            th.new_segment()
            th.split()
            th.push(key, names, started=False)
            return
        self.to_ip(th, int(args[1], 16))

    def ev_sigreturn(self, th, t, args):
        self.leave_kernel(th)
        ip = int(args[0], 16)
        key, start, names = self.f(th.pid, ip)
        if start == ip and th.find(key, below_top=False) is None and \
                len(th.stack) > 1 and th.stack[-1].pseudo is None and \
                th.stack[-1].node.names & SIGTRAMPS:
            # the handler rewrote the context to start a function (a
            # pending signal's handler would have a signal line): a call
            # made from the interrupted code, which it returns to; it takes
            # the trampoline's place above the interrupted frames
            th.pop()
            th.push(key, names, handler=True)
            return
        self.to_ip(th, ip)

    def ev_signal(self, th, t, args):
        if th.top_user():
            th.push("[kernel]", frozenset(["[kernel]"]), pseudo="kernel")
        self.leave_kernel(th)
        key, start, names = self.f(th.pid, int(args[2], 16))
        th.push(key, names, handler=True)

    def ev_interrupt(self, th, t, args):
        # an asynchronous exit (--inject-interrupts): the kernel runs on
        # the thread's current stack until the iret
        self.repair(th, int(args[0], 16))
        th.push("[kernel]", frozenset(["[kernel]"]), pseudo="kernel")

    def ev_iret(self, th, t, args):
        self.leave_kernel(th)
        self.to_ip(th, int(args[0], 16))

    def ev_switch_out(self, th, t, args):
        p = "preempt" if args and args[0] == "preempt" else "offcpu"
        th.push(p, frozenset([PSEUDO[p]]), pseudo=p)

    def ev_wake(self, t, waker, wakee):
        if not self.wakers:
            return
        w = self.threads.get(wakee)
        if w is not None and w.stack and w.stack[-1].pseudo == "offcpu" and \
                w.stack[-1].wake is None:
            w.stack[-1].wake = (t, waker)
        elif w is not None:
            w.pending_wakes.append((t, waker))

    def ev_switch_in(self, th, t, args):
        if th.stack and th.stack[-1].pseudo in ("offcpu", "preempt"):
            fr = th.stack[-1]
            if self.wakers and fr.pseudo == "offcpu":
                wake = fr.wake
                if wake is None:
                    for i, (wt, wk) in enumerate(th.pending_wakes):
                        if fr.t0 - SWITCH_NS <= wt <= t:
                            wake = th.pending_wakes.pop(i)
                            break
                if wake is not None:
                    th.waits.append((fr.node, t - fr.t0, wake, fr.t0))
            th.pop()
        if th.stack and th.stack[-1].pseudo == "irq":
            th.resume_at = t + SWITCH_NS // 2

    def ev_stop(self, th, t, args):
        # a switch-out at this very instant (the thread exits, tracing
        # stops) is no wait: report shows no [off-cpu] of 0 ns there
        while th.stack and th.stack[-1].pseudo in ("offcpu", "preempt") and \
                th.stack[-1].t0 == t:
            fr = th.stack.pop()
            n = fr.node
            n.calls -= 1
            n.entries -= 1
            if not n.calls and not n.self_ns and not n.kids and n.parent:
                del n.parent.kids[n.key]
        while th.stack:
            th.pop(complete=False)
        th.traced = False

    ev_exit = ev_stop

    def finish(self):
        for th in self.threads.values():
            while th.stack:
                th.pop(complete=False)
        for th in self.threads.values():
            for node, ns, (wt, waker), t0 in th.waits:
                leaf = self.attribute(node, ns, wt, waker)
                self.chain(leaf, t0, wt, waker, self.wakers - 1)
            for node, ns, (wt, waker), t0 in th.births:
                self.attribute(node, ns, wt, waker)

    def chain(self, leaf, lo, hi, waker, depth):
        """--wakers=N: the part of a wait [LO, the wake at HI) during which
        its WAKER was itself blocked (off its CPU, until its switch-in) in a
        wait that a wake ended moves from LEAF (the waker's stack) to that
        wait's own waker's stack below it; one level further down the window
        is [that part's start, the wake of the waker), and so on, DEPTH more
        threads down."""
        wth = self.threads.get(waker)
        if depth < 1 or wth is None:
            return
        for _node, ns, (xt, x), s in wth.waits:
            a, b = max(lo, s), min(hi, s + ns)
            if b <= a:
                continue
            sub = self.attribute(leaf, b - a, xt, x)
            self.chain(sub, a, min(b, xt), x, depth - 1)

    def attribute(self, node, ns, wt, waker):
        """Move NS of blocked time of [off-cpu] NODE (or, in a chain, of a
        waker's frame) under its waker; the path's last node."""
        wth = self.threads.get(waker)
        comm, stack = "unknown", []
        if wth is not None:
            names = [c for ct, c in wth.comms if ct <= wt] or [c for ct, c in wth.comms[:1]]
            comm = names[-1] if names else wth.comm or "unknown"
            before = [st for st_t, st in wth.sys_stacks if st_t <= wt]
            # the node's callers as the whole truth knows them (an inferred
            # caller found later, by a return from the root, included)
            top = before[-1] if before else None
            while top is not None and top.key is not None:
                if isinstance(top.key, tuple):
                    stack.append((top.key, top.names))
                top = top.parent
            stack.reverse()
        label = "[woken by %s-%d]" % (comm, waker)
        n = node.child(("wokenby", label), frozenset([label]))
        path = [n]
        for key, names in stack:
            n = n.child(key, names)
            path.append(n)
        for p in path:
            p.calls += 1
            p.complete += 1
            p.entries += 1
        node.self_ns -= ns
        path[-1].self_ns += ns
        return path[-1]

    def tree(self, per_thread):
        root = Node(None, None, None)
        for th in self.threads.values():
            if th.first is None:
                continue
            parent = root
            names = th.names_of_parts()
            for seg, part in zip(th.segs, th.seg_parts):
                if per_thread:
                    # parts of one name share one frame
                    comm = names[part] or self.threads.get(th.pid, th).comm or "unknown"
                    parent = root.child(("thread", th.tid, comm),
                                        frozenset(["%s-%d" % (comm, th.tid)]))
                parent.merge_from(seg)
        return root


def check_switch_order(line, out_at):
    """A thread can only be switched in after it was switched out: a
    migrating thread's switch-in on another CPU never precedes its
    switch-out (the emulators' schedulers must keep that)."""
    f = line.split()
    if len(f) < 5 or not f[0].isdigit():
        return
    t, tid, ev = int(f[0]), f[3], f[4]
    if ev == "switch-out":
        out_at[tid] = t
    elif ev == "switch-in" and tid in out_at and t < out_at[tid]:
        raise SystemExit("truth: tid %s switched in at %d, before its switch-out at %d"
                         % (tid, t, out_at[tid]))


def load(path, wakers=False):
    m = Model(wakers)
    out_at = {}
    with open(path) as fh:
        for line in fh:
            check_switch_order(line, out_at)
            m.feed(line.rstrip("\n"))
    m.finish()
    if m.fde_unlogged:
        m.stale = ("truth log: %d jumps into or out of functions that only an .eh_frame FDE "
                   "makes are not in it (first: %s): written by an emulator from before the "
                   "FDE rule (main's 214fc04; record it again); in a log of today's, code "
                   "that fell through from one FDE function into the next, or the emulator "
                   "and this model disagree on the FDEs" % (m.fde_unlogged, m.fde_unlogged_first))
        print("note: " + m.stale, file=sys.stderr)
    else:
        m.stale = None
    return m

# ---------------------------------------------------------------- output


def pick(names):
    return sorted(names, key=lambda n: (n.startswith("_"), "@" in n, len(n), n))[0]


def walk(node, prefix, out):
    for kid in node.kids.values():
        path = prefix + [kid]
        if kid.self_ns > 0 or (not kid.kids and kid.calls > 0):
            out.append(path)
        walk(kid, path, out)


def frame_str(n):
    name = pick(n.names)
    if n.key and isinstance(n.key, tuple) and n.key[0] == "thread":
        return name
    return "%s:%d%s" % (name, n.calls, "(inferred)" if n.complete == 0 else "")


def cmd_expect(truth, per_thread, wakers=False):
    m = load(truth, wakers)
    out = []
    walk(m.tree(per_thread), [], out)
    lines = sorted("%s %d" % (";".join(frame_str(n) for n in p), p[-1].self_ns)
                   for p in out)
    print("\n".join(lines))
    for th in m.threads.values():
        for a in th.anomalies:
            print("note: tid %d: %s" % (th.tid, a), file=sys.stderr)


ANNOT = re.compile(r"^(.*):([0-9]+)(\(inferred\)|,avg:[0-9]+)$")


def split_frame(fr):
    m = ANNOT.match(fr)
    if not m:
        return fr, None, None
    return m.group(1), int(m.group(2)), m.group(3) == "(inferred)"


def norm(name):
    return "[kernel]" if name.startswith("[kernel]") else name


def names_match(name, names):
    name = norm(name)
    if name in names:
        return True
    return name.split("@")[0] in {n.split("@")[0] for n in names if not n.endswith("@plt")} \
        and not name.endswith("@plt")


class Prefixes:
    """Ids of stack prefixes: a prefix's id is made from its parent's id
    (0: the empty stack) and its last frame, so each prefix of a line costs
    one dict lookup, where joining the frames before it made every line
    quadratic in its depth (python3's stacks 300 deep: minutes a report)."""

    def __init__(self):
        self.ids = {}
        self.up = [None]        # id -> (parent id, frame)

    def of(self, parent, frame):
        i = self.ids.get((parent, frame))
        if i is None:
            i = self.ids[(parent, frame)] = len(self.up)
            self.up.append((parent, frame))
        return i

    def frames(self, i):
        out = []
        while i:
            i, fr = self.up[i]
            out.append(fr)
        return out[::-1]

    def text(self, i):
        return ";".join(self.frames(i))


def parse_folded(path):
    """The report's lines with inline frames ("NAME (inlined)", from the
    binary's DWARF) folded back into the function they were inlined into:
    the truth log knows only calls, and an inline frame's time and callees
    are its function's. Lines that become one stack are added up, and a
    frame's calls are those of every context folded into it ("(inferred)"
    only when none was complete; avg is not compared: 0)."""
    rows = []
    with open(path) as fh:
        for ln, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            stack, _, val = line.rpartition(" ")
            rows.append((ln, stack.split(";"), int(val), line))
    if not any(" (inlined)" in fr and split_frame(fr)[0].endswith(" (inlined)")
               for r in rows for fr in r[1]):
        return rows
    return fold_frames(rows, inline_fold)


class inline_fold:
    """parse_folded's rule: an inline frame goes, the others become their
    bare name, annotated again when they were (with the calls of every
    context folded into them)."""
    @staticmethod
    def rename(fr, name, calls):
        if name.endswith(" (inlined)"):
            return None
        return name if calls is not None else fr

    @staticmethod
    def annotate(name, c):
        return c[3]


class kernel_fold:
    """merge_kernel's rule: every kernel frame becomes "[kernel]",
    annotated with the calls of the frames merged into it when any had
    some; the others stay as printed."""
    @staticmethod
    def rename(fr, name, calls):
        return "[kernel]" if norm(name) == "[kernel]" else fr

    @staticmethod
    def annotate(name, c):
        return name == "[kernel]" and bool(c[2])


def fold_frames(rows, rule):
    """rows with each frame renamed by rule.rename(frame, name, calls)
    (None: left out) and lines that become one stack added up (in the
    order of their first line); a renamed frame that rule.annotate says
    is annotated gets the calls of every original context folded into it,
    "(inferred)" only when none was complete."""
    pre = Prefixes()
    ctx = {}        # renamed prefix id -> [calls, any complete, original ids, annotated]
    merged = {}     # renamed stack id -> [value, first line number]
    for ln, frames, val, line in rows:
        oid = nid = 0
        for fr in frames:
            oid = pre.of(oid, fr)
            name, calls, inferred = split_frame(fr)
            new = rule.rename(fr, name, calls)
            if new is None:
                continue
            nid = pre.of(nid, new)
            c = ctx.get(nid)
            if c is None:
                c = ctx[nid] = [0, False, set(), calls is not None]
            if calls is not None and oid not in c[2]:
                c[2].add(oid)
                c[0] += calls
                c[1] = c[1] or not inferred
        m = merged.get(nid)
        if m is None:
            m = merged[nid] = [0, ln]
        m[0] += val
    out = []
    for key, (val, ln) in sorted(merged.items(), key=lambda kv: kv[1][1]):
        frames, i = [], key
        while i:
            c = ctx[i]
            i, n = pre.up[i]
            frames.append("%s:%d%s" % (n, c[0], ",avg:0" if c[1] else "(inferred)")
                          if rule.annotate(n, c) else n)
        frames.reverse()
        out.append((ln, frames, val, ";".join(frames) + " %d" % val))
    return out


def merge_kernel(rows):
    """"[kernel] NAME" frames (the decoder names a syscall when it can tell
    its number) become "[kernel]", merged per context with their calls and
    times added: the truth's syscall lines are compared as one [kernel]
    frame per context."""
    return fold_frames(rows, kernel_fold)


def cmd_compare(truth, folded, per_thread, check_time, slack_ns, only_tids,
                check_comm=True, wakers=False):
    m = load(truth, wakers)
    if only_tids:
        m.threads = {t: th for t, th in m.threads.items() if t in only_tids}
    root = m.tree(per_thread)
    errs = [m.stale] if m.stale else []
    seen = set()
    max_rel, max_abs, worst = 0.0, 0, ""
    checked = 0
    assign = {}     # a report context (its prefix id) -> our nodes
    used = set()
    pre = Prefixes()
    for ln, frames, val, line in merge_kernel(parse_folded(folded)):
        nodes = [root]
        ctx = 0
        woken = False
        for depth, fr in enumerate(frames):
            name, calls, inferred = split_frame(fr)
            ctx = pre.of(ctx, fr)
            nxt = assign.get(ctx)
            if nxt is None:
                nxt = [k for n in nodes for k in n.kids.values() if names_match(name, k.names)]
                m_thr = re.fullmatch(r"(.*)-([0-9]+)", name)
                if depth == 0 and per_thread and not nxt and m_thr:
                    # the thread frame: match by tid, then check its comm
                    nxt = [k for k in root.kids.values()
                           if k.key[:2] == ("thread", int(m_thr.group(2)))][:1]
                    if nxt and check_comm:
                        errs.append("line %d: thread frame %r, truth %r"
                                    % (ln, name, pick(nxt[0].names)))
                multi = False
                if len(nxt) > 1:
                    # distinct functions of one name (static functions of
                    # several DSOs): the report prints one context each,
                    # or one line for several when their annotations are
                    # equal too (fg_fold sums identical stacks)
                    same = [k for k in nxt if k.calls == calls and id(k) not in used]
                    if same:
                        nxt = same
                        multi = len(same) > 1
                    if multi and depth == len(frames) - 1:
                        # a line's own context: when one of them has its
                        # time and all of them together do not, it is that
                        # one (ld.so's memcpy, also "memmove", against
                        # libc's memcpy and memmove: two lines, three nodes)
                        def fits(ks):
                            exp = sum(k.self_ns for k in ks)
                            ent = sum(max(k.entries, k.spans) for k in ks)
                            return abs(val - exp) <= exp // 1000 + 2 * slack_ns * ent
                        one = [k for k in nxt if fits([k])]
                        if len(one) == 1 and not fits(nxt):
                            nxt = one
                for k in nxt:
                    used.add(id(k))
                assign[ctx] = nxt
                del multi
            if not nxt:
                errs.append("line %d: frame %d %r is not an expected context: %s"
                            % (ln, depth + 1, fr, line[:300]))
                break
            nodes = nxt
            ecalls = sum(n.calls for n in nodes)
            ecomplete = sum(n.complete for n in nodes)
            if len(nodes) > 1 and calls is not None and all(n.calls == calls for n in nodes):
                ecalls = calls      # one displayed line for equal contexts
            if calls is not None and calls != ecalls:
                errs.append("line %d: frame %d %r has %d calls, truth %d: %s"
                            % (ln, depth + 1, fr, calls, ecalls, line[:300]))
            # under [woken by ...] a frame counts waits, not calls: whether
            # it says "(inferred)" is not checked (--wakers)
            woken = woken or name.startswith("[woken by ")
            if calls is not None and inferred != (ecomplete == 0) and not woken:
                errs.append("line %d: frame %d %r: truth has %d complete call(s): %s"
                            % (ln, depth + 1, fr, ecomplete, line[:300]))
        else:
            for n in nodes:
                seen.add(id(n))
            exp = sum(n.self_ns for n in nodes)
            entries = sum(max(n.entries, n.spans) for n in nodes)
            diff = abs(val - exp)
            tol = exp // 1000 + 2 * slack_ns * entries
            if exp and diff:
                rel = diff / exp
                if rel > max_rel:
                    max_rel, worst = rel, line[:200] + " (truth %d)" % exp
            max_abs = max(max_abs, diff)
            checked += 1
            if check_time and diff > tol:
                errs.append("line %d: %d ns, truth %d ns (tolerance %d): %s"
                            % (ln, val, exp, tol, line[:300]))
    out = []
    walk(root, [], out)
    for p in out:
        n = p[-1]
        if id(n) in seen:
            continue
        # a context with time but no line of its own: ptflame gave it 0 ns
        # (a leaf context with calls always has a line, "... 0" at least,
        # unless it shares its frame with a function of the same name that
        # has callees: the report prints one frame per name, and a frame
        # with callees and no self time no line: emu_coldxx's _fini and
        # libm's, one of them interrupted, without CYC)
        tol = n.self_ns // 1000 + 2 * slack_ns * max(n.entries, n.spans)
        if (not n.kids and id(n) not in used) or (check_time and n.self_ns > tol):
            errs.append("missing context (%d ns, %d calls, tolerance %d): %s"
                        % (n.self_ns, n.calls, tol, ";".join(frame_str(x) for x in p)))
        if n.self_ns:
            max_rel = max(max_rel, 1.0)
            max_abs = max(max_abs, n.self_ns)
    for e in errs[:40]:
        print("  " + e)
    if len(errs) > 40:
        print("  ... %d more" % (len(errs) - 40))
    print("compare: %d lines, %d errors, max relative time error %.6f%%, max abs %d ns; worst: %s"
          % (checked, len(errs), max_rel * 100, max_abs, worst))
    return 1 if errs else 0


def aux_records(perf_data):
    """{cpu: [(time, truncated)]} of the file's PERF_RECORD_AUX records, in
    time order (as perf itself reads them: `perf report -D`)"""
    out = run(["perf", "report", "-D", "-i", perf_data])
    recs = defaultdict(list)
    for ln in out.splitlines():
        m = re.match(r"\s*(\d+) (\d+) 0x[0-9a-f]+ \[0x[0-9a-f]+\]: PERF_RECORD_AUX "
                     r"offset: \S+ size: \S+ flags: (\S+)", ln)
        if m:
            recs[int(m.group(1))].append((int(m.group(2)), int(m.group(3), 16) & 1))
    for v in recs.values():
        v.sort()
    return recs


def start_lost(th, recs):
    """Was the thread's first traced instruction in AUX data that was
    dropped? The emulator writes a chunk (an AUX record stamped with the
    time it was written) as soon as it is full: the start's packets are in
    the first chunk of its CPU written at or after the start."""
    for t, truncated in recs.get(th.start_cpu, ()):
        if t >= th.first:
            return bool(truncated)
    return False


def cmd_walltime(truth, perf_data=None):
    """A thread is on its CPU from its switch-in; its trace starts 500 ns
    later (TRUTH.md), and a decoder sees the thread from that first packet.
    When that packet was in dropped AUX data, a decoder only knows the
    thread from the sideband: its switch-in, and its time from there is
    [lost] (DESIGN.md section 4). So with the recording's AUX records
    (--perf-data), such a thread's wall time starts at that switch-in."""
    m = load(truth)
    recs = aux_records(perf_data) if perf_data else {}
    for th in m.threads.values():
        if th.first is not None:
            comm = th.comm or m.threads.get(th.pid, th).comm or "unknown"
            first = th.first
            sw = getattr(th, "first_switch_in", None)
            if sw and sw[1] == th.start_cpu and getattr(th, "born_at", None) is None \
                    and start_lost(th, recs):
                first = sw[0]
            print("%d %d %s" % (th.tid, th.last - first, comm))


def cmd_paths(truth, folded):
    """each stack (pseudo-frames removed) must be a contiguous sub-path of a
    truth call path (by function)."""
    m = load(truth)
    paths = set()
    for th in m.threads.values():
        paths |= th.paths
    # name sequences: a path is a tuple of keys; keep the names of each key
    keynames = {k: set(v) for k, v in KEYNAMES.items()}
    for k, v in ALIASNAMES.items():
        keynames.setdefault(k, set()).update(v)
    for th in m.threads.values():
        def visit(n):
            for k in n.kids.values():
                keynames.setdefault(k.key, set()).update(k.names)
                visit(k)
        for seg in th.segs:
            visit(seg)
    # names_match inverted: the keys a name matches, by its exact name or by
    # its name before "@" (a plain scan of every path at every offset took
    # over 10 minutes on a tclsh recording's 4,000 paths)
    exact, base = {}, {}
    for k, v in keynames.items():
        for n in v:
            exact.setdefault(n, set()).add(k)
            if not n.endswith("@plt"):
                base.setdefault(n.split("@")[0], set()).add(k)
    memo = {}

    def keys_of(name):
        ks = memo.get(name)
        if ks is None:
            nn = norm(name)
            ks = set(exact.get(nn, ()))
            if not name.endswith("@plt"):
                ks |= base.get(nn.split("@")[0], set())
            memo[name] = ks
        return ks
    plist = list(paths)
    at = {}
    for i, p in enumerate(plist):
        for s, k in enumerate(p):
            at.setdefault(k, []).append((i, s))

    def sub_path(names):
        want = [keys_of(n) for n in names]
        for k in want[0]:
            for i, s in at.get(k, ()):
                p = plist[i]
                if s + len(names) <= len(p) and \
                        all(p[s + j] in want[j] for j in range(1, len(names))):
                    return True
        return False
    errs = 0
    rows = parse_folded(folded)
    for ln, frames, val, line in rows:
        names = [split_frame(f)[0] for f in frames]
        names = [n for n in names if not n.startswith("[") and not re.fullmatch(r".*-[0-9]+", n)
                 or n.startswith("[unknown] (")]
        # thread roots may look like "comm-tid": drop a first frame matching a thread
        if frames and re.fullmatch(r".*-[0-9]+", split_frame(frames[0])[0]) \
                and int(split_frame(frames[0])[0].rsplit("-", 1)[1]) in m.threads:
            names = [split_frame(f)[0] for f in frames[1:]]
            names = [n for n in names if not n.startswith("[") or n.startswith("[unknown] (")]
        if not names:
            continue
        if not sub_path(names):
            errs += 1
            if errs <= 20:
                print("  line %d: call path the program never had: %s" % (ln, line[:300]))
    print("paths: %d lines, %d not a sub-path of a truth call path (%d truth paths)"
          % (len(rows), errs, len(paths)))
    return 1 if errs else 0


def strip_params(n):
    """"ns::f(int) const" -> "ns::f" (perf script's demangling style)"""
    if "(" in n and not n.startswith("[") and (n.endswith(")") or n.endswith(" const")):
        return n[:n.index("(")]
    return n


def canon_map(m):
    """every alias of every function the truth's mappings hold -> one name"""
    cm = {}
    for elf in m.sym.elfs.values():
        for start, (size, names) in elf.funcs.items():
            # C++: the demangled name without parameters, as perf prints it
            # (overloads become one name there, so here too)
            dem = sorted(n for n in names if "(" in n or "::" in n)
            c = strip_params(dem[0]) if dem else pick(names)
            for n in names:
                cm.setdefault(n, c)
                cm.setdefault(n.split("@")[0] if not n.endswith("@plt") else n, c)
                cm.setdefault(strip_params(n), c)
    return cm


def canon_folded(path, cm, pre):
    """{context: [calls, self ns, child calls]}: every prefix of every line
    (its id in pre, which names the canonical frames: Prefixes.text),
    frames as canonical names (aliases of one function are one name),
    [off-cpu]/[preempted] folded into the context above them (perf script
    text has no switch events), ",avg:" dropped (latencies differ). A
    [kernel] open at the end (inferred) is left out: perf script text ends
    at the thread's last branch, the perf.data at its EXIT record. A
    [kernel] at the root is left out: a new thread's time from its FORK
    record (which text does not have) to its first packet."""
    out = {}
    seen = set()
    orig_ids = Prefixes()
    for ln, frames, val, line in parse_folded(path):
        if frames and norm(split_frame(frames[0])[0]) == "[kernel]":
            continue
        key = orig = 0
        for fr in frames:
            name, calls, inferred = split_frame(fr)
            if name in ("[off-cpu]", "[preempted]"):
                if inferred:
                    val = 0     # open at the end: no switch-in seen
                break
            name = norm(name)
            if name == "[kernel]" and inferred:
                val = 0
                break
            # perf prints C++ names without their parameter lists
            name = cm.get(name, cm.get(name.split("@")[0],
                                       cm.get(strip_params(name), strip_params(name))))
            # PLT stubs: perf script names them "x@plt", "@plt" (IRELATIVE
            # slots), "_init+0x.." (.plt.sec/.plt.got of -z now binaries) or
            # "[unknown]" (PLT0); ptflame "x@plt", "*ABS*+0x..@plt", "[.plt]"
            if name.endswith("@plt") or name in ("_init", "[.plt]"):
                name = "[plt]"
            if name.startswith("[unknown]"):
                name = "[plt]"      # perf prints PLT0 and .plt.got so
            parent = key
            orig = orig_ids.of(orig, fr)
            key = pre.of(key, "%s%s" % (name, "(inferred)" if inferred else ""))
            if key not in out:
                out[key] = [0, 0, 0]
            if orig not in seen:
                # distinct contexts that are one after renaming: add up
                seen.add(orig)
                out[key][0] += calls or 0
                if parent:
                    out[parent][2] += calls or 0
        if key:
            out[key][1] += val
    return out


def cmd_same(truth, a, b, slack_ns, jump_only_ok=False):
    """A and B (two reports of one recording) have the same contexts and
    call counts, and self times within 2 * slack per interval (one MTC
    period each end; a context's intervals: its calls plus its children's
    calls, plus one)."""
    m = load(truth)
    cm = canon_map(m)
    pre = Prefixes()
    pa, pb = canon_folded(a, cm, pre), canon_folded(b, cm, pre)
    errs = []
    # --itrace=cr text has no jumps: a function only ever entered and left
    # by jumps (tail_b in tail_a -jmp-> tail_b -jmp-> tail_c, pthread_join
    # -jmp-> __pthread_clockjoin_ex) never shows in it. With --jump-only-ok,
    # a context of A only whose own function B never names is excused.
    # (every prefix of B's lines is a context of B: its frames are its
    # contexts' last frames)
    b_names = {pre.up[k][1].split("(inferred)")[0] for k in pb}
    for t, k in sorted((pre.text(k), k) for k in set(pa) ^ set(pb)):
        leaf = pre.up[k][1].split("(inferred)")[0]
        if jump_only_ok and k in pa and leaf not in b_names:
            continue
        errs.append("context only in %s: %s" % (a if k in pa else b, t[:400]))
    max_abs = 0
    bad = []
    for k in set(pa) & set(pb):
        d = abs(pa[k][1] - pb[k][1])
        tol = 2 * slack_ns * (pa[k][0] + pa[k][2] + 1)
        max_abs = max(max_abs, d)
        if pa[k][0] != pb[k][0] or d > tol:
            bad.append((pre.text(k), k, d, tol))
    for t, k, d, tol in sorted(bad):
        if pa[k][0] != pb[k][0]:
            errs.append("%s: %d calls vs %d" % (t[:300], pa[k][0], pb[k][0]))
        if d > tol:
            errs.append("%s: %d ns vs %d ns (tolerance %d)" % (t[:300], pa[k][1], pb[k][1], tol))
    for e in errs[:30]:
        print("  " + e)
    print("same: %d/%d contexts, %d errors, max abs time difference %d ns"
          % (len(pa), len(pb), len(errs), max_abs))
    return 1 if errs else 0


def cmd_wakes(truth, timeline_path):
    """The timeline's woken waits and their arrows against the model's."""
    m = load(truth, 1)
    want, births = set(), set()
    for th in m.threads.values():
        for _node, ns, (wt, waker), t0 in th.waits:
            want.add((th.tid, t0, t0 + ns, waker, wt))
        for _node, ns, (wt, waker), t0 in th.births:
            want.add((th.tid, t0, t0 + ns, waker, wt))
            births.add((th.tid, t0, t0 + ns, waker, wt))
    d = json.load(open(timeline_path))
    ev = d["traceEvents"] if isinstance(d, dict) else d
    us = lambda x: round(x * 1000)
    got, errs = set(), []
    flows = defaultdict(dict)
    for e in ev:
        if e.get("cat") == "wake":
            flows[e["id"]][e["ph"]] = e
    spans = [e for e in ev if e.get("ph") == "X" and "woken by tid" in e.get("args", {})]
    for e in spans:
        a = e["args"]
        t0, t1 = us(e["ts"]), us(e["ts"]) + us(e["dur"])
        got.add((e["tid"], t0, t1, a["woken by tid"], us(a["wake ts"])))
        # (a new thread's wait for its first run is [preempted])
        if e.get("cat") != ("preempted" if got and (e["tid"], t0, t1, a["woken by tid"],
                                                   us(a["wake ts"])) in births else "off-cpu"):
            errs.append("a %s span has a waker: %s" % (e.get("cat"), e))
    used = set()
    for e in spans:
        a = e["args"]
        end = us(e["ts"]) + us(e["dur"])
        match = [i for i, f in flows.items() if i not in used and set(f) == {"s", "f"} and
                 f["s"]["tid"] == a["woken by tid"] and us(f["s"]["ts"]) == us(a["wake ts"]) and
                 f["f"]["tid"] == e["tid"] and f["f"].get("bp") == "e" and
                 us(e["ts"]) <= us(f["f"]["ts"]) <= end]
        if not match:
            errs.append("no arrow from the waker to %s" % e)
        else:
            used.add(match[0])
    if len(flows) != len(used):
        errs.append("%d arrows, %d woken waits" % (len(flows), len(used)))
    for w in sorted(want - got):
        errs.append("missing woken wait: tid %d [%d, %d] woken by %d at %d" % w)
    for w in sorted(got - want):
        errs.append("unexpected woken wait: tid %d [%d, %d] woken by %d at %d" % w)
    for e in errs[:20]:
        print("  " + e)
    print("wakes: %d woken waits, %d arrows, %d errors" % (len(got), len(used), len(errs)))
    return 1 if errs or not want else 0


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    global SHOW_PLT
    cmd, truth = argv[1], argv[2]
    per_thread = "--per-thread" in argv
    wakers = 0   # --wakers: 1 (the waker only); --wakers=N: chains of N
    for a in argv:
        if a == "--wakers" or a.startswith("--wakers="):
            wakers = int(a.split("=", 1)[1]) if "=" in a else 1
    SHOW_PLT = "--show-plt" in argv
    if cmd == "expect":
        cmd_expect(truth, per_thread, wakers)
        return 0
    if cmd == "walltime":
        pd = None
        for i, a in enumerate(argv):
            if a == "--perf-data":
                pd = argv[i + 1]
        cmd_walltime(truth, pd)
        return 0
    if cmd == "same":
        slack = 256
        for i, a in enumerate(argv):
            if a == "--slack-ns":
                slack = int(argv[i + 1])
        return cmd_same(truth, argv[3], argv[4], slack, "--jump-only-ok" in argv)
    if cmd == "paths":
        return cmd_paths(truth, argv[3])
    if cmd == "wakes":
        return cmd_wakes(truth, argv[3])
    if cmd == "compare":
        slack = 0
        tids = None
        for i, a in enumerate(argv):
            if a == "--slack-ns":
                slack = int(argv[i + 1])
            if a == "--only-tids":
                tids = {int(x) for x in argv[i + 1].split(",")}
        return cmd_compare(truth, argv[3], per_thread, "--no-time" not in argv, slack, tids,
                           "--no-comm" not in argv, wakers)
    print(__doc__, file=sys.stderr)
    return 2


def main_deep(argv):
    """main on a thread with a large stack: the tree's walks recurse once
    per frame, and a recursion thousands of calls deep (testdata/deeprec)
    is a stack that deep."""
    import threading
    res = [1]

    def run_main():
        res[0] = main(argv)
    sys.setrecursionlimit(200000)
    threading.stack_size(1 << 30)
    t = threading.Thread(target=run_main)
    t.start()
    t.join()
    return res[0]


if __name__ == "__main__":
    sys.exit(main_deep(sys.argv))
