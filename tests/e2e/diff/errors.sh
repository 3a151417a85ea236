#!/bin/bash
# ptflame diff on bad input and bad usage: one line naming the problem,
# exit 2 for usage, 1 for input, never a crash.
. "$E2E_LIB"
printf 'main;work 10\nmain 5\n' >"$T/a.folded"
printf 'main;work 12\nmain;new 3\n' >"$T/b.folded"
printf 'main;work 10\nthis is not folded\n' >"$T/bad.folded"
printf 'PERFILE2garbage-not-a-real-header' >"$T/bad.data"

one_line() { # DESC WANT_RC PATTERN -- CMD...
	local desc=$1 want=$2 pat=$3
	shift 4
	"$@" >"$T/out" 2>"$T/err"
	local rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "$desc: exit $rc, want $want: $(head -c 300 "$T/err")"
	elif [ "$(wc -l <"$T/err")" -ne 1 ] || ! grep -qE -- "$pat" "$T/err"; then
		fail "$desc: stderr not one line matching /$pat/: $(head -c 300 "$T/err")"
	else
		pass "$desc"
	fi
}
one_line "one input" 2 "two inputs" -- "$PTFLAME" diff "$T/a.folded"
one_line "three inputs" 2 "two inputs" -- "$PTFLAME" diff "$T/a.folded" "$T/a.folded" "$T/a.folded"
one_line "unknown option" 2 "unknown option" -- "$PTFLAME" diff --bogus "$T/a.folded" "$T/b.folded"
one_line "bad sort key" 2 "sort key" -- "$PTFLAME" diff --table --sort nope "$T/a.folded" "$T/b.folded"
one_line "bad --top" 2 "--top" -- "$PTFLAME" diff --table --top 0 "$T/a.folded" "$T/b.folded"
one_line "--sort without --table" 2 "with --table" -- "$PTFLAME" diff --sort self "$T/a.folded" "$T/b.folded"
one_line "missing file" 1 "cannot open .*nope" -- "$PTFLAME" diff "$T/nope" "$T/b.folded"
one_line "not folded" 1 "bad.folded: line 2 is not a folded stack" -- "$PTFLAME" diff "$T/a.folded" "$T/bad.folded"
one_line "filter on folded input" 1 "filters need trace inputs" -- "$PTFLAME" diff --oncpu "$T/a.folded" "$T/b.folded"
one_line "broken perf.data" 1 "bad.data" -- "$PTFLAME" diff "$T/bad.data" "$T/b.folded"
one_line "hex --top" 2 "--top" -- "$PTFLAME" diff --table --top 0x10 "$T/a.folded" "$T/b.folded"
printf 'a;b 18446744073709551609\na;b 10\n' >"$T/wrap.folded"
one_line "values past 2^64" 1 "wrap.folded: line 2: the values add up past 2\\^64" -- \
	"$PTFLAME" diff "$T/wrap.folded" "$T/a.folded"
one_line "--sort p99 of folded stacks" 2 "--sort p99 needs two traces .*: .*a.folded is folded stacks" -- \
	"$PTFLAME" diff --table --sort p99 "$T/a.folded" "$T/b.folded"
expect_rc 0 "help" -- "$PTFLAME" diff --help
expect_grep "usage: ptflame diff" "$T/out" "help text"
# the plain case still works, and -o writes the file
expect_rc 0 "diff -o" -- "$PTFLAME" diff -o "$T/d.out" "$T/a.folded" "$T/b.folded"
if [ "$(cat "$T/d.out")" = "$(printf 'main 5 0\nmain;new 0 3\nmain;work 10 12')" ]; then
	pass "diff of two folded files"
else
	fail "diff of two folded files: $(cat "$T/d.out")"
fi
finish
