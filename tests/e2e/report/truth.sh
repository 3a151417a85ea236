#!/bin/bash
# issue 4, done-when 1 (and 6): for every emu_* testdata program recorded
# with --emulate, every stack of `ptflame report` (annotated, and with
# --per-thread, whose root frames must be the truth's comm-tid) is a
# context of the truth log's profile, every frame's call count equals the
# truth's exactly, "(inferred)" exactly where no call of the context was
# seen whole, every truth leaf context is there, and each stack's self time
# is within 0.1 % of the truth (truth_profile.py compare, no floor).
# The threaded programs also on 2 CPUs with 300-instruction time slices
# (preemption, migration) and on 3 CPUs. TRUTH_PROGRAMS (default all)
# overrides the list.
. "$REPORT_DIR/common.sh"
run() {  # NAME PROG [record options]
	local n=$1 p=$2; shift 2
	record "$n" "emu_$p" "$@" || return
	local vs=("" --per-thread)
	# (.cold parts ask nothing of thread frames: CI time, libstdc++'s
	# symbols and FDEs take the C++ one's model seconds)
	case $p in cold|coldxx) vs=("") ;; esac
	for v in "${vs[@]}"; do
		report "$n.out$v" -i "$n.data" $v || continue
		if $TP compare "$n.truth" "$n.out$v" $v >"$n.cmp$v" 2>&1; then
			pass "$n $v: $(tail -1 "$n.cmp$v")"
		else
			fail "$n $v: $(cat "$n.cmp$v")"
		fi
	done
}
for p in ${TRUTH_PROGRAMS:-$EMU_PROGRAMS}; do
	run "$p" "$p"
done
# .cold parts (emu_cold, emu_coldxx above: process is called 40 times, not
# once more per jump back from process.cold): a trace that starts inside
# one is still in its function, an inferred call of process
for c in cold coldxx; do
	[ -s "$c.out" ] || continue
	if grep -q '\.cold' "$c.out"; then fail "$c: a .cold frame: $(grep -m1 '\.cold' "$c.out")"
	else pass "$c: no .cold frame"; fi
done
if [ -s cold.out ]; then
	grep -q ';main:1,[^;]*;process:40,[^;]* ' cold.out && pass "cold: process called 40 times" ||
		fail "cold: not process:40 under main: $(grep -m1 ';process:' cold.out)"
fi
if [ -s coldxx.out ]; then
	# (the catch is in main.cold: the unwinder's jump there is back to main)
	grep -q ';main:1,[^;]*;app::step(int):20,[^;]* ' coldxx.out && pass "coldxx: main once, step 20 times" ||
		fail "coldxx: not main:1;app::step(int):20: $(grep -m1 ';app::step' coldxx.out)"
fi
if [ -z "${TRUTH_PROGRAMS:-}" ] && record coldstart emu_cold --start process.cold; then
	report coldstart.out -i coldstart.data &&
	if $TP compare coldstart.truth coldstart.out >coldstart.cmp 2>&1 &&
		grep -q '^[^ ]*;main:1(inferred);process:34,' coldstart.out &&
		! grep -q '\.cold' coldstart.out; then
		pass "traced from inside process.cold: $(tail -1 coldstart.cmp)"
	else
		fail "traced from inside process.cold: $(head -c 600 coldstart.cmp) $(grep -m3 'process' coldstart.out)"
	fi
fi
# A stripped program, traced from exec (it has no main to start at): its
# signal handler, entered out of a syscall, is unnamed code like the
# frames below it, and goes on top of them (it cut the stack down to the
# first unnamed frame below, and every frame under the handler was then
# inferred again)
if [ -z "${TRUTH_PROGRAMS:-}" ] && record stripsig strip_signal --start=; then
	for v in "" --per-thread; do
		report "stripsig.out$v" -i stripsig.data $v || continue
		if $TP compare stripsig.truth "stripsig.out$v" $v >"stripsig.cmp$v" 2>&1; then
			pass "stripped, a signal: $v $(tail -1 "stripsig.cmp$v")"
		else
			fail "stripped, a signal: $v $(head -c 600 "stripsig.cmp$v")"
		fi
	done
	[ "$(grep -c ' signal ' stripsig.truth)" = 2 ] ||
		fail "stripped, a signal: the truth has not the 2 signals out of a syscall"
fi
# Faults (emu_fault: SIGSEGV, SIGFPE) in the middle of a block of straight
# code, then timer signals in code made mostly of rets: one signal line
# each, and the handler on top of the function that faulted, where the
# qemu backend had no signal for a fault in a block that ended in a ret
# (the handler was where the ret went) nor for about half of the timer's
# (those after a block that ended in a ret), and a call that never ran
# for a fault in a block that ended in a call
if [ -z "${TRUTH_PROGRAMS:-}" ] && [ -s fault.truth ]; then
	if [ "$(grep -c ' signal ' fault.truth)" = 7 ]; then pass "fault: 7 signals in the truth (3 faults, 4 timers)"
	else fail "fault: $(grep -c ' signal ' fault.truth) signals in the truth, not 7 (3 faults, 4 timers)"; fi
	missing=
	$TP expect fault.truth >fault.exp 2>fault.notes || missing=expect
	for f in load divide touch; do
		grep -qE ";main:1[^;]*;$f:1[^;]*;on_fault:1[^;]* " fault.exp || missing="$missing $f"
	done
	if [ -z "$missing" ] && ! grep -q . fault.notes; then pass "fault: the handler on top of load, divide and touch"
	else fail "fault: not above:$missing; $(head -c 300 fault.notes) $(grep on_fault fault.exp | head -c 600)"; fi
fi
# PLT stubs (issue 15.4): folded into their targets by default (no x@plt
# frame left), frames of their own with --show-plt, both exact against the
# truth model's same rule
if [ -s demo.data ] && [ -s demo.out ]; then
	if grep -q '@plt[:;]' demo.out; then fail "demo: a PLT stub frame without --show-plt"
	else pass "demo: no PLT stub frame by default"; fi
	"$PTFLAME" report -q -i demo.data --table --raw >demo.tab 2>&1 || fail "demo --table: $(head -c 300 demo.tab)"
	if grep -qE '@plt$|\[\.plt\]$' demo.tab; then fail "demo --table: a row for a folded stub: $(grep -E 'plt\]?$' demo.tab)"
	else pass "demo --table: no row for a folded stub"; fi
	# --srcline (issue 15.4): each of the program's functions has its
	# file:line, and the source there (or the line before: the brace) is
	# where that function is defined
	if "$PTFLAME" report -q -i demo.data --table --srcline >demo.src 2>&1; then
		bad=0 seen=0
		while read -r fn src; do
			n=${src#emu_demo.c:}
			seen=$((seen + 1))
			sed -n "$((n - 1)),${n}p" "$SRCDIR/testdata/emu_demo.c" 2>/dev/null |
				grep -q "[ *]$fn(" || { bad=$((bad + 1)); echo "  $fn at $src" >&2; }
		done < <(awk '$NF ~ /^emu_demo\.c:[0-9]+$/ {print $(NF-1), $NF}' demo.src)
		if [ "$seen" -ge 5 ] && [ "$bad" -eq 0 ]; then pass "demo --srcline: $seen functions at their definitions"
		else fail "demo --srcline: $seen functions with emu_demo.c:LINE, $bad not at their definition"; fi
	else
		fail "demo --table --srcline: $(head -c 300 demo.src)"
	fi
	if report demo.plt -i demo.data --show-plt; then
		grep -q '@plt[:;]' demo.plt || fail "demo --show-plt: no PLT stub frame"
		if $TP compare demo.truth demo.plt --show-plt >demo.cmp.plt 2>&1; then
			pass "demo --show-plt: $(tail -1 demo.cmp.plt)"
		else
			fail "demo --show-plt: $(cat demo.cmp.plt)"
		fi
	fi
fi
if [ -z "${TRUTH_PROGRAMS:-}" ]; then
	for p in threads demo cxxthread; do
		run "$p.preempt" "$p" --cpus 2 --time-slice 300
	done
	for p in threads demo; do
		run "$p.cpus3" "$p" --cpus 3
	done
	# the forked child traced too: its stack starts from the fork's
	# return; it then execs itself and is traced again from main, a
	# function that was on its stack before the exec and is not after
	run forkexec.follow forkexec --follow-fork
fi
finish
