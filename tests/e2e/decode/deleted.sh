#!/bin/bash
# A binary deleted after recording (issue 17 item 4): a call into its code
# is an "[unknown] (path)" frame, and the time until decoding can go on
# (where that code went is not known) is [lost] on it (2026-11-28: before,
# that time was the missing code's, the code decoded after it its callees);
# every thread, also those sharing its CPU queue, keeps its whole traced
# time; the missing file is named once. Decoding goes on at the next
# TIP.PGE after the missing code (ptdecode.c, resume_at_pge), not at the
# next PSB.
. "$E2E_LIB"
cp "$TESTDATA/emu_threads" ./prog || { fail "copy"; finish; }
if ! "$PTFLAME" record --emulate -q -o a.data --cpus 1 --time-slice 300 -- ./prog >rec.out 2>rec.err; then
	fail "record: $(head -c 300 rec.err)"; finish
fi
"$PTFLAME" report -i a.data --per-thread --plain >before.folded 2>before.err ||
	fail "report before: $(head -c 300 before.err)"
rm -f prog
"$PTFLAME" report -i a.data --per-thread --plain >after.folded 2>after.err ||
	fail "report after deleting: $(head -c 300 after.err)"
tot() { awk '{n = split($1, a, ";"); s[a[1]] += $NF} END {for (k in s) print k, s[k]}' "$1" | sort; }
tot before.folded >before.tot
tot after.folded >after.tot
[ "$(wc -l <before.tot)" -eq 3 ] && pass "3 threads before" || fail "before: $(cat before.tot)"
if cmp -s before.tot after.tot; then pass "every thread keeps its time: $(tr '\n' ' ' <after.tot)"
else fail "per-thread times differ: before $(tr '\n' ' ' <before.tot), after $(tr '\n' ' ' <after.tot)"; fi
if grep -q '\[lost\]' before.folded; then fail "[lost] before: $(grep '\[lost\]' before.folded | head -3)"
else pass "no [lost] before"; fi
expect_grep '\[unknown\] \(.*/prog\);\[lost\]' after.folded \
	"the deleted binary's code is [unknown] (path), what follows [lost]"
# code of the other files is still decoded: libc functions
expect_grep '(^|;)clock_nanosleep' after.folded "libc's code still decoded between the missing code"
# (code decoded after the gap may still be under it where a return proves
# it: a libc function's return into the missing code, seen after a PSB;
# tests/e2e/report/undecoded.sh checks such stacks against the truth)
n=$(grep -c 'cannot find .*/prog' after.err)
[ "$n" -eq 1 ] && pass "the missing file named once" || fail "named $n times: $(cat after.err)"
finish
