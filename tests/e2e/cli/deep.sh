#!/bin/bash
# Deep recursion cannot take the machine down (issue 17.5): a 60000-deep
# recursion (perf script text made here: main calls f, f calls itself, all
# return) is reported under a 2 GiB address-space limit. Folded output is
# streamed and stacks are cut at --max-stack (default 1024) into one
# [truncated] frame, counted in the summary; before, every line was held
# (depth^2 / 2 frames: gigabytes).
. "$E2E_LIB"
awk -v n=60000 '
function t() { ts += 0.000001; return sprintf("%.9f", 100 + ts) }
BEGIN {
	pre = "  4242/4242 "; post = ":          1    branches:uH:   "
	printf "%s%s%str strt %16x [unknown] ([unknown]) => %12x main+0x0 (/bin/deep)\n", pre, t(), post, 0, 4096
	printf "%s%s%scall     %16x main+0x4 (/bin/deep) => %12x f+0x0 (/bin/deep)\n", pre, t(), post, 4100, 8192
	for (i = 1; i < n; i++)
		printf "%s%s%scall     %16x f+0x8 (/bin/deep) => %12x f+0x0 (/bin/deep)\n", pre, t(), post, 8200, 8192
	for (i = 1; i < n; i++)
		printf "%s%s%sreturn   %16x f+0x10 (/bin/deep) => %12x f+0xd (/bin/deep)\n", pre, t(), post, 8208, 8205
	printf "%s%s%sreturn   %16x f+0x10 (/bin/deep) => %12x main+0x9 (/bin/deep)\n", pre, t(), post, 8208, 4105
	printf "%s%s%str end   %16x main+0x10 (/bin/deep) => %12x [unknown] ([unknown])\n", pre, t(), post, 4112, 0
}' >deep.txt
(ulimit -v 2097152; "$PTFLAME" report -i deep.txt >deep.folded 2>deep.err); rc=$?
[ $rc -eq 0 ] && pass "60000-deep recursion reported in 2 GiB" || fail "exit $rc: $(head -c 300 deep.err)"
expect_lines 1025 deep.folded "main, 1023 f frames and one [truncated] line"
expect_grep ';\[truncated\]:58977,avg:[0-9]+ [0-9]+$' deep.folded "the cut calls are one [truncated] frame"
expect_grep "58977 calls deeper than --max-stack 1024 shown as \[truncated\]" deep.err "counted in the summary"
# every nanosecond kept: 2 * 60000 + 1 branches 1 us apart
awk '{ s += $NF } END { exit s != 120001000 }' deep.folded && pass "total time kept" ||
	fail "total $(awk '{ s += $NF } END { print s }' deep.folded)"
# the function table and --slowest count calls of a function, which the
# stacks' cut at --max-stack must not change: f was called 60000 times
"$PTFLAME" report -q -i deep.txt --table --format csv >deep.csv 2>deep.err
awk -F, '$1 == "f" {print $2}' deep.csv | grep -qx 60000 &&
	pass "--table: f called 60000 times, the calls below --max-stack included" ||
	fail "--table: $(grep -E '^(f|\[truncated\]),' deep.csv) $(head -c 200 deep.err)"
grep -q '^\[truncated\],' deep.csv && fail "--table has a [truncated] row" ||
	pass "--table: no [truncated] row"
"$PTFLAME" report -q -i deep.txt --slowest 1 f >slow.txt 2>slow.err
# an explicit --max-stack does not go with them: they count every depth
expect_rc 2 "--table --max-stack is refused" -- "$PTFLAME" report -i deep.txt --table --max-stack 5
expect_grep "max-stack cuts stacks: the table counts the calls at every depth" "$T/err" "... saying why"
"$PTFLAME" report -q -i deep.txt --table --by-stack --max-stack 5 --format csv >bystack.csv &&
	grep -q '^"\{0,1\}main;f;f;f;f;\[truncated\]' bystack.csv &&
	pass "--table --by-stack --max-stack 5: paths cut at 5" ||
	fail "--by-stack --max-stack 5: $(head -5 bystack.csv)"
"$PTFLAME" report -q -i deep.txt --slowest 1 f >slow.txt 2>slow.err
grep -q "slowest of 60000 complete calls of f" slow.txt &&
	pass "--slowest: of 60000 calls of f" || fail "--slowest: $(head -2 slow.txt) $(head -c 200 slow.err)"
finish
