#!/bin/bash
# ptflame diff's command line and what it says about its inputs:
#  1. options after A and B (permuted, as report takes them), and '--';
#  2. an empty folded file (report writes one for a filter that matched
#     nothing) is an empty profile with a note; input of no known kind is
#     refused naming every kind;
#  3. X and X (inlined) are one function: the same program with helper
#     noinline and always_inline shows no change of helper in the table,
#     the 3-column stacks or the SVG;
#  4. -j / --jobs as report's;
#  5. a note when A and B share no function or ran different programs.
. "$E2E_LIB"
printf 'main;work 10\nmain 5\n' >a.folded
printf 'main;work 12\nmain;new 3\n' >b.folded
printf 'other;thing 7\n' >x.folded

# --- 1. options anywhere ------------------------------------------------
expect_rc 0 "options after the operands" -- "$PTFLAME" diff --table a.folded b.folded --sort calls --top 8
expect_grep "Function" "$T/out" "options after the operands: a table"
expect_rc 0 "-o after the operands" -- "$PTFLAME" diff a.folded b.folded -o d.out
[ "$(cat d.out)" = "$(printf 'main 5 0\nmain;new 0 3\nmain;work 10 12')" ] &&
	pass "-o after the operands: the diff in the file" || fail "-o after the operands: $(cat d.out)"
cp a.folded ./-a.folded
expect_rc 0 "'--' ends the options" -- "$PTFLAME" diff --table -- -a.folded b.folded
expect_grep "work" "$T/out" "'--': an operand starting with '-'"
expect_rc 2 "an option after '--' is an operand" -- "$PTFLAME" diff -- a.folded b.folded --table
expect_grep "two inputs" "$T/err" "an option after '--' is an operand: three inputs"

# --- 2. empty inputs ------------------------------------------------------
rec() { # NAME PROG [ARGS]: an emulated recording NAME.data
	local n=$1
	shift
	"$PTFLAME" record --emulate -q -o "$n.data" -- "$@" >"$n.rec" 2>&1 ||
		{ fail "record $n: $(head -c 300 "$n.rec")"; finish; }
}
rec ew "$TESTDATA/extra_work" 0 a
expect_rc 0 "report --comm nosuch writes an empty file" -- \
	"$PTFLAME" report -q -i ew.data --comm nosuch -o nos.folded
[ -f nos.folded ] && [ ! -s nos.folded ] && pass "the filtered report is 0 bytes" ||
	fail "the filtered report is not an empty file"
expect_rc 0 "diff of an empty folded file" -- "$PTFLAME" diff nos.folded a.folded
expect_grep "^ptflame diff: note: A \(nos.folded\) is empty" "$T/err" "a note says A is empty"
[ "$(cat "$T/out")" = "$(printf 'main 0 5\nmain;work 0 10')" ] &&
	pass "an empty file is an empty profile" || fail "empty A: $(head -3 "$T/out")"
expect_rc 0 "diff --table with an empty B" -- "$PTFLAME" diff --table a.folded nos.folded
expect_grep "^ptflame diff: note: B \(nos.folded\) is empty" "$T/err" "a note says B is empty"
expect_grep "-100" "$T/out" "empty B: everything went"
expect_rc 1 "a binary is no input" -- "$PTFLAME" diff "$TESTDATA/extra_work" a.folded
expect_lines 1 "$T/err" "a binary is no input: one line"
expect_grep "perf.data file.*perf script.*folded stacks" "$T/err" \
	"a binary is no input: the message names every kind read"

# --- 3. X and X (inlined) -------------------------------------------------
mkdir call inl
cp "$TESTDATA/diff_inline_call" call/prog
cp "$TESTDATA/diff_inline_inl" inl/prog
rec call call/prog
rec inl inl/prog
"$PTFLAME" report -q -i inl.data --plain >inl.folded
expect_grep "helper \(inlined\)" inl.folded "the always_inline build shows 'helper (inlined)'"
expect_rc 0 "diff --table of noinline and always_inline" -- \
	"$PTFLAME" diff --table --raw call.data inl.data
cp "$T/out" inl.tab
if grep -q "(inlined)" inl.tab; then
	fail "the table has an (inlined) row: $(grep "(inlined)" inl.tab)"
else
	pass "the table has no (inlined) row"
fi
# --raw: total A B change %, avg A B, calls A B, name
if awk '$NF == "helper" { n++; d = $2 - $1; if (d < 0) d = -d
	if ($7 != $8 || $7 != 3 || d * 100 > $1) bad = 1 }
	END { exit bad || n != 1 }' inl.tab; then
	pass "helper: the same calls (3) and total within 1 %"
else
	fail "helper changed: $(grep helper inl.tab)"
fi
expect_rc 0 "diff of noinline and always_inline" -- "$PTFLAME" diff call.data inl.data
cp "$T/out" inl.3col
if grep -q "(inlined)" inl.3col || ! grep -q ";helper " inl.3col; then
	fail "3-column: $(grep helper inl.3col | head -3)"
elif awk '/;helper / { d = $NF - $(NF-1); if (d < 0) d = -d; if (d * 100 > $(NF-1)) bad = 1 }
	END { exit bad }' inl.3col; then
	pass "3-column: helper's stacks matched, unchanged within 1 %"
else
	fail "3-column: helper changed: $(grep ";helper " inl.3col)"
fi
expect_rc 0 "diff --svg of noinline and always_inline" -- \
	"$PTFLAME" diff --svg inl.svg call.data inl.data
if grep -q "helper" inl.svg && ! grep -q "(inlined)" inl.svg; then
	pass "svg: helper, no (inlined) frame"
else
	fail "svg: $(grep -o "helper[^<]*" inl.svg | head -3)"
fi

# --- 4. -j ------------------------------------------------------------------
expect_rc 0 "diff -j 1" -- "$PTFLAME" diff -j 1 --table --raw call.data inl.data
cmp -s "$T/out" inl.tab && pass "-j 1: the same table" || fail "-j 1: another table"
expect_rc 0 "diff --jobs 3 after the operands" -- "$PTFLAME" diff call.data inl.data --jobs 3
cmp -s "$T/out" inl.3col && pass "--jobs 3: the same stacks" || fail "--jobs 3: other stacks"
expect_rc 2 "diff -j 0" -- "$PTFLAME" diff -j 0 call.data inl.data
expect_grep "jobs" "$T/err" "-j 0: a usage error naming --jobs"
"$PTFLAME" diff --help >help.txt
expect_grep "^  -j, --jobs N" help.txt "--help lists -j"

# --- 5. notes on unrelated inputs -------------------------------------------
expect_rc 0 "diff of two folded files that share no function" -- "$PTFLAME" diff a.folded x.folded
expect_grep "^ptflame diff: note: .*share no function" "$T/err" "a note: no function in common"
expect_rc 0 "diff of two related folded files" -- "$PTFLAME" diff a.folded b.folded
[ ! -s "$T/err" ] && pass "related inputs: no note" || fail "related inputs: $(cat "$T/err")"
expect_rc 0 "diff of two programs" -- "$PTFLAME" diff --table ew.data call.data
expect_grep "^ptflame diff: note: A ran 'extra_work' and B ran 'prog'" "$T/err" \
	"a note: different programs"
expect_rc 0 "diff of two builds of one program" -- "$PTFLAME" diff call.data inl.data
[ ! -s "$T/err" ] && pass "one program: no note" || fail "one program: $(cat "$T/err")"
finish
