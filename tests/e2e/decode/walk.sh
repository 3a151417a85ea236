#!/bin/bash
# bench/ipt_walk.c, the moonshot's prototype (issue 12): a walker of our
# own, with a cache of block ends over libipt's packet decoder, must find
# exactly the calls and returns libipt's block decoder finds (ipt_bare and
# ipt_bare -w: their count, the hash of their sequence and the decode
# errors), on every recording we have: a synthetic per-thread trace, every
# emu_* testdata program recorded with --emulate (per-thread; threads and
# demo also on 2 and 3 CPUs with preemption, and without CYC with a PSB
# every 256 bytes), the synthetic loop interrupted at every place in it, a
# synthetic loop with a call to the next instruction and a deep recursion,
# three damaged copies of the synthetic trace, and the real Intel PT
# recordings when present (their binaries are not, so both must fail alike
# there). On the same recordings, libipt's query decoder and ours
# (ipt_bare -q, -Q) give the same answers and times (their hash).
. "$E2E_LIB"
flow() { grep -o 'branches=[0-9]* .*hash=[0-9a-f]*' "$1" | sed 's/mbranch_s=[0-9.]* //'; }
qflow() { grep -o 'blocks=[0-9]* .*hash=[0-9a-f]*' "$1" | sed 's/ insns.*errors/ errors/'; }
# same NAME FILE [MIN]: libipt's calls and returns and the walker's agree
# (and are at least MIN of them), decoding in the usual 4 MiB pieces, in
# pieces of 4 KiB and on the data cut after each of its first 3 KiB (a
# decoder must stop where its data ends: after TNT bits not used yet, a
# TIP.PGE, a FUP without its TIP.PGD, half a packet)
same() {
	local n=$1 f=$2 min=${3:-1} b w c
	for c in 4096 4; do
		"$IPT_BARE" -c $c "$f" >"$n.bare" 2>"$n.err" || { fail "$n: ipt_bare: $(head -c 300 "$n.err")"; return; }
		"$IPT_BARE" -w -c $c "$f" >"$n.walk" 2>"$n.err" || { fail "$n: ipt_bare -w: $(head -c 300 "$n.err")"; return; }
		b=$(flow "$n.bare") w=$(flow "$n.walk")
		if [ -z "$b" ] || [ "$b" != "$w" ]; then
			fail "$n (pieces of $c KiB): the walker's '$w' is not libipt's '$b'"
		elif [ "$(sed -n 's/.*branches=\([0-9]*\).*/\1/p' "$n.bare")" -lt "$min" ]; then
			fail "$n: only '$b' (want at least $min calls and returns)"
		else
			pass "$n (pieces of $c KiB): $b"
		fi
	done
	# our query decoder (decoder/ptquery.h, report's) answers every query
	# of the query layer's loop as libipt's does, and the time after each
	"$IPT_BARE" -q "$f" >"$n.q" 2>"$n.err" && "$IPT_BARE" -Q "$f" >"$n.Q" 2>>"$n.err" ||
		{ fail "$n: ipt_bare -q/-Q: $(head -c 300 "$n.err")"; return; }
	b=$(qflow "$n.q") w=$(qflow "$n.Q")
	if [ -n "$b" ] && [ "$b" = "$w" ]; then
		pass "$n: query layer, ours = libipt's: $b"
	else
		fail "$n: our query decoder's '$w' is not libipt's '$b'"
	fi
	# and the data cut after each of its first 3 KiB: every way it can end
	"$IPT_BARE" -x "$f" >"$n.cross" 2>"$n.err" || { fail "$n: ipt_bare -x: $(head -c 300 "$n.err")"; return; }
	if grep -q ' errors=0 ' "$n.cross" && ! grep -q ' blocks=0 ' "$n.cross"; then
		pass "$n: the same at $(sed -n 's/.* blocks=\([0-9]*\).*/\1/p' "$n.cross") cuts"
	else
		fail "$n: cuts where the walker is not libipt: $(head -c 400 "$n.err")"
	fi
}

"$DC_PTENC_BENCH" -s 9 -o raw.bin -p synth.data >bench.out 2>&1 || fail "ptenc_bench: $(head -c 300 bench.out)"
rm -f raw.bin
same synth synth.data 100000
# the same loop interrupted before every 97th instruction: each place of it
"$DC_PTENC_BENCH" -s 1 -i 97 -o raw.bin -p irq.data >bench.out 2>&1 || fail "ptenc_bench -i: $(head -c 300 bench.out)"
rm -f raw.bin
same irq irq.data 100000
# a call to the next instruction (no return: not pushed) and a recursion
# 100 deep (the returns past the 64 kept are TIPs)
"$DC_PTENC_BENCH" -s 1 -r -o raw.bin -p deep.data >bench.out 2>&1 || fail "ptenc_bench -r: $(head -c 300 bench.out)"
rm -f raw.bin
same deep deep.data 100000
# damaged copies of the synthetic trace (a TIP in the middle of its first
# chunk overwritten): invalid packets, a TIP to 0, a TIP to the top address;
# libipt resyncs at the next PSB, and so must the walker. The TIP is the
# first 0x2d after the middle that is no PSB+'s: a PSB+'s FUP carries the
# whole address, whose bytes (ASLR) are 0x2d now and then. Damage there
# (psbplus: the FUP and PSBEND overwritten) is checked apart: the walker
# must see an error and go on at the next PSB, with the branches libipt
# finds give or take the one whose query the bad PSB+ fails in libipt (it
# ended the piece, without an error, before).
for kind in badopc tip0 tipmax psbplus; do
	python3 - synth.data "$kind.data" "$kind" "$PTFLAME" <<'PY' || fail "damage $kind"
import re, subprocess, sys
src, dst, kind, ptflame = sys.argv[1:5]
d = bytearray(open(src, 'rb').read())
dump = subprocess.run([ptflame, 'dump', src], capture_output=True, text=True).stdout
m = re.search(r'AUXTRACE size (0x[0-9a-f]+) .*payload@(0x[0-9a-f]+)', dump)
size, off = int(m.group(1), 16), int(m.group(2), 16)
psbend = b'\x02\x23'
if kind == 'psbplus':
    # the FUP's last byte and what follows, through PSBEND and beyond
    i = d.index(psbend, off + size // 2)
    while d.rfind(b'\x02\x82' * 8, off, i) < d.rfind(psbend, off, i):
        i = d.index(psbend, i + 1)   # (those bytes in a payload: no PSBEND)
    i -= 1
    new = b'\x02\x02' * 4
else:
    i = d.index(b'\x2d', off + size // 2)
    while d.rfind(psbend, off, i) < d.rfind(b'\x02\x82' * 8, off, i):
        i = d.index(b'\x2d', i + 1)   # (inside a PSB+: its FUP's address)
    new = {'badopc': b'\x02\x02' * 4, 'tip0': b'\xcd' + b'\x00' * 8,
           'tipmax': b'\x6d' + b'\xff' * 6}[kind]
d[i:i + len(new)] = new
open(dst, 'wb').write(d)
PY
	"$IPT_BARE" -c 4096 "$kind.data" >"$kind.bare" 2>&1
	"$IPT_BARE" -w -c 4096 "$kind.data" >"$kind.walk" 2>&1
	b=$(flow "$kind.bare") w=$(flow "$kind.walk")
	if [ "$kind" = psbplus ]; then
		nb=$(sed -n 's/.*branches=\([0-9]*\).*/\1/p' "$kind.bare")
		nw=$(sed -n 's/.*branches=\([0-9]*\).*/\1/p' "$kind.walk")
		if [ -n "$nb" ] && [ -n "$nw" ] && [ $((nw - nb)) -le 1 ] && [ $((nb - nw)) -le 1 ] &&
		   ! grep -q ' errors=0 ' "$kind.walk" && ! grep -q ' errors=0 ' "$kind.bare"; then
			pass "damaged ($kind): walker '$w', libipt '$b'"
		else
			fail "damaged ($kind): the walker's '$w' against libipt's '$b'"
		fi
	elif [ -n "$b" ] && [ "$b" = "$w" ] && ! grep -q ' errors=0 ' "$kind.bare"; then
		pass "damaged ($kind): $b"
	else
		fail "damaged ($kind): the walker's '$w' is not libipt's '$b' (or no error)"
	fi
done
for p in $(emu_programs); do
	rec_emu "$p" "$p" && same "$p" "$p.data" 3
done
for p in threads demo; do
	rec_emu "$p.cpus3" "$p" --cpus 3 && same "$p.cpus3" "$p.cpus3.data" 100
	rec_emu "$p.preempt" "$p" --cpus 2 --time-slice 300 && same "$p.preempt" "$p.preempt.data" 100
	rec_emu "$p.nocyc" "$p" --cpus 2 --time-slice 300 --no-cyc --psb-period 256 &&
		same "$p.nocyc" "$p.nocyc.data" 100
done
# the walker does walk: no instruction of libipt's is counted, blocks are
grep -q 'insns=0 ' threads.cpus3.walk && ! grep -q ' blocks=0 ' threads.cpus3.walk &&
	pass "the walker walks its own blocks" || fail "walker output: $(cat threads.cpus3.walk)"
each_real same 0
finish
