#!/bin/bash
# Code in anonymous executable memory (testdata/jit_anon: JIT code): the
# recording announces its mapping as //anon, as perf's MMAP records do (the
# ptrace backend left it out), and report says in one line that such code
# cannot be decoded, with the call into it a frame "[unknown] (//anon)"
# under main. Run on both backends (tests/e2e/qemu).
. "$E2E_LIB"
if ! "$PTFLAME" record --emulate -q -o anon.data --truth anon.truth -- "$TESTDATA/jit_anon" \
	>anon.out 2>anon.err; then
	fail "record: $(head -c 400 anon.err)"
	finish
fi
expect_grep ' mmap 0x[0-9a-f]* 0x[0-9a-f]* 0 //anon$' anon.truth "the truth has the //anon mapping"
"$PTFLAME" report -q -i anon.data --plain >anon.folded 2>anon.rerr ||
	fail "report: $(head -c 400 anon.rerr)"
expect_lines 1 anon.rerr "report warns once"
expect_grep 'anonymous memory \(//anon' anon.rerr "the warning names //anon"
expect_grep '^main;\[unknown\] \(//anon\);\[lost\] [0-9]' anon.folded \
	"the call into it is a //anon frame, the time until decoding goes on [lost]"
# (where the JIT code went is not known: main's later calls, printf's
# syscalls, were its callees before 2026-11-28: [unknown] (//anon);brk)
finish
