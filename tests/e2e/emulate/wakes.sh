#!/bin/bash
# Wake records (issue 16): record --emulate writes a sched:sched_waking
# sample for each traced wait a traced thread ended, at the waker's time;
# Debian's perf reads the file (with and without --itrace=cr, exit 0, no
# complaint) and prints them as the truth's "wake" lines, one to one
# (wakes.py match); each lies in a wait of its wakee (wakes.py waits).
# On the four wake_* programs (every wait ended by a traced thread), the
# waits each program must have are there, and the truth model of `report
# --wakers` (truth_profile.py --wakers) attributes every blocked ns of them
# to a waker, keeping each thread's total; `report` (plain) still matches
# the truth exactly, and `report --wakers`, when this build has it, matches
# the model. tests/e2e/qemu reruns this on the qemu backend.
. "$E2E_LIB"
command -v perf >/dev/null || { echo "perf not installed: skipped"; exit 77; }
W=(python3 "$EMU_DIR/wakes.py")
TP=(python3 "$REPORT_DIR/truth_profile.py")

# rec NAME [--none|--any] [RECORD ARGS] -- PROG [ARGS]: record with the
# truth, then check the records against it (--none: there are none;
# --any: any number, none too). Sets OK=1
# when the recording worked.
rec() {
	local name=$1 none=; shift
	[ "$1" = --none ] || [ "$1" = --any ] && { none=$1; shift; }
	OK=0
	if ! "$PTFLAME" record --emulate -q -o "$name.data" --truth "$name.truth" "$@" \
		>"$name.out" 2>&1; then
		fail "$name: record failed: $(head -c 400 "$name.out")"
		return
	fi
	OK=1
	local o
	for o in "" "--itrace=cr"; do
		if perf script $o -i "$name.data" >"$name.ps" 2>"$name.pserr"; then
			[ -s "$name.pserr" ] && fail "$name: perf script $o complained: $(head -c 300 "$name.pserr")"
		else
			fail "$name: perf script $o failed: $(head -c 300 "$name.pserr")"
		fi
	done
	perf script --ns -F trace:tid,cpu,time,event,trace -i "$name.data" >"$name.wk" 2>"$name.wkerr"
	if "${W[@]}" match "$name.truth" "$name.wk" $none >"$name.match" 2>&1; then
		pass "$name: $(tail -1 "$name.match")"
	else
		fail "$name: $(head -c 800 "$name.match")"
	fi
}

# waits NAME EXPECT...: wakes.py waits with --expect each. On qemu each
# thread's virtual clock counts its own instructions, so a waker's clock
# can be behind the start of a wait that its wake ended in real time; such
# a wake came first in virtual time, ended no sleep there, and has no
# record (record/qemu.c): a wait the program makes sure of may then be
# missing, so on qemu only some wake of the program is required (the
# model checks below still hold the report to the truth exactly).
waits() {
	local name=$1; shift
	[ "$OK" = 1 ] || return
	local a=() e
	[ "${PTFLAME_EMULATE:-}" = qemu ] && set -- "*<-*:1"
	for e in "$@"; do a+=(--expect "$e"); done
	if "${W[@]}" waits "$name.truth" "${a[@]}" >"$name.waits" 2>&1; then
		pass "$name: $(tail -1 "$name.waits")"
	else
		fail "$name: $(head -c 800 "$name.waits")"
	fi
}

# two workers taking turns on a mutex (with sleeps: whether they contend,
# and whether main's joins block, depends on real time, so no wait is
# required here: the records must only match the truth one to one; the
# wake_* programs make their waits block for sure; under qemu, on a busy
# machine, the two workers once never met: no wake at all)
rec threads --any -- "$TESTDATA/emu_threads"

# model NAME: the truth model with and without --wakers (per thread): the
# same total per thread, [woken by] frames under [off-cpu] only (and under
# a new thread's first [preempted], at its root: its creator, one per clone
# line), each wake line's wait attributed; plain report == truth; report
# --wakers == model
model() {
	local name=$1 v
	[ "$OK" = 1 ] || return
	"${TP[@]}" expect "$name.truth" --per-thread >"$name.exp" 2>/dev/null
	"${TP[@]}" expect "$name.truth" --per-thread --wakers >"$name.expw" 2>/dev/null
	if awk '{split($1, f, ";"); t[f[1]] += $NF} END {for (k in t) print k, t[k]}' "$name.exp" | sort >"$name.tot" &&
		awk '{split($1, f, ";"); t[f[1]] += $NF} END {for (k in t) print k, t[k]}' "$name.expw" | sort >"$name.totw" &&
		[ -s "$name.tot" ] && cmp -s "$name.tot" "$name.totw"; then
		pass "$name: --wakers keeps every thread's time ($(tr '\n' ' ' <"$name.tot"))"
	else
		fail "$name: per-thread totals differ with --wakers: $(diff "$name.tot" "$name.totw" | head -5)"
	fi
	local bad nw nl nb nc
	bad=$(grep -c '\[woken by' "$name.expw" | tr -d ' ')
	nw=$(grep -E '\[off-cpu\][^;]*;\[woken by [^]]+-[0-9]+\][^;]*;' "$name.expw" | wc -l)
	nb=$(grep -E '^[^;]*;\[kernel\][^;]*;\[preempted\][^;]*;\[woken by [^]]+-[0-9]+\][^;]*;' "$name.expw" | wc -l)
	nl=$(awk '$5 == "wake"' "$name.truth" | wc -l)
	nc=$(awk '$5 == "clone"' "$name.truth" | wc -l)
	[ "$bad" -eq $((nw + nb)) ] && [ "$nw" -ge 1 ] && [ "$nw" -le "$nl" ] && [ "$nb" -eq "$nc" ] &&
		pass "$name: $nw [woken by] stacks, each under [off-cpu] with the waker's stack ($nl wake lines), and $nb under a new thread's first [preempted] ($nc clone lines)" ||
		fail "$name: $bad [woken by] lines, $nw under [off-cpu] with a stack, $nb under a first [preempted], $nl wake lines, $nc clone lines"
	for v in "" --per-thread; do
		if "$PTFLAME" report -q -i "$name.data" $v >"$name.rep$v" 2>"$name.rep$v.err" &&
			"${TP[@]}" compare "$name.truth" "$name.rep$v" $v >"$name.cmp$v" 2>&1; then
			pass "$name report $v: $(tail -1 "$name.cmp$v")"
		else
			fail "$name report $v: $(head -c 600 "$name.rep$v.err") $(head -c 800 "$name.cmp$v")"
		fi
		if ! "$PTFLAME" report --help 2>&1 | grep -q -- --wakers; then
			echo "($name: this report has no --wakers: its check skipped)"
			continue
		fi
		if "$PTFLAME" report -q -i "$name.data" --wakers $v >"$name.repw$v" 2>"$name.repw$v.err" &&
			"${TP[@]}" compare "$name.truth" "$name.repw$v" $v --wakers >"$name.cmpw$v" 2>&1; then
			pass "$name report --wakers $v: $(tail -1 "$name.cmpw$v")"
		else
			fail "$name report --wakers $v: $(head -c 600 "$name.repw$v.err") $(head -c 800 "$name.cmpw$v")"
		fi
	done
	# --timeline: each woken wait's span names its waker and wake time,
	# with an arrow from the waker's thread, as the model has them
	if "$PTFLAME" report -q -i "$name.data" --wakers --timeline "$name.json" -o /dev/null \
		2>"$name.tl.err" && "${TP[@]}" wakes "$name.truth" "$name.json" >"$name.tlw" 2>&1; then
		pass "$name report --wakers --timeline: $(tail -1 "$name.tlw")"
	else
		fail "$name report --wakers --timeline: $(head -c 300 "$name.tl.err") $(head -c 800 "$name.tlw")"
	fi
}

# yields NAME...: sched_yield leaves the thread runnable, so the kernel
# marks its switch-out a preemption (the wake_* programs' flag_wait yields;
# how often one leaves its CPU depends on the host): in the truths each
# switch-out in syscall 24 is "preempt", and there is one at least; `report
# --table --wakers` lists no sched_yield wait
yields() {
	local name p b y tp=0 tb=0 ny=0
	for name in "$@"; do
		[ -f "$name.truth" ] || continue
		read -r p b y < <(awk '$5 == "syscall" { s[$4] = $6; y += $6 == 24 }
			$5 == "switch-out" && s[$4] == 24 { n[$6]++ } $5 != "syscall" { s[$4] = "" }
			END { print n["preempt"] + 0, n["block"] + 0, y + 0 }' "$name.truth")
		tp=$((tp + p)) tb=$((tb + b)) ny=$((ny + y))
		if "$PTFLAME" report -q -i "$name.data" --table --wakers >"$name.wt" 2>&1 &&
			! grep -q 'sched_yield' "$name.wt" && grep -q ' -> ' "$name.wt"; then
			pass "$name: no sched_yield row in --table --wakers"
		else
			fail "$name: --table --wakers: $(grep -m2 'sched_yield\|ptflame' "$name.wt")"
		fi
	done
	if [ "$ny" -eq 0 ]; then
		# (the host ran the other threads first: no flag_wait yielded)
		pass "$*: no sched_yield made this time (nothing to check)"
	elif [ "$tp" -ge 1 ] && [ "$tb" -eq 0 ]; then
		pass "$*: $tp switch-outs in sched_yield, all preemptions"
	else
		fail "$*: switch-outs in sched_yield: $tp preempt, $tb block (want all preempt, some)"
	fi
}

# exits NAME: a thread ends at its exit syscall (60, 231), not when the
# host has torn it down (under ptrace, milliseconds later: that was an
# [off-cpu] of the program's before 2026-11-28): each "exit" line within
# 1 us of its thread's exit syscall, and some thread has both
exits() {
	local name=$1 msg
	[ "$OK" = 1 ] || return
	if msg=$(awk '$5 == "syscall" && ($6 == 60 || $6 == 231) { s[$4] = $1 }
		$5 == "exit" && ($4 in s) { n++; if ($1 - s[$4] > 1000) { bad = bad " " $4 ":" $1 - s[$4] "ns" } }
		END { if (!n || bad != "") { print n + 0 " exits, late:" bad; exit 1 }
			print n " exits at their exit syscalls" }' "$name.truth"); then
		pass "$name: $msg"
	else
		fail "$name: $msg"
	fi
}

# the wake_* programs: the waits each must have (wakee<-waker; T0 is main,
# T1, T2 the threads it makes, in order)
rec mutex -- "$TESTDATA/wake_mutex"
waits mutex "T1<-T0:1" "T0<-T1:1"
model mutex
exits mutex
rec cond -- "$TESTDATA/wake_cond"
waits cond "T1<-T0:3"
model cond
exits cond
rec pipe -- "$TESTDATA/wake_pipe"
waits pipe "T1<-T0:4"
model pipe
exits pipe
rec chain -- "$TESTDATA/wake_chain"
waits chain "T0<-T1:1" "T1<-T2:1"
model chain
exits chain
yields mutex cond chain
# chains (--wakers=N): A's wait on B holds B's wait on C (wake_chain makes
# C wait until both block), so with N >= 2 part of A's blocked time goes
# below B's stack to C's; the model (truth_profile.py Model.chain) and
# report must agree exactly, and the model must have such a path
if [ "$OK" = 1 ]; then
	# the wakers by the names the threads gave themselves
	# (pthread_setname_np: prctl PR_SET_NAME; both backends see it)
	wk=$(grep -o '\[woken by [^]]*\]' chain.repw | sort -u | tr '\n' ' ')
	if grep -q '\[woken by chain-[bc]-[0-9]*\]' chain.repw && ! grep -q '\[woken by wake_chain-' chain.repw
	then pass "chain: the wakers by their thread names: $wk"
	else fail "chain: wakers not by their thread names (chain-b, chain-c): $wk"; fi
	for v in "" --per-thread; do
		"${TP[@]}" expect chain.truth --wakers=3 $v >chain.expc$v 2>/dev/null
		nc=$(grep -cE '\[woken by [^]]+\][^ ]*\[woken by ' chain.expc$v)
		least=1   # (on qemu a wake may be missing: see waits)
		[ "${PTFLAME_EMULATE:-}" = qemu ] && least=0
		if [ "$nc" -ge "$least" ] && "$PTFLAME" report -q -i chain.data --wakers=3 $v >chain.repc$v 2>chain.repc$v.err &&
			"${TP[@]}" compare chain.truth chain.repc$v $v --wakers=3 >chain.cmpc$v 2>&1; then
			pass "chain report --wakers=3 $v: $nc chained stacks; $(tail -1 chain.cmpc$v)"
		else
			fail "chain report --wakers=3 $v: $nc chained stacks in the model; $(head -c 300 chain.repc$v.err) $(head -c 800 chain.cmpc$v)"
		fi
	done
fi

# --no-wakers: neither the event nor records nor truth wake lines; the
# waits themselves end as before (the truth still has the blocked waits)
if "$PTFLAME" record --emulate -q --no-wakers -o off.data --truth off.truth -- "$TESTDATA/wake_cond" \
	>off.out 2>&1; then
	n=$(awk '$5 == "wake"' off.truth | wc -l)
	b=$(awk '$5 == "switch-out" && $6 == "block"' off.truth | wc -l)
	h=$(perf report --header-only -i off.data 2>&1 | grep -c "sched:sched_waking")
	[ "$n" -eq 0 ] && [ "$h" -eq 0 ] && [ "$b" -ge 3 ] &&
		pass "--no-wakers: no wake event, no wake lines ($b blocked waits)" ||
		fail "--no-wakers: $n wake lines, $h event names, $b blocked waits"
else
	fail "--no-wakers: record failed: $(head -c 300 off.out)"
fi

# the wake attr is there even when nothing woke anyone (emu_nested has one
# thread): a reader can tell "no wakes" from "not recorded"
rec nested --none -- "$TESTDATA/emu_nested"
grep -q "sched:sched_waking" <(perf report --header-only -i nested.data 2>&1) &&
	pass "nested: the file names the sched:sched_waking event" ||
	fail "nested: no sched:sched_waking event in the header"
finish
