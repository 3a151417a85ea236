#!/bin/bash
# record --emulate -p PID on a running program (testdata/spin_attach:
# main -> loop_body -> level_a -> level_b -> level_c, 1 ms sleep per
# iteration), then ptflame report: the trace starts mid-stack, so main is
# an inferred caller ("main:1(inferred)") above the real call chain, whose
# call counts are the truth log's; the program runs on after the detach.
. "$E2E_LIB"
SP=$TESTDATA/spin_attach
"$SP" 20 &
victim=$!
trap 'kill -KILL "$victim" 2>/dev/null; rm -rf "$T"' EXIT
sleep 0.3
timeout -s KILL 60 "$PTFLAME" record --emulate -q -p "$victim" --max-insns 3000 \
	--truth att.truth --dump-insns att.dump -o att.data >rec.err 2>&1
rc=$?
[ $rc -eq 0 ] && pass "-p: recorded" || fail "-p: exit $rc: $(head -c 300 rec.err)"
n=$(wc -l <att.dump 2>/dev/null || echo 0)
[ "$n" -eq 3000 ] && pass "-p: 3000 instructions stepped" || fail "-p: $n stepped"
"$EMU_CHECK" att.data att.dump >chk 2>&1 && pass "-p: trace decodes exactly" || fail "-p: $(head -c 400 chk)"
# the first traced instruction is a "start" line, even when attached inside
# a syscall (nanosleep, most likely)
awk '!/^#/ && $5 != "comm" && $5 != "mmap" && $5 != "switch-in" {print $5; exit}' att.truth |
	grep -qx start && pass "-p: truth begins with start" || fail "-p: truth does not begin with start"

sleep 0.1
kill -0 "$victim" 2>/dev/null && pass "-p: the program runs on after the detach" ||
	fail "-p: the program is gone"
grep -q "State:.*[tT]" /proc/"$victim"/status 2>/dev/null && fail "-p: program left stopped" ||
	pass "-p: program not left stopped"
kill -KILL "$victim"
wait "$victim" 2>/dev/null
kill -0 "$victim" 2>/dev/null && fail "-p: the program survived SIGKILL" || pass "-p: program killed by the test"

"$PTFLAME" report -q -i att.data >att.out 2>rep.err || fail "report: $(head -c 300 rep.err)"
# calls of FUNC in the truth log: target = FUNC's nm value + text mapping
calls_to() {
	local off map
	off=$(nm "$SP" | awk -v s="$1" '$3 == s {print $1; exit}')
	map=$(awk '$5 == "mmap" && $9 ~ /spin_attach$/ && $8 == "0x1000" {print $6; exit}' att.truth)
	[ -n "$off" ] && [ -n "$map" ] || { echo -1; return; }
	awk -v a="$(printf '%#x' $((map - 0x1000 + 0x$off)))" '$5 == "call" && $7 == a' att.truth | wc -l
}
awk '$0 !~ /^main:1\(inferred\)(;| )/ {bad = 1} END {exit bad || NR == 0}' att.out &&
	pass "report: every stack is under main:1(inferred)" ||
	fail "report: a stack not under main:1(inferred): $(grep -vm1 '^main:1(inferred)' att.out)"
chain=$(grep -oE '^main:1\(inferred\);loop_body:[0-9]+[^;]*;level_a:[0-9]+[^;]*;level_b:[0-9]+[^;]*;level_c:[0-9]+' att.out | head -1)
if [ -z "$chain" ]; then
	fail "report: no main:1(inferred);loop_body;level_a;level_b;level_c stack: $(head -c 400 att.out)"
else
	pass "report: $chain"
	for f in loop_body level_a level_b level_c; do
		got=$(printf '%s\n' "$chain" | grep -oE "$f:[0-9]+" | cut -d: -f2)
		want=$(calls_to $f)
		# a frame entered before the attach counts once more (inferred)
		[ "$want" -gt 0 ] && { [ "$got" -eq "$want" ] || [ "$got" -eq $((want + 1)) ]; } &&
			pass "report: $f called $got time(s), truth $want" ||
			fail "report: $f:$got, truth has $want calls"
	done
fi
# every context, count and time against the truth (tests/e2e/report's
# oracle): the --max-insns stop is an async TIP.PGD (a kernel entry) in
# user mode, then the switch-out
if python3 "$SRCDIR/tests/e2e/report/truth_profile.py" compare att.truth att.out \
	>att.cmp 2>&1; then
	pass "report vs truth: $(tail -1 att.cmp)"
else
	fail "report vs truth: $(head -c 600 att.cmp)"
fi

# a process that sleeps for the whole recording: blocked at the attach, so
# off-CPU in its syscall from the recording's start to its end (it showed
# nothing, "no traced thread ran")
sleep 30 &
sleeper=$!
trap 'kill -KILL "$victim" "$sleeper" 2>/dev/null; rm -rf "$T"' EXIT
sleep 0.2
timeout -s KILL 30 "$PTFLAME" record --emulate -q -p "$sleeper" -d 0.5 -o idle.data >idle.err 2>&1
rc=$?
kill -KILL "$sleeper" 2>/dev/null
[ $rc -eq 0 ] && pass "-p of a sleeping process: recorded" ||
	fail "-p of a sleeping process: exit $rc: $(head -c 300 idle.err)"
"$PTFLAME" report -q -i idle.data >idle.out 2>idle.rep
awk '/;\[kernel\][^;]*;\[off-cpu\][^;]* [0-9]+$/ && $NF > 300000000 {ok = 1} END {exit !ok}' idle.out &&
	pass "report of it: off-CPU in its sleep for the recording" ||
	fail "report of it: $(head -c 300 idle.out) $(head -c 300 idle.rep)"
# every thread blocked at the attach (join, read, condition wait, one
# nanosleep that then exits 7): each is off-CPU from the start, under the
# function of its syscall, in the report and the truth, and the sleep,
# restarted by the attach, still ends the program on time with its status
AB=$TESTDATA/attach_blocked
"$AB" 2.5 &
ab=$!
trap 'kill -KILL "$victim" "$ab" 2>/dev/null; rm -rf "$T"' EXIT
sleep 0.3
timeout -s KILL 30 "$PTFLAME" record --emulate -q -p "$ab" -d 0.5 --truth ab.truth -o ab.data \
	>ab.err 2>&1
rc=$?
[ $rc -eq 0 ] && pass "-p of blocked threads: recorded" ||
	fail "-p of blocked threads: exit $rc: $(head -c 300 ab.err)"
"$PTFLAME" report -q --per-thread -i ab.data >ab.out 2>ab.rep
for th in attach_blocked:__futex reader:read waiter:__futex ticker:clock_nanosleep; do
	name=${th%%:*} fn=${th#*:}
	awk -v n="$name" -v f="$fn" 'index($0, n "-") == 1 && index($0, ";" f) &&
		/;\[kernel\][^;]*;\[off-cpu\][^;]* [0-9]+$/ && $NF > 300000000 {ok = 1}
		END {exit !ok}' ab.out && pass "blocked at attach: $name off-CPU in $fn" ||
		fail "blocked at attach: no $name;$fn...;[off-cpu] stack: $(head -c 600 ab.out)"
done
n=$(awk '$5 == "switch-out" && $6 == "block"' ab.truth | sort -u -k4,4 | wc -l)
[ "$n" -eq 4 ] && pass "truth: the 4 threads block at the start" || fail "truth: $n threads block"
"$PTFLAME" report -q -i ab.data >ab.folded 2>/dev/null
if python3 "$SRCDIR/tests/e2e/report/truth_profile.py" compare ab.truth ab.folded >ab.cmp 2>&1; then
	pass "blocked at attach, report vs truth: $(tail -1 ab.cmp)"
else
	fail "blocked at attach, report vs truth: $(head -c 600 ab.cmp)"
fi
for _ in $(seq 100); do
	kill -0 "$ab" 2>/dev/null || break
	sleep 0.1
done
kill -KILL "$ab" 2>/dev/null
wait $ab
rc=$?
[ $rc -eq 7 ] && pass "blocked at attach: the program exited 7 after the detach" ||
	fail "blocked at attach: the program ended with status $rc, not 7"
# a multi-threaded program, attached and detached: it lives on and exits
# with its own status (a single-step trap left queued at the detach killed
# it with SIGTRAP, status 133); -p of a thread that is not the leader
# attaches to its whole process (it waited forever on a stop never sent)
AS=$TESTDATA/attach_sleepers
for how in pid tid; do
	"$AS" 4 &
	ms=$!
	trap 'kill -KILL "$victim" "$ms" 2>/dev/null; rm -rf "$T"' EXIT
	sleep 0.3
	target=$ms
	[ $how = tid ] && target=$(ls /proc/$ms/task | grep -vx "$ms" | head -n 1)
	timeout -s KILL 30 "$PTFLAME" record --emulate -q -p "$target" -d 0.5 -o ms.data >ms.err 2>&1
	rc=$?
	[ $rc -eq 0 ] && pass "-p $how of a 4-thread program: recorded" ||
		fail "-p $how of a 4-thread program: exit $rc: $(head -c 300 ms.err)"
	[ $how = pid ] || grep -q "note: $target is a thread of process $ms: attaching to the whole process" ms.err &&
		pass "-p $how: attached to process $ms" || fail "-p $how: no note: $(head -c 300 ms.err)"
	for _ in $(seq 100); do   # (it has 4 s to live; a stopped one never ends)
		[ "$(awk '{print $3}' /proc/$ms/stat 2>/dev/null)" = Z ] && break
		kill -0 "$ms" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$ms" 2>/dev/null
	wait $ms
	rc=$?
	[ $rc -eq 7 ] && pass "-p $how: the program ran on and exited with its own status" ||
		fail "-p $how: the program ended with status $rc (133: SIGTRAP), not 7"
	"$PTFLAME" report -q --per-thread -i ms.data 2>/dev/null | cut -d';' -f1 | sed 's/-[0-9]*$//' |
		sort -u | tr '\n' ' ' >roots
	[ "$(cat roots)" = "attach_sleepers sleep1 sleep2 sleep3 " ] &&
		pass "-p $how: the 4 threads by their names" || fail "-p $how: threads '$(cat roots)'"
done
finish
