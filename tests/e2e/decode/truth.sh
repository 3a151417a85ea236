#!/bin/bash
# decoder/ on emulated recordings: per thread, the decoded calls, returns
# and jumps equal the emulator's truth log exactly, with times within one
# MTC period; syscalls and context switches match; with injected overflows
# and dropped AUX data nothing is invented and the loss is reported.
. "$E2E_LIB"
E=("$PTFLAME" record --emulate -q)

check() {  # NAME RECORD-OPTIONS... -- PROG [ARGS]: record, decode, compare exactly
	local name=$1; shift
	if ! "${E[@]}" -o "$name.data" --truth "$name.truth" "$@" 2>"$name.err"; then
		fail "$name: record failed: $(head -c 300 "$name.err")"; return
	fi
	if ! "$DC_EVENTS" "$name.data" >"$name.ev" 2>"$name.derr"; then
		fail "$name: decode failed: $(head -c 300 "$name.derr")"; return
	fi
	# (virtual time spans milliseconds here: a forked child's clock once
	# started a whole host clock late, in the truth and the trace alike)
	local span
	span=$(awk '!/^#/ {t = $1 + 0; if (!lo || t < lo) lo = t; if (t > hi) hi = t}
		    END {printf "%d", (hi - lo) / 1e9}' "$name.truth")
	[ "$span" -lt 60 ] || fail "$name: the truth log spans $span s of virtual time"
	if python3 "$TRUTHCMP" $LOSSY "$name.truth" "$name.ev" >"$name.cmp" 2>&1; then
		pass "$name: $(tail -1 "$name.cmp")"
	else
		fail "$name: $(head -c 600 "$name.cmp")"
	fi
}

LOSSY=
check nested -- "$TESTDATA/emu_nested"
check tail -- "$TESTDATA/emu_tail"
# conditional branches at function boundaries: taken into another function
# a jump, not taken (into the next function, into bytes no symbol covers)
# none, with either emulator (this script's default is the ptrace one)
check jcc -- "$TESTDATA/emu_jcc"
if command -v qemu-x86_64 >/dev/null; then
	check jcc-qemu --emulate=qemu -- "$TESTDATA/emu_jcc"
	# the qemu backend's forked child goes on at its birth (the span
	# check in check(): its clock started a whole host clock late)
	check forkexec-qemu --emulate=qemu --follow-fork -- "$TESTDATA/emu_forkexec"
fi
grep -q ' jump 0 0x[0-9a-f]* 0x[0-9a-f]* jcc_tail jcc_target ' jcc.ev &&
	pass "jcc: the taken conditional tail jump decoded" || fail "jcc: no jump from jcc_tail to jcc_target"
check fptr -- "$TESTDATA/emu_fptr"
check longjmp -- "$TESTDATA/emu_longjmp"
check signal -- "$TESTDATA/emu_signal"
check except -- "$TESTDATA/emu_except"
check dlopen -- "$TESTDATA/emu_dlopen"
# two libraries dlopened and closed in turn, each mapped over the last: the
# image changes in place at every round (mappings end, others come; under
# ptrace, where each is mapped at the last one's address)
check dlchurn --emulate=ptrace -- "$TESTDATA/dl_churn" "$TESTDATA/libemu_plugin.so" "$TESTDATA/libdl_churn_b.so" 12
grep -q ' call .* mix ' dlchurn.ev && grep -q ' call .* helper ' dlchurn.ev &&
	pass "dlchurn: code of both libraries decoded" || fail "dlchurn: not both libraries' code decoded"
# a forked child that execs: its mappings copied, then replaced
check forkexec --follow-fork -- "$TESTDATA/emu_forkexec"
check demo --cpus 2 -- "$TESTDATA/emu_demo"
# code in the [vdso] is decoded from our own vdso (same kernel)
check vdso -- "$TESTDATA/dc_vdso"
grep -q ' ret 0 .* __vdso_clock_gettime clock_gettime ' vdso.ev &&
	pass "vdso: returns out of __vdso_clock_gettime decoded" || fail "vdso: no vdso code decoded"
# two threads on 2 virtual CPUs: switches, migration, blocking
check threads --cpus 2 --time-slice 300 -- "$TESTDATA/emu_threads"
# ... and every branch time exact, also right after each resume: CYC
# calibration across a trace gap (ptdecode.c, cyc_fix) keeps libipt's
# cycle-to-TSC ratio right (without it: several branches 16-28 ns early
# per run, and time standing still for an MTC period after a gap of whole
# MTC wraps).
python3 "$TRUTHCMP" --tol-ns=0 --tol-share=0 threads.truth threads.ev >threads.exact 2>&1 &&
	pass "threads: $(tail -1 threads.exact)" || fail "threads, exact: $(head -c 400 threads.exact)"
# many PSBs and tiny AUX chunks: windows that stop at PSBs and go on
check psb256 --psb-period 256 -- "$TESTDATA/emu_nested"
# ... exact too: a PSB+ met in flow anchors the instruction after the last
# one decoded, not the next branch that takes a packet (ptdecode.c, psb_t)
python3 "$TRUTHCMP" --tol-ns=0 --tol-share=0 psb256.truth psb256.ev >psb256.exact 2>&1 &&
	pass "psb256: $(tail -1 psb256.exact)" || fail "psb256, exact: $(head -c 400 psb256.exact)"
check chunks --aux-chunk 64 --psb-period 256 --cpus 2 --time-slice 300 -- "$TESTDATA/emu_threads"
# ... exact as well: a window that stops at a PSB goes on there as with a
# PSB+ in flow (a sync anchored there gave the branch before it, often a
# TIP, the PSB's time: most runs off by some ns before the fix)
python3 "$TRUTHCMP" --tol-ns=0 --tol-share=0 chunks.truth chunks.ev >chunks.exact 2>&1 &&
	pass "chunks: $(tail -1 chunks.exact)" || fail "chunks, exact: $(head -c 400 chunks.exact)"
grep -q ', [1-9][0-9]* of [0-9]* syscall numbers known' threads.cmp &&
	pass "threads: syscall numbers read from the code" || fail "threads: no syscall number known"
# MTC only (no CYC): times within one MTC period
check nocyc --no-cyc -- "$TESTDATA/emu_threads"

LOSSY=--lossy
check ovf --inject-ovf 40 -- "$TESTDATA/emu_nested"
check drop --drop-aux 2 -- "$TESTDATA/emu_except"
# threads whose start lies in dropped data: they still get LOST events,
# from their switch-in to their exit (--walltime)
LOSSY="--lossy --few --walltime"
check tdrop2 --drop-aux 2 --aux-chunk 256 -- "$TESTDATA/emu_threads"
check tdrop3 --drop-aux 3 --aux-chunk 256 -- "$TESTDATA/emu_threads"
# The same made deterministic (tdrop3 hit it only when the emulator's timing
# put every chunk of one CPU on a dropped turn): a CPU whose data is all
# lost has no AUXTRACE record, only TRUNCATED AUX records, yet every thread
# switched in there gets LOST(TRUNCATED) at that switch-in. tcpu1: chunks
# bigger than the trace are cut only at the end, CPU 0's first (kept), CPU
# 1's second (dropped). tlost1/2: every chunk dropped. tnosync: a queue that
# never resyncs after a drop (no PSB follows).
check tcpu1 --cpus 2 --drop-aux 2 --aux-chunk 1073741824 -- "$TESTDATA/emu_threads"
check tlost1 --cpus 1 --drop-aux 1 --aux-chunk 256 -- "$TESTDATA/emu_threads"
check tlost2 --cpus 2 --drop-aux 1 --aux-chunk 256 --time-slice 300 -- "$TESTDATA/emu_threads"
check tnosync --cpus 1 --drop-aux 2 --aux-chunk 256 --psb-period 1073741824 -- \
	"$TESTDATA/emu_threads"
lost_cpus() {  # NAME CPU...: every switch-in on these CPUs has its LOST
	local n=$1 c; shift
	for c in "$@"; do
		awk -v c="$c" '$2 == c && $5 == "switch-in" {print $1, $2, $3, $4}' $n.truth |
			sort -u >$n.in$c
		awk -v c="$c" '$2 == c && $5 == "lost" && $6 == 2 {print $1, $2, $3, $4}' $n.ev |
			sort -u >$n.lost$c
		if [ ! -s $n.in$c ]; then
			fail "$n: no thread ran on cpu $c (the test needs one)"
		elif m=$(comm -23 $n.in$c $n.lost$c | head -3) && [ -n "$m" ]; then
			fail "$n: switch-ins on cpu $c without LOST(TRUNCATED): $m"
		else
			pass "$n: $(wc -l <$n.in$c) switch-ins on cpu $c, each with its LOST(TRUNCATED)"
		fi
	done
}
[ "$(awk '$5 == "drop-aux" {print $2, $6}' tcpu1.truth)" = "1 0" ] ||
	fail "tcpu1: not the one drop the test needs: $(grep drop-aux tcpu1.truth)"
lost_cpus tcpu1 1
lost_cpus tlost1 0
lost_cpus tlost2 0 1
for n in tlost1 tlost2; do
	grep -q '^[0-9]* [0-9-]* [0-9]* [0-9]* \(call\|ret\|jump\|on\) ' $n.ev &&
		fail "$n: events out of lost data"
	# one queue per CPU that lost data, though none has an AUXTRACE record
	cpus=$(awk '$5 == "drop-aux" {print $2}' $n.truth | sort -u | wc -l)
	q=$(sed -n 's/^# stats queues \([0-9]*\) .* lost_truncated \([0-9]*\) .*/\1 \2/p' $n.ev)
	[ "${q% *}" = "$cpus" ] && [ "${q#* }" -ge "$cpus" ] &&
		pass "$n: $cpus queues without data, each lost (stats: queues, lost_truncated $q)" ||
		fail "$n: stats queues, lost_truncated '$q', want $cpus queues"
done
grep -q '^[0-9].* lost 1 ' ovf.ev && pass "ovf: LOST(OVF) events" || fail "ovf: no LOST(OVF) event"
grep -q '^[0-9].* lost 2 ' drop.ev && pass "drop: LOST(TRUNCATED) events" || fail "drop: no LOST(TRUNCATED) event"
grep -q '^[0-9].* on 4 ' ovf.ev && pass "ovf: TRACE_ON(SYNC) after the loss" || fail "ovf: no resync"

# a missing binary: its code is [unknown] (path), reported once, no crash
mkdir -p gone && cp "$TESTDATA/emu_nested" gone/prog
"${E[@]}" -o gone.data -- gone/prog 2>/dev/null || fail "gone: record failed"
rm -f gone/prog
if "$DC_EVENTS" gone.data >gone.ev 2>gone.err; then
	pass "gone: decodes without its binary"
else
	fail "gone: decode failed: $(head -c 300 gone.err)"
fi
n=$(grep -c 'cannot find .*gone/prog' gone.err)
[ "$n" -eq 1 ] && pass "gone: the missing binary reported once" || fail "gone: reported $n times"
grep -q '\[unknown\]_(.*gone/prog)' gone.ev && pass "gone: its code shows as [unknown] (path)" ||
	fail "gone: no [unknown] (path) names: $(head -c 300 gone.ev)"
finish
