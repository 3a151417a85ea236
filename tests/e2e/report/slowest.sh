#!/bin/bash
# issue 14.2: report --slowest N FUNC. On slow_kth (the K-th of N calls of
# handle() does more work on purpose), for two K: that call is #1, and the
# N listed calls, their threads, times (as --time takes them), durations and
# subtrees (paths inside, call counts, totals, first starts) equal the
# truth log's (slowest_check.py, on truth_profile.py's model). Also across
# threads with blocking and preemption (emu_threads' worker on 1 CPU).
# Bad uses are refused with one line.
. "$REPORT_DIR/common.sh"
SC="python3 $REPORT_DIR/slowest_check.py"
check() {  # NAME N FUNC K
	local n=$1 cnt=$2 fn=$3 k=$4
	if "$PTFLAME" report -q -i "$n.data" --slowest "$cnt" "$fn" --raw >"$n.slow" 2>"$n.err" &&
		$SC "$n.truth" "$n.slow" "$cnt" "$fn" "$k" >"$n.cmp" 2>&1; then
		pass "$n --slowest $cnt $fn: $(cat "$n.cmp")"
	else
		fail "$n --slowest $cnt $fn: $(cat "$n.err" "$n.cmp" 2>/dev/null | tail -3)"
	fi
}
record_args() {  # NAME ARGS... (record options then -- PROG ARGS)
	local name=$1; shift
	"$PTFLAME" record --emulate -q -o "$name.data" --truth "$name.truth" "$@" >"$name.rec" 2>&1 ||
		{ fail "record $name: $(head -c 300 "$name.rec")"; return 1; }
}
record_args k7 -- "$TESTDATA/slow_kth" 7 12 && check k7 3 handle 7
record_args k2 -- "$TESTDATA/slow_kth" 2 9 && check k2 4 handle 2
if [ -s k7.slow ]; then
	# the human form: units, the call's split, the slow part inside #1
	"$PTFLAME" report -q -i k7.data --slowest 1 handle >k7.txt
	expect_grep '^#1 handle [0-9.]+ µs, tid [0-9]+ \(slow_kth\), at [0-9]+\.[0-9]{9},[0-9]+\.[0-9]{9}$' k7.txt "--slowest: the call's line"
	expect_grep '^   on-CPU .* \(user .*, kernel .*\), off-CPU .* \(blocked .*, preempted .*\)$' k7.txt "--slowest: the split"
	expect_grep '^   \+.* 8      step$' k7.txt "--slowest: slow_part's 8 steps under #1"
	# the call's window as --time takes it selects that call
	win=$(sed -n 's/^#1 .*, at \([0-9.,]*\)$/\1/p' k7.txt)
	"$PTFLAME" report -q -i k7.data --time "$win" --plain >win.folded
	expect_grep '(^|;)slow_part;step [0-9]+$' win.folded "--time of #1's range has slow_part"
fi
record_args thr --cpus 1 --time-slice 150 -- "$TESTDATA/emu_threads" && check thr 3 worker -1
# (the truth may have no whole call of worker: the threads' timing is real)
if grep -q '^#1 ' thr.slow 2>/dev/null; then
	expect_grep '\[preempted\]|\[off-cpu\]' thr.slow "worker: its waits in the subtree"
else
	echo "note: no complete call of worker in this run"
fi
# bad uses
expect_rc 2 "--slowest without FUNC" -- "$PTFLAME" report -q -i k7.data --slowest 3
expect_lines 1 "$T/err" "--slowest without FUNC: one line"
expect_rc 2 "--slowest 0" -- "$PTFLAME" report -q -i k7.data --slowest 0 handle
expect_rc 2 "--slowest x" -- "$PTFLAME" report -q -i k7.data --slowest x handle
expect_rc 2 "--slowest with --table" -- "$PTFLAME" report -q -i k7.data --slowest 1 handle --table
expect_rc 0 "--slowest of no such function" -- "$PTFLAME" report -q -i k7.data --slowest 1 no_such_fn
expect_grep "no function no_such_fn was traced" "$T/err" "--slowest of no such function: said"
finish
