#!/bin/bash
# Code that cannot be decoded: a library replaced (rebuilt) or deleted after
# recording. testdata/undec_main's main calls lib_entry in its library, which
# calls back into main's code; both sides make syscalls (TIP.PGEs where
# decoding goes on). The call into the library is its "[unknown] (path)"
# frame; where its code went after that (a return out of it included) is
# not known until the next sync point, so that time is [lost], and the
# stack is resynced there as after any loss: nothing decoded later may
# hang under the library's frame unless it is its callee, and no frame may
# get more self time than the truth gives it (undecoded_check.py, with
# the truth log's call paths, the library's functions one frame). The
# library's jump through its PLT into main's callback is a TIP decoding
# goes on at: callback is decoded. Before (2026-11-28) all the time to the
# end was "[unknown] (lib)" (175 us of 242 us, the truth's 67 us), the
# rest of main under it as its callees.
. "$E2E_LIB"
cp "$TESTDATA/undec_main" "$TESTDATA/libundec_lib.so" . || { fail "copy"; finish; }
# (meson test puts the build's testdata on LD_LIBRARY_PATH, ahead of $ORIGIN)
if ! env -u LD_LIBRARY_PATH "$PTFLAME" record --emulate -q -o a.data --truth a.truth -- ./undec_main >rec.out 2>rec.err; then
	fail "record: $(head -c 300 rec.err)"; finish
fi
lib=$PWD/libundec_lib.so
grep -q " mmap .* $lib\$" a.truth && pass "the truth maps $lib" || fail "no mapping of $lib in the truth"
cp "$lib" lib.orig
check() {  # NAME WHAT: NAME.folded against the truth, the original library back
	cp lib.orig "$lib"
	if python3 "$REPORT_DIR/undecoded_check.py" a.truth "$1.folded" "$lib" >"$1.chk" 2>&1; then
		pass "$2: stacks and self times within the truth's: $(tail -1 "$1.chk")"
	else
		fail "$2: $(head -c 1500 "$1.chk")"
	fi
}
# the original library: no [lost] and the checker's own sanity (its names
# are read, so the report has none of it as [unknown])
"$PTFLAME" report -i a.data --plain >orig.folded 2>orig.err || fail "report: $(head -c 300 orig.err)"
python3 "$REPORT_DIR/truth_profile.py" compare a.truth orig.folded >orig.cmp 2>&1 &&
	pass "with the library: the truth's profile" || fail "with the library: $(head -c 800 orig.cmp)"
# replaced by another library (a rebuild: another build-id)
cp "$TESTDATA/libemu_plugin.so" "$lib"
"$PTFLAME" report -i a.data --plain >repl.folded 2>repl.err || fail "report replaced: $(head -c 300 repl.err)"
expect_grep "$lib is not the binary recorded" repl.err "replaced: the warning names it"
expect_grep "^main;\\[unknown\\] \\($lib\\)" repl.folded "replaced: the call into it is its frame under main"
expect_grep '\[lost\]' repl.folded "replaced: what cannot be known is [lost]"
expect_grep '(^|;)callback [0-9]' repl.folded "replaced: decoding goes on at the TIP into callback"
check repl "replaced"
# deleted
rm -f "$lib"
"$PTFLAME" report -i a.data --plain >del.folded 2>del.err || fail "report deleted: $(head -c 300 del.err)"
expect_grep "cannot find $lib" del.err "deleted: the warning names it"
check del "deleted"
# the report's values add up to the thread's traced time either way
tot() { awk '{s += $NF} END {print s}' "$1"; }
[ "$(tot orig.folded)" = "$(tot repl.folded)" ] && [ "$(tot orig.folded)" = "$(tot del.folded)" ] &&
	pass "the same total time: $(tot orig.folded) ns" ||
	fail "totals: $(tot orig.folded) $(tot repl.folded) $(tot del.folded)"
finish
