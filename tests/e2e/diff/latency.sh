#!/bin/bash
# Latency percentiles in the tables come from the per-node histograms of
# individual calls: p50/p90/p99/max of busy(), work() and other() in an
# emulated run of testdata/extra_work must agree within 1 % with the exact
# nearest-rank percentiles of the truth log's call durations.
# PT has no packet for a direct call or a compressed return: a decoder knows
# their times only to the nearest timing packet, some tens of instructions.
# So the calls here are scaled (SCALE 60) to thousands of instructions.
# Needs the full pipeline (perf.data decoded by `ptflame report`); skipped
# until then.
. "$E2E_LIB"
TRUTH_LAT=$1
EW="$TESTDATA/extra_work"

"$PTFLAME" record --emulate -q --ns-per-insn 100 -o "$T/a.data" --truth "$T/a.truth" \
	-- "$EW" 0 - 60 8 >/dev/null 2>"$T/rec.err" || { fail "record: $(head -c 300 "$T/rec.err")"; finish; }

# the one-run table (report --table)
if "$PTFLAME" report -i "$T/a.data" --table --raw >"$T/tab" 2>"$T/err"; then
	cols='p50=$6; p90=$7; p99=$8; max=$9'
	how="report --table"
else
	fail "report --table -i a.data: $(head -c 200 "$T/err")"
	finish
fi

python3 "$TRUTH_LAT" "$T/a.truth" "$EW" busy work other >"$T/truth.lat"
while read -r fn n _ t50 t90 t99 tmax; do
	[ "$n" -gt 0 ] || { fail "$fn: no complete calls in the truth log"; continue; }
	read -r p50 p90 p99 max < <(awk -v f="$fn" "\$NF == f { $cols; print p50, p90, p99, max }" "$T/tab")
	if [ -z "$p50" ]; then
		fail "$fn: no row in the $how output"
		continue
	fi
	ok=1
	for pair in "p50 $p50 $t50" "p90 $p90 $t90" "p99 $p99 $t99" "max $max $tmax"; do
		set -- $pair
		if ! awk -v g="$2" -v w="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= w / 100) }'; then
			fail "$fn $1: $how says $2 ns, the truth's $n calls $3 ns"
			ok=0
		fi
	done
	[ "$ok" = 1 ] && pass "$fn: p50 $p50 p90 $p90 p99 $p99 max $max ns within 1 % of the truth ($n calls)"
done <"$T/truth.lat"
finish
