#!/bin/bash
# Targets and stop conditions of `ptflame record`, in --sideband-only mode
# (no PT hardware here): attach to a running process (-p: COMM and MMAP2
# synthesized from /proc, then its children's FORK/EXIT), per-thread mode
# (-t: per-task SWITCH records), stop on -d, SIGINT, SIGTERM and target
# exit, each leaving a complete file perf reads.
. "$E2E_LIB"

# Perf events must be usable by this user (root, or perf_event_paranoid <= 2).
if [ "$(id -u)" -ne 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 2 ]; then
	echo "skip: kernel.perf_event_paranoid > 2 forbids perf events to non-root users"; exit 77
fi
R="$PTFLAME record --sideband-only"
SHOW="--show-task-events --show-mmap-events --show-switch-events"

# A target that lives until killed and keeps forking short children.
start_target() {
	bash -c 'while :; do /bin/sleep 0.02; done' &
	TPID=$!
	sleep 0.1
}
stop_target() { kill "$TPID" 2>/dev/null; wait "$TPID" 2>/dev/null; }
# perf_reads FILE DESC [PERF-OPTS]: perf script reads FILE, nothing on stderr.
perf_reads() {
	perf script ${3:-} -i "$1" $SHOW >"$1.txt" 2>"$1.err"; local rc=$?
	# A machine busy with other tests can overflow the sideband ring: the
	# recorder keeps the kernel's LOST records, and perf counts them. That
	# is the designed behaviour, not a broken file.
	if grep -q "lost [0-9]* chunks" "$1.err"; then
		echo "note: $2: $(grep -o 'lost [0-9]* chunks' "$1.err") (sideband ring overflow under load)"
		grep -v "lost [0-9]* chunks\|Check IO/CPU overload\|^Warning:\|^ *$" "$1.err" >"$1.err2"
		mv "$1.err2" "$1.err"
	fi
	if [ $rc -eq 0 ] && [ ! -s "$1.err" ]; then pass "$2: perf script reads it"
	else fail "$2: perf script exit $rc: $(head -c 400 "$1.err" | tr "\n" " ")"; fi
}

# -- attach with -p, stop after -d
start_target
s=$(date +%s%N)
expect_rc 0 "-p PID -d 0.5" -- $R -p "$TPID" -d 0.5 -o attach.data
e=$(date +%s%N)
stop_target
ms=$(( (e - s) / 1000000 ))
# Not a timing test: just that -d stopped it (the target never exits).
if [ $ms -lt 20000 ]; then pass "-d stopped the recording (${ms} ms)"; else fail "-d did not stop it (${ms} ms)"; fi
perf_reads attach.data "-p"
expect_grep "PERF_RECORD_COMM: bash:$TPID/$TPID" attach.data.txt "existing thread's COMM synthesized"
expect_grep "PERF_RECORD_MMAP2 $TPID/$TPID: .* r-xp .*bash" attach.data.txt "existing executable mapping synthesized"
expect_grep "PERF_RECORD_FORK\([0-9]+:[0-9]+\):\($TPID:$TPID\)" attach.data.txt "children forked after attach are followed"
expect_grep "PERF_RECORD_COMM exec: sleep:" attach.data.txt "a child's exec is recorded (inherit)"
expect_grep "PERF_RECORD_SWITCH_CPU_WIDE|PERF_RECORD_SWITCH " attach.data.txt "context switches recorded"

# -- stop on SIGINT and SIGTERM
for sig in INT TERM; do
	start_target
	$R -p "$TPID" -o sig$sig.data 2>sig.err &
	rp=$!
	sleep 0.4
	kill -$sig $rp
	wait $rp; rc=$?
	stop_target
	if [ $rc -eq 0 ]; then pass "SIG$sig stops it with exit 0"; else fail "SIG$sig: exit $rc: $(cat sig.err)"; fi
	perf_reads sig$sig.data "SIG$sig"
done

# -- the target exits: the recorder notices and stops by itself
start_target
$R -p "$TPID" -o exit.data 2>exit.err &
rp=$!
sleep 0.3
stop_target
for _ in $(seq 50); do kill -0 $rp 2>/dev/null || break; sleep 0.1; done
if kill -0 $rp 2>/dev/null; then kill $rp; fail "recorder still running after its target exited"
else wait $rp; rc=$?; [ $rc -eq 0 ] && pass "stops when the target exits" || fail "target exit: exit $rc"; fi
perf_reads exit.data "target exit"
expect_grep "PERF_RECORD_EXIT\($TPID:$TPID\)" exit.data.txt "the target's EXIT is in the file"

# -- -- CMD stopped by -d: the command is terminated
expect_rc 0 "-d 0.3 -- sleep 30" -- $R -d 0.3 -o cmd.data -- /bin/sleep 30
expect_grep "stopped by signal 15 .* when the recording ended" "$T/err" "the command is terminated at the end"
perf_reads cmd.data "-- CMD with -d"

# -- -t: per-thread buffers, per-task SWITCH records of that thread only
start_target
expect_rc 0 "-t TID -d 0.3" -- $R -t "$TPID" -d 0.3 -o tid.data
expect_grep "1 threads" "$T/err" "summary counts threads in per-thread mode"
stop_target
perf_reads tid.data "-t"
if grep -q "PERF_RECORD_SWITCH_CPU_WIDE" tid.data.txt; then fail "-t recorded CPU-wide switches"
else pass "-t: no CPU-wide switch records"; fi
expect_grep "$TPID +\[[0-9-]+\] +[0-9.]+: PERF_RECORD_SWITCH (OUT|IN)" tid.data.txt "-t: the thread's own SWITCH records"
others=$(grep "PERF_RECORD_SWITCH" tid.data.txt | awk -v t="$TPID" '{for (i = 1; i <= NF; i++) if ($i ~ /^\[/) break; if ($(i-1) != t) n++} END {print n + 0}')
if [ "$others" -eq 0 ]; then pass "-t: switches of no other thread"; else fail "-t: $others switch records of other threads"; fi

# -- unprivileged: CPU-wide switch events need perf_event_paranoid <= 0;
# the recorder falls back to per-task SWITCH records and says so.
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && [ "$paranoid" -ge 1 ] &&
	setpriv --reuid 65534 --regid 65534 --clear-groups test -x "$PTFLAME" -a -x "$TESTDATA/sideband_switch"; then
	chmod 711 "$T"; mkdir -p "$T/u"; chmod 777 "$T/u"
	(cd "$T/u" && setpriv --reuid 65534 --regid 65534 --clear-groups $R -o u.data -- "$TESTDATA/sideband_switch") >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -eq 0 ]; then pass "unprivileged recording works"; else fail "unprivileged: exit $rc: $(cat "$T/err")"; fi
	expect_grep "per-task switch events" "$T/err" "unprivileged: says it fell back to per-task switches"
	perf_reads "$T/u/u.data" "unprivileged" -f  # -f: the file is nobody's
	expect_grep "PERF_RECORD_SWITCH (OUT|IN)" "$T/u/u.data.txt" "unprivileged: per-task SWITCH records"
else
	echo "skip: unprivileged fallback (needs root, setpriv, perf_event_paranoid >= 1 and a build 'nobody' can run)"
fi
finish
