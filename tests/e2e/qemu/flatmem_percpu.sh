#!/bin/bash
# Flat memory on a per-CPU trace whose queues drift apart in the file
# (testdata/flat_diverge.c): the session's drop-behind stops at the queue
# furthest back, so the pages of the one ahead go only through its own
# drops (decoder/ptdecode.c drop_chunks). The same program recorded small
# (5 M calls) and large (30 M calls): report's peak RSS, file pages
# included, may grow by no more than 40 % of the difference in file size.
# Measured when written: it grew by 1.1 MB for 15.8 MB more trace (6.2 MB
# allowed); with the queues' own drops turned off, by 12.7 MB. -j 1: at
# -j 2 the peak moves by megabytes with how far the threads get. Every
# call must be there.
command -v qemu-x86_64 >/dev/null ||
	{ echo "qemu-x86_64 not installed (apt-get install qemu-user): skipped"; exit 77; }
. "$E2E_LIB"
M=2000
for n in 5000000 30000000; do
	"$PTFLAME" record --emulate=qemu -q -o "$n.data" -- "$TESTDATA/flat_diverge" "$n" "$M" \
		>"$n.rec" 2>&1 || { fail "record $n: $(head -c 300 "$n.rec")"; finish; }
	/usr/bin/time -f "%M" -o "$n.rss" "$PTFLAME" report -j 1 -i "$n.data" -o "$n.folded" \
		2>"$n.err" || { fail "report $n: $(head -c 300 "$n.err")"; finish; }
	expect_grep "^[^ ]*;a_step:$n,avg:" "$n.folded" "$n calls: every a_step"
	expect_grep "^[^ ]*;b_step:$M,avg:" "$n.folded" "$n calls: every b_step"
	expect_grep "traced .* 0 lost segments" "$n.err" "$n calls: nothing lost"
done
small=$(stat -c %s 5000000.data); large=$(stat -c %s 30000000.data)
r_small=$(tail -1 5000000.rss); r_large=$(tail -1 30000000.rss)
grow=$(( (r_large - r_small) * 1024 )); allow=$(( (large - small) * 40 / 100 ))
msg="peak RSS $r_small -> $r_large KiB for $small -> $large bytes of trace"
[ "$grow" -le "$allow" ] && pass "$msg (grew $((grow >> 10)) KiB, allowed $((allow >> 10)))" ||
	fail "$msg: grew $((grow >> 10)) KiB, allowed $((allow >> 10))"
finish
