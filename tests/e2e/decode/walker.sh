#!/bin/bash
# Our block decoder (decoder/ptwalk.c, the default) against libipt's, on
# every recording we have:
#  - PTFLAME_DECODER=check runs libipt's block decoder alongside the walker
#    and aborts at the first answer that differs (block, event, status, time
#    or offset), at -j 1 and -j 2 (also with eager workers, which start
#    before the first image: libipt decodes their windows);
#  - the decoder's events (dc_events) and report's folded and per-thread
#    outputs are byte-identical with the walker and with libipt's block
#    decoder only (PTFLAME_DECODER=libipt, report --pt-decoder libipt);
#  - with the walker handing each window over to libipt at its 1st, 2nd,
#    5th or 40th call (PTFLAME_WALK_BAIL: libipt repeats the calls made so
#    far, then goes on), the events are the same again;
#  - on the emulated programs the walker decodes every window itself (so
#    none of the above compares libipt with libipt).
# Recordings: a synthetic trace, the same with interrupts and with PIC calls
# and deep recursion (bench/ptenc_bench.c -i, -r), damaged copies of the
# second, the first with its last packet cut, every emu_* testdata
# program (threads and demo also on 3 CPUs, and on 2 with short time
# slices, with and without CYC) and the real recordings in
# ../shared/realtraces (skipped when absent).
. "$E2E_LIB"
# events MODE FILE OUT [env...]: dc_events, the stats' block count cut; the
# events as a digest (DC_DIGEST: their count and a hash of every field, as
# the comparisons need no more, at a quarter of the time of the text)
events() {
	local m=$1 f=$2 o=$3; shift 3
	env PTFLAME_DECODER="$m" DC_DIGEST=1 "$@" "$DC_EVENTS" "$f" 2>"$o.err" |
		sed 's/ blocks [0-9]*//' >"$o"
	[ "${PIPESTATUS[0]}" -eq 0 ] || { fail "$o: dc_events: $(grep -v 'cannot find' "$o.err" | head -c 300)"; return 1; }
}
# evdiff FILE [env...]: where the events of FILE with env... first differ
# from libipt's, as text (for a failure's message)
evdiff() {
	local f=$1; shift
	diff <(PTFLAME_DECODER=libipt DC_JOBS=1 "$DC_EVENTS" "$f" 2>/dev/null | grep -v '^# ahead') \
		<(env "$@" "$DC_EVENTS" "$f" 2>/dev/null | grep -v '^# ahead') | head -4
}
nevents() { sed -n 's/^# digest events \([0-9]*\) .*/\1/p' "$1"; }
walked() { "$DC_EVENTS" "$1" --bench 2>/dev/null | sed -n 's/^# walk windows \([0-9]*\) bails \([0-9]*\)$/\1 \2/p'; }

# compare NAME FILE [emu|some]: every check above on one recording (emu:
# the walker decodes every window itself; some: at least one)
compare() {
	local n=$1 f=$2 emu=${3:-} o k w b
	events check "$f" "$n.check1" DC_JOBS=1 || return
	events check "$f" "$n.check2" DC_JOBS=2 || return
	events check "$f" "$n.check2e" DC_JOBS=2 DC_AHEAD_EAGER=1 || return
	events libipt "$f" "$n.lib" DC_JOBS=1 || return
	events walk "$f" "$n.walk" DC_JOBS=1 || return
	events walk "$f" "$n.walk2" DC_JOBS=2 DC_AHEAD_EAGER=1 || return
	cmp -s "$n.lib" "$n.walk" ||
		{ fail "$n: events differ from libipt's: $(evdiff "$f" PTFLAME_DECODER=walk DC_JOBS=1)"; return; }
	cmp -s "$n.lib" <(grep -v '^# ahead' "$n.walk2") ||
		{ fail "$n: -j 2: events differ from libipt's: $(evdiff "$f" PTFLAME_DECODER=walk DC_JOBS=2 DC_AHEAD_EAGER=1)"; return; }
	cmp -s "$n.lib" "$n.check1" || { fail "$n: check mode: events differ from libipt's"; return; }
	for k in 1 2 5 40; do
		events walk "$f" "$n.bail$k" DC_JOBS=1 PTFLAME_WALK_BAIL=$k || return
		cmp -s "$n.lib" "$n.bail$k" ||
			{ fail "$n: handed over at call $k: events differ: $(evdiff "$f" PTFLAME_DECODER=walk DC_JOBS=1 PTFLAME_WALK_BAIL=$k)"; return; }
	done
	for o in "" --per-thread; do
		"$PTFLAME" report -q --pt-decoder libipt -i "$f" $o >"$n.rlib" 2>/dev/null
		"$PTFLAME" report -q -i "$f" $o >"$n.rwalk" 2>/dev/null
		cmp -s "$n.rlib" "$n.rwalk" || { fail "$n: report $o differs from --pt-decoder libipt"; return; }
	done
	read -r w b < <(walked "$f")
	if [ "$emu" = emu ] && { [ "${w:-0}" -lt 1 ] || [ "${b:-1}" -ne 0 ]; }; then
		fail "$n: the walker decoded ${w:-?} windows and handed ${b:-?} over (want all, none)"
		return
	fi
	if [ "$emu" = some ] && [ "${w:-0}" -lt 1 ]; then
		fail "$n: the walker decoded no window itself (handed ${b:-?} over)"
		return
	fi
	pass "$n: walker = libipt ($(nevents "$n.lib") events; walker's windows ${w:-0}, handed over ${b:-0})"
}

# a bad --pt-decoder: one line naming it, exit 2, nothing written
rm -f bad.out
expect_rc 2 "report --pt-decoder x is refused" -- "$PTFLAME" report --pt-decoder x -i /dev/null -o bad.out
[ "$(wc -l <err)" -eq 1 ] && grep -q -- "--pt-decoder" err && [ ! -e bad.out ] ||
	fail "report --pt-decoder x: want one line naming --pt-decoder and no output: $(cat err)"

"$DC_PTENC_BENCH" -s 2 -o raw.bin -p synth.data >bench.out 2>&1 || fail "ptenc_bench: $(head -c 300 bench.out)"
compare synth synth.data emu
# the decode-ahead worker walks too (its windows come with the image)
read -r w b < <(DC_JOBS=2 walked synth.data)
[ "${w:-0}" -ge 8 ] && [ "${b:-1}" -eq 0 ] && pass "synth: -j 2: $w windows walked, none handed over" ||
	fail "synth: -j 2: walked '${w:-}' handed over '${b:-}' (want >= 8, 0)"
"$DC_PTENC_BENCH" -s 1 -i 97 -o raw.bin -p intr.data >bench.out 2>&1 || fail "ptenc_bench -i: $(head -c 300 bench.out)"
compare intr intr.data emu
"$DC_PTENC_BENCH" -s 1 -r -o raw.bin -p pic.data >bench.out 2>&1 || fail "ptenc_bench -r: $(head -c 300 bench.out)"
compare pic pic.data emu
rm -f raw.bin
# damaged copies of the interrupted trace (1-5 bytes changed at random past
# its first tenth, seeded): libipt's errors and resyncs, taken over from
# the walker at each error, must come out the same
for seed in 3 4 5 6; do
	python3 - intr.data "dmg$seed.data" "$seed" <<'PY' || fail "damage $seed"
import random, sys
src, dst, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = random.Random(seed)
b = bytearray(open(src, 'rb').read())
for _ in range(r.randint(1, 5)):
    b[r.randrange(len(b) // 10, len(b))] = r.randrange(256)
open(dst, 'wb').write(b)
PY
	compare "dmg$seed" "dmg$seed.data"
	grep -q 'lost_decode [1-9]' "dmg$seed.lib" || echo "note: dmg$seed: no decode error"
done
rm -f dmg*.data

# a synthetic trace's last AUX record cut short by 5 or 6 bytes (its
# tail is a TNT, a FUP with 2 bytes of IP, a TIP.PGD and 3 PADs: the FUP
# cut after 1 or 2 of its bytes): a packet cut by the end is the end for
# libipt's packet reader, and for ours (before, the walker handed that
# window over); of a 1 MiB trace, as half the size tests the same
"$DC_PTENC_BENCH" -s 1 -o raw.bin -p synth1.data >bench.out 2>&1 || fail "ptenc_bench -s 1: $(head -c 300 bench.out)"
for cut in 5 6; do
	python3 - synth1.data "cut$cut.data" "$cut" <<'PY' || fail "cut $cut"
import struct, sys
src, dst, cut = sys.argv[1], sys.argv[2], int(sys.argv[3])
b = bytearray(open(src, 'rb').read())
off, size = struct.unpack_from('<QQ', b, 40)
pos, end, last = off, off + size, None
while pos < end:                # (PERF_RECORD_AUXTRACE: 71, its payload after it)
    typ, _, hsz = struct.unpack_from('<IHH', b, pos)
    if typ == 71:
        last = pos
    pos += hsz + (struct.unpack_from('<Q', b, pos + 8)[0] if typ == 71 else 0)
psz = struct.unpack_from('<Q', b, last + 8)[0]
assert psz > cut
struct.pack_into('<Q', b, last + 8, psz - cut)
out = b[:last + 48 + psz - cut] + b[last + 48 + psz:end]
struct.pack_into('<Q', out, 48, size - cut)
out[72:104] = bytes(32)         # (no feature sections: they would move)
open(dst, 'wb').write(out)
PY
	compare "cut$cut" "cut$cut.data" emu
done
rm -f cut*.data synth1.data raw.bin

for p in $(emu_programs); do
	rec_emu "$p" "$p" && compare "$p" "$p.data" emu
done
# the digest is of every field: computed again here from threads' events as
# text (names with no spaces there), it must be dc_events' own
python3 - threads.data <<'PY' && pass "digest: every field of every event and comm" || fail "digest"
import os, struct, subprocess, sys
ev = os.environ['DC_EVENTS']
kinds = ['?', 'call', 'ret', 'jump', 'on', 'off', 'lost', 'inline']
def run(extra):
    env = dict(os.environ, PTFLAME_DECODER='walk', DC_JOBS='1', **extra)
    return subprocess.run([ev, sys.argv[1]], env=env, capture_output=True, text=True,
                          check=True).stdout.splitlines()
h, n = 0xcbf29ce484222325, 0
def fnv(b):
    global h
    for c in b:
        h = ((h ^ c) * 0x100000001b3) & (2**64 - 1)
def u64(*v):
    fnv(struct.pack('<%dQ' % len(v), *[x & (2**64 - 1) for x in v]))
for line in run({}):
    f = line.split(' ')
    if line.startswith('# comm '):
        u64(ord('c'), int(f[2]), int(f[3]), int(f[4]))
        fnv(' '.join(f[5:]).encode() + b'\0')
    elif not line.startswith('#'):
        t, cpu, pid, tid, k, r, a, b, na, nb, sn = f
        u64(ord('e'), int(t), int(cpu) & 0xffff, int(pid), int(tid), kinds.index(k), int(r),
            int(a, 16), int(b, 16), int(sn) & 0xffffffff)
        fnv(na.encode() + b'\0' + nb.encode() + b'\0')
        n += 1
want = '# digest events %d hash %016x' % (n, h)
got = [l for l in run({'DC_DIGEST': '1'}) if l.startswith('# digest')]
if n < 100 or got != [want]:
    sys.exit('digest: %s, want %s' % (got, want))
PY
for p in threads demo; do
	rec_emu "$p.cpus3" "$p" --cpus 3 && compare "$p.cpus3" "$p.cpus3.data" emu
	rec_emu "$p.preempt" "$p" --cpus 2 --time-slice 300 && compare "$p.preempt" "$p.preempt.data" emu
	rec_emu "$p.nocyc" "$p" --cpus 2 --time-slice 300 --no-cyc &&
		compare "$p.nocyc" "$p.nocyc.data" emu
done
# Programs of our own (testdata/walk_*.c): code where libipt's blocks depend
# on its block cache (a function falling into the next: its first pass ends
# a block at the entry it knows, a later one does not; a far return, which
# its cache classes ptic_error after the first pass), loop and jrcxz, a call
# to the next instruction; and a process that execs itself (its image
# rebuilt in place in mid-window), handed over to libipt at every call.
rec_walk() {  # NAME: record testdata/NAME
	"$PTFLAME" record --emulate -q -o "$1.data" -- "$TESTDATA/$1" >"$1.rec" 2>&1 ||
		{ fail "record $1: $(head -c 300 "$1.rec")"; return 1; }
}
for p in walk_insns walk_far; do
	rec_walk "$p" && compare "$p" "$p.data" emu
done
# sweep NAME FILE: the walker handed over to libipt at each call in turn (up
# to events + blocks + 8: the calls of a window walked whole, as these are;
# blocks counts straight runs, which is what the walker's blocks are)
sweep() {
	local n=$1 f=$2 k max bad=0
	events libipt "$f" "$n.slib" DC_JOBS=1 || return
	max=$("$DC_EVENTS" "$f" --bench 2>/dev/null |
		sed -n 's/^# stats .* events \([0-9]*\) blocks \([0-9]*\).*/\1 \2/p' |
		awk '{print $1 + $2 + 8}')
	for k in $(seq 1 "${max:-0}"); do
		events walk "$f" "$n.sk" DC_JOBS=1 PTFLAME_WALK_BAIL=$k || return
		cmp -s "$n.slib" "$n.sk" || { bad=$k; break; }
	done
	[ "$bad" -eq 0 ] && pass "$n: handed over at each of calls 1..$max: libipt's events" ||
		fail "$n: handed over at call $bad: events differ: $(evdiff "$f" PTFLAME_DECODER=walk DC_JOBS=1 PTFLAME_WALK_BAIL=$bad)"
}
# (an exec rebuilds the process's image in place: a walker that has read
# code of the old one hands the window over first, so not "emu" here)
rec_walk walk_exec && compare walk_exec walk_exec.data && sweep walk_exec walk_exec.data
for p in dlopen signal longjmp; do
	[ -f "$p.data" ] && sweep "$p.sweep" "$p.data"
done
# (their binaries are not here: no code, as libipt finds none, and the
# walker goes on at the next PSB as libipt does, not handing over)
each_real compare some
finish
