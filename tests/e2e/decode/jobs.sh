#!/bin/bash
# report -j N: the same output for every N. Decoding ahead in worker
# threads (dc_ptq_config.ahead) must give exactly the events of decoding in
# one thread, on every recording we have:
#  - a synthetic per-thread trace of many windows (bench/ptenc_bench.c):
#    the workers decode (nearly) every window, nothing goes back;
#  - every emu_* testdata program recorded with --emulate (threads and demo
#    also on 3 CPUs, and on 2 with 300-instruction time slices), the
#    real Intel PT recordings ../shared/realtraces/*.data (skipped when
#    absent), with the workers started at once (DC_AHEAD_EAGER: before the
#    first context, so each window is replayed and every image change, exec,
#    dlopen and decoding path the worker does not take goes back to the
#    main thread on these small traces);
# the decoder's events (dc_events) and report's folded stacks, per-thread
# stacks and table at -j 1, 2 and 4 must be byte-identical. At -j 2 the one
# worker thread serves every queue (dc_ptq_pool).
# The session's merge is checked on each too: its runs of one queue's
# events (deliver_run) give what taking every event through the heap gives
# (PTFLAME_MERGE=step), and every event, comm, wake and fork comes in time
# order (DC_ORDER). A per-CPU trace made under qemu, two threads whose
# events interleave, is what a run out of order shows on.
. "$E2E_LIB"
ahead() { sed -n 's/^# ahead windows \([0-9]*\) deviations \([0-9]*\)$/\1 \2/p' "$1"; }
# the events are compared as digests (DC_DIGEST: their count and a hash of
# every field; e2e-decode-walker checks the hash against the text), at a
# quarter of the time of the text; evdiff FILE J [env...]: where the text
# of -j J (with env...) first differs from -j 1's, for a failure's message
export DC_DIGEST=1 DC_ORDER=1
nevents() { sed -n 's/^# digest events \([0-9]*\) .*/\1/p' "$1"; }
evdiff() {
	local f=$1 j=$2; shift 2
	diff <(DC_DIGEST= DC_JOBS=1 "$DC_EVENTS" "$f" 2>/dev/null | grep -v '^# ahead') \
		<(env DC_DIGEST= DC_JOBS="$j" "$@" "$DC_EVENTS" "$f" 2>/dev/null | grep -v '^# ahead') | head -5
}
# same NAME FILE: events and report outputs, and their warnings, at -j 1,
# 2, 4 (eager workers for the events when EAGER=1)
same() {
	local n=$1 f=$2 j o
	for j in 1 2 4; do
		DC_JOBS=$j "$DC_EVENTS" "$f" >"$n.ev$j" 2>"$n.everr$j" || { fail "$n: dc_events -j $j: $(head -c 300 "$n.everr$j")"; return; }
		for o in "" --per-thread "--table --raw"; do
			"$PTFLAME" report -q -j $j -i "$f" $o >"$n.rep$j${o// /}" 2>"$n.reperr$j${o// /}" ||
				{ fail "$n: report -j $j $o: $(head -c 300 "$n.reperr$j${o// /}")"; return; }
		done
	done
	PTFLAME_MERGE=step DC_JOBS=1 "$DC_EVENTS" "$f" >"$n.evstep" 2>"$n.evsteperr" ||
		fail "$n: dc_events, merged step by step: $(head -c 300 "$n.evsteperr")"
	cmp -s "$n.ev1" "$n.evstep" && pass "$n: the merge's runs give the events of the step-by-step merge" ||
		fail "$n: the merge's runs give other events than the step-by-step merge: $(evdiff "$f" 1 PTFLAME_MERGE=step)"
	for j in 2 4; do
		if cmp -s <(grep -v '^# ahead' "$n.ev1") <(grep -v '^# ahead' "$n.ev$j"); then
			pass "$n: events at -j $j as at -j 1 ($(nevents "$n.ev1") events; ahead: $(ahead "$n.ev$j"))"
		else
			fail "$n: events at -j $j differ from -j 1: $(evdiff "$f" "$j")"
		fi
		cmp -s "$n.everr1" "$n.everr$j" ||
			fail "$n: dc_events warnings at -j $j differ: $(diff "$n.everr1" "$n.everr$j" | head -5)"
		for o in "" --per-thread --table--raw; do
			cmp -s "$n.rep1$o" "$n.rep$j$o" || fail "$n: report -j $j $o differs from -j 1"
			cmp -s "$n.reperr1$o" "$n.reperr$j$o" ||
				fail "$n: report -j $j $o warnings differ: $(diff "$n.reperr1$o" "$n.reperr$j$o" | head -5)"
		done
	done
}

# bad counts: one line, exit 2, nothing written
for v in 0 x 1025 -1 ""; do
	rm -f bad.out
	expect_rc 2 "report -j '$v' is refused" -- "$PTFLAME" report -j "$v" -i /dev/null -o bad.out
	[ "$(wc -l <err)" -eq 1 ] && grep -q -- "--jobs" err && [ ! -e bad.out ] ||
		fail "report -j '$v': want one line naming --jobs and no output: $(cat err)"
done

# the synthetic trace: 6 MiB in 1 MiB chunks, one window each
"$DC_PTENC_BENCH" -s 6 -o raw.bin -p synth.data >bench.out 2>&1 || fail "ptenc_bench: $(head -c 300 bench.out)"
rm -f raw.bin
same synth synth.data
read -r w d < <(ahead synth.ev2)
[ "${w:-0}" -ge 4 ] && [ "${d:-1}" -eq 0 ] && pass "synth: $w windows decoded ahead, none went back" ||
	fail "synth: ahead windows '${w:-}' deviations '${d:-}' (want >= 4 and 0)"
grep -q ":$(sed -n 's/^expected_calls=//p' bench.out),avg:" synth.rep2 &&
	pass "synth: -j 2 has every call" || fail "synth: -j 2 misses calls"
# with the worker from the first window (DC_AHEAD_EAGER), the queue builds
# a window ahead of it at each of the 24 windows it opens: the same events
DC_AHEAD_EAGER=1 DC_JOBS=2 "$DC_EVENTS" synth.data >synth.eager 2>synth.eagererr ||
	fail "synth: eager dc_events: $(head -c 300 synth.eagererr)"
cmp -s <(grep -v '^# ahead' synth.ev1) <(grep -v '^# ahead' synth.eager) ||
	fail "synth: eager -j 2 events differ from -j 1: $(evdiff synth.data 2 DC_AHEAD_EAGER=1)"
pb=$(sed -n 's/^# ahead prebuilt \([0-9]*\)$/\1/p' synth.eager)
[ "${pb:-0}" -ge 1 ] && pass "synth: $pb windows built by the queue ahead of its worker, same events" ||
	fail "synth: ahead prebuilt '${pb:-}' (want >= 1)"

# no thread to be had (pthread_create fails, as at a process limit): -j 2
# goes on in one thread, says so in one warning, prints what -j 1 prints
if LD_PRELOAD="$NOTHREADS" "$PTFLAME" report -q -j 2 -i synth.data >synth.nothr 2>synth.nothrerr; then
	cmp -s synth.rep1 synth.nothr && [ "$(grep -c 'cannot start a decoding thread' synth.nothrerr)" = 1 ] &&
		pass "synth: with no thread to be had, -j 2 decodes in one thread, one warning" ||
		fail "synth: no threads: output differs from -j 1 or no single warning: $(head -c 300 synth.nothrerr)"
else
	fail "synth: -j 2 with no thread to be had failed: $(head -c 300 synth.nothrerr)"
fi

# real programs, workers from the first window
export DC_AHEAD_EAGER=1
for p in $(emu_programs); do
	rec_emu "$p" "$p" && same "$p" "$p.data"
done
for p in threads demo; do
	rec_emu "$p.cpus3" "$p" --cpus 3 && same "$p.cpus3" "$p.cpus3.data"
	rec_emu "$p.preempt" "$p" --cpus 2 --time-slice 300 && same "$p.preempt" "$p.preempt.data"
done
# eager workers did decode ahead (and had to go back at the first context)
read -r w d < <(ahead threads.cpus3.ev4)
[ "${w:-0}" -ge 1 ] && [ "${d:-0}" -ge 1 ] && pass "threads.cpus3: $w windows replayed, $d went back" ||
	fail "threads.cpus3: ahead windows '${w:-}' deviations '${d:-}'"
# one worker thread (-j 2) decodes ahead for every queue, not only for
# the largest: both CPU queues of threads.cpus3 had windows replayed
nq=$(sed -n 's/^# stats queues \([0-9]*\) .*/\1/p' threads.cpus3.ev2)
aq=$(sed -n 's/^# ahead queues \([0-9]*\)$/\1/p' threads.cpus3.ev2)
[ "${nq:-0}" -ge 2 ] && [ "${aq:-0}" -eq "$nq" ] &&
	pass "threads.cpus3: one worker thread decoded ahead for all $aq queues" ||
	fail "threads.cpus3 -j 2: ahead queues '${aq:-}' of '${nq:-}' (want all, >= 2)"
# with threads to spare, the DWARF of each binary the trace's IP packets go
# to is opened ahead (decoder/prescan.h, dc_sym_preload_from), and no other:
# demo's program, ld.so and libc; the synthetic trace runs code of its
# generator only, which maps libc and more. The events with inline frames
# are those of -j 1, which opens nothing ahead.
asked() { sed -n 's/^# ahead dwarf asked \([0-9]*\) .*/\1/p' "$1"; }
for n in demo synth; do
	for j in 1 2; do
		# (demo's as text: its inline events are counted below)
		DC_DIGEST=$([ $n = synth ] && echo 1) DC_INLINE=1 DC_JOBS=$j "$DC_EVENTS" $n.data >$n.inl$j 2>$n.inlerr$j ||
			fail "$n: dc_events with inline frames -j $j: $(head -c 300 $n.inlerr$j)"
	done
	cmp -s <(grep -v '^# ahead' $n.inl1) <(grep -v '^# ahead' $n.inl2) && cmp -s $n.inlerr1 $n.inlerr2 ||
		fail "$n: the events with inline frames, or their warnings, differ at -j 2"
	[ -z "$(asked $n.inl1)" ] || fail "$n: DWARF asked ahead at -j 1"
done
maps=$("$PTFLAME" dump synth.data | grep -c ' MMAP2\? .*r-xp.* file /')
grep -q ' inline ' demo.inl1 && [ "$(asked demo.inl2)" = 3 ] && [ "$(asked synth.inl2)" = 1 ] &&
	[ "$maps" -ge 3 ] &&
	pass "DWARF asked ahead at -j 2: demo's 3 binaries; the synthetic trace's 1 of $maps mapped; the same $(grep -c ' inline ' demo.inl1) inline events as at -j 1" ||
	fail "DWARF asked ahead at -j 2: demo '$(asked demo.inl2)' (want 3), synth '$(asked synth.inl2)' of $maps mapped (want 1)"
each_real same
if ! command -v qemu-x86_64 >/dev/null; then
	echo "qemu-x86_64 not installed: the per-CPU diverge trace is not made"
elif "$PTFLAME" record --emulate=qemu -q -o diverge.data -- "$TESTDATA/flat_diverge" 300000 200 \
	>diverge.rec 2>&1; then
	same diverge diverge.data
else
	fail "diverge: record: $(head -c 300 diverge.rec)"
fi
finish
