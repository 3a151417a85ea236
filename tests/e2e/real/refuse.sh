#!/bin/bash
# Input ptflame cannot use is refused with one line saying what it is and
# what ptflame needs (issue 11, item 12): c_demo_sampling.perf holds
# `cycles` samples with call chains, no PT branches.
. "$REAL_DIR/common.sh"

expect_rc 1 "c_demo_sampling: refused" -- "$PTFLAME" report -i "$RT/c_demo_sampling.perf"
expect_lines 1 "$T/err" "c_demo_sampling: one line"
n=$(grep -cE '^ *[0-9/]+ +[0-9]+\.[0-9]+: +[0-9]+ cycles:u:' "$RT/c_demo_sampling.perf")
expect_grep "text of $n samples of 'cycles:u', none of them a branch.*intel_pt" "$T/err" \
	"c_demo_sampling: names the $n cycles:u samples and what ptflame needs"
grep -q "0 samples lack" "$T/err" && fail "c_demo_sampling: still says '0 samples lack'" ||
	pass "c_demo_sampling: no '0 samples lack'"
finish
