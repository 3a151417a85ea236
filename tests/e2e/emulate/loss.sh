#!/bin/bash
# Simulated loss (--inject-ovf, --drop-aux): the losses are announced the
# way perf expects them (OVF packets; AUX records with the TRUNCATED flag
# and a hole in the queue's offsets), perf reports each of them, and it
# resynchronizes (at the next PSB): what it decodes around the losses is
# the truth, in order, and most of it.
. "$E2E_LIB"
command -v perf >/dev/null || { echo "perf not installed: skipped"; exit 77; }

# subseq NAME PCT: every call/return perf prints is in the truth log, in
# the same order (no invented or reordered branches around the losses),
# and perf still recovers at least PCT % of them.
subseq() {
	perl -ane 'printf "%s %x %x\n", ($F[4] eq "ret" ? "return" : "call"), hex($F[5]), hex($F[6])
		if $F[4] eq "call" || $F[4] eq "ret"' "$1.truth" >"$1.want"
	perf script --itrace=cr -F flags,ip,addr -i "$1.data" 2>/dev/null |
		awk '$1 == "call" || $1 == "return" {print $1, $2, $4}' >"$1.got"
	local res
	res=$(perl -e 'open W, $ARGV[0]; my @w = <W>; open G, $ARGV[1]; my @g = <G>;
		my $i = 0; for my $l (@g) { $i++ while $i < @w && $w[$i] ne $l;
		if ($i == @w) { print "missing: $l"; exit } $i++ }
		printf "%d %d\n", scalar @g, scalar @w' "$1.want" "$1.got")
	set -- "$1" "$2" $res
	if [ "$3" = missing: ]; then
		fail "$1: perf printed a branch not in the truth log (in order): ${*:4}"
	elif [ "$#" -eq 4 ] && [ $(($3 * 100)) -ge $(($4 * $2)) ]; then
		pass "$1: perf's $3 of $4 calls/returns are the truth's, in order"
	else
		fail "$1: perf recovered ${3:-?} of ${4:-?} calls/returns (want >= $2 %)"
	fi
}

# OVF every 25 packets
"$PTFLAME" record --emulate -q --inject-ovf 25 --psb-period 256 -o ovf.data --truth ovf.truth \
	-- "$TESTDATA/emu_nested" 2>err || fail "inject-ovf: record failed: $(cat err)"
want=$(grep -c ' ovf ' ovf.truth)
got=$(perf script --itrace=cre -i ovf.data 2>&1 | grep -c 'Overflow packet')
if [ "$want" -ge 2 ] && [ "$got" -eq "$want" ]; then
	pass "inject-ovf: perf reports all $want overflows"
else
	fail "inject-ovf: truth has $want overflows, perf reports $got"
fi
subseq ovf 90

# every 3rd AUX chunk of 1 KiB lost
"$PTFLAME" record --emulate -q --aux-chunk 1024 --drop-aux 3 --psb-period 256 -o drop.data \
	--truth drop.truth -- "$TESTDATA/emu_except" 2>err || fail "drop-aux: record failed: $(cat err)"
want=$(grep -c ' drop-aux ' drop.truth)
perf script -D -i drop.data 2>/dev/null >drop.D
trunc=$(grep -c 'PERF_RECORD_AUX .*flags: 0x1' drop.D)
if [ "$want" -ge 2 ] && [ "$trunc" -eq "$want" ]; then
	pass "drop-aux: $want lost chunks announced by TRUNCATED AUX records"
else
	fail "drop-aux: truth has $want lost chunks, TRUNCATED AUX records: $trunc"
fi
# the AUXTRACE records skip exactly the dropped ranges
perl -ne 'print hex($2), " ", hex($1), "\n" if /PERF_RECORD_AUXTRACE size: (0x[0-9a-f]+|\d+)\s+offset: (0x[0-9a-f]+|\d+)/' \
	drop.D >have.rng
awk '/ drop-aux /{print $6, $7}' drop.truth >lost.rng
holes=$(sort -n have.rng lost.rng | awk 'BEGIN {n = 0} {if ($1 != n) bad++; n = $1 + $2} END {print bad + 0}')
if [ "$holes" -eq 0 ] && [ -s have.rng ]; then
	pass "drop-aux: AUXTRACE offsets plus the dropped ranges tile the queue"
else
	fail "drop-aux: AUXTRACE offsets and dropped ranges do not tile the queue ($holes gaps)"
fi
if perf script --itrace=cre -i drop.data 2>&1 | grep -q 'Lost trace data'; then
	pass "drop-aux: perf reports lost trace data"
else
	fail "drop-aux: perf reports no lost trace data"
fi
subseq drop 40
finish
