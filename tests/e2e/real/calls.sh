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
# hello_world: __write runs on (no branch) into its local label
# __write_nocancel, and ld.so's _start into _dl_start_user: the same frame,
# no call of the label, __write's one call keeps all its time.
rep hello_world_userspace
$CHECK nostack hello_world_userspace.folded '.*(__write_nocancel|_dl_start_user).*' > bad.txt &&
	pass "hello_world: no frame for a label fallen into" ||
	fail "hello_world: labels as frames: $(head -c 300 bad.txt)"
"$PTFLAME" report -q --table --raw -i "$RT/hello_world_userspace.perf" > table.txt
awk '$NF == "__write" && $1 == 1 && $2 == 0 { ok = 1 } END { exit !ok }' table.txt &&
	pass "hello_world: __write is 1 complete call" ||
	fail "hello_world: __write row: $(grep -E ' __write(_nocancel)?$' table.txt)"
finish
