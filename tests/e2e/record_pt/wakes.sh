#!/bin/bash
# Wake records of the hardware recorder (issue 16), in --sideband-only mode
# (no PT here): sched:sched_waking on every CPU when tracefs names it and
# the kernel lets us open it; otherwise one line says why (and what to do)
# and the recording is complete without them. PTFLAME_TRACEFS points the
# recorder at a fake tracefs. On a machine whose tracefs has the event and
# allows it, the default run must have the records, readable by perf.
. "$E2E_LIB"
if [ "$(id -u)" -ne 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 2 ]; then
	echo "skip: kernel.perf_event_paranoid > 2 forbids perf events to non-root users"; exit 77
fi
command -v perf >/dev/null || { echo "perf not installed: skipped"; exit 77; }
R=("$PTFLAME" record --sideband-only)
PROG=$TESTDATA/wake_mutex
NOTE="recording without wake records"

# rec NAME [env...] -- [record options]: record PROG, exit 0, a complete
# file perf reads; its stderr in NAME.err
rec() {
	local name=$1; shift
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	if env "${envs[@]}" "${R[@]}" -o "$name.data" "$@" -- "$PROG" >"$name.out" 2>"$name.err"; then
		pass "$name: recorded"
	else
		fail "$name: exit $?: $(head -c 400 "$name.err")"
		return 1
	fi
	perf script -i "$name.data" >"$name.ps" 2>"$name.pserr" || fail "$name: perf script failed: $(head -c 300 "$name.pserr")"
	perf report --header-only -i "$name.data" >"$name.hdr" 2>&1
}
# no_wake_attr NAME: the file has no sched:sched_waking event
no_wake_attr() {
	if grep -q "sched:sched_waking" "$1.hdr"; then fail "$1: a sched:sched_waking event without records"
	else pass "$1: no sched:sched_waking event"; fi
}

# no tracefs there: the line says to mount it, and where
rec none PTFLAME_TRACEFS="$T/none" -- &&
	expect_grep "^ptflame record: no sched:sched_waking tracepoint under $T/none \(mount tracefs: mount -t tracefs nodev $T/none\): $NOTE\$" none.err "no tracefs: one line, how to mount it" &&
	no_wake_attr none
[ "$(grep -c "$NOTE" none.err)" -eq 1 ] || fail "none: the note is not one line: $(cat none.err)"

# a tracefs whose id the kernel does not know: opening fails, said once
mkdir -p ftr/events/sched/sched_waking
echo 65000 >ftr/events/sched/sched_waking/id
rec badid PTFLAME_TRACEFS="$T/ftr" -- &&
	expect_grep "^ptflame record: cannot open sched:sched_waking \(tracepoint id 65000\): .*: $NOTE\$" badid.err "unknown id: one line naming it" &&
	no_wake_attr badid
echo junk >ftr/events/sched/sched_waking/id
rec junk PTFLAME_TRACEFS="$T/ftr" -- &&
	expect_grep "holds no tracepoint id: $NOTE" junk.err "junk id: one line"

# --no-wakers: not even the line
rec off PTFLAME_TRACEFS="$T/none" -- --no-wakers &&
	{ if grep -q "wake" off.err; then fail "--no-wakers: still a wake line: $(cat off.err)"
	  else pass "--no-wakers: no wake line"; fi; no_wake_attr off; }

# -t: per-thread buffers, no CPU-wide events: said (a thread that lives
# longer than the recording: the program may end before record attaches)
sleep 30 & P=$!
"${R[@]}" -o tid.data -t $P -d 0.2 >tid.out 2>tid.err
kill $P 2>/dev/null; wait $P 2>/dev/null
expect_grep "^ptflame record: -t traces threads, not CPUs: $NOTE" tid.err "-t: one line"

# this machine's own tracefs: either the records are there (and perf shows
# wakes of the program's threads) or the line says why not
rec host -- || finish
if grep -q "^ptflame record: wake records: sched:sched_waking on every CPU" host.err; then
	perf script --ns -F trace:tid,cpu,time,event,trace -i host.data >host.wk 2>&1
	tids=$(perf script --show-task-events -i host.data 2>/dev/null |
		awk '/PERF_RECORD_(COMM|FORK)/ {print $0}' | grep -o '[0-9]*/[0-9]*' | cut -d/ -f2 | sort -u)
	n=0
	for t in $tids; do n=$((n + $(grep -c "sched_waking:.* pid=$t " host.wk))); done
	[ "$n" -ge 1 ] && pass "host: $n wake records of the program's threads" ||
		fail "host: no wake record of the program's threads ($(grep -c sched_waking host.wk) in all)"
else
	expect_grep "$NOTE\$" host.err "host: no wake records, one line says why"
	no_wake_attr host
fi
finish
