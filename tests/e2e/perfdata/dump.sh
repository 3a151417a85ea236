#!/bin/bash
# ptflame dump's command line: default file, --header-only, arguments,
# a closed pipe, and the greppable record lines.
. "$E2E_LIB"
PERFWRITE=$1

"$PERFWRITE" perf.data || { fail "the writer failed"; finish; }
expect_rc 0 "dump with no argument reads ./perf.data" -- "$PTFLAME" dump
expect_grep "^# ptflame dump of perf.data$" "$T/out" "names the default file"
expect_grep "^0x[0-9a-f]+ \[0x30\] AUXTRACE size 0x18 offset 0x0 reference 0x1122334455667788 idx 0 tid -1 cpu 0 payload@0x[0-9a-f]+$" \
	"$T/out" "AUXTRACE line: size, offset, reference, idx, tid, cpu, payload offset"
expect_grep "^0x[0-9a-f]+ \[0x98\] AUXTRACE_INFO type 1 pmu_type 8 time_shift 10 time_mult 642 .* have_sched_switch 3 .* max_non_turbo_ratio 20 nr_priv 17 filter \"\"$" \
	"$T/out" "AUXTRACE_INFO fields by name"
expect_grep "^0x[0-9a-f]+ \[0x40\] COMM misc 0x2000 pid 4242 tid 4243 comm sample-prog exec \| pid 4242 tid 4243 time 1000001000 cpu 0 id 2001$" \
	"$T/out" "COMM line with its sample_id trailer"
expect_grep "^0x[0-9a-f]+ \[0x30\] SWITCH_CPU_WIDE misc 0x6000 out preempt next_pid 4250 next_tid 4250 \|" \
	"$T/out" "SWITCH_CPU_WIDE out preempt"
expect_grep "^# attr 0: type 8 size 128 config 0x300e601 .*sample_type 0x10087 \(IP\|TID\|TIME\|CPU\|IDENTIFIER\).* ids 2 1001,1002$" \
	"$T/out" "attr line"
expect_grep "^# NRCPUS avail 4 online 2$" "$T/out" "NRCPUS"
expect_grep "^# CMDLINE argc 5: /usr/bin/ptflame record --emulate -- ./prog\\\\x20arg$" "$T/out" "CMDLINE, spaces escaped"
expect_grep "^# BUILD_ID pid 4242 misc 0x2 id deadbeef0102030405060708090a0b0c0d0e0f10 file /usr/lib/sample/libsample.so$" "$T/out" "BUILD_ID"
expect_grep "^# AUXTRACE index 0: offset 0x[0-9a-f]+ sz 0x30$" "$T/out" "AUXTRACE index"
expect_grep "^# 12 records$" "$T/out" "record count"
n=$(grep -c '^0x' "$T/out")
[ "$n" -eq 12 ] && pass "12 record lines" || fail "$n record lines, want 12"
# every record line's offset is the previous offset + size (+ payload)
perl -ne 'BEGIN { $bad = 0 } if (/^0x([0-9a-f]+) \[0x([0-9a-f]+)\] (\S+)(?: size 0x([0-9a-f]+))?/) {
	$off = hex($1); $bad++ if defined $prev && $off != $prev; $prev = $off + hex($2);
	$prev += hex($4) if $3 eq "AUXTRACE" } END { exit($bad ? 1 : 0) }' "$T/out" &&
	pass "records tile the data section" || fail "record offsets do not follow each other"

expect_rc 0 "--header-only" -- "$PTFLAME" dump -H perf.data
grep -q '^0x' "$T/out" && fail "--header-only printed records" || pass "--header-only prints no records"
expect_grep "^# attr 1: type 1 " "$T/out" "--header-only prints attrs"
expect_rc 2 "two files" -- "$PTFLAME" dump a.data b.data
expect_lines 1 "$T/err" "two files: one line"
expect_grep "too many arguments" "$T/err" "two files: says why"
expect_rc 2 "bad option" -- "$PTFLAME" dump --bogus perf.data
expect_rc 0 "dump --help" -- "$PTFLAME" dump --help
expect_grep "^usage: ptflame dump" "$T/out" "dump --help prints usage"

# A reader that goes away early: no error message, no crash. The output
# (~8 MB) is far bigger than a pipe's buffer.
"$PERFWRITE" big.data 100000 || fail "the writer failed on a big file"
"$PTFLAME" dump big.data 2>pipe.err | head -c 10 >/dev/null
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] && pass "closed pipe: exit 0" || fail "closed pipe: exit $rc"
[ ! -s pipe.err ] && pass "closed pipe: quiet" || fail "closed pipe: $(head -c 200 pipe.err)"
expect_rc 0 "the big file dumps" -- "$PTFLAME" dump big.data
expect_grep "^# 100012 records$" "$T/out" "all records of the big file"
finish
