#!/bin/bash
# A binary replaced by another after recording, or decoded on a machine with
# another file at the recorded path: record writes each mapped file's
# build-id into HEADER_BUILD_ID (as perf record does), so report does not
# take the file it finds for the one that ran. Its code shows as
# "[unknown] (path)", with one warning that says to use --symfs; with
# --symfs DIR holding a copy of the original, the output is the original's.
# The [vdso] likewise: the ptrace emulator (and hardware record) write the
# kernel's vdso build-id; report decodes the vdso with its own only when
# that build-id is its kernel's.
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
# report a.data into NAME.folded/.err with a file at ./prog that is not
# the one recorded: the warning names it, with what to do; its code is
# [unknown] (path), and none of the function names (a regex) are read
check_refused() {  # NAME WHAT NAMES
	"$PTFLAME" report -i a.data --plain >"$1.folded" 2>"$1.err" ||
		fail "report, $2: $(head -c 300 "$1.err")"
	expect_grep "$PWD/prog is not the binary recorded \\(build-id $bid\\).*--symfs" "$1.err" \
		"$2: the file is named, with what to do"
	expect_grep '\[unknown\] \(.*/prog\)' "$1.folded" "$2: its code is [unknown] (path)"
	if grep -Eq ";($3)( |;)" "$1.folded"; then
		fail "$2: names read from it: $(grep -E -m3 ";($3)( |;)" "$1.folded")"
	else pass "$2: no names read from it"; fi
}
cp "$TESTDATA/emu_threads" ./prog
check_refused after "another program at the recorded path" 'main|worker|nap|bump'
"$PTFLAME" report -i a.data --plain --symfs symfs >symfs.folded 2>symfs.err ||
	fail "report --symfs: $(head -c 300 symfs.err)"
if cmp -s before.folded symfs.folded; then pass "--symfs with the original: the original output"
else fail "--symfs output differs: $(diff before.folded symfs.folded | head -5)"; fi
# perf's build-id cache (~/.debug/.build-id/xx/rest/elf) holds the original
mkdir -p "home/.debug/.build-id/${bid:0:2}/${bid:2}" &&
	cp "symfs$PWD/prog" "home/.debug/.build-id/${bid:0:2}/${bid:2}/elf"
HOME=$PWD/home "$PTFLAME" report -i a.data --plain >cache.folded 2>cache.err ||
	fail "report with the build-id cache: $(head -c 300 cache.err)"
if cmp -s before.folded cache.folded; then pass "the build-id cache's copy: the original output"
else fail "with the build-id cache's copy: $(diff before.folded cache.folded | head -5)"; fi
rm -r home/.debug/.build-id
# a rebuild without a build-id note is not the binary recorded either
objcopy --remove-section .note.gnu.build-id "symfs$PWD/prog" prog
check_refused nonote "a copy without a build-id note" 'main|fib|leaf'
# a file that is no ELF: it cannot be read, which is what the warning says
echo "not a program" >prog
"$PTFLAME" report -i a.data --plain >text.folded 2>text.err ||
	fail "report, not an ELF file: $(head -c 300 text.err)"
expect_grep "cannot read $PWD/prog \\(not an ELF file\\)" text.err "an unreadable file is named so"
if grep -q 'is not the binary recorded' text.err; then fail "called another binary: $(cat text.err)"
else pass "not called another binary"; fi

# A 16-byte build-id (lld, -Wl,--build-id=md5) in an entry of the old
# format (perf before 5.11: no size flag, every id 20 bytes, zero-padded):
# it is the same binary's, not another's.
cp "$TESTDATA/validate_calls_md5" ./prog_md5
mbid=$(readelf -n prog_md5 | awk '/Build ID:/ {print $3}')
if ! "$PTFLAME" record --emulate -q -o m.data -- ./prog_md5 >mrec.out 2>mrec.err; then
	fail "record md5: $(head -c 300 mrec.err)"; finish
fi
"$PTFLAME" dump m.data >mdump.txt 2>&1
expect_grep "# BUILD_ID pid -1 misc 0x2 id $mbid file $PWD/prog_md5\$" mdump.txt \
	"HEADER_BUILD_ID names the 16-byte build-id"
python3 -c '
import struct, sys
d = bytearray(open("m.data", "rb").read())
e = d.rfind(sys.argv[1].encode() + b"\0") - 36   # the entry: header, pid, id[20], size
misc = struct.unpack_from("<H", d, e + 4)[0]       # perf_event_header: type, misc, size
assert misc & 0x8000, hex(misc)
struct.pack_into("<H", d, e + 4, misc & 0x7fff)    # no PF_BUILD_ID_MISC_SIZE
open("m2.data", "wb").write(d)' "$PWD/prog_md5"
"$PTFLAME" dump m2.data >m2dump.txt 2>&1
expect_grep "# BUILD_ID pid -1 misc 0x2 id ${mbid}00000000 file $PWD/prog_md5\$" m2dump.txt \
	"the old-format entry reads as 20 bytes, zero-padded"
"$PTFLAME" report -i m2.data --plain >m2.folded 2>m2.err || fail "report md5: $(head -c 300 m2.err)"
expect_grep ';main;fib;fib' m2.folded "the zero-padded id matches the file: its functions named"
if grep -q 'prog_md5' m2.err; then fail "a warning about the right file: $(grep prog_md5 m2.err)"
else pass "no warning about the right file"; fi

# [vdso]: this kernel's build-id, read from a process's own vdso
python3 -c '
for l in open("/proc/self/maps"):
    if l.rstrip().endswith("[vdso]"):
        a, b = (int(x, 16) for x in l.split()[0].split("-"))
        m = open("/proc/self/mem", "rb"); m.seek(a); open("vdso.so", "wb").write(m.read(b - a))
'
vbid=$(readelf -n vdso.so 2>/dev/null | awk '/Build ID:/ {print $3}')
if [ -z "$vbid" ]; then pass "(no vdso with a build-id here: [vdso] checks skipped)"; finish; fi
if ! "$PTFLAME" record --emulate=ptrace -q -o v.data -- "$TESTDATA/emu_vdso" >vrec.out 2>vrec.err; then
	fail "record vdso: $(head -c 300 vrec.err)"; finish
fi
"$PTFLAME" dump v.data >vdump.txt 2>&1
expect_grep "# BUILD_ID pid -1 misc 0x2 id $vbid file \\[vdso\\]\$" vdump.txt \
	"HEADER_BUILD_ID names this kernel's [vdso] build-id"
"$PTFLAME" report -i v.data --plain >v.folded 2>v.err || fail "report vdso: $(head -c 300 v.err)"
expect_grep ';__vdso_clock_gettime' v.folded "the vdso's code decoded and named"
# the same recording as if made on another kernel: its vdso build-id changed
python3 -c '
d = bytearray(open("v.data", "rb").read())
i = d.rfind(b"[vdso]\0")
d[i - 24] ^= 0xff   # the id starts 24 bytes before the name (36-byte entry: header, pid, id)
open("v2.data", "wb").write(d)'
"$PTFLAME" report -i v2.data --plain >v2.folded 2>v2.err || fail "report v2: $(head -c 300 v2.err)"
expect_grep "the recording's \\[vdso\\] \\(build-id .*\\) is not this kernel's" v2.err \
	"another kernel's [vdso] is named"
if grep -q '__vdso_' v2.folded; then fail "names from this kernel's vdso: $(grep -m2 __vdso_ v2.folded)"
else pass "this kernel's vdso is not used for another's"; fi
expect_grep '\[unknown\] \(\[vdso\]\)' v2.folded "its code is [unknown] ([vdso])"
# perf's build-id cache copy of that other vdso (perf record saves one,
# perf archive packs it) is used: here, our vdso with the same id change
nbid=$(python3 -c '
import sys
old = bytes.fromhex(sys.argv[1]); new = bytes([old[0] ^ 0xff]) + old[1:]
d = open("vdso.so", "rb").read(); assert d.count(old) == 1
open("vdso2.so", "wb").write(d.replace(old, new)); print(new.hex())' "$vbid")
mkdir -p "home/.debug/.build-id/${nbid:0:2}/${nbid:2}" &&
	cp vdso2.so "home/.debug/.build-id/${nbid:0:2}/${nbid:2}/vdso"
HOME=$PWD/home "$PTFLAME" report -i v2.data --plain >v3.folded 2>v3.err ||
	fail "report v2 with a cached vdso: $(head -c 300 v3.err)"
if grep -q 'vdso' v3.err; then fail "a warning with the cached vdso there: $(grep vdso v3.err)"
else pass "no [vdso] warning with perf's cached copy"; fi
if cmp -s v.folded v3.folded; then pass "the cached copy decodes as this kernel's vdso did"
else fail "with the cached vdso: $(diff v.folded v3.folded | head -5)"; fi
finish
