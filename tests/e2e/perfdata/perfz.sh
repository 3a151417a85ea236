#!/bin/bash
# A file perf itself compressed (perf record -z; cpu-clock samples, no PT:
# what this machine can record): ptflame dump reads every record perf
# reads out of its COMPRESSED records, with the same fields, and report
# refuses it for what it is (no Intel PT), not for unreadable records.
# Skipped where perf cannot record (no perf, no permission).
. "$E2E_LIB"
NORM="$SRCDIR/tests/e2e/perfdata/normD.pl"
command -v perf >/dev/null || { echo "skip: perf is not installed"; finish; }
# (HOME here: the build-id cache perf record writes stays in the test's
# directory)
if ! HOME=$PWD perf record -z -q -o pz.data -e cpu-clock -c 100000 -- \
	python3 -c 'import json, decimal' >rec.out 2>&1; then
	echo "skip: perf record -z cannot record here: $(head -c 200 rec.out)"
	finish
fi
n=$(perf report --stats -i pz.data 2>/dev/null | awk '/COMPRESSED events:/ {print $3}')
[ "${n:-0}" -gt 0 ] && pass "perf wrote $n COMPRESSED records" || fail "perf wrote no COMPRESSED record"
expect_rc 0 "dump reads it" -- "$PTFLAME" dump pz.data
cp "$T/out" pz.dump
perf script -D -i pz.data 2>/dev/null | perl "$NORM" perf | sort >perf.norm
perl "$NORM" dump <pz.dump | sort >dump.norm
n=$(wc -l <perf.norm)
[ "$n" -ge 50 ] && pass "perf shows $n records we check" || fail "perf shows only $n records"
diff perf.norm dump.norm >diff.txt && pass "perf and ptflame dump agree on every field" ||
	fail "perf and ptflame dump disagree: $(head -c 600 diff.txt)"
k=$(grep -c '^0x[0-9a-f]* \[0x[0-9a-f]*\] zstd MMAP2 ' pz.dump)
[ "$k" -gt 0 ] && pass "its MMAP2 records came out of compressed records ($k)" ||
	fail "dump shows no compressed MMAP2 record"
expect_rc 1 "report refuses it" -- "$PTFLAME" report -i pz.data
expect_grep 'no Intel PT in this recording' "$T/err" "report says why"
finish
