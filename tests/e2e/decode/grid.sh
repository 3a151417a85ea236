#!/bin/bash
# issue 11 item 9: the 0.1 % promise of report against the emulator's truth
# holds for coarse and fine clocks: a grid of --ns-per-insn (1 ns to 1 us
# per instruction) and MTC periods (2^0 to 2^15 CTC ticks), with CYC, on a
# signal program, on faults inside blocks, and on threads preempted across
# 2 CPUs. (A PGE anchored
# at the instruction before it put every branch after it half an
# instruction late: at 1000 ns per instruction a handler 6.5 us for 7.)
. "$E2E_LIB"
TP="python3 $SRCDIR/tests/e2e/report/truth_profile.py"
# dc_events checks the events' order as it goes (exit 3): time never goes
# back, and a thread switched out has no branch or syscall until it is
# back on (a PGD placed after its thread's switch-out lost a [kernel])
export DC_ORDER=1
# keep NAME: a recording a check failed on, for a look later (the work
# directory goes at exit; recordings differ from run to run)
keep() {
	local d=${BUILDDIR:-/tmp}/e2e-kept
	mkdir -p "$d" && cp "$1.data" "$1.truth" "$d/" &&
		echo "kept $1.data and $1.truth in $d" >&2
}
run() {  # NAME PROG [record options]
	local n=$1 p=$2; shift 2
	if ! "$PTFLAME" record --emulate -q -o "$n.data" --truth "$n.truth" "$@" \
		-- "$TESTDATA/$p" >"$n.rec" 2>&1; then
		fail "record $n: $(head -c 300 "$n.rec")"; return
	fi
	"$PTFLAME" report -q -i "$n.data" >"$n.out" 2>"$n.err" || { fail "report $n: $(cat "$n.err")"; return; }
	if $TP compare "$n.truth" "$n.out" >"$n.cmp" 2>&1; then pass "$n: $(tail -1 "$n.cmp")"
	else fail "$n: $(tail -4 "$n.cmp")"; keep "$n"; fi
}
for g in "1000 0" "1000 3" "7 9" "3 15"; do
	set -- $g
	run "sig-ns$1-mtc$2" emu_signal --ns-per-insn "$1" --mtc-period "$2"
	run "thr-ns$1-mtc$2" emu_threads --ns-per-insn "$1" --mtc-period "$2" --cpus 2 --time-slice 300
	# faults inside a block: under qemu only the instructions before the
	# faulting one retire, and only their time passes (the block's whole
	# time put the handler up to the block's length late: at 1000 ns per
	# instruction load's 8 us were 7.8)
	run "flt-ns$1-mtc$2" emu_fault --ns-per-insn "$1" --mtc-period "$2" --cpus 1
done

# Without CYC (--no-cyc) a time comes only with an MTC (or a PSB+'s TSC),
# and an MTC binds to no instruction: it only bounds the branches whose
# packets come before and after it (ptdecode.c, "coarse clocks"). Where the
# MTC period P is short against an instruction, the bounds pin a run at a
# constant rate, and the decoder's lines through them give most branches
# their exact time: at most 20 % of them more than P/8 off (the old rule,
# every MTC put at the next branch that took a packet, had 30-99 % of them
# so far off, up to the whole instructions since the MTC). What no packet
# tells, such as when a syscall returned within an MTC period, stays
# uncertain by up to P, so stacks are checked within 0.1 % plus P per entry
# (truth_profile.py --slack-ns), not 0.1 % alone.
# Every thread on its own: its stacks (report --per-thread) within the same
# slack, and its total within 0.1 % plus one period of its truth (its first
# TIP.PGE is the one time in it that is not exact: the end is the sideband's).
per_thread() {  # NAME PERIOD_NS [totals: only those]
	local n=$1 per=$2
	"$PTFLAME" report -q --per-thread -i "$n.data" >"$n.pt" 2>"$n.pterr" ||
		{ fail "report --per-thread $n: $(cat "$n.pterr")"; return; }
	if [ $# -gt 2 ]; then :
	elif $TP compare "$n.truth" "$n.pt" --per-thread --slack-ns "$per" >"$n.ptc" 2>&1
	then pass "$n per thread: $(tail -1 "$n.ptc" | cut -c1-160)"
	else fail "$n per thread: $(tail -4 "$n.ptc")"; keep "$n"; fi
	$TP walltime "$n.truth" >"$n.wall" || { fail "walltime $n"; return; }
	if awk -v per="$per" 'NR == FNR { want[$1] = $2; next }
		{ v = $NF; split($1, f, ";"); k = f[1]; sub(/.*-/, "", k); got[k] += v }
		END { bad = 0; for (t in want) { d = got[t] - want[t]; if (d < 0) d = -d
			if (d > want[t] / 1000 + per) { print "thread " t ": " got[t] + 0 " ns, truth " want[t]; bad = 1 }
			else if (d > worst) worst = d }
		      if (!bad) print length(want) " threads, worst " worst + 0 " ns off (period " per ")"
		      exit bad }' "$n.wall" "$n.pt" >"$n.tot" 2>&1
	then pass "$n thread totals: $(cat "$n.tot")"
	else fail "$n thread totals: $(head -c 600 "$n.tot")"; keep "$n"; fi
}
# What holds without CYC (doc/DESIGN.md section 3), asserted here: every
# branch within one period P of its truth (truthcmp, each thread's branch
# sequence exact); every stack within 0.1 % plus 2P per stretch of its self
# time (truth_profile.py --slack-ns P); every thread's total within 0.1 %
# plus P; where a period is short against the code, most branches within
# P/8 (SHARE: at most that % beyond).
nocyc() {  # NS MTC SHARE PROG [record options] (SHARE -: no P/8 check;
	   # T: thread totals only, see below)
	local ns=$1 m=$2 share=$3 p=$4; shift 4
	local n="nocyc-$p-ns$ns-mtc$m${tag:-}" per=$(( (64 << m) / 2 ))   # RC_PTENC: 2 TSC/ns, 64 TSC/CTC
	if ! "$PTFLAME" record --emulate -q -o "$n.data" --truth "$n.truth" --no-cyc \
		--ns-per-insn "$ns" --mtc-period "$m" "$@" -- "$TESTDATA/$p" >"$n.rec" 2>&1; then
		fail "record $n: $(head -c 300 "$n.rec")"; return
	fi
	if [ "$share" = T ]; then per_thread "$n" "$per" totals; return; fi
	"$PTFLAME" report -q -i "$n.data" >"$n.out" 2>"$n.err" || { fail "report $n: $(cat "$n.err")"; return; }
	if $TP compare "$n.truth" "$n.out" --slack-ns "$per" >"$n.cmp" 2>&1; then pass "$n: $(tail -1 "$n.cmp")"
	else fail "$n: $(tail -4 "$n.cmp")"; keep "$n"; fi
	case $p in emu_threads) per_thread "$n" "$per";; esac
	"$DC_EVENTS" "$n.data" >"$n.ev" 2>"$n.derr" || { fail "dc_events $n: $(head -c 300 "$n.derr")"; return; }
	if python3 "$TRUTHCMP" --tol-ns="$per" "$n.truth" "$n.ev" >"$n.tp" 2>&1
	then pass "$n branches within P: $(tail -1 "$n.tp")"
	else fail "$n branches within P: $(head -c 600 "$n.tp")"; keep "$n"; fi
	[ "$share" = - ] && return
	if python3 "$TRUTHCMP" --tol-ns=$((per / 8)) --tol-share="$share" "$n.truth" "$n.ev" >"$n.tc" 2>&1
	then pass "$n branches: $(tail -1 "$n.tc")"
	else fail "$n branches: $(head -c 600 "$n.tc")"; keep "$n"; fi
}
# (At MTC period 3 with 1 or 7 ns per instruction a period spans 37-256
# instructions, more than most stretches between syscalls: 13-30 % of the
# branches stay beyond P/8, against 35-47 % before. At periods 9 and 15
# (16 us, 1 ms) the bounds pin almost nothing, and a period can hold
# several thread switches: the thread at a TIP.PGE is chosen among those
# the sideband has on the CPU in its period (session.c, "the thread at a
# TIP.PGE"); looked up at the time read there, whole stretches went to the
# thread switched out before. At 1000 ns per instruction a period holds 16
# instructions and the stints are apart: everything is checked. At 1 and
# 7 ns a period of 16 us or 1 ms holds several stints of emu_threads' two
# workers, which make the same syscalls from the same places: which of
# them a stretch was is then not in the trace nor in the sideband (both
# resume at the same ip, the sideband orders only the switches), and some
# recordings get a stretch wrong. Only what holds whatever the assignment
# is checked there: each thread's total (its first TIP.PGE within a period,
# its end exact).)
# (emu_signal at 1 ns and period 0: its stretches before the spin are
# shorter than a period, and nothing tells their rate yet; where each
# falls against the MTCs moves with the emulated syscalls' lengths, which
# follow the host's. 100 recordings under 2 busy host loops: 2-24 %
# beyond P/8, median 9 % (the decoder before the rule below: 2-26 %); CI
# once failed one at 22 % against a 20 % limit.)
for g in "1 0 30 20" "7 0 20 20" "1000 0 20 20" "1000 3 20 20" "1 3 - -" "7 3 - -"; do
	set -- $g
	nocyc "$1" "$2" "$3" emu_signal
	nocyc "$1" "$2" "$4" emu_threads --cpus 2 --time-slice 300
done
# Short stretches between syscalls that never sleep (emu_syscalls: 24
# getpids about 32 instructions apart, after a loop that pins the rate).
# The sideband has no switch on the CPU within the TIP.PGD's period, so
# the stretch keeps the rate known (ptdecode.c piece_event, "none"), at
# the middle of the offsets its bounds allow (piece_line). Where in its
# period the getpid returned no packet tells (the MTCs go on through the
# syscall, as on the hardware), so a stretch's offset is uncertain by what
# its bounds leave: at the earliest offset whole stretches were 10-12 ns
# early (P/8 is 4), in the middle 4-6 ns either way (20 ptrace recordings:
# 3-19 % of the branches beyond P/8). Before, the PGD took the earliest
# time its bounds allowed and its stretch was squeezed towards the
# TIP.PGE: 9-23 ns off. (Until the emulator sent MTCs through syscalls, a
# TSC after each getpid pinned every stretch's start, and all were exact.)
n=nocyc-syscalls-ns1-mtc0 per=32
if "$PTFLAME" record --emulate -q -o $n.data --truth $n.truth --no-cyc --ns-per-insn 1 \
	--mtc-period 0 -- "$TESTDATA/emu_syscalls" >$n.rec 2>&1; then
	if "$DC_EVENTS" $n.data >$n.ev 2>$n.derr &&
		python3 "$TRUTHCMP" --tol-ns=$((per / 4)) $n.truth $n.ev >$n.tp 2>&1 &&
		python3 "$TRUTHCMP" --tol-ns=$((per / 8)) --tol-share=30 $n.truth $n.ev >$n.tp8 2>&1
	then pass "$n: $(tail -1 $n.tp | cut -c1-140); $(tail -1 $n.tp8 | cut -c1-140)"
	else fail "$n: $(head -c 600 $n.tp) $(head -c 600 $n.tp8) $(head -c 300 $n.derr)"; keep $n; fi
else
	fail "record $n: $(head -c 300 $n.rec)"
fi
# A syscall that never sleeps (getpid) a few instructions before one that
# does (a read of /dev/zero, off its CPU for its host time, shorter than
# the period), 40 times, at a 16 us period: which of the two the thread
# waited in is told by the TSC that comes at its switch-in (perf's per-task
# event sets TraceEn again there; record/ptenc.c rc_ptenc_trace_on): the
# TIP.PGEs read ahead stop at that TSC, and a stint that begins at or
# after it cannot hold them (session.c pge_pick). Before, the getpid's PGE
# went to the stint after the wait, and 33 of the 40 waits were put under
# getpid (stress seed 7112: `file`'s reads, put under open and fstatat).
nocyc 1 9 - emu_blockread
nocyc 1 15 - emu_signal
nocyc 1000 9 - emu_signal
nocyc 1000 9 - emu_threads --cpus 2 --time-slice 300
tag=-cpus3 nocyc 1000 9 - emu_threads --cpus 3 --time-slice 200   # preempted every 200
# A thread preempted in a spin with no event in it (emu_cxxthread's workers
# on one CPU, a 150 us slice at 1 us an instruction; under ptrace, whose
# stepper stamps the switch-out 1 ns after the TIP.PGD): the next stint's
# TIP.PGE follows the PGD within the period, so the decoder has read on
# (an event pending) and the rest of the stint cannot be spread up to the
# switch-out; that switch-out still bounds the PGD, which ended the stint
# it ends. Without the bound the PGD got the piece's earliest time, 2 ns
# past the switch-out, and came after it: [preempted] without its
# [kernel], 7-16 stacks wrong in every recording (stress seed 6029).
PTFLAME_EMULATE=ptrace tag=-ptrace nocyc 1000 0 20 emu_cxxthread --cpus 1 --time-slice 150
for g in "1 9" "7 9" "1 15"; do
	set -- $g
	nocyc "$1" "$2" T emu_threads --cpus 2 --time-slice 300
	tag=-cpus3 nocyc "$1" "$2" T emu_threads --cpus 3 --time-slice 200
done
# A library mapped within the period of the syscall's return after it: the
# TIP.PGE's time is read up to a period before the MMAP record's, and the
# library's code ran before the next MTC. The mapping is applied at the
# PGE (session.c early_maps); before, its code was not in the image there
# and the trace was lost up to the next PSB (a 1 ms period: always). (Not
# compared here: report's stacks, where a 1 ms period leaves a short wait's
# syscall among several in the period.)
n=nocyc-dlopen-mtc15 per=$(( (64 << 15) / 2 ))
if "$PTFLAME" record --emulate -q -o $n.data --truth $n.truth --no-cyc --ns-per-insn 1 \
	--mtc-period 15 -- "$TESTDATA/emu_dlopen" "$TESTDATA/libemu_plugin.so" >$n.rec 2>&1; then
	"$DC_EVENTS" $n.data >$n.ev 2>$n.derr
	if grep -q '^# stats .* lost_decode 0 .* early_maps [1-9]' $n.ev &&
		python3 "$TRUTHCMP" --tol-ns="$per" $n.truth $n.ev >$n.tp 2>&1
	then pass "$n: the library's code decoded: $(tail -1 $n.tp | cut -c1-120)"
	else fail "$n: $(grep '^# stats' $n.ev) $(tail -2 $n.tp)"; keep $n; fi
else
	fail "record $n: $(head -c 300 $n.rec)"
fi
# A short run with no MTC in it (period 15, 1 ms; emu_nested runs 2.3 us
# at 1 ns per instruction, 234 us at 100): every bound of its code is the
# same period, and the exit's TIP.PGD got the earliest time they allow, the
# TIP.PGE's: all of main's time went after it, to _exit;[kernel]. The
# sideband's switch-out at the exit bounds the PGD from above (nothing ran
# on the CPU in between), and the code is spread up to it
# (ptdecode.c, piece_event): every stack within 100 ns.
for ns in 1 100; do
	n=nocyc-nested-ns$ns-mtc15 per=$(( (64 << 15) / 2 ))
	if ! "$PTFLAME" record --emulate -q -o $n.data --truth $n.truth --no-cyc --ns-per-insn $ns \
		--mtc-period 15 -- "$TESTDATA/emu_nested" >$n.rec 2>&1; then
		fail "record $n: $(head -c 300 $n.rec)"; continue
	fi
	"$PTFLAME" report -q -i $n.data >$n.out 2>$n.err || { fail "report $n: $(cat $n.err)"; continue; }
	k=$(awk '/;_exit[^;]*;\[kernel\][^;]* [0-9]+$/ { s += $NF } END { print s + 0 }' $n.out)
	if [ "$k" -le 1000 ] && $TP compare $n.truth $n.out --slack-ns 100 >$n.cmp 2>&1
	then pass "$n: _exit;[kernel] $k ns; $(tail -1 $n.cmp | cut -c1-120)"
	else fail "$n: _exit;[kernel] $k ns; $(tail -4 $n.cmp)"; keep $n; fi
done
finish
