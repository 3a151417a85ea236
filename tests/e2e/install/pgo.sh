#!/bin/bash
# scripts/build-pgo.sh (a build optimized with the profile of training runs)
# ends with a ptflame built from that profile, and that ptflame's outputs are
# the plain build's, byte for byte, on a recording the training did not see
# (two CPUs, threads, exceptions), at -j 1 and -j 2.
. "$E2E_LIB"
command -v meson >/dev/null || { echo "SKIP: meson is not on PATH"; exit 77; }
"${CC:-cc}" --version 2>/dev/null | grep -qiE 'gcc|free software foundation' ||
	{ echo "SKIP: the PGO build needs GCC"; exit 77; }
command -v qemu-x86_64 >/dev/null ||
	{ echo "SKIP: qemu-x86_64 is not installed (scripts/setup.sh installs qemu-user)"; exit 77; }

PGO_TRAIN=small nice "$SRCDIR/scripts/build-pgo.sh" "$T/b" -Dwerror=true >build.out 2>&1 ||
	{ fail "build-pgo.sh: $(tail -c 600 build.out)"; finish; }
pgo=$T/b/cmd/ptflame
[ -x "$pgo" ] || { fail "no $pgo after build-pgo.sh"; finish; }
meson introspect "$T/b" --buildoptions | tr '{' '\n' | grep '"name": "b_pgo"' |
	grep -q '"value": "use"' && pass "the build is configured to use the profile" ||
	fail "b_pgo is not 'use' in $T/b"
nm "$pgo" | grep -q __gcov_ && fail "the final ptflame is the instrumented one (__gcov_ symbols)" ||
	pass "the final ptflame is not instrumented"
n=$(find "$T/b/decoder" "$T/b/stackrebuild" -name '*.gcda' | wc -l)
[ "$n" -ge 4 ] && pass "the training wrote profiles ($n .gcda files in decoder/ and stackrebuild/)" ||
	fail "only $n .gcda files: the training did not run the decoder"
ls "$T/b/pgo-train/"*.data >/dev/null 2>&1 && pass "training recordings made" ||
	fail "no training recordings in $T/b/pgo-train"

"$PTFLAME" record --emulate=qemu --cpus 2 -q -o c.data -- "$TESTDATA/emu_cxxthread" >rec.out 2>&1 ||
	{ fail "record emu_cxxthread: $(head -c 300 rec.out)"; finish; }
for j in 1 2; do
	for o in "" --per-thread --table; do
		"$PTFLAME" report -q -j $j $o -i c.data -o plain.out 2>/dev/null
		"$pgo" report -q -j $j $o -i c.data -o pgo.out 2>/dev/null
		[ -s plain.out ] && cmp -s plain.out pgo.out && pass "-j $j ${o:-folded}: same output" ||
			fail "-j $j ${o:-folded}: the PGO build's output differs ($(wc -l <plain.out) lines plain)"
	done
done
finish
