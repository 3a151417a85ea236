#!/bin/bash
# Bad input, the trace itself: random bytes of the PT data of real
# emulated recordings are changed (the decoder rewrites some of those bytes
# in its own copy: ptdecode.c, cyc_fix). Every report must end on its own
# (no hang), exit 0 with a profile whose lines fit the folded grammar, or
# exit 1 with one line on stderr; never a crash. FUZZ_ROUNDS (default 60)
# per recording; the seed is fixed, so a failure can be run again.
. "$REPORT_DIR/common.sh"
rounds=${FUZZ_ROUNDS:-60}
record threads emu_threads --cpus 2 --time-slice 300 || finish
record signal emu_signal || finish
for n in threads signal; do
	"$PTFLAME" dump "$n.data" | sed -n 's/.* AUXTRACE size \(0x[0-9a-f]*\) .*payload@\(0x[0-9a-f]*\)$/\2 \1/p' >"$n.aux"
	[ -s "$n.aux" ] || { fail "$n: no AUXTRACE payload in the dump"; continue; }
	bad=0 ok=0 err=0
	for ((i = 0; i < rounds; i++)); do
		python3 - "$n.data" "$n.aux" "$i" fz.data <<'PY'
import random, sys
src, aux, seed, dst = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
data = bytearray(open(src, "rb").read())
regions = [tuple(int(x, 16) for x in l.split()) for l in open(aux)]
r = random.Random(seed)
for _ in range(r.randint(1, 4)):
    off, size = r.choice(regions)
    p = off + r.randrange(size)
    data[p] = r.randrange(256) if r.random() < 0.5 else data[p] ^ (1 << r.randrange(8))
open(dst, "wb").write(data)
PY
		timeout 30 "$PTFLAME" report -q -i fz.data >fz.out 2>fz.err
		rc=$?
		if [ $rc -eq 0 ] && $CHECK_FOLDED --annotated fz.out >fz.grammar 2>&1; then
			ok=$((ok + 1))
		elif [ $rc -eq 1 ] && [ "$(wc -l <fz.err)" -eq 1 ]; then
			err=$((err + 1))
		else
			bad=$((bad + 1))
			[ $bad -le 3 ] && fail "$n round $i: exit $rc: $(head -c 300 fz.err) $(head -c 200 fz.grammar 2>/dev/null)"
		fi
	done
	[ $bad -eq 0 ] && pass "$n: $rounds damaged traces: $ok profiles, $err one-line errors, no crash or hang"
done
# Every PSB of a short trace damaged: nothing decodes; that is an error,
# not an empty profile (which would say the program did nothing).
python3 - signal.data signal.aux nopsb.data <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
psb = bytes([0x02, 0x82] * 8)
hits = 0
for l in open(sys.argv[2]):
    off, size = (int(x, 16) for x in l.split())
    i = data.find(psb, off, off + size)
    while i >= 0:
        data[i + 2] ^= 0x40
        hits += 1
        i = data.find(psb, i + 16, off + size)
open(sys.argv[3], "wb").write(data)
sys.exit(0 if hits else 1)
PY
if [ $? -ne 0 ]; then
	fail "signal: no PSB found in the PT data"
elif "$PTFLAME" report -i nopsb.data >nopsb.out 2>nopsb.err; then
	fail "no PSB: exit 0, want an error: $(head -c 300 nopsb.err)"
else
	grep -q "no sync point (PSB)" nopsb.err && [ "$(wc -l <nopsb.err)" -eq 1 ] &&
		pass "no PSB: $(cat nopsb.err)" || fail "no PSB: stderr $(head -c 300 nopsb.err)"
fi
finish
