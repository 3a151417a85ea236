#!/bin/bash
# Bad input to `ptflame dump`: a one-line error naming the file and the
# problem, exit status 1, never a crash. The thorough version (every
# truncation offset, byte flips, under ASan) is tests/unit/test_perfdata_bad.c.
. "$E2E_LIB"

# bad NAME PATTERN: dump NAME must fail with one line matching PATTERN.
bad() {
	local name=$1 pat=$2 rc lines
	"$PTFLAME" dump "$name" >out.txt 2>err.txt
	rc=$?
	lines=$(wc -l <err.txt)
	if [ "$rc" -ne 1 ]; then
		fail "$name: exit $rc, want 1; stderr: $(head -c 300 err.txt)"
	elif [ "$lines" -ne 1 ]; then
		fail "$name: $lines lines on stderr, want 1: $(head -c 300 err.txt)"
	elif ! grep -qF "ptflame dump: $name" err.txt; then
		fail "$name: error does not name the file: $(cat err.txt)"
	elif ! grep -qE -- "$pat" err.txt; then
		fail "$name: error does not say /$pat/: $(cat err.txt)"
	else
		return 0
	fi
	return 1
}

# A small real file from perf record.
if ! command -v perf >/dev/null ||
   ! perf record -q -e dummy -o real.data -- /bin/true >rec.out 2>&1; then
	fail "cannot make a real perf.data (perf record -e dummy failed; scripts/setup.sh installs linux-perf; needs root or perf_event_paranoid <= 2): $(head -c 300 rec.out 2>/dev/null)"
	finish
fi
expect_rc 0 "the untouched file dumps" -- "$PTFLAME" dump real.data
# a good perf.data, but of no PT event: report says what it lacks
"$PTFLAME" report -i real.data >rep.out 2>rep.err
rc=$?
[ $rc -eq 1 ] && [ "$(wc -l <rep.err)" -eq 1 ] &&
	grep -q "no Intel PT in this recording (no AUXTRACE_INFO record).*intel_pt//u" rep.err &&
	pass "report of a recording without PT: $(cat rep.err)" ||
	fail "report of a recording without PT: exit $rc: $(head -c 300 rep.err)"
size=$(stat -c %s real.data)
data_off=$(perl -e 'open F, "<", $ARGV[0]; binmode F; read F, $b, 56; print unpack("Q<", substr($b, 40, 8))' real.data)

: >empty.data
bad empty.data "empty" && pass "empty file"
printf 'hello, this is a text file\nnot perf data\n' >notes.txt
bad notes.txt "not a perf.data file \(bad magic\)" && pass "text file"
head -c 3000 /dev/urandom >random.bin
bad random.bin "bad magic" && pass "random bytes"
{ printf 'PERFILE2'; head -c 3000 /dev/urandom; } >random-magic.data
bad random-magic.data "." && pass "random bytes after a good magic"
cp real.data magic.data
printf 'PERFILE3' | dd of=magic.data conv=notrunc status=none
bad magic.data "bad magic" && pass "wrong magic"
{ printf 'PERFILE2'; perl -e 'print pack("Q<", 16)'; } >pipe.data
bad pipe.data "pipe" && pass "pipe-mode header"
# attr.size 136: perf 6.1 rejects it ("incompatible file format").
cp real.data attr136.data
perl -e 'open F, "+<", $ARGV[0]; binmode F; read F, $h, 32; seek F, unpack("Q<", substr($h, 24, 8)) + 4, 0; print F pack("L<", 136)' attr136.data
if perf report --header-only -i attr136.data >/dev/null 2>&1; then
	fail "perf accepted attr size 136; the test's premise is wrong"
fi
bad attr136.data "attr size 136 invalid" && pass "attr size perf rejects"
cp real.data attrsz0.data
perl -e 'open F, "+<", $ARGV[0]; binmode F; seek F, 16, 0; print F pack("Q<", 0)' attrsz0.data
bad attrsz0.data "attr size 0 invalid" && pass "header attr size 0"
# A record of size 0 at the start of the data section.
cp real.data rec0.data
perl -e 'open F, "+<", $ARGV[0]; binmode F; seek F, $ARGV[1] + 6, 0; print F pack("S<", 0)' rec0.data "$data_off"
bad rec0.data "record at offset $(printf '0x%x' "$data_off"): record size 0 too small" && pass "record of size 0"
cp real.data recbig.data
perl -e 'open F, "+<", $ARGV[0]; binmode F; seek F, $ARGV[1] + 6, 0; print F pack("S<", 65528)' recbig.data "$data_off"
bad recbig.data "runs past the end of the data section" && pass "record running past the data section"
bad no-such.data "No such file" && pass "missing file"
mkdir dir.data
bad dir.data "not a regular file" && pass "directory"

# Truncations: a sample of offsets (every one is done in the unit test).
nbad=0 ntry=0
for off in 0 1 7 8 15 16 50 103 104 $((data_off - 1)) $data_off $((data_off + 7)) \
	$(seq $((data_off + 8)) 97 $((size - 1))) $((size - 16)) $((size - 1)); do
	[ "$off" -ge 0 ] && [ "$off" -lt "$size" ] || continue
	head -c "$off" real.data >cut.data
	ntry=$((ntry + 1))
	if [ "$off" -eq 0 ]; then pat="empty"; elif [ "$off" -lt 8 ]; then pat="only $off bytes"; else pat="truncated"; fi
	bad cut.data "$pat" || { nbad=$((nbad + 1)); echo "  (cut at $off of $size)" >&2; }
done
[ "$nbad" -eq 0 ] && pass "$ntry truncations of a $size-byte file each fail cleanly" ||
	fail "$nbad of $ntry truncations misbehaved"
finish
