#!/bin/bash
# A file our writer made (intel_pt attr, AUXTRACE_INFO, TIME_CONV, COMM,
# MMAP2, ITRACE_START, SWITCH_CPU_WIDE, FORK, EXIT, AUX, AUXTRACE + payload,
# features) must be read by perf 6.1 with no warning and the same field values
# our reader sees.
. "$E2E_LIB"
PERFWRITE=$1
NORM="$SRCDIR/tests/e2e/perfdata/normD.pl"

command -v perf >/dev/null || { fail "perf is not installed (scripts/setup.sh installs linux-perf)"; finish; }
"$PERFWRITE" w.data || { fail "the writer failed"; finish; }
ls -a | grep -q '\.tmp\.' && fail "temporary file left behind: $(ls -a)"

perf script -D -i w.data >perfD.txt 2>perfD.err
rc=$?
[ "$rc" -eq 0 ] && pass "perf script -D exits 0" || fail "perf script -D exit $rc"
[ ! -s perfD.err ] && pass "perf script -D says nothing on stderr" ||
	fail "perf script -D complains: $(head -c 400 perfD.err)"
grep -q "Intel Processor Trace data: size 24 bytes" perfD.txt &&
	pass "perf finds the AUXTRACE payload" || fail "perf does not show the AUXTRACE payload"
grep -qE "^\. +00000000: +02 82 02 82.*PSB" perfD.txt &&
	pass "perf decodes the payload's PSB" || fail "perf does not decode the PSB in the payload"

perf report --header-only -i w.data >hdr.txt 2>hdr.err
grep -q "cmdline : /usr/bin/ptflame record --emulate -- ./prog arg" hdr.txt &&
	grep -q "nrcpus avail : 4" hdr.txt && grep -q "contains AUX area data" hdr.txt &&
	pass "perf reads CMDLINE, NRCPUS and the AUXTRACE feature" ||
	fail "perf report --header-only: $(head -c 400 hdr.txt) $(head -c 200 hdr.err)"
perf evlist -v -i w.data >evlist.txt 2>&1
grep -qE "type: 8, size: 128, config: 0x300e601.*sample_id_all: 1" evlist.txt &&
	pass "perf reads the intel_pt attr" || fail "perf evlist: $(head -c 400 evlist.txt)"

expect_rc 0 "ptflame dump reads it" -- "$PTFLAME" dump w.data
perl "$NORM" perf <perfD.txt | sort >perf.norm
perl "$NORM" dump <"$T/out" | sort >dump.norm
n=$(wc -l <perf.norm)
[ "$n" -eq 10 ] && pass "perf shows the 10 records we check" || fail "perf shows $n of the 10 records: $(cat perf.norm)"
if diff perf.norm dump.norm >diff.txt; then
	pass "perf and ptflame dump agree on every field"
else
	fail "perf and ptflame dump disagree: $(head -c 600 diff.txt)"
fi
# And both agree with what was written (tests/unit/test_perfdata_sample.c).
grep -q "COMM cpu 0 time 1000001000 4242/4243 sample-prog exec" perf.norm &&
	grep -q "MMAP2 cpu 0 time 1000002000 4242/4243 0x7f0012340000 0x21000 0x3000 fe:01 123456 0 r-xp /usr/lib/sample/libsample.so" perf.norm &&
	grep -q "SWITCH_CPU_WIDE cpu 0 time 1000006000 OUT preempt 4250/4250" perf.norm &&
	grep -q "AUXTRACE 24 0 1234605616436508552 0 -1 0" perf.norm &&
	grep -q "AUXTRACE_INFO type 1 pmu_type 8 time_shift 10 time_mult 642 " perf.norm &&
	pass "perf sees the values written" || fail "perf sees other values: $(cat perf.norm)"

# Compressed as perf record -z does (3000 more MMAP2 records of files with
# noise for names, so that zstd's output for them spans several COMPRESSED
# records and records are cut between two): perf reads the same records out
# of it, ptflame dump agrees with perf offset for offset, and both see what
# the uncompressed file holds.
if "$PERFWRITE" -z 0 p.data 3000 && "$PERFWRITE" -z 1 z.data 3000; then
	perf script -D -i z.data >zD.txt 2>zD.err
	rc=$?
	[ "$rc" -eq 0 ] && [ ! -s zD.err ] && pass "compressed: perf script -D reads it quietly" ||
		fail "compressed: perf script -D exit $rc: $(head -c 400 zD.err)"
	n=$(perf report --stats -i z.data 2>/dev/null | awk '/COMPRESSED events:/ {print $3}')
	[ "${n:-0}" -ge 5 ] && pass "compressed: $n COMPRESSED records" ||
		fail "compressed: ${n:-no} COMPRESSED records (want several)"
	perf script -D -i p.data 2>/dev/null | perl "$NORM" perf | cut -d' ' -f2- | sort >p.norm
	perl "$NORM" perf <zD.txt | sort >zperf.norm
	expect_rc 0 "compressed: ptflame dump reads it" -- "$PTFLAME" dump z.data
	perl "$NORM" dump <"$T/out" | sort >zdump.norm
	n=$(grep -c ' zstd ' "$T/out")
	[ "$n" -eq 3008 ] && pass "compressed: dump marks the 3008 records they hold" ||
		fail "compressed: dump marks $n records, not 3008"
	expect_grep '^# COMPRESSED version 1 method 1 .zstd. level 1 ' "$T/out" \
		"compressed: dump shows the COMPRESSED feature"
	diff zperf.norm zdump.norm >zdiff.txt && pass "compressed: perf and ptflame dump agree" ||
		fail "compressed: perf and ptflame dump disagree: $(head -c 600 zdiff.txt)"
	n=$(wc -l <p.norm)
	cut -d' ' -f2- zperf.norm | sort | diff p.norm - >zpdiff.txt && [ "$n" -eq 3010 ] &&
		pass "compressed: the same 3010 records as uncompressed" ||
		fail "compressed: records differ from the uncompressed file's ($n): $(head -c 600 zpdiff.txt)"
	[ "$(stat -c %s z.data)" -lt "$(stat -c %s p.data)" ] && pass "compressed: smaller" ||
		fail "compressed: not smaller ($(stat -c %s z.data) vs $(stat -c %s p.data) bytes)"
else
	fail "the writer failed to write the compressed files"
fi
finish
