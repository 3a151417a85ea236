#!/bin/bash
# Stripped programs that longjmp and throw (emu_longjmp.c and emu_except.cpp
# linked with -s), traced from exec (no main to start at): each of their
# functions has a key of its own by its .eh_frame FDE
# ("strip_except+0x1240"), so a landing pad or a longjmp target pops to its
# own frame, not to the nearest unnamed one (before: 35 and 85 errors on
# both backends).
#  1. Exact against the truth model (truth_profile.py compare: its FDEs from
#     readelf), annotated and --per-thread.
#  2. As the unstripped twin (same code, same addresses): with every
#     PROG+0xADDR named by the twin's symbol at ADDR, the same stacks
#     (fde_twin.py). qemu backend only: ptrace takes ~40 s per run from
#     exec (ld.so's start-up), and 1. already runs it there.
# strip_cold.c (-O2; twin unstrip_cold): .cold parts entered by a jump and
# jumping back into the middle of their hot part, also of a recursive
# function further down the stack (before: taken for an unwinding jump, 11
# errors), and tail calls from one unnamed function into another. Stripped,
# a cold part has no name that says whose it is: a function of its own (its
# FDE's) that replaces the hot part's frame like a tail call, the jump back
# going on in the hot part; the named twin's walk.cold is walk's own code
# (no frame), so fde_twin.py names the stripped cold part's frame by the
# function it belongs to.
# On ptrace only the C program (the C++ one's start-up in libstdc++ is
# longer still; the FDE rule is the same code on both backends).
#  3. strip_pltgot (-O2, qemu only): main begins .text right after four
#     8-byte .plt.got stubs; the model once gave every stub 16 bytes, so the
#     last one hid main's FDE and main was "[unknown]" there (104 errors
#     here, 22,508 on Debian's stripped sqlite3; report named it right).
. "$REPORT_DIR/common.sh"
progs="longjmp except cold pltgot"
[ "${PTFLAME_EMULATE:-}" = qemu ] || progs=longjmp
for p in $progs; do
	twin=emu_$p
	[ "$p" = cold ] && twin=unstrip_cold
	record "strip_$p" "strip_$p" --start= || continue
	for v in "" --per-thread; do
		report "strip_$p.out$v" -i "strip_$p.data" $v || continue
		if $TP compare "strip_$p.truth" "strip_$p.out$v" $v >"strip_$p.cmp$v" 2>&1; then
			pass "stripped $p $v: $(tail -1 "strip_$p.cmp$v")"
		else
			fail "stripped $p $v: $(head -c 600 "strip_$p.cmp$v")"
		fi
	done
	grep -q "strip_$p+0x" "strip_$p.out" || fail "stripped $p: no strip_$p+0x... frame"
	[ "${PTFLAME_EMULATE:-}" = qemu ] && [ -e "$TESTDATA/$twin" ] || continue
	record "twin_$p" "$twin" --start= || continue
	report "strip_$p.plain" -i "strip_$p.data" --plain --no-inline &&
	report "twin_$p.plain" -i "twin_$p.data" --plain --no-inline || continue
	if [ "$p" = cold ]; then
		# the named twin's walk.cold is walk's code (walk.cold jumps back
		# into walk while walk is further down); gcc's -O2 made the parts
		if ! nm "$TESTDATA/$twin" | grep -q ' walk\.cold$'; then
			fail "stripped cold: the twin has no walk.cold"
		elif grep -q '\.cold' "twin_$p.plain" || ! grep -q "walk;walk;rare " "twin_$p.plain"; then
			fail "stripped cold: the twin has a .cold frame, or no walk;walk;rare: $(grep -m2 'cold\|rare' "twin_$p.plain")"
		elif report "twin_$p.out" -i "twin_$p.data" &&
			$TP compare "twin_$p.truth" "twin_$p.out" >"twin_$p.cmp" 2>&1; then
			pass "stripped cold's twin: $(tail -1 "twin_$p.cmp")"
		else
			fail "stripped cold's twin: $(head -c 600 "twin_$p.cmp")"
		fi
	fi
	if python3 "$REPORT_DIR/fde_twin.py" "$TESTDATA/strip_$p" "$TESTDATA/$twin" \
		"strip_$p.plain" "twin_$p.plain" >"strip_$p.twin" 2>&1; then
		pass "stripped $p: as its unstripped twin: $(tail -1 "strip_$p.twin")"
	else
		fail "stripped $p: not as its unstripped twin: $(head -c 600 "strip_$p.twin")"
	fi
done
finish
