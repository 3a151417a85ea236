#!/bin/bash
# The sideband half of `ptflame record`, real on machines without PT:
# --sideband-only records dummy events (MMAP2, COMM, FORK/EXIT) and context
# switches of testdata/sideband_switch; the structure must match what
# `perf record -e dummy --switch-events` records of the same program (same
# comms, same executable mappings, fork/exit/switch records for the same
# threads). Timings and pids differ between runs, so only structure is
# compared. The file must also be read cleanly by `perf script -D` and by
# `ptflame dump`.
. "$E2E_LIB"

# Perf events must be usable by this user (root, or perf_event_paranoid <= 2).
if [ "$(id -u)" -ne 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 2 ]; then
	echo "skip: kernel.perf_event_paranoid > 2 forbids perf events to non-root users"; exit 77
fi
PROG=$TESTDATA/sideband_switch
SUM="awk -f $SRCDIR/tests/e2e/record_pt/sideband_summary.awk"
SHOW="--show-task-events --show-mmap-events --show-switch-events"

if ! command -v perf >/dev/null; then
	fail "perf not installed (scripts/setup.sh installs linux-perf)"; finish
fi

expect_rc 0 "perf record -e dummy --switch-events" -- perf record -q -e dummy --switch-events -o ref.data -- "$PROG"
expect_rc 0 "ptflame record --sideband-only" -- "$PTFLAME" record --sideband-only -o ours.data -- "$PROG"
expect_grep "wrote ours.data: sideband only" "$T/err" "summary line names the file"
expect_rc 0 "PTFLAME_SIDEBAND_ONLY=1 selects the same mode" -- env PTFLAME_SIDEBAND_ONLY=1 "$PTFLAME" record -o env.data -- "$PROG"
expect_grep "sideband only" "$T/err" "env mode says sideband only"

perf script -i ref.data $SHOW 2>/dev/null | $SUM | sort >ref.sum
perf script -i ours.data $SHOW 2>/dev/null | $SUM | sort >ours.sum
if diff ref.sum ours.sum >sum.diff; then pass "same sideband structure as perf record"; else
	fail "sideband structure differs from perf record (< perf, > ptflame): $(cat sum.diff)"; fi
# What the program does must be there (so the comparison cannot pass on
# two empty summaries).
for want in "comm sb-one" "comm sb-two" "fork sb-one" "fork sb-two" "fork child" \
	"exit child" "exit main" "switch main" "switch sb-one" "switch sb-two" "switch child"; do
	expect_grep "^$want\$" ours.sum "ptflame recorded: $want"
done
expect_grep "^mmap .*/libm\.so\.6$" ours.sum "dlopen'ed library mapped (MMAP2 mid-run)"
expect_grep "^mmap .*/sideband_switch$" ours.sum "executable mapped"

# perf reads the file without a complaint.
perf script -D -i ours.data >dump.txt 2>dump.err; rc=$?
if [ $rc -eq 0 ] && [ ! -s dump.err ]; then pass "perf script -D reads it silently"; else
	fail "perf script -D: exit $rc, stderr: $(head -c 400 dump.err | tr "\n" " ")"; fi
# (whole words: hex offsets like 0x1bad8 are not complaints)
if grep -qiwE "warning|invalid|error" dump.txt; then fail "perf script -D warns: $(grep -iwE 'warning|invalid|error' dump.txt | head -3)"
else pass "no warnings in perf script -D"; fi
expect_grep "PERF_RECORD_SWITCH_CPU_WIDE|PERF_RECORD_SWITCH " dump.txt "switch records present"

# ptflame's own reader sees the same records as perf.
expect_rc 0 "ptflame dump reads it" -- "$PTFLAME" dump ours.data
cp "$T/out" ours.dump
# HEADER_BUILD_ID: the program's build-id, and this kernel's [vdso]'s as
# perf record writes it
bid=$(readelf -n "$PROG" | awk '/Build ID:/ {print $3}')
expect_grep "^# BUILD_ID pid -1 misc 0x2 id $bid file .*/sideband_switch\$" ours.dump "BUILD_ID of the program"
vbid=$(perf buildid-list -i ref.data 2>/dev/null | awk '$2 == "[vdso]" {print $1}')
if [ -z "$vbid" ]; then pass "(perf wrote no [vdso] build-id here: that check skipped)"
else expect_grep "^# BUILD_ID pid -1 misc 0x2 id $vbid file \\[vdso\\]\$" ours.dump \
	"BUILD_ID of the [vdso], the one perf record writes"; fi
# CPU-wide switches when allowed, per-task ones otherwise (unprivileged).
sw=SWITCH_CPU_WIDE
grep -q "PERF_RECORD_SWITCH_CPU_WIDE" dump.txt || sw=SWITCH
for ty in COMM MMAP2 FORK EXIT $sw; do
	a=$(grep -c "PERF_RECORD_$ty[:( ]" dump.txt)
	b=$(grep -cE "^0x[0-9a-f]+ \[0x[0-9a-f]+\] $ty " ours.dump)
	if [ "$a" -eq "$b" ] && [ "$a" -gt 0 ]; then pass "$ty: $a records for perf and ptflame dump"
	else fail "$ty: perf script -D sees $a, ptflame dump sees $b"; fi
done

# -p PID (the users' way: ptflame record -p PID -d 5): the running
# process's threads and executable mappings are synthesized at the start,
# COMM and MMAP2 records with the same fields perf record -p writes.
"$TESTDATA/spin_attach" 30 &
victim=$!
sleep 0.3
expect_rc 0 "ptflame record --sideband-only -p PID -d 0.5" -- \
	"$PTFLAME" record --sideband-only -p "$victim" -d 0.5 -o p.data
expect_rc 0 "perf record -e dummy -p PID" -- \
	perf record -q -e dummy --switch-events -p "$victim" -o p_ref.data -- sleep 0.5
kill "$victim"; wait "$victim" 2>/dev/null
synth() {  # the COMM and MMAP2 records of the victim, without times
	perf script -i "$1" --show-task-events --show-mmap-events 2>/dev/null |
		grep -E "PERF_RECORD_(COMM: .*|MMAP2 )$victim/$victim" | sed 's/.*PERF_RECORD_/ /' | sort -u
}
synth p_ref.data >p_ref.sum
synth p.data >p.sum
if [ -s p.sum ] && diff p_ref.sum p.sum >p.diff; then
	pass "-p: $(grep -c MMAP2 p.sum) MMAP2 and $(grep -c COMM p.sum) COMM synthesized as perf does"
else
	fail "-p: synthesized records differ from perf record -p (< perf, > ptflame): $(head -c 600 p.diff)"
fi
grep -q "MMAP2 .*r-xp .*/spin_attach$" p.sum && grep -q "MMAP2 .*/libc.so.6$" p.sum &&
	pass "-p: the program and libc mapped" || fail "-p: mappings missing: $(cat p.sum)"

# -p of a process in another mount namespace (a container): the build-id
# is its file's, read through /proc/PID/root, not the file at that path
# here. Inside, spin_attach is bind-mounted over ./victim, which is
# validate_calls out here.
cp "$TESTDATA/validate_calls" victim && cp "$TESTDATA/spin_attach" real
if ! unshare -m --propagation private true 2>/dev/null; then
	pass "(no mount namespaces here: the -p container check skipped)"
else
	unshare -m --propagation private sh -c \
		"mount --bind '$PWD/real' '$PWD/victim' && exec '$PWD/victim' 30" &
	victim=$!
	sleep 0.3
	expect_rc 0 "ptflame record --sideband-only -p PID in another mount namespace" -- \
		"$PTFLAME" record --sideband-only -p "$victim" -d 0.3 -o ns.data
	kill "$victim"; wait "$victim" 2>/dev/null
	"$PTFLAME" dump ns.data >ns.dump 2>&1
	rbid=$(readelf -n real | awk '/Build ID:/ {print $3}')
	expect_grep "^# BUILD_ID pid -1 misc 0x2 id $rbid file $PWD/victim\$" ns.dump \
		"-p in a mount namespace: the build-id of the file the process runs"
fi

# -z: the same sideband, compressed as perf record -z does (perf reads it
# out of COMPRESSED records; so does ptflame dump)
expect_rc 0 "record --sideband-only -z" -- "$PTFLAME" record --sideband-only -z3 -o z.data -- "$PROG"
perf script -i z.data $SHOW 2>z.err | $SUM | sort >z.sum
if diff ours.sum z.sum >z.diff; then pass "-z: the same sideband structure"; else
	fail "-z: sideband structure differs from uncompressed (< plain, > -z): $(head -c 400 z.diff)"; fi
n=$(perf report --stats -i z.data 2>/dev/null | awk '/COMPRESSED events:/ {print $3}')
[ "${n:-0}" -gt 0 ] && pass "-z: $n COMPRESSED records" || fail "-z: no COMPRESSED record"
expect_rc 0 "-z: ptflame dump reads it" -- "$PTFLAME" dump z.data
expect_grep '^0x[0-9a-f]+ \[0x[0-9a-f]+\] zstd SWITCH' "$T/out" "-z: switch records come out of compressed ones"
expect_grep '^# COMPRESSED version 1 method 1 .zstd. level 3 ' "$T/out" "-z: the feature says level 3"

# ptflame report: a sideband-only file has no trace to decode; once report
# is built it must say so in one line, not crash.
"$PTFLAME" report ours.data >rep.out 2>rep.err; rc=$?
if grep -q "not built yet" rep.err; then echo "skip: ptflame report not built yet"
elif [ $rc -ge 128 ]; then fail "ptflame report crashed (exit $rc)"
else pass "ptflame report handles a sideband-only file (exit $rc)"; fi
finish
