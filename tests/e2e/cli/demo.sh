#!/bin/bash
# scripts/demo.sh (the README's first command) on this build, without its
# setup and build (DEMO_BUILD): it must run, and what it shows must be the
# demo program's story. Its "heaviest stacks" once sorted the folded lines
# on their second blank-separated field, which names with blanks such as
# "futex_wait (inlined)" moved: the waiter's 2.1 ms mutex wait, the demo's
# point, was not among them.
. "$E2E_LIB"
BUILD=$(cd "$(dirname "$PTFLAME")/.." && pwd)
DEMO_BUILD=$BUILD DEMO_OUT=$T/demo bash "$SRCDIR/scripts/demo.sh" >demo.out 2>demo.err
rc=$?
[ $rc -eq 0 ] && pass "demo: exit 0" || fail "demo: exit $rc: $(head -c 400 demo.err)"
# the heaviest stacks: the 8 lines after the heading
awk '/^== the heaviest stacks/ { f = 1; next } /^$/ { f = 0 } f' demo.out >heavy
[ "$(wc -l <heavy)" -eq 8 ] && pass "demo: 8 heaviest stacks" || fail "demo: $(wc -l <heavy) heaviest stacks"
# they are the folded file's 8 largest counts, largest first
sort -n -r < <(awk '{ print $NF }' "$T/demo/demo.folded") | head -n 8 >want
awk '{ print $NF }' heavy >got
cmp -s want got && pass "demo: the heaviest stacks are the 8 largest counts, in order" ||
	fail "demo: heaviest counts $(tr '\n' ' ' <got), want $(tr '\n' ' ' <want)"
grep -q 'waiter.*__pthread_mutex_lock.*\[off-cpu\]' heavy &&
	pass "demo: the waiter's mutex wait is among the heaviest stacks" ||
	fail "demo: no mutex wait of the waiter among: $(cut -c1-150 heavy)"
grep -q 'main.*sleep_us.*\[off-cpu\]' heavy && pass "demo: main's sleep too" ||
	fail "demo: no sleep of main among: $(cut -c1-150 heavy)"
grep -q '^<svg\|<svg ' "$T/demo/demo.svg" && pass "demo: an SVG" || fail "demo: no SVG"
grep -q 'Function' demo.out && grep -q ' main$' demo.out && pass "demo: the latency table" ||
	fail "demo: no table with main: $(tail -5 demo.out)"
python3 "$SRCDIR/tests/e2e/report/truth_profile.py" compare "$T/demo/truth.log" "$T/demo/demo.folded" \
	>cmp 2>&1 && pass "demo: its folded stacks match the truth: $(tail -1 cmp)" ||
	fail "demo: folded vs truth: $(head -c 400 cmp)"
finish
