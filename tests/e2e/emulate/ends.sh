#!/bin/bash
# How an emulated recording ends its threads (record/emulate.c end_threads,
# thr_gone; record/qemu.c finish), asserted against the truth log:
# - stopped (-d) while threads run on their virtual CPUs (testdata/kill_spin:
#   three spinners on 2 CPUs, main in pthread_join): each ran on, in its
#   code, until the stop. Found 2026-11-28: a CPU's clock counts the
#   instructions stepped (the plugin sent), the stop's time is the host's, so
#   a spinner's clock fell behind: it stopped (or was killed) early, switched
#   out as blocked, [kernel]+[off-cpu] to the recording's end in report
#   (46 ms; on qemu a spinner exited 855 ms before the threads that
#   waited). Now every thread's last line (stop or exit) is at one time, the
#   truth's last, and report matches the truth, thread by thread.
#   Killed after the stop (launched: record's SIGTERM), and left alive (-p).
# - a process's exit_group ends all its threads then (ending reader-exit: a
#   thread waiting in a read lived on 28-62 ms, until the host reported it).
# - after an exec (ending exec-naps) truth_profile.py's model begins the new
#   image's stack at its start line (it began again at its first sysret:
#   main and nap counted twice, 34 false errors).
. "$E2E_LIB"
TP=("python3" "$SRCDIR/tests/e2e/report/truth_profile.py")
PROG=$TESTDATA/kill_spin
BACKENDS=(ptrace)
command -v qemu-x86_64 >/dev/null && BACKENDS+=(qemu) || echo "qemu-x86_64 not installed: ptrace only"

# ends_together NAME: every thread's last line (stop or exit) is at the
# truth's last time, and each thread's time in report (--per-thread: on and
# off its CPU) is its life in the truth (walltime), as in qemu/kill.sh. (Not
# the stacks: without CYC the decoder sometimes spreads the last rounds of a
# thread over its stretch to the stop, a decoder matter left for now.)
ends_together() {
	local n=$1 msg
	if msg=$(awk '/^#/ || $5 == "" { next } { if ($1 > m) m = $1 }
		$5 == "stop" || $5 == "exit" { end[$4] = $1 }
		END { for (t in end) { k++; if (end[t] != m) { printf "tid %s ends %d ns before the last line; ", t, m - end[t]; bad = 1 } }
		      if (k < 2) { print "only " k " threads end"; bad = 1 }
		      if (!bad) print k " threads end at " m; exit bad }' "$n.truth"); then
		pass "$n: $msg"
	else
		fail "$n: $msg"
	fi
	"$PTFLAME" report -q --per-thread -i "$n.data" >"$n.trep" 2>"$n.rerr" ||
		{ fail "$n: report: $(head -c 300 "$n.rerr")"; return; }
	"${TP[@]}" walltime "$n.truth" | sort >"$n.wall"
	awk '{ split($1, f, ";"); k = split(f[1], a, "-"); s[a[k]] += $NF }
		END { for (t in s) printf "%s %.0f\n", t, s[t] }' "$n.trep" | sort >"$n.rwall"
	if msg=$(join -a1 -a2 -e missing -o 0,1.2,2.2 "$n.wall" "$n.rwall" |
		awk '$2 != $3 { printf "tid %s: truth %s ns, report %s ns; ", $1, $2, $3; bad = 1 }
		     END { exit bad }'); then
		pass "$n: each thread's time in report is its life in the truth"
	else
		fail "$n: $msg"
	fi
}

for b in "${BACKENDS[@]}"; do
	n=stop-$b
	timeout -k 10 60 "$PTFLAME" record --emulate=$b -q --cpus 2 -d 1 -o "$n.data" \
		--truth "$n.truth" -- "$PROG" spin 1000000 >"$n.out" 2>&1
	rc=$?
	[ "$rc" -eq 0 ] && pass "$n: record exit 0" || { fail "$n: record exit $rc: $(head -c 300 "$n.out")"; continue; }
	grep -q ' exit$' "$n.truth" && ! grep -q ' stop$' "$n.truth" && pass "$n: killed at the stop" ||
		fail "$n: want exits, no stop (the program dies of record's SIGTERM)"
	ends_together "$n"
done

# -p: the program lives on after the detach; its threads stop
"$PROG" spin 1000000 & pid=$!
sleep 0.3
timeout -k 10 60 "$PTFLAME" record --emulate=ptrace -q --cpus 2 -p $pid -d 1 -o attach.data \
	--truth attach.truth >attach.out 2>&1
rc=$?
kill -0 $pid 2>/dev/null && pass "attach: the program lives on" || fail "attach: the program died"
kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
if [ "$rc" -eq 0 ]; then
	pass "attach: record exit 0"
	grep -q ' stop$' attach.truth && ! grep -q ' exit$' attach.truth && pass "attach: its threads stop" ||
		fail "attach: want stops, no exit"
	ends_together attach
else
	fail "attach: record exit $rc: $(head -c 300 attach.out)"
fi

# exit_group: every thread's exit within 2 instructions of its syscall line
for b in "${BACKENDS[@]}"; do
	n=rexit-$b
	timeout -k 10 60 "$PTFLAME" record --emulate=$b -q --cpus 2 -o "$n.data" --truth "$n.truth" \
		-- "$TESTDATA/ending" reader-exit 3 >"$n.out" 2>&1
	rc=$?
	[ "$rc" -eq 3 ] || { fail "$n: record exit $rc, want 3: $(head -c 300 "$n.out")"; continue; }
	if msg=$(awk '/^# ptflame-truth/ { for (i = 1; i <= NF; i++) if ($i ~ /^ns_per_insn=/) { split($i, a, "="); ns = a[2] } }
		/^#/ { next } $5 == "syscall" && $6 == 231 && !g { g = $1 }
		$5 == "exit" { k++; if ($1 - g > 2 * ns) { printf "tid %s exits %d ns after the exit_group; ", $4, $1 - g; bad = 1 } }
		END { if (!g || k < 2) { print "no exit_group, or " k " exits"; bad = 1 }
		      if (!bad) print k " threads exit with their process"; exit bad }' "$n.truth"); then
		pass "$n: $msg"
	else
		fail "$n: $msg"
	fi
done

# exec: the model's stack of the new image (ptrace: qemu-user cannot follow an exec)
timeout -k 10 60 "$PTFLAME" record --emulate=ptrace -q -o exec.data --truth exec.truth \
	-- "$TESTDATA/ending" exec-naps >exec.out 2>&1 || fail "exec: record: $(head -c 300 exec.out)"
[ "$(grep -c ' start ' exec.truth)" -eq 2 ] && grep -q ' exec ' exec.truth &&
	pass "exec: a start line in each image" || fail "exec: want an exec and two start lines"
"$PTFLAME" report -q -i exec.data >exec.rep 2>/dev/null &&
	"$PTFLAME" report -q --per-thread -i exec.data >exec.trep 2>/dev/null || fail "exec: report"
"${TP[@]}" compare exec.truth exec.rep >exec.cmp 2>&1 && pass "exec: report matches the truth" ||
	fail "exec: $(tail -4 exec.cmp | cut -c1-400)"
"${TP[@]}" compare exec.truth exec.trep --per-thread >exec.tcmp 2>&1 &&
	pass "exec: --per-thread matches the truth" || fail "exec: $(tail -4 exec.tcmp | cut -c1-400)"
finish
