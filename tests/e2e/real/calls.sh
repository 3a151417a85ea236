#!/bin/bash
# Call structure on real traces (issue 11, items 2 and 7); magic-trace's
# expectations for the same traces (its test/*.ml) agree on each point.
. "$REAL_DIR/common.sh"

rep() { "$PTFLAME" report -q --plain -i "$RT/$1.perf" > $1.folded 2>$1.err || fail "$1: $(cat $1.err)"; }

# OCaml's raise: a jmp from the 20th raise_after into the middle of
# camlRaise_test__entry, a frame lower on the stack: it unwinds there.
rep ocaml_exceptions
$CHECK nostack ocaml_exceptions.folded '.*raise_after_265;camlRaise_test__entry.*' > bad.txt &&
	pass "ocaml: the raise unwinds to camlRaise_test__entry" ||
	fail "ocaml: camlRaise_test__entry nested under raise_after: $(head -c 300 bad.txt)"
v=$($CHECK stack ocaml_exceptions.folded 'camlRaise_test__entry') && [ "$v" -eq 1 ] &&
	pass "ocaml: after the raise, 1 ns on camlRaise_test__entry alone" ||
	fail "ocaml: camlRaise_test__entry alone has '$v' ns, want 1 (the last line's 1 ns)"

# Go's gogo resumes the goroutine that parked, in gopark: gopark is back
# on chanrecv's stack, not under the scheduler (schedule;execute;gogo).
rep simple_gogo
$CHECK nostack simple_gogo.folded '.*(gogo|runtime\.execute|runtime\.schedule);runtime\.gopark.*' > bad.txt &&
	pass "go: the resumed gopark does not nest under the scheduler" ||
	fail "go: gopark under the scheduler: $(head -c 300 bad.txt)"
v=$($CHECK stack simple_gogo.folded '.*runtime\.chanrecv;runtime\.gopark') && [ "$v" -eq 12 ] &&
	pass "go: the resumed gopark has its 12 ns under chanrecv" ||
	fail "go: chanrecv;gopark self '$v', want 12"
finish
