#!/bin/bash
# issue 14.1: report --timeline. For emu_* programs (threads also on 1 and 2
# CPUs with short time slices: preemption; signal handlers; longjmp and C++
# unwinding) the JSON parses, names every thread and process, each
# thread's events nest, and every call's start and duration equal the
# truth log's (0.1 %; timeline_check.py truth, on truth_profile.py's model
# of the truth), the "inferred" mark exactly where the truth saw no whole
# call. Filters (--tid, --min-ns, --time, --root) against the model with
# the same filter; the same output twice; bad outputs refused.
. "$REPORT_DIR/common.sh"
TC="python3 $REPORT_DIR/timeline_check.py"
check() {  # NAME JSON [truth filter options]
	local n=$1 j=$2; shift 2
	if $TC check "$j" >"$j.chk" 2>&1 && $TC truth "$n.truth" "$j" "$@" >"$j.cmp" 2>&1; then
		pass "$n $*: $(cat "$j.chk"); $(tail -1 "$j.cmp")"
	else
		fail "$n $*: $(cat "$j.chk" "$j.cmp" 2>/dev/null | tail -3)"
	fi
}
run() {  # NAME PROG [record options]
	local n=$1 p=$2; shift 2
	record "$n" "emu_$p" "$@" || return 1
	if "$PTFLAME" report -q -i "$n.data" --timeline "$n.json" >"$n.stdout" 2>"$n.err"; then
		[ -s "$n.stdout" ] && fail "$n: --timeline without -o wrote to stdout"
		check "$n" "$n.json"
	else
		fail "$n: report --timeline: $(head -c 300 "$n.err")"
		return 1
	fi
}
for p in demo signal longjmp except tail; do
	run "$p" "$p"
done
run threads threads
# (whether a thread gets preempted depends on which threads are ready,
# which depends on real syscall times: the truth says)
if run threads.cpu1 threads --cpus 1 --time-slice 100; then
	np=$(grep -c ' switch-out preempt' threads.cpu1.truth)
	if [ "$np" -gt 0 ]; then
		expect_grep '"cat":"preempted"' threads.cpu1.json "threads on 1 CPU: $np preemptions, [preempted] spans"
	else
		echo "note: no preemption in this run of threads on 1 CPU"
	fi
fi
run threads.cpu2 threads --cpus 2 --time-slice 150

# filters, on the preempted recording
n=threads.cpu1
if [ -s $n.truth ]; then
	tid=$(awk '$5 == "clone" {print $4; exit}' $n.truth)
	"$PTFLAME" report -q -i $n.data --tid "$tid" --timeline tid.json && check $n tid.json --tids "$tid"
	"$PTFLAME" report -q -i $n.data --min-ns 200 --timeline min.json &&
		check $n min.json --min-ns 200 &&
		{ $TC check min.json --min-ns 200 >/dev/null || fail "--min-ns 200: a shorter call"; }
	lo=$(awk '$5 == "call" {print $1; exit}' $n.truth)
	hi=$(awk '$5 == "call" {x = $1} END {print x}' $n.truth)
	a=$((lo + (hi - lo) / 3)) b=$((lo + 2 * (hi - lo) / 3))
	"$PTFLAME" report -q -i $n.data --time "${a}ns,${b}ns" --timeline time.json &&
		check $n time.json --time "$a,$b"
	"$PTFLAME" report -q -i $n.data --root worker --timeline root.json && check $n root.json --root worker
	# --comm of no thread: no event; --offcpu: every off-CPU span, fewer calls
	"$PTFLAME" report -q -i $n.data --comm nosuch --timeline comm.json 2>/dev/null &&
		[ "$($TC check comm.json)" = "0 events, 0 threads" ] && pass "--comm nosuch: no event" ||
		fail "--comm nosuch: $($TC check comm.json 2>&1)"
	"$PTFLAME" report -q -i $n.data --offcpu --timeline off.json
	cnt() { grep -cE "$1" "$2"; }
	if [ "$(cnt '"cat":"(off-cpu|preempted)"' off.json)" = "$(cnt '"cat":"(off-cpu|preempted)"' $n.json)" ] &&
		[ "$(cnt '"cat":"call"' off.json)" -lt "$(cnt '"cat":"call"' $n.json)" ] &&
		$TC check off.json >/dev/null; then
		pass "--offcpu: every off-CPU span, only calls that waited"
	else
		fail "--offcpu timeline"
	fi
	# the same bytes every run; stdout as the output
	"$PTFLAME" report -q -i $n.data --timeline again.json
	cmp -s again.json $n.json && pass "--timeline twice: the same bytes" || fail "--timeline twice differs"
	"$PTFLAME" report -q -i $n.data --timeline - >stdout.json
	cmp -s stdout.json $n.json && pass "--timeline -: stdout" || fail "--timeline - differs from the file"
	# -o still gets the folded stacks
	"$PTFLAME" report -q -i $n.data --timeline t2.json -o folded.out &&
		[ -s folded.out ] && cmp -s t2.json $n.json && pass "--timeline with -o: both" ||
		fail "--timeline with -o"
	# bad outputs: one line, exit 1, an existing file kept
	echo keep >old.json
	expect_rc 1 "--timeline into a missing directory" -- "$PTFLAME" report -q -i $n.data --timeline nodir/x.json
	expect_rc 1 "--timeline a directory" -- "$PTFLAME" report -q -i $n.data --timeline .
	expect_rc 1 "--timeline onto the input" -- "$PTFLAME" report -q -i $n.data --timeline $n.data
	expect_rc 1 "--timeline onto -o's file" -- "$PTFLAME" report -q -i $n.data --timeline old.json -o old.json
	[ "$(cat old.json)" = keep ] && pass "a refused run keeps the old file" || fail "old.json changed"
fi
# real Intel PT recordings (perf script text and perf.data, made by others):
# the JSON parses, names its threads, and every thread's events nest
R=$SRCDIR/../shared/realtraces
if [ -d "$R" ]; then
	for f in hello_world_userspace.perf page_fault.perf ocaml_exceptions.perf simple_gogo.perf \
		 skylake-echo.intel_pt.data; do
		[ -s "$R/$f" ] || continue
		if "$PTFLAME" report -q -i "$R/$f" --timeline "real.$f.json" 2>real.err &&
			$TC check "real.$f.json" >real.chk 2>&1; then
			pass "real $f: $(cat real.chk)"
		else
			fail "real $f: $(cat real.err real.chk 2>/dev/null | tail -2)"
		fi
	done
else
	echo "skip: no ../shared/realtraces (real recordings)"
fi
finish
