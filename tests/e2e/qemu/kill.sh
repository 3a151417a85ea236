#!/bin/bash
# Threads killed while on their virtual CPUs (testdata/kill_spin: three
# spinning threads on 2 CPUs, main in pthread_join). The kernel writes a
# killed task's switch-out and its EXIT where it dies; so must record
# --emulate, and its truth log must say the same ("exit"). Found
# 2026-11-28: stopped by Ctrl-C, record/qemu.c finish switched a ready
# spinner in as the running ones left their CPUs and never out again:
# report kept it on its CPU to the recording's end (a 2.9 s [kernel] where
# the truth has 0.2 ms), and the ones that left were [off-cpu] to the end
# in report, gone in the truth. Under ptrace a thread given a fatal signal
# left its CPU as blocked and lived on, [off-cpu], until the host reported
# its end. Each recording here: every traced thread exits in the truth (no
# "stop"), report matches the truth, and each thread's time in report (on
# and off its CPU, --per-thread) is its life in the truth (walltime). No
# timings are asserted.
command -v qemu-x86_64 >/dev/null ||
	{ echo "qemu-x86_64 not installed (apt-get install qemu-user): skipped"; exit 77; }
. "$E2E_LIB"
TP=("python3" "$SRCDIR/tests/e2e/report/truth_profile.py")
PROG=$TESTDATA/kill_spin

# check NAME: NAME.truth against the report of NAME.data
check() {
	local n=$1
	# (the exit line comes before its switch-out, as a stop's)
	if msg=$(awk '/^#/ { next } $4 != "" && $5 != "wake" { seen[$4] = 1 } $5 == "exit" { ex[$4] = 1 }
		$5 == "stop" { st[$4] = 1 }
		END { for (t in seen) { k++; if (!(t in ex) || (t in st)) { print "tid " t " has no exit, or a stop"; bad = 1 } }
		      if (k < 3) { print "only " k " threads"; bad = 1 }
		      if (!bad) print k " threads, each exits"; exit bad }' "$n.truth"); then
		pass "$n: $msg"
	else
		fail "$n: $msg"
	fi
	"$PTFLAME" report -q -i "$n.data" >"$n.rep" 2>"$n.rerr" &&
		"$PTFLAME" report -q --per-thread -i "$n.data" >"$n.trep" 2>>"$n.rerr" ||
		{ fail "$n: report: $(head -c 300 "$n.rerr")"; return; }
	"${TP[@]}" compare "$n.truth" "$n.rep" >"$n.cmp" 2>&1 &&
		pass "$n: report matches the truth" || fail "$n: $(tail -4 "$n.cmp" | cut -c1-400)"
	# each thread's time in report (its frame COMM-TID) = its life in the truth
	lives_match "$n"
}

# interrupted NAME: Ctrl-C (SIGINT to the process group, record's and the
# program's) once every thread made its rounds on the host and the replay
# had a second to catch up (it replays what qemu ran, later; again, with
# more time, if it had not replayed every thread by then)
interrupted() {
	local n=$1 wait
	for wait in 1 4; do
		rm -f "$n.mark"
		setsid "$PTFLAME" record --emulate=qemu -q --cpus 2 -o "$n.data" --truth "$n.truth" \
			-- "$PROG" spin 30 "$PWD/$n.mark" >"$n.out" 2>&1 &
		local pid=$! i
		for ((i = 0; i < 600; i++)); do [ -e "$n.mark" ] && break; sleep 0.05; done
		[ -e "$n.mark" ] || fail "$n: the threads did not run within 30 s"
		sleep $wait
		kill -INT -- -$pid
		for ((i = 0; i < 600; i++)); do kill -0 $pid 2>/dev/null || break; sleep 0.05; done
		kill -0 $pid 2>/dev/null && { kill -KILL -- -$pid; fail "$n: record hung"; }
		wait $pid
		local rc=$?
		[ "$rc" -eq 0 ] || { fail "$n: record exit $rc: $(head -c 300 "$n.out")"; return; }
		[ "$(awk '$5 == "start"' "$n.truth" | wc -l)" -ge 4 ] && break
	done
	pass "$n: record exit 0"
	check "$n"
}

# itself NAME MODE ROUNDS WANT_RC BACKEND: thread 1 kills the program
itself() {
	local n=$1 m=$2 r=$3 want=$4 b=$5
	timeout -k 10 90 "$PTFLAME" record --emulate=$b -q --cpus 2 -o "$n.data" --truth "$n.truth" \
		-- "$PROG" "$m" "$r" >"$n.out" 2>&1
	local rc=$?
	[ "$rc" -eq "$want" ] && pass "$n: record exit $rc" || { fail "$n: record exit $rc, want $want: $(head -c 300 "$n.out")"; return; }
	check "$n"
	ends_at_death "$n" kill_spin
}

interrupted int-qemu
itself self-qemu self 300 137 qemu
itself abort-qemu abort 300 134 qemu
# (under ptrace a thread that raise()s SIGKILL dies in its tgkill, a
# syscall that kept its CPU: the CPU kept it as its current thread, and
# every step found it gone again: an endless loop of EXIT records, a
# recording that never ended; record/emulate.c thr_gone)
itself self-ptrace self 50 137 ptrace
itself abort-ptrace abort 50 134 ptrace
finish
