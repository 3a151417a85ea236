#!/bin/bash
# --oncpu and --offcpu keep part of each call's time: every output says
# that part, not the whole call's wall latency. The function table has no
# row without such time, its Avg is that time per call, and it has no
# percentiles (the histograms are of whole calls); the folded stacks have
# no "... 0" lines of calls with none of it; --slowest, which ranks whole
# calls, refuses them. (emu_threads: two threads sleep holding a mutex.)
. "$E2E_LIB"
rec_emu thr threads || finish
for part in oncpu offcpu; do
	"$PTFLAME" report -q -i thr.data --table --$part --format csv >$part.csv 2>$part.err ||
		{ fail "--table --$part: $(cat $part.err)"; continue; }
	# function,calls,inferred,total_ns,self_ns,avg_ns,p50_ns,p90_ns,p99_ns,max_ns
	awk -F, -v part=$part 'NR > 1 {
		rows++
		if ($4 == 0) { print "row of no " part " time: " $0; bad = 1 }
		if ($2 > 0 && $6 != int(($4 + int($2 / 2)) / $2)) { print "avg is not total/calls: " $0; bad = 1 }
		if ($7 $8 $9 $10 != "") { print "percentiles of whole calls: " $0; bad = 1 }
		if ($1 == "[off-cpu]") off = 1
	} END {
		if (part == "oncpu" && off) { print "an [off-cpu] row"; bad = 1 }
		if (part == "offcpu" && !off) { print "no [off-cpu] row"; bad = 1 }
		exit bad || !rows
	}' $part.csv >$part.chk && pass "--table --$part: only that time, avg per call of it, no percentiles" ||
		fail "--table --$part: $(head -3 $part.chk)"
	"$PTFLAME" report -q -i thr.data --$part >$part.folded 2>$part.err
	[ -s $part.folded ] && ! grep -q ' 0$' $part.folded &&
		pass "folded --$part: no line of 0 ns" ||
		fail "folded --$part: $(grep -m2 ' 0$' $part.folded) $(cat $part.err)"
	expect_rc 2 "--slowest with --$part is refused" -- "$PTFLAME" report -i thr.data --slowest 1 nap --$part
	expect_grep "whole calls by wall-clock time: --$part does not apply" "$T/err" "... saying why"
done
grep -q '\[off-cpu\]' oncpu.folded && fail "folded --oncpu has [off-cpu] frames" ||
	pass "folded --oncpu: no [off-cpu] frame"
# a thread's switch-out as it exits is no wait: no [off-cpu] of 0 ns under
# _exit, and no wait of 0 ns in the wakers' table
"$PTFLAME" report -q -i thr.data >all.folded
grep -E '\[(off-cpu|preempted)\][^;]* 0$' all.folded >zero.txt &&
	fail "waits of 0 ns: $(head -2 zero.txt)" || pass "no wait of 0 ns at a thread's exit"
"$PTFLAME" report -q -i thr.data --wakers --table --raw --format csv >wk.csv
awk -F, 'NR > 1 && $4 == 0' wk.csv | grep -q . && fail "wakers' table rows of 0 ns: $(awk -F, 'NR > 1 && $4 == 0' wk.csv | head -2)" ||
	pass "no wakers' table row of 0 ns"
# the whole table still has the wall latencies
"$PTFLAME" report -q -i thr.data --table --format csv >all.csv
awk -F, '$1 == "nap" && $7 != "" {ok = 1} END {exit !ok}' all.csv &&
	pass "without a filter, nap has percentiles" || fail "nap: $(grep '^nap,' all.csv)"
finish
