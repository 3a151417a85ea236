#!/bin/bash
# Where outputs go (issue 17.1, 18.1, 18.6): a device, a FIFO, a symlink or
# stdout is written in place, never replaced by a regular file; a regular
# file is replaced only by a complete result; an output that is the input is
# refused; a full device says ENOSPC; a closed stdout is an error.
# The device nodes are our own (mknod in the test's directory, as root).
. "$E2E_LIB"
if ! mknod nul c 1 3 2>/dev/null || ! mknod full c 1 7 2>/dev/null; then
	echo "SKIP: cannot mknod (needs root)"; exit 77
fi
mkfifo fifo
"$PTFLAME" record --emulate -q -o good.data -- "$TESTDATA/emu_nested" ||
	{ fail "record failed"; finish; }
head -c 2000 good.data >trunc.data
"$PTFLAME" report -q -i good.data >want.folded && [ -s want.folded ] ||
	{ fail "report to stdout failed"; finish; }

is_nul() { [ -c nul ] && [ "$(stat -c %t:%T nul)" = 1:3 ]; }
# report -o, --svg, diff -o, record -o into a device: it stays one
expect_rc 0 "report -o DEVICE" -- "$PTFLAME" report -q -i good.data -o nul
is_nul && pass "report -o DEVICE: still the device" || fail "report -o replaced the device"
expect_rc 0 "report --svg DEVICE" -- "$PTFLAME" report -q -i good.data --svg nul -o nul
is_nul && pass "--svg DEVICE: still the device" || fail "--svg replaced the device"
expect_rc 0 "diff -o DEVICE" -- "$PTFLAME" diff -o nul want.folded want.folded
is_nul && pass "diff -o DEVICE: still the device" || fail "diff -o replaced the device"
expect_rc 0 "record -o DEVICE" -- "$PTFLAME" record --emulate -q -o nul -- "$TESTDATA/emu_nested"
is_nul && pass "record -o DEVICE: still the device" || fail "record -o replaced the device"
expect_rc 1 "failed report -o DEVICE" -- "$PTFLAME" report -i trunc.data -o nul
is_nul && pass "failed report: device untouched" || fail "failed report replaced the device"
ls | grep -q '\.tmp\.' && fail "temporary files left: $(ls | grep '\.tmp\.')" || pass "no temporary file left"

# a FIFO: written in place, the reader gets the whole output
timeout 60 cat fifo >got.folded & reader=$!
expect_rc 0 "report -o FIFO" -- timeout 60 "$PTFLAME" report -q -i good.data -o fifo
wait $reader
[ -p fifo ] && pass "report -o FIFO: still a FIFO" || fail "report -o replaced the FIFO"
cmp -s got.folded want.folded && pass "report -o FIFO: the reader got the output" ||
	fail "report -o FIFO: output differs"
timeout 60 cat fifo >got.data & reader=$!
expect_rc 0 "record -o FIFO" -- timeout 60 "$PTFLAME" record --emulate -q -o fifo -- "$TESTDATA/emu_nested"
wait $reader
[ -p fifo ] && pass "record -o FIFO: still a FIFO" || fail "record -o replaced the FIFO"
"$PTFLAME" report -q -i got.data --plain >got2.folded 2>err2 && grep -q '^[^ ]*main' got2.folded &&
	pass "record -o FIFO: a whole perf.data came through" || fail "record -o FIFO: $(head -c 300 err2)"

# a symlink: written through to its target, the link stays
cp want.folded target.folded
ln -s target.folded link.folded
"$PTFLAME" report -q -i good.data --plain -o link.folded
[ -L link.folded ] && pass "-o SYMLINK: still a symlink" || fail "-o replaced the symlink"
grep -q ':1' target.folded && fail "-o SYMLINK: target not rewritten" || pass "-o SYMLINK: target rewritten"
ln -s new.folded dangling.folded
expect_rc 0 "-o DANGLING-SYMLINK" -- "$PTFLAME" report -q -i good.data -o dangling.folded
[ -L dangling.folded ] && cmp -s new.folded want.folded && pass "-o DANGLING-SYMLINK: target created" ||
	fail "-o DANGLING-SYMLINK: link or target wrong"
chmod 640 target.folded
"$PTFLAME" report -q -i good.data -o link.folded
[ "$(stat -c %a target.folded)" = 640 ] && pass "a replaced file keeps its mode" ||
	fail "mode changed to $(stat -c %a target.folded)"

# stdout by name, through our own link to /proc/self/fd/1 (never the
# system's /dev/stdout: a broken build would replace it): a pipe is written
# in place
ln -s /proc/self/fd/1 mystdout
"$PTFLAME" report -q -i good.data -o mystdout | cat >stdout.folded
[ -L mystdout ] && pass "-o LINK-TO-STDOUT: still a link" || fail "-o replaced the link to stdout"
cmp -s stdout.folded want.folded && pass "-o LINK-TO-STDOUT into a pipe" || fail "-o LINK-TO-STDOUT differs"
"$PTFLAME" report -q -i good.data -o - | cat >dash.folded
cmp -s dash.folded want.folded && pass "-o - into a pipe" || fail "-o - differs"

# an output that is the input is refused, nothing written
cp good.data keep.data
expect_rc 1 "report -o INPUT" -- "$PTFLAME" report -i good.data -o good.data
expect_lines 1 "$T/err" "report -o INPUT: one line"
expect_grep "good.data is the input" "$T/err" "report -o INPUT: says so"
ln good.data hard.data
ln -s good.data soft.data
expect_rc 1 "report -o a hard link of the input" -- "$PTFLAME" report -i good.data -o hard.data
expect_rc 1 "report -o a symlink to the input" -- "$PTFLAME" report -i good.data -o soft.data
expect_rc 1 "report --svg INPUT" -- "$PTFLAME" report -i good.data --svg good.data
expect_rc 1 "diff -o INPUT" -- "$PTFLAME" diff -o want.folded want.folded good.data
cmp -s keep.data good.data && pass "the input is unchanged" || fail "the input was overwritten"

# a full device: ENOSPC by name, for -o and for stdout
expect_rc 1 "report -o FULL" -- "$PTFLAME" report -q -i good.data -o full
expect_grep "No space left on device" "$T/err" "report -o FULL says ENOSPC"
expect_rc 1 "report >FULL" -- sh -c '"$1" report -q -i good.data >full' sh "$PTFLAME"
expect_grep "No space left on device" "$T/err" "report >FULL says ENOSPC"
expect_rc 1 "diff -o FULL" -- "$PTFLAME" diff -o full want.folded want.folded
expect_grep "No space left on device" "$T/err" "diff -o FULL says ENOSPC"

# an output that cannot be created is said before any decoding (no summary
# line), by its option and name; outputs naming one file are said by their
# options
for o in -o --svg --timeline; do
	expect_rc 1 "report $o in a missing directory" -- "$PTFLAME" report -i good.data $o no-such-dir/x
	expect_grep "^ptflame report: $o: cannot create no-such-dir/x: No such file or directory$" \
		"$T/err" "report $o in a missing directory: said at once, by name"
	expect_lines 1 "$T/err" "report $o in a missing directory: nothing decoded"
done
expect_rc 1 "diff -o in a missing directory" -- "$PTFLAME" diff -o no-such-dir/x want.folded want.folded
expect_grep "^ptflame diff: -o: cannot create no-such-dir/x" "$T/err" "diff -o: said by name"
expect_rc 1 "--timeline and --svg to one file" -- "$PTFLAME" report -q -i good.data --timeline same.html --svg same.html
expect_grep "--svg and --timeline name the same file" "$T/err" "the two options are named"

# help to a closed or full stdout is no success
expect_rc 1 "--help >&-" -- sh -c '"$1" --help >&-' sh "$PTFLAME"
expect_rc 1 "report --help >FULL" -- sh -c '"$1" report --help >full' sh "$PTFLAME"
finish
