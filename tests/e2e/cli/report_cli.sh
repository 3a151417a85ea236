#!/bin/bash
# report and diff as a user meets them: bad input gets one line naming the
# file and the problem, a failed run never clobbers an earlier output file,
# and options that take values reject junk.
. "$E2E_LIB"
"$PTFLAME" record --emulate -q -o good.data -- "$TESTDATA/emu_nested" ||
	{ fail "record failed"; finish; }

: > empty.data
echo "hello, world" > text.txt
head -c 2000 good.data > trunc.data
mkdir adir
for f in empty.data text.txt trunc.data adir missing.data; do
	expect_rc 1 "report $f fails" -- "$PTFLAME" report -i $f
	expect_lines 1 "$T/err" "report $f: one line"
	expect_grep "^ptflame report: .*$f" "$T/err" "report $f: names the file"
done
expect_grep 'is a directory' <("$PTFLAME" report -i adir 2>&1) "a directory is called one"
expect_grep 'is empty: ptflame needs' <("$PTFLAME" report -i empty.data 2>&1) "an empty file is called one, with what ptflame needs"
expect_rc 1 "report of empty stdin fails" -- "$PTFLAME" report -i - </dev/null
expect_grep "^ptflame report: -: is empty.*ptflame needs.*--itrace=cr" "$T/err" "empty stdin: says what ptflame needs"
expect_grep 'truncated' <("$PTFLAME" report -i trunc.data 2>&1) "a truncated file is called one"

# -o: written whole, via a temporary file; a failed run leaves the old file.
expect_rc 0 "report -o" -- "$PTFLAME" report -q -i good.data -o out.folded
[ -s out.folded ] && pass "report -o wrote the folded file" || fail "report -o: no output"
cp out.folded before.folded
expect_rc 1 "report of a truncated file with -o" -- "$PTFLAME" report -i trunc.data -o out.folded
cmp -s out.folded before.folded && pass "failed report left the earlier output intact" ||
	fail "failed report changed out.folded"
ls | grep -q '\.tmp\.' && fail "temporary files left: $(ls | grep '\.tmp\.')" || pass "no temporary file left"
expect_rc 0 "diff -o" -- "$PTFLAME" diff -o diff.txt out.folded out.folded
awk '$(NF - 1) != $NF { bad = 1 } END { exit bad }' diff.txt && [ -s diff.txt ] &&
	pass "diff of a file with itself written to -o, all equal" || fail "diff -o output wrong"

# Values of options.
for bad in "--tid abc" "--tid 1," "--tid ," "--time 5" "--time 9,3" "--time nan," "--time inf," "--min-ns -1" \
	   "--sort foo" "--top 0" "--top -1" "--top 99999999999999999999" "--top 0x10" "--top 1x" \
	   "--min-ns 99999999999999999999" "--min-ns 0x10" "--min-ns 1x" "--time 0x10," \
	   "--max-stack 0" "--max-stack -5" "--max-stack 99999" "--input-format xml"; do
	expect_rc 2 "report $bad" -- "$PTFLAME" report -i good.data $bad
	expect_lines 1 "$T/err" "report $bad: one line"
done
# a window that ends before it starts is told so, not just "wants START,END"
expect_rc 2 "report --time 9,3" -- "$PTFLAME" report -i good.data --time 9,3
expect_grep "END must come after START: '9,3'" "$T/err" "report --time 9,3 says END is not after START"
expect_rc 2 "report --time 2ms,1ms" -- "$PTFLAME" report -i good.data --time 2ms,1ms
expect_grep "END must come after START" "$T/err" "report --time 2ms,1ms says so too"
# a window given in other units is the same window: 0x10ns is not 0 ns
"$PTFLAME" report -q -i good.data --plain --time 1e3ns, >w1.folded
"$PTFLAME" report -q -i good.data --plain --time 0.000001, >w2.folded
cmp -s w1.folded w2.folded && [ -s w1.folded ] && pass "--time 1e3ns equals --time 0.000001 (s)" ||
	fail "--time 1e3ns and 0.000001 differ"
# numbers are decimal everywhere: 010 is ten, not eight
"$PTFLAME" report -q -i good.data --plain --min-ns 010 >m1.folded
"$PTFLAME" report -q -i good.data --plain --min-ns 10 >m2.folded
cmp -s m1.folded m2.folded && pass "--min-ns 010 is ten" || fail "--min-ns 010 differs from 10"
# a filter that matches nothing: said on stderr, still exit 0
expect_rc 0 "report --tid of no thread" -- "$PTFLAME" report -q -i good.data --tid 999999
expect_grep "note: .*nothing matched --tid" "$T/err" "--tid of no thread: said"
expect_rc 0 "report --root of no function" -- "$PTFLAME" report -q -i good.data --root no_such_function
expect_grep "nothing matched --root no_such_function" "$T/err" "--root of no function: said"
# --max-stack: deeper calls are one [truncated] frame, counted, no time lost
"$PTFLAME" report -i good.data --plain --max-stack 2 >cut.folded 2>cut.err
# (callers found later, by returns above the first frame, may stand above
# the cut; after it only pseudo-frames like [kernel])
expect_grep ';\[truncated\] [0-9]+$' cut.folded "--max-stack 2: [truncated] frames"
awk '{ sub(/ [0-9]+$/, ""); n = split($0, f, ";"); cut = 0
       for (i = 1; i <= n; i++) { if (cut && f[i] !~ /^\[/) bad = 1; if (f[i] == "[truncated]") cut = 1 } }
     END { exit bad }' cut.folded && pass "--max-stack 2: no function below [truncated]" ||
	fail "--max-stack 2: functions below [truncated]"
expect_grep "[0-9]+ calls? deeper than --max-stack 2 shown as \[truncated\]" cut.err "--max-stack: counted in the summary"
sum() { awk '{ s += $NF } END { print s }' "$1"; }
"$PTFLAME" report -q -i good.data --plain >all.folded
[ "$(sum cut.folded)" = "$(sum all.folded)" ] && pass "--max-stack keeps every nanosecond" ||
	fail "--max-stack: total $(sum cut.folded) != $(sum all.folded)"
expect_rc 2 "report with a stray argument" -- "$PTFLAME" report good.data
expect_grep "unexpected argument 'good.data'.*-i FILE" "$T/err" "stray argument: says to use -i"
finish
