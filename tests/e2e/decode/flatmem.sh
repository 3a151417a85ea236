#!/bin/bash
# Flat memory: report's peak RSS (the perf.data mapping's pages included)
# does not grow with the trace. A 64 MiB per-thread trace (bench/
# ptenc_bench.c, a steady loop with a known number of calls) must decode
# in well under its own size (mapping it all would take > 64 MB), and
# every call must still come back (pages dropped from memory are read
# again from the file when touched). The bound, 24 MiB, is about 7 MiB
# above what report takes on a 2-CPU machine (about 17 MiB, libraries'
# pages included): pages a fault maps again behind the drops (large
# page-cache folios) made 22 to 44 MiB, growing with the trace.
. "$E2E_LIB"
"$DC_PTENC_BENCH" -s 64 -o raw.bin -p pt.data >bench.out 2>&1 || fail "ptenc_bench: $(head -c 300 bench.out)"
rm -f raw.bin
want=$(sed -n 's/^expected_calls=//p' bench.out)
/usr/bin/time -f "%M" -o rss "$PTFLAME" report -i pt.data -o out.folded 2>err ||
	fail "report: $(head -c 300 err)"
kib=$(tail -1 rss)
[ "$kib" -lt 24576 ] && pass "64 MiB trace: peak RSS $kib KiB (< 24 MiB)" ||
	fail "64 MiB trace: peak RSS $kib KiB, want < 24 MiB"
grep -q ":$want,avg:" out.folded && pass "64 MiB trace: all $want calls" ||
	fail "64 MiB trace: no frame with $want calls: $(head -c 300 out.folded)"
finish
