#!/bin/bash
# ptflame diff on two emulated runs of testdata/extra_work: one with no
# extra work, one where work() loops EXTRA more times per call.
#  1. a run diffed with itself is all zero (3 columns and table);
#  3. the 3-column output fits difffolded.pl's grammar on every line and is,
#     stack for stack, the union of both runs' stacks with 0 where missing;
#  2. the table sorted by self time puts work() first, and the change of its
#     average equals the truth log's within 1 %.
# Inputs: `perf script` text of the recordings (pt-flame's field set), the
# folded files made from them, and the perf.data files themselves.
. "$E2E_LIB"
TRUTH_LAT=$1
CHECK_FOLDED=$2
EW="$TESTDATA/extra_work"
EXTRA=40
command -v perf >/dev/null || { fail "perf is not installed (scripts/setup.sh installs linux-perf)"; finish; }

rec() { # NAME EXTRA
	"$PTFLAME" record --emulate -q --ns-per-insn 100 -o "$T/$1.data" --truth "$T/$1.truth" \
		-- "$EW" $2 >/dev/null 2>"$T/rec.err" ||
		{ fail "record --emulate $EW $2: $(head -c 300 "$T/rec.err")"; finish; }
	perf script -i "$T/$1.data" --itrace=b --ns -F-event,-period,+addr,-comm,+flags,-dso \
		>"$T/$1.txt" 2>/dev/null
	[ -s "$T/$1.txt" ] || { fail "perf script printed nothing for $1.data"; finish; }
}
rec a "0 a"
rec b "$EXTRA b"
# a profile with no stacks (a 0-byte file is one too: tests/e2e/diff/cli.sh)
echo "# no stacks" >"$T/empty.folded"

# 3-column lines: "stack A B", the stack valid folded (check_folded.py).
check_3col() { # FILE DESC
	local bad
	bad=$(grep -cvE '^.+ [0-9]+ [0-9]+$' "$1")
	sed -E 's/ [0-9]+$//' "$1" >"$T/2col"
	if [ "$bad" -eq 0 ] && [ -s "$1" ] && python3 "$CHECK_FOLDED" "$T/2col" >"$T/cf.err"; then
		pass "$2: $(wc -l <"$1") lines fit difffolded's grammar"
	else
		fail "$2: $bad lines not 'stack A B'; $(head -3 "$T/cf.err")"
	fi
}
# every line's two values equal
check_zero() { # FILE DESC
	if [ -s "$1" ] && awk '$(NF-1) != $NF { bad = 1 } END { exit bad }' "$1"; then
		pass "$2: all $(wc -l <"$1") stacks unchanged"
	else
		fail "$2: a stack changed: $(awk '$(NF-1) != $NF' "$1" | head -2)"
	fi
}
# raw table (total A B change %, avg A B, calls A B, name): every change is
# 0 (or - where unknown), A equals B
check_table_zero() { # FILE DESC
	if awk 'NR > 3 && !/^#/ { if (($3 != "0" || $4 != "0%") && ($3 != "-" || $4 != "-")) bad = 1
		for (i = 1; i <= 7; i += 2) { if (i == 3) continue; if ($i != $(i + 1)) bad = 1 }; n++ }
		END { exit bad || n == 0 }' "$1"; then
		pass "$2: every change in the table is zero"
	else
		fail "$2: nonzero change: $(sed -n 4,6p "$1")"
	fi
}

# --- 1. self diff ---------------------------------------------------------
"$PTFLAME" diff "$T/a.txt" "$T/a.txt" >"$T/aa" 2>"$T/err" || fail "diff a a: $(cat "$T/err")"
check_zero "$T/aa" "diff of perf script text with itself"
"$PTFLAME" diff --table --raw "$T/a.txt" "$T/a.txt" >"$T/aa.tab" 2>"$T/err" ||
	fail "diff --table a a: $(cat "$T/err")"
check_table_zero "$T/aa.tab" "table of a run with itself"

# folded files of each run: the run against an empty file, column A
"$PTFLAME" diff "$T/a.txt" "$T/empty.folded" | sed -E 's/ ([0-9]+) 0$/ \1/' >"$T/a.folded"
"$PTFLAME" diff "$T/empty.folded" "$T/b.txt" | sed -E 's/ 0 ([0-9]+)$/ \1/' >"$T/b.folded"
python3 "$CHECK_FOLDED" "$T/a.folded" "$T/b.folded" >"$T/cf.err" ||
	fail "folded files from diff: $(head -3 "$T/cf.err")"
"$PTFLAME" diff "$T/a.folded" "$T/a.folded" >"$T/aaf"
check_zero "$T/aaf" "diff of a folded file with itself"

# --- 3. grammar and union ---------------------------------------------------
"$PTFLAME" diff "$T/a.txt" "$T/b.txt" >"$T/ab" 2>"$T/err" || fail "diff a b: $(cat "$T/err")"
check_3col "$T/ab" "diff of two runs"
"$PTFLAME" diff "$T/a.folded" "$T/b.folded" >"$T/abf"
cmp -s "$T/ab" "$T/abf" || fail "diff of the folded files differs from diff of the traces"
# the union computed here, independently: stacks of both, 0 where missing
awk 'FNR == 1 { f++ } { v = $NF; s = $0; sub(/ [0-9]+$/, "", s); val[f, s] += v; all[s] = 1 }
	END { for (s in all) printf "%s %d %d\n", s, val[1, s], val[2, s] }' \
	"$T/a.folded" "$T/b.folded" | LC_ALL=C sort >"$T/union"
if cmp -s "$T/union" "$T/ab"; then
	pass "diff = union of both runs' stacks ($(wc -l <"$T/union") stacks, $(grep -c ' 0 [0-9]*$' "$T/ab") only in B, $(grep -c ' 0$' "$T/ab") only in A)"
else
	fail "diff is not the union: $(diff "$T/union" "$T/ab" | head -4 | tr '\n' '|')"
fi
grep -q ';work ' "$T/ab" || fail "no work() stack in the diff"
# -n scales A to B's total
"$PTFLAME" diff -n "$T/a.folded" "$T/b.folded" >"$T/abn"
ta=$(awk '{ s += $(NF-1) } END { print s }' "$T/ab")
tb=$(awk '{ s += $NF } END { print s }' "$T/ab")
tn=$(awk '{ s += $(NF-1) } END { print s }' "$T/abn")
if [ "$ta" -ne "$tb" ] && [ $((tb - tn)) -ge 0 ] && [ $((tb - tn)) -le "$(wc -l <"$T/abn")" ]; then
	pass "-n: A's total $ta scaled to $tn (B's $tb)"
else
	fail "-n: A's total $ta scaled to $tn, B's is $tb"
fi

# --- 2. the function with extra work ----------------------------------------
# expected change of work()'s average latency, from the truth logs
read -r _ _ avg_a _ < <(python3 "$TRUTH_LAT" "$T/a.truth" "$EW" work)
read -r _ _ avg_b _ < <(python3 "$TRUTH_LAT" "$T/b.truth" "$EW" work)
want=$((avg_b - avg_a))
check_extra() { # TABLE DESC
	local first got
	first=$(awk 'NR > 3 && !/^#/ { print $NF; exit }' "$1")
	# --sort self: self A B change %, total A B, avg A B, name
	got=$(awk '$NF == "work" { print $8 - $7 }' "$1")
	if [ "$first" = work ] && [ -n "$got" ] &&
		awk -v g="$got" -v w="$want" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(w > 0 && d <= w / 100) }'; then
		pass "$2: work() first by self time, avg +$got ns (truth +$want ns)"
	else
		fail "$2: first row '$first', work() avg change '$got' ns, truth +$want ns: $(sed -n 4,5p "$1")"
	fi
}
"$PTFLAME" diff --table --raw --sort self "$T/a.txt" "$T/b.txt" >"$T/ab.tab" 2>"$T/err" ||
	fail "diff --table a b: $(cat "$T/err")"
check_extra "$T/ab.tab" "perf script text"
"$PTFLAME" diff --table --raw --sort self "$T/a.folded" "$T/b.folded" >"$T/abf.tab"
awk 'NR > 3 && !/^#/ { print $NF; exit }' "$T/abf.tab" | grep -qx work ||
	fail "folded inputs: work() not first by self time"
grep -q '^# p50/p90/p99/max' "$T/abf.tab" || fail "folded inputs: the table does not say percentiles are unknown"
# --top 1 keeps only that row
"$PTFLAME" diff --table --sort self --top 1 "$T/a.txt" "$T/b.txt" >"$T/top"
[ "$(awk 'NR > 3 && !/^#/' "$T/top" | wc -l)" -eq 1 ] || fail "--top 1 printed $(awk 'NR > 3' "$T/top" | wc -l) rows"
# --by-stack rows of folded inputs keep --max-stack frames, deeper ones are
# one [truncated] row with their time (rows are paths: unbounded, a deep
# line would make rows quadratic in its depth)
printf 'a;b;c;d 10\na;b;x 5\n' >"$T/deep.folded"
"$PTFLAME" diff --table --by-stack --raw --max-stack 2 "$T/deep.folded" "$T/deep.folded" \
	>"$T/deep.tab" 2>"$T/err" || fail "diff --by-stack --max-stack 2: $(cat "$T/err")"
[ "$(awk 'NR > 3 && !/^#/ { print $1, $NF }' "$T/deep.tab" | sort | tr '\n' ' ')" = \
	"15 a 15 a;b 15 a;b;[truncated] " ] ||
	fail "--max-stack 2 on a folded input: rows $(awk 'NR > 3 && !/^#/ { print $1, $NF }' "$T/deep.tab" | tr '\n' ' ')"

# --- the same from perf.data ---------------------------------------------------
if "$PTFLAME" report -i "$T/a.data" --plain >"$T/a.rep" 2>"$T/err"; then
	"$PTFLAME" diff "$T/a.data" "$T/a.data" >"$T/aad" 2>"$T/err" || fail "diff a.data a.data: $(cat "$T/err")"
	check_zero "$T/aad" "perf.data diffed with itself"
	"$PTFLAME" diff "$T/a.data" "$T/b.data" >"$T/abd" 2>"$T/err" || fail "diff a.data b.data: $(cat "$T/err")"
	check_3col "$T/abd" "diff of two perf.data files"
	"$PTFLAME" report -i "$T/b.data" --plain >"$T/b.rep"
	"$PTFLAME" diff "$T/a.rep" "$T/b.rep" >"$T/abr"
	cmp -s "$T/abd" "$T/abr" || fail "diff of perf.data differs from diff of their report --plain output"
	# perf.data brings sideband: the time the emulated process spends
	# blocked before main (ptrace start-up, measured in real time) varies
	# from run to run by milliseconds, so compare under main (--root).
	"$PTFLAME" diff --table --raw --sort self --root main "$T/a.data" "$T/b.data" \
		>"$T/abd.tab" 2>"$T/err" || fail "diff --table a.data b.data: $(cat "$T/err")"
	check_extra "$T/abd.tab" "perf.data, --root main"
	# --per-thread: two runs' threads never share a tid; they match by
	# name (comm), so with one thread each the diff is the one without
	# --per-thread under one root frame
	"$PTFLAME" diff --per-thread "$T/a.data" "$T/b.data" >"$T/abt" 2>"$T/err" ||
		fail "diff --per-thread: $(cat "$T/err")"
	cut -d';' -f2- "$T/abt" | cmp -s - "$T/abd" &&
		pass "--per-thread: the threads of the two runs matched by comm" ||
		fail "--per-thread: $(cut -d';' -f2- "$T/abt" | diff - "$T/abd" | head -4)"
	awk '{split($1, f, ";"); print f[1]}' "$T/abt" | sort -u | grep -qx extra_work &&
		pass "--per-thread: the root frame is the comm" ||
		fail "--per-thread roots: $(awk '{split($1, f, ";"); print f[1]}' "$T/abt" | sort -u | head -3)"
else
	fail "report -i a.data: $(head -c 300 "$T/err")"
fi

# folded files of any FlameGraph tool: values need not be ns, and without
# annotations the calls are unknown
printf 'main;foo 30\nmain;bar 10\n' >"$T/s1.folded"
printf 'main;foo 60\nmain;bar 10\n' >"$T/s2.folded"
"$PTFLAME" diff --table "$T/s1.folded" "$T/s2.folded" >"$T/ss.tab" 2>"$T/err" ||
	fail "diff --table of plain folded: $(cat "$T/err")"
awk '$NF == "foo" && $1 == 30 && $2 == 60 && $3 == "+30" {ok = 1} END {exit !ok}' "$T/ss.tab" &&
	pass "plain folded table: values without a unit" || fail "plain folded table: $(cat "$T/ss.tab")"
awk '$NF == "foo" {exit !($(NF - 1) == "-" && $(NF - 2) == "-")}' "$T/ss.tab" &&
	pass "plain folded table: calls unknown ('-')" || fail "plain folded calls: $(grep foo "$T/ss.tab")"
finish
