#!/bin/bash
# A per-thread recording (AUXTRACE tid set, cpu -1; bench/ptenc_bench.c
# encodes a steady loop of real code with libipt's encoder): every call
# and return comes back, spread over many AUX chunks and PSBs, once each.
. "$E2E_LIB"
"$DC_PTENC_BENCH" -s 1 -o raw.bin -p pt.data >bench.out 2>&1 || fail "ptenc_bench: $(head -c 300 bench.out)"
want=$(sed -n 's/^expected_calls=//p' bench.out)
"$DC_EVENTS" pt.data >ev 2>err || fail "decode: $(head -c 300 err)"
calls=$(awk '$5 == "call"' ev | wc -l)
rets=$(awk '$5 == "ret"' ev | wc -l)
[ -n "$want" ] && [ "$calls" -eq "$want" ] && pass "per-thread: $calls calls (as encoded)" ||
	fail "per-thread: $calls calls, encoded $want"
[ "$rets" -eq "$calls" ] && pass "per-thread: as many returns" || fail "per-thread: $rets returns"
grep -q '^# stats queues 1 threads 1 .* lost_ovf 0 lost_truncated 0 lost_decode 0' ev &&
	pass "per-thread: one queue, one thread, nothing lost" || fail "per-thread: $(grep '^# stats' ev)"
# times never go back within the thread
awk '$1 !~ /^#/ { if ($1 < last) bad++; last = $1 } END { exit bad > 0 }' ev &&
	pass "per-thread: times in order" || fail "per-thread: times go back"
finish
