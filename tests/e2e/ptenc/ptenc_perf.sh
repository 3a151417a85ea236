#!/bin/bash
# The emulator's PT encoder against Debian's perf: test_ptenc (unit test
# binary) writes, for each of its scenarios, a perf.data of the encoded
# trace over its own code plus the calls/returns it walked (.truth). `perf
# script --itrace=cr` must report exactly those calls and returns, in order,
# at times within one MTC period of the truth, with no decode error, and
# "tr end syscall" for the syscall. Times are checked for returns and
# indirect calls (their own packet gives the time; a direct call has none).
# The overflow scenario may lose the branches between the last packet
# before the OVF and the resync point.
. "$E2E_LIB"
TP="$BUILDDIR/tests/test_ptenc"
[ -x "$TP" ] || { fail "no $TP (build the unit tests)"; finish; }
command -v perf >/dev/null || { echo "SKIP: perf not installed"; exit 77; }
mkdir perf
PTENC_PERF_DIR="$T/perf" "$TP" >tp.out 2>&1 || fail "test_ptenc failed: $(tail -5 tp.out)"

# perf script line -> "kind ip addr ns" for calls and returns
norm() {
	awk '{ t = $1; sub(":", "", t); ns = sprintf("%.0f", t * 1e9) }
	     $2 == "call" || $2 == "return" { print $2, $3, $5, ns }' "$1"
}

n=0
for d in perf/*.data; do
	name=$(basename "$d" .data)
	perf script -i "$d" --itrace=cre -F time,flags,ip,addr --ns >"$name.perf" 2>"$name.err"
	norm "$name.perf" >"$name.got"
	period=$(cat "perf/$name.period")
	errs=$(grep -ci "error\|warning" "$name.perf" "$name.err" | awk -F: '{s += $2} END {print s + 0}')
	if [ "$name" = ovf ]; then
		grep -q "Overflow packet" "$name.perf" || fail "$name: perf reports no overflow"
		# what perf got is the truth minus one gap before the OVF
		awk 'NR == FNR { t[NR] = $1 " " $2 " " $3; nt = NR; next }
		     { g = $1 " " $2 " " $3; while (i < nt && t[++i] != g) skipped++; if (t[i] != g) bad++ }
		     END { if (bad || FNR == 0) exit 1 }' "perf/$name.truth" "$name.got" ||
			fail "$name: perf's calls/returns are not the truth with a gap"
		tail -20 "perf/$name.truth" | cut -d" " -f1-3 >want.tail
		tail -20 "$name.got" | cut -d" " -f1-3 >got.tail
		cmp -s want.tail got.tail || fail "$name: after the overflow perf differs from the truth"
		n=$((n + 1))
		continue
	fi
	[ "$errs" -eq 0 ] || fail "$name: perf reports $errs errors: $(grep -i error "$name.perf" "$name.err" | head -3)"
	cut -d" " -f1-3 "perf/$name.truth" >want.seq
	cut -d" " -f1-3 "$name.got" >got.seq
	if ! cmp -s want.seq got.seq; then
		fail "$name: perf's calls/returns differ from the truth: $(diff want.seq got.seq | head -5)"
		continue
	fi
	# times: within one MTC period (no MTC: only TSC at PSB, skip)
	if [ "$period" -gt 0 ]; then
		paste -d" " "perf/$name.truth" "$name.got" |
			awk -v p="$period" '$5 { d = $9 - $4; if (d < 0) d = -d; if (d > p) { print; bad++ } }
				END { exit bad > 0 }' >"$name.late" ||
			fail "$name: perf times off by more than $period ns: $(head -3 "$name.late")"
	fi
	n=$((n + 1))
done
[ "$n" -ge 10 ] && pass "perf script agrees with the truth for $n encoder scenarios" ||
	fail "only $n scenarios checked"
grep -q "tr end  syscall" syscall.perf && pass "perf sees the syscall's TIP.PGD as 'tr end syscall'" ||
	fail "no 'tr end syscall' in syscall.perf"
finish
