#!/bin/bash
# record --emulate on a stripped program whose symbols are in a separate
# debug file (testdata symtest-stripped, .gnu_debuglink to symtest.debug
# next to it): --start SYMBOL and the default start at main find them as
# report's symbolizer does (before: "start symbol not found", and a trace
# from exec with a "no 'main' (stripped?)" note). And --max-insns: its help
# says what each backend does (ptrace: exactly N; qemu: at a block's end).
. "$E2E_LIB"
S=$TESTDATA/symtest-stripped
[ -x "$S" ] && [ -f "$TESTDATA/symtest.debug" ] || { fail "no $S or its debug file"; finish; }
nm "$S" >/dev/null 2>&1 && nm "$S" 2>/dev/null | grep -q " st_middle$" &&
	{ fail "$S is not stripped"; finish; }
backends=ptrace
command -v qemu-x86_64 >/dev/null && backends="ptrace qemu"
for b in $backends; do
	expect_rc 0 "$b: --start st_middle of a stripped program" -- \
		"$PTFLAME" record --emulate=$b -o "s$b.data" --start st_middle -- "$S"
	"$PTFLAME" report -q --plain -i "s$b.data" >"s$b.folded" 2>/dev/null
	expect_grep "st_middle;st_leaf " "s$b.folded" "$b: traced from st_middle, named"
	if grep -q "^_start" "s$b.folded"; then
		fail "$b: --start st_middle traced from exec: $(head -2 "s$b.folded")"
	else
		pass "$b: not traced from exec"
	fi
	expect_rc 0 "$b: the default start of a stripped program" -- \
		"$PTFLAME" record --emulate=$b -o "m$b.data" -- "$S"
	if grep -q "no 'main'" "$T/err"; then
		fail "$b: main not found through the debug file: $(cat "$T/err")"
	else
		pass "$b: main found through the debug file"
	fi
done
expect_rc 0 "--max-insns 1 (ptrace)" -- "$PTFLAME" record --emulate=ptrace -o one.data \
	--max-insns 1 -- "$S"
expect_grep "emulated 1 instructions" "$T/err" "ptrace: --max-insns 1 is one instruction"
"$PTFLAME" record --emulate --help >help.txt
expect_grep "block that reaches N" help.txt "--help: qemu stops --max-insns at a block's end"
expect_grep "ptrace stops after" help.txt "--help: ptrace stops --max-insns exactly"
finish
