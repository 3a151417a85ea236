#!/bin/bash
# Recordings whose sideband is compressed (record -z, the format of perf
# record -z: MMAP, COMM, SWITCH, AUX ... records inside zstd-compressed
# COMPRESSED records, the AUX data as it is): report reads them as exactly
# as uncompressed ones (the truth log, -j 1 and -j 2 alike), perf reads
# them, and a bad level is a usage error that writes nothing.
. "$REPORT_DIR/common.sh"
for spec in "zt emu_threads -z" "zs emu_signal --compression-level=19 --cpus 1"; do
	read -r n prog opts <<<"$spec"
	# shellcheck disable=SC2086
	record "$n" "$prog" $opts || continue
	"$PTFLAME" dump "$n.data" >"$n.dump" 2>&1 || fail "$n: dump: $(head -c 300 "$n.dump")"
	k=$(grep -c '^0x[0-9a-f]* \[0x[0-9a-f]*\] zstd ' "$n.dump")
	grep -q '^0x[0-9a-f]* \[0x[0-9a-f]*\] zstd MMAP2 ' "$n.dump" &&
		grep -q '^0x[0-9a-f]* \[0x[0-9a-f]*\] AUXTRACE ' "$n.dump" &&
		pass "$n: $k sideband records compressed, the AUX data not" ||
		fail "$n: dump shows no compressed MMAP2 or no plain AUXTRACE ($k compressed)"
	expect_grep '^# COMPRESSED version 1 method 1 .zstd. level [0-9]+ ' "$n.dump" \
		"$n: the COMPRESSED feature"
	report "$n.pt" -i "$n.data" -j 1 || continue
	$TP compare "$n.truth" "$n.pt" >"$n.cmp" 2>&1 && pass "$n: report vs truth: $(tail -1 "$n.cmp")" ||
		fail "$n: report vs truth: $(head -c 600 "$n.cmp")"
	report "$n.ptt" -i "$n.data" --per-thread || continue
	$TP compare "$n.truth" "$n.ptt" --per-thread >"$n.cmpt" 2>&1 &&
		pass "$n: --per-thread vs truth" || fail "$n: --per-thread vs truth: $(head -c 600 "$n.cmpt")"
	report "$n.pt2" -i "$n.data" -j 2 || continue
	cmp -s "$n.pt" "$n.pt2" && pass "$n: -j 2 gives -j 1's bytes" || fail "$n: -j 2 differs from -j 1"
done
# perf reads the same sideband out of it
if [ -s zt.dump ] && command -v perf >/dev/null; then
	perf script -i zt.data --show-task-events --show-mmap-events -F pid,tid,time \
		>zt.perf 2>zt.perf.err
	a=$(grep -c 'PERF_RECORD_MMAP2' zt.perf) b=$(grep -c ' zstd MMAP2 ' zt.dump)
	[ "$a" -gt 0 ] && [ "$a" -eq "$b" ] && pass "perf reads the $a MMAP2 records ptflame dump shows" ||
		fail "perf sees $a MMAP2 records, ptflame dump $b: $(head -c 300 zt.perf.err)"
	n=$(perf report --stats -i zt.data 2>/dev/null | awk '/COMPRESSED events:/ {print $3}')
	[ "${n:-0}" -gt 0 ] && pass "perf counts $n COMPRESSED records" ||
		fail "perf counts no COMPRESSED records"
fi
# a pipe-mode copy (perf inject -o -: the compressed records kept, the
# COMPRESSED feature a record of its own; without wake records, which perf
# inject cannot copy without this machine's tracefs): the same profile
if command -v perf >/dev/null && record zp emu_threads -z --no-wakers &&
	report zp.pt -i zp.data -j 1; then
	# (HOME here: perf's build-id cache, if it wrote one, stays in the
	# test's directory, and e2e-decode-deleted never finds its copy)
	if HOME=$PWD perf inject -i zp.data -o - >zpp.data 2>zpp.err; then
		"$PTFLAME" dump zpp.data 2>&1 | grep -q '^0x[0-9a-f]* \[0x[0-9a-f]*\] zstd ' &&
			pass "pipe mode: the copy keeps compressed records" ||
			fail "pipe mode: the copy holds no compressed record"
		report zpp.pt -i zpp.data -j 1 &&
			{ cmp -s zp.pt zpp.pt && pass "pipe mode: the same profile" ||
				fail "pipe mode: another profile: $(diff zp.pt zpp.pt | head -c 400)"; }
	else
		fail "perf inject -o -: $(head -c 300 zpp.err)"
	fi
fi
# bad levels: usage errors, one line, nothing written
for bad in -z0 -z23 --compression-level=x; do
	expect_rc 2 "record --emulate $bad" -- "$PTFLAME" record --emulate "$bad" -o bad.data -- "$TESTDATA/emu_nested"
	expect_lines 1 "$T/err" "$bad: one line"
	expect_grep 'compression-level.*1 .fastest. to 22' "$T/err" "$bad: says the range"
done
[ -e bad.data ] && fail "a bad level left bad.data" || pass "a bad level writes nothing"
expect_rc 2 "record (hardware) -z23" -- "$PTFLAME" record -z23 -o bad.data -- true
expect_grep 'compression-level' "$T/err" "record -z23: says the option"
finish
