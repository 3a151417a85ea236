#!/bin/bash
# Inputs that are streams (issue 17.3, 18.4, 18.5): stdin, pipes, FIFOs and
# process substitution are read once, from their first byte, by report and
# diff alike; an empty input, /dev/null-like device or directory is refused
# with one line by both (but to diff an empty input is an empty profile).
. "$E2E_LIB"
mknod nul c 1 3 2>/dev/null || { echo "SKIP: cannot mknod (needs root)"; exit 77; }
mkfifo fifo
"$PTFLAME" record --emulate -q -o good.data -- "$TESTDATA/emu_nested" ||
	{ fail "record failed"; finish; }
"$PTFLAME" report -q -i good.data >want.folded || { fail "report failed"; finish; }

# perf.data: through stdin (a pipe and a file), a FIFO, process substitution
cat good.data | "$PTFLAME" report -q -i - >pipe.folded
cmp -s pipe.folded want.folded && pass "perf.data through a pipe (-i -)" || fail "perf.data through a pipe differs"
"$PTFLAME" report -q -i - <good.data >stdin.folded
cmp -s stdin.folded want.folded && pass "perf.data on stdin (a file)" || fail "perf.data on stdin differs"
(cat good.data >fifo &)
timeout 60 "$PTFLAME" report -q -i fifo >fifo.folded
cmp -s fifo.folded want.folded && pass "perf.data from a FIFO" || fail "perf.data from a FIFO differs"
timeout 60 "$PTFLAME" report -q -i <(cat good.data) >ps.folded
cmp -s ps.folded want.folded && pass "perf.data from process substitution" || fail "process substitution differs"
(cat good.data >fifo &)
expect_rc 0 "diff FIFO FILE (read once, no hang)" -- timeout 60 "$PTFLAME" diff fifo good.data
awk '$(NF - 1) != $NF { bad = 1 } END { exit bad }' "$T/out" && [ -s "$T/out" ] &&
	pass "diff FIFO FILE: the same stacks" || fail "diff FIFO FILE: $(head -c 300 "$T/out")"

# folded text larger than one sniff (4 KiB): not one byte lost through a pipe
for i in $(seq 1 400); do echo "main;work_$i;leaf 1$i"; done >big.folded
[ "$(wc -c <big.folded)" -gt 8192 ] || fail "big.folded is too small for the test"
expect_rc 0 "diff - FILE of a folded pipe" -- sh -c 'cat big.folded | "$1" diff - big.folded' sh "$PTFLAME"
expect_lines 400 "$T/out" "diff of a folded pipe: every stack"
awk '$(NF - 1) != $NF { bad = 1 } END { exit bad }' "$T/out" && pass "diff of a folded pipe: all equal" ||
	fail "diff of a folded pipe: values differ: $(awk '$(NF - 1) != $NF' "$T/out" | head -3)"
expect_rc 0 "diff <(folded) FILE" -- timeout 60 "$PTFLAME" diff <(cat big.folded) big.folded
awk '$(NF - 1) != $NF { bad = 1 } END { exit bad }' "$T/out" && pass "diff of process substitution: all equal" ||
	fail "diff of process substitution: values differ"

# perf script text through a pipe (a real trace, when the shared folder has it)
real=$SRCDIR/../shared/realtraces/hello_world_userspace.perf
if [ -f "$real" ]; then
	"$PTFLAME" report -q -i "$real" >text.folded
	cat "$real" | "$PTFLAME" report -q -i - >textpipe.folded
	cmp -s text.folded textpipe.folded && [ -s text.folded ] && pass "perf script text through a pipe" ||
		fail "perf script text through a pipe differs"
else
	echo "note: $real absent, text-through-a-pipe check skipped"
fi

# empty input: report refuses it; to diff it is an empty profile (a file
# report writes with a filter that matched nothing), with a note
: >empty.data
mkdir adir
for f in empty.data nul; do
	expect_rc 1 "report -i $f" -- "$PTFLAME" report -i $f
	expect_grep "^ptflame report: $f: is empty" "$T/err" "report -i $f: empty"
	expect_rc 0 "diff $f: an empty profile" -- "$PTFLAME" diff $f want.folded
	expect_grep "^ptflame diff: note: A \($f\) is empty" "$T/err" "diff $f: a note says A is empty"
	if awk '$(NF-1) != 0 { bad = 1 } END { exit bad || NR == 0 }' "$T/out"; then
		pass "diff $f: every stack is B's alone"
	else
		fail "diff $f: $(head -3 "$T/out")"
	fi
done
(: >fifo &)
expect_rc 1 "report -i an empty FIFO" -- timeout 60 "$PTFLAME" report -i fifo
expect_grep "fifo: is empty \(nothing" "$T/err" "an empty FIFO is called empty"
expect_rc 1 "diff DIR" -- "$PTFLAME" diff adir want.folded
expect_grep "adir: is a directory" "$T/err" "diff DIR: is a directory"
finish
