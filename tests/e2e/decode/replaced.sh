#!/bin/bash
# A binary replaced by another after recording, or decoded on a machine with
# another file at the recorded path: record writes each mapped file's
# build-id into HEADER_BUILD_ID (as perf record does), so report does not
# take the file it finds for the one that ran. Its code shows as
# "[unknown] (path)", with one warning that says to use --symfs; with
# --symfs DIR holding a copy of the original, the output is the original's.
. "$E2E_LIB"
cp "$TESTDATA/validate_calls" ./prog || { fail "copy"; finish; }
if ! "$PTFLAME" record --emulate -q -o a.data -- ./prog >rec.out 2>rec.err; then
	fail "record: $(head -c 300 rec.err)"; finish
fi
"$PTFLAME" dump a.data >dump.txt 2>dump.err || fail "dump: $(head -c 300 dump.err)"
bid=$(readelf -n prog | awk '/Build ID:/ {print $3}')
expect_grep "# BUILD_ID pid -1 misc 0x2 id $bid file $PWD/prog\$" dump.txt \
	"HEADER_BUILD_ID names the program's build-id"
expect_grep "# BUILD_ID .* file .*/libc\\.so\\.6\$" dump.txt "and libc's"
"$PTFLAME" report -i a.data --plain >before.folded 2>before.err ||
	fail "report before: $(head -c 300 before.err)"
expect_grep ';main;fib;fib' before.folded "the program's functions named before"
mkdir -p "symfs$PWD" && cp prog "symfs$PWD/prog"
cp "$TESTDATA/emu_threads" ./prog   # another program at the recorded path
"$PTFLAME" report -i a.data --plain >after.folded 2>after.err ||
	fail "report after replacing: $(head -c 300 after.err)"
expect_grep "$PWD/prog is not the binary recorded \\(build-id $bid\\).*--symfs" after.err \
	"the replaced file is named, with what to do"
expect_grep '\[unknown\] \(.*/prog\)' after.folded "its code is [unknown] (path)"
if grep -Eq ';(main|worker|nap|bump)( |;)' after.folded; then
	fail "names from a file that is not the recorded one: $(grep -E -m3 ';(main|worker|nap|bump)( |;)' after.folded)"
else pass "no names read from the other program"; fi
"$PTFLAME" report -i a.data --plain --symfs symfs >symfs.folded 2>symfs.err ||
	fail "report --symfs: $(head -c 300 symfs.err)"
if cmp -s before.folded symfs.folded; then pass "--symfs with the original: the original output"
else fail "--symfs output differs: $(diff before.folded symfs.folded | head -5)"; fi
finish
