#!/bin/bash
# Labels: hand-written asm names entry points with STT_NOTYPE symbols (no
# .type), ld.so's _start and _dl_start_user among them. They name code no
# function symbol covers; a call that is the last instruction of its
# symbol returns into the label after it, where the caller goes on: the
# same frame, no call of the label (truth_profile.py has the same two
# rules, on nm and readelf instead of libelf).
#  1. symtest (from main): main calls st_lbl_entry (a label), which calls
#     st_lbl_func and runs on in st_lbl_next.
#  2. record --start at a label (st_lbl_entry): traced from there.
#  3. traced from exec (qemu backend only: the ptrace one takes ~40 s for
#     ld.so's start-up): with ld.so's labels (libc6-dbg's debug file), its
#     first frames are _start;_dl_start and _start;_dl_init, never
#     "[unknown] (ld.so)" or a _dl_start_user frame.
. "$REPORT_DIR/common.sh"
check() {  # NAME: report NAME.data against NAME.truth
	report "$1.out" -i "$1.data" || return 1
	if $TP compare "$1.truth" "$1.out" >"$1.cmp" 2>&1; then pass "$1: $(tail -1 "$1.cmp")"
	else fail "$1: $(head -c 1500 "$1.cmp")"; return 1; fi
}
if record sym symtest && check sym; then
	grep -qE '(^|;)main:1[^;]*;st_lbl_entry:1,[^;]*;st_lbl_func:1,[^;]* [0-9]+$' sym.out &&
		pass "symtest: main;st_lbl_entry;st_lbl_func, each called once" ||
		fail "symtest: no main;st_lbl_entry:1;st_lbl_func:1 line: $(grep -m3 st_lbl sym.out)"
	grep -q 'st_lbl_next' sym.out && fail "symtest: a frame for the label fallen into: $(grep -m2 st_lbl_next sym.out)" ||
		pass "symtest: no st_lbl_next frame (the caller runs on in it)"
	grep -qE 'st_lbl_(inside|in_unsized)' sym.out && fail "symtest: a label inside a function is a frame" ||
		pass "symtest: no frame for labels inside functions"
fi
# --start at a label: tracing starts at st_lbl_entry (the frames below it
# inferred), on either backend
if record lstart symtest --start st_lbl_entry && check lstart; then
	grep -qE '(^|;)main:1\(inferred\);st_lbl_entry:1,[^;]*;st_lbl_func:1,[^;]* [0-9]+$' lstart.out &&
		pass "--start st_lbl_entry: traced from the label, main below it inferred" ||
		fail "--start st_lbl_entry: no main(inferred);st_lbl_entry;st_lbl_func line: $(head -c 300 lstart.out)"
fi
if [ "${PTFLAME_EMULATE:-}" != qemu ]; then
	echo "from exec: on the qemu backend only (e2e-qemu-labels)"
	finish
fi
ld=$(readelf -lW "$TESTDATA/emu_nested" | sed -n 's/.*program interpreter: \(.*\)]/\1/p')
bid=$(readelf -n "$ld" 2>/dev/null | awk '/Build ID/ {print $3}')
dbg=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
if record exec emu_nested --start '' && check exec; then
	if readelf -Ws "$dbg" 2>/dev/null | grep -qE 'NOTYPE .* _dl_start_user$'; then
		for s in '_start;_dl_start' '_start;_dl_init'; do
			grep -qE "^${s%;*}:[^;]*;${s#*;}:" exec.out && pass "from exec: $s" ||
				fail "from exec: no $s line: $(head -c 300 exec.out)"
		done
		grep -qE "\[unknown\] \($ld|$(readlink -f "$ld")\)|_dl_start_user" exec.out &&
			fail "from exec: ld.so code unnamed or a _dl_start_user frame: $(grep -m2 -E 'unknown|_dl_start_user' exec.out)" ||
			pass "from exec: every ld.so frame named, none for _dl_start_user"
	else
		echo "no ld.so labels in '$dbg' (libc6-dbg: scripts/setup.sh installs it): the names are not checked"
	fi
fi
finish
