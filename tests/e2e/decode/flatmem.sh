#!/bin/bash
# Flat memory: report's peak RSS (the perf.data mapping's pages included)
# does not grow with the trace. A 64 MiB per-thread trace (bench/
# ptenc_bench.c, a steady loop with a known number of calls) must decode
# in well under its own size (mapping it all would take > 64 MB), and
# every call must still come back (pages dropped from memory are read
# again from the file when touched).
. "$E2E_LIB"
"$DC_PTENC_BENCH" -s 64 -o raw.bin -p pt.data >bench.out 2>&1 || fail "ptenc_bench: $(head -c 300 bench.out)"
rm -f raw.bin
want=$(sed -n 's/^expected_calls=//p' bench.out)
/usr/bin/time -f "%M" -o rss "$PTFLAME" report -i pt.data -o out.folded 2>err ||
	fail "report: $(head -c 300 err)"
kib=$(tail -1 rss)
[ "$kib" -lt 32768 ] && pass "64 MiB trace: peak RSS $kib KiB (< 32 MiB)" ||
	fail "64 MiB trace: peak RSS $kib KiB, want < 32 MiB"
grep -q ":$want,avg:" out.folded && pass "64 MiB trace: all $want calls" ||
	fail "64 MiB trace: no frame with $want calls: $(head -c 300 out.folded)"
finish
