#!/bin/bash
# Pipe-mode perf.data (perf record -o -, here perf inject -o - of an
# emulated recording: attrs, features, time conversion and AUXTRACE
# payloads as records in the stream) reads as its file-mode original:
# byte-identical folded output and table. Its build-ids (HEADER_BUILD_ID
# records) are checked as the file-mode table's are (replaced.sh).
. "$E2E_LIB"
command -v perf >/dev/null || { echo "SKIP: perf (linux-perf) not installed"; exit 77; }
# --no-wakers: perf inject writes a tracepoint's format into the stream
# from the machine's own tracefs, and without one its stream is broken
# (perf script cannot read it either: "unexpected end of event stream")
"$PTFLAME" record --emulate -q --no-wakers -o e.data --cpus 2 -- "$TESTDATA/emu_threads" >rec.out 2>rec.err ||
	{ fail "record: $(head -c 300 rec.err)"; finish; }
perf inject -i e.data -o - >e.piped 2>inj.err || { fail "perf inject: $(head -c 300 inj.err)"; finish; }
[ "$(head -c 16 e.piped | od -An -tx1 | tr -d ' \n')" = "50455246494c45321000000000000000" ] &&
	pass "perf inject wrote a pipe-mode header" || fail "not a pipe-mode header"
"$PTFLAME" report -i e.data >f.folded 2>f.err || fail "report file: $(head -c 300 f.err)"
"$PTFLAME" report -i e.piped >p.folded 2>p.err || fail "report pipe-mode: $(head -c 300 p.err)"
[ -s f.folded ] && cmp -s f.folded p.folded && pass "same folded output ($(wc -l <f.folded) lines)" ||
	fail "folded output differs: $(diff f.folded p.folded | head -5)"
cmp -s f.err p.err && pass "same summary" || fail "summary differs: $(cat f.err p.err)"
"$PTFLAME" report -i e.data --table >f.table 2>/dev/null
"$PTFLAME" report -i e.piped --table >p.table 2>/dev/null
[ -s f.table ] && cmp -s f.table p.table && pass "same table" || fail "table differs"

# Build-ids in pipe mode: a pipe has no feature section, so perf inject
# --buildid-all writes each file's build-id (read from the file at its
# path then) as a HEADER_BUILD_ID record before its first MMAP2. report
# takes them as it takes the file-mode BUILD_ID feature (replaced.sh): a
# file at the recorded path with another build-id is refused, not decoded.
cp "$TESTDATA/validate_calls" ./prog || { fail "copy"; finish; }
"$PTFLAME" record --emulate -q --no-wakers -o b.data -- ./prog >brec.out 2>brec.err ||
	{ fail "record prog: $(head -c 300 brec.err)"; finish; }
perf inject --buildid-all -i b.data -o - >b.piped 2>binj.err ||
	{ fail "perf inject --buildid-all: $(head -c 300 binj.err)"; finish; }
bid=$(readelf -n prog | awk '/Build ID:/ {print $3}')
"$PTFLAME" dump b.piped >bdump.txt 2>bdump.err || fail "dump: $(head -c 300 bdump.err)"
expect_grep "^0x[0-9a-f]+ \\[0x[0-9a-f]+\\] HEADER_BUILD_ID misc 0x[0-9a-f]+ pid -?[0-9]+ id $bid file $PWD/prog\$" \
	bdump.txt "dump: the HEADER_BUILD_ID record names the program's build-id"
expect_grep "^# BUILD_ID pid -?[0-9]+ misc 0x2 id $bid file $PWD/prog\$" bdump.txt \
	"dump: the header's BUILD_ID lines list it"
"$PTFLAME" report -i b.piped --plain >bbefore.folded 2>bbefore.err ||
	fail "report pipe-mode: $(head -c 300 bbefore.err)"
expect_grep ';main;fib;fib' bbefore.folded "the program's functions named with the original"
if grep -q 'not the binary recorded' bbefore.err; then fail "the original refused: $(cat bbefore.err)"
else pass "the original is not refused"; fi
cp "$TESTDATA/emu_threads" ./prog
"$PTFLAME" report -i b.piped --plain >bafter.folded 2>bafter.err ||
	fail "report pipe-mode, another program: $(head -c 300 bafter.err)"
expect_grep "$PWD/prog is not the binary recorded \\(build-id $bid\\).*--symfs" bafter.err \
	"another program at the recorded path: named, with what to do"
expect_grep '\[unknown\] \(.*/prog\)' bafter.folded "its code is [unknown] (path)"
if grep -Eq '(^|;)(main|worker|nap|bump)( |;)' bafter.folded; then
	fail "names read from the other program: $(grep -E -m3 '(^|;)(main|worker|nap|bump)( |;)' bafter.folded)"
else pass "no names read from the other program"; fi
# a HEADER_BUILD_ID record whose name runs to its end unterminated: one
# line naming the record, as for a bad entry of the file-mode feature
python3 -c '
import struct, sys
d = bytearray(open("b.piped", "rb").read())
e = d.find(sys.argv[1].encode() + b"\0") - 36     # header, pid, id[24], then the name
typ, misc, size = struct.unpack_from("<IHH", d, e)
assert typ == 67, typ
d[e + 36:e + size] = b"x" * (size - 36)
open("bad.piped", "wb").write(d)
print(hex(e))' "$PWD/prog" >bad.off || fail "making bad.piped"
"$PTFLAME" report -i bad.piped --plain >bad.folded 2>bad.err && fail "bad.piped accepted"
expect_grep "bad.piped: HEADER_BUILD_ID record at offset $(cat bad.off): file name not NUL-terminated\$" \
	bad.err "an unterminated name: one line naming the record"
expect_lines 1 bad.err "and only that line"
finish
