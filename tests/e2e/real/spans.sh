#!/bin/bash
# Every thread's stacks sum to its span (first to last line of its trace):
# time between a "tr end" and the next "tr strt" (page faults, interrupts)
# is the thread's, under [kernel], and so are branches inside one function
# before its first or after its last call (issue 11, items 1 and 8).
. "$REAL_DIR/common.sh"

for n in hello_world_userspace page_fault ocaml_exceptions simple_gogo; do
	if "$PTFLAME" report -q --per-thread --plain -i "$RT/$n.perf" > $n.folded 2>$n.err; then
		$CHECK spans "$RT/$n.perf" $n.folded > $n.chk &&
			pass "$n: stacks sum to the span ($(head -1 $n.chk))" ||
			fail "$n: $(cat $n.chk)"
	else
		fail "$n: report failed: $(cat $n.err)"
	fi
done

# hello_world: the gaps are page faults and interrupts (the thread resumes
# where it stopped): [kernel] on the stack it stopped on, not dropped.
v=$($CHECK stack hello_world_userspace.folded '.*;_start;_dl_start;\[kernel\]') &&
	pass "hello_world: _dl_start's page faults are [kernel] under it ($v ns)" ||
	fail "hello_world: no [kernel] under _start;_dl_start"
# a function called once (whole): its total is that call, so avg = total
"$PTFLAME" report -q --table --raw -i "$RT/hello_world_userspace.perf" > table.txt
awk 'NR > 2 && $1 == 1 && $2 == 0 && $3 != $5 { print; bad = 1 } END { exit bad }' table.txt > bad.txt &&
	grep -q ' _dl_start$' table.txt && pass "table: total = avg for every function called once" ||
	fail "table: total != avg: $(head -3 bad.txt)"
finish
