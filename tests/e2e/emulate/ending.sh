#!/bin/bash
# How the traced program ends (testdata/ending): by its own status, a
# signal it sends itself, exit() or a SIGSEGV in a thread other than the
# leader (while the leader is being stepped, or waits in pthread_join).
# The recording must end (no hang), say in one line how the program ended,
# exit with its status (128+N for signal N), and leave a file that decodes
# exactly and that report reads.
. "$E2E_LIB"
E=("$PTFLAME" record --emulate -q)
PROG=$TESTDATA/ending

# ending NAME WANT_RC NOTE_RE -- MODE ARGS...
ending() {
	local name=$1 want=$2 note=$3; shift 4
	timeout -s KILL 60 "${E[@]}" -o "$name.data" --dump-insns "$name.dump" -- "$PROG" "$@" \
		>"$name.out" 2>"$name.err"
	local rc=$?
	[ "$rc" -eq 137 ] && { fail "$name: record hung (killed after 60 s)"; return; }
	[ "$rc" -eq "$want" ] && pass "$name: exit $rc" || fail "$name: exit $rc, want $want: $(cat "$name.err")"
	if [ -z "$note" ]; then
		[ -s "$name.err" ] && fail "$name: said $(cat "$name.err")" || pass "$name: nothing said"
	else
		expect_lines 1 "$name.err" "$name: one line"
		expect_grep "^ptflame record: .*ending $note\$" "$name.err" "$name: says how it ended"
	fi
	"$EMU_CHECK" "$name.data" "$name.dump" >"$name.chk" 2>&1 && pass "$name: trace decodes exactly" ||
		fail "$name: $(head -c 400 "$name.chk")"
	"$PTFLAME" report -i "$name.data" --plain >"$name.folded" 2>"$name.rerr" && [ -s "$name.folded" ] &&
		pass "$name: report reads it" || fail "$name: report: $(head -c 400 "$name.rerr")"
}

ending status0 0 '' -- status 0
ending status3 3 'exited with status 3' -- status 3
ending kill 143 'was killed by signal 15 \(Terminated\)' -- kill 15
ending thread-exit 4 'exited with status 4' -- thread-exit 4
ending thread-segv 139 'was killed by signal 11 \(Segmentation fault\)(, core dumped)?' -- thread-segv
ending join-exit 5 'exited with status 5' -- join-exit 5
# both threads' code is in the profile
grep -q '^main' thread-exit.folded && grep -q 'start_thread;second' thread-exit.folded &&
	pass "thread-exit: both threads in the profile" || fail "thread-exit: $(head -5 thread-exit.folded)"

# Stopped (SIGINT) while the program sleeps: the wait lasts until the
# recording ended, in the truth (a "stop" then) and in report (the last AUX
# records are stamped then), its open calls inferred.
for b in qemu ptrace; do
	timeout -s KILL 30 timeout --preserve-status -s INT 1 "$PTFLAME" record --emulate=$b -q -o "stop-$b.data" \
		--truth "stop-$b.truth" -- "$PROG" sleep 5 >/dev/null 2>"stop-$b.err"
	rc=$?
	[ "$rc" -eq 0 ] && pass "stopped in a sleep ($b): exit 0" ||
		fail "stopped in a sleep ($b): exit $rc: $(head -c 300 "stop-$b.err")"
	"$PTFLAME" report -q -i "stop-$b.data" >"stop-$b.out" 2>"stop-$b.rerr" ||
		fail "stopped in a sleep ($b): report: $(head -c 300 "stop-$b.rerr")"
	awk '/;sleep[:;].*\[off-cpu\]:1\(inferred\) [0-9]+$/ && $NF > 5e8 {ok = 1} END {exit !ok}' \
		"stop-$b.out" && pass "stopped in a sleep ($b): its wait until the end, inferred" ||
		fail "stopped in a sleep ($b): $(grep off-cpu "stop-$b.out" | head -c 300)"
	python3 "$SRCDIR/tests/e2e/report/truth_profile.py" compare "stop-$b.truth" "stop-$b.out" \
		>"stop-$b.cmp" 2>&1 && pass "stopped in a sleep ($b): matches the truth" ||
		fail "stopped in a sleep ($b): $(tail -3 "stop-$b.cmp")"
done
# -d: the same stop, from record's own timer (a duration with a unit, as
# report's options take them)
start=$(date +%s%N)
timeout -s KILL 30 "$PTFLAME" record --emulate=qemu -q -d 800ms -o dur.data --truth dur.truth \
	-- "$PROG" sleep 5 >/dev/null 2>dur.err
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
[ "$rc" -eq 0 ] && [ "$ms" -lt 4000 ] && pass "-d 800ms: stopped (exit 0, after $ms ms)" ||
	fail "-d 800ms: exit $rc after $ms ms: $(head -c 300 dur.err)"
"$PTFLAME" report -q -i dur.data >dur.out 2>/dev/null &&
	awk '/\[off-cpu\]:1\(inferred\) [0-9]+$/ && $NF > 4e8 {ok = 1} END {exit !ok}' dur.out &&
	pass "-d 800ms: the wait until then" || fail "-d 800ms: $(grep off-cpu dur.out | head -c 300)"
finish
