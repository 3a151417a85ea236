#!/bin/bash
# issue 16: ptflame dump names a wake attr and prints each wake sample with
# its wakee (the waker is the sample's pid/tid), in ptflame's layout and in
# perf record's (IP, ID, PERIOD, READ, CALLCHAIN before RAW); an unreadable
# one is marked, and the file still dumps whole.
. "$E2E_LIB"
WRITE=$1
"$WRITE" --write w.data || { fail "test_wake --write failed"; finish; }
expect_rc 0 "dump reads a file with wakes" -- "$PTFLAME" dump w.data
cp "$T/out" dump.txt
expect_grep '^# attr 2: type 2 .*sample_type 0x[0-9a-f]+ \(TID\|TIME\|CPU\|RAW\|IDENTIFIER\).* name sched:sched_waking \(wakes\) ids 1 3001$' \
	dump.txt "the wake attr: named, marked"
expect_grep '^0x[0-9a-f]+ \[0x[0-9a-f]+\] SAMPLE sched:sched_waking wakee 102 wakee_comm consumer \| pid 100 tid 101 time 1000000010 cpu 2 id 3001$' \
	dump.txt "a wake: wakee, its comm, the waker's pid/tid, time, cpu"
expect_grep '^0x[0-9a-f]+ \[0x[0-9a-f]+\] SAMPLE sched:sched_waking wakee 101 wakee_comm producer \| pid 100 tid 102 time 1000000020 cpu 1 id 3002$' \
	dump.txt "perf record's layout"
expect_grep '^0x[0-9a-f]+ \[0x[0-9a-f]+\] SAMPLE sched:sched_waking BAD-WAKE \(RAW missing or short\) .* raw 12 \|' \
	dump.txt "a short payload is marked"
expect_grep '^# [0-9]+ records$' dump.txt "the whole file"
finish
