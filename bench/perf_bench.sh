#!/bin/bash
# Decoding speed and memory of `ptflame report` against its ceiling (run by
# hand). For each SIZE (MiB of PT, default "10 100"): makes a per-thread
# perf.data with bench/ptenc_bench.c (a steady loop of real code: calls,
# returns, branches; built by meson as tests/e2e/decode/dc_ptenc_bench),
# then runs, interleaved, RUNS times each (default 3):
#   report   ptflame report -o /dev/null (single worker)
#   bare     bench/ipt_bare.c: the bare libipt block-decoder loop
# and once, at 10 MiB only, `perf script --itrace=cr` (minutes at 100 MiB).
# Prints per tool the median wall time, MiB/s of PT, M branches/s (calls +
# returns, counted by the bare loop), peak RSS (file pages included) and
# the ratios report/bare and report/perf. Timings on a shared machine are
# noisy: the load average is printed; compare medians of one run only.
# usage: bench/perf_bench.sh BUILDDIR [SIZE_MB...]
#        (RUNS=n, OUT=dir for the files, default /tmp/perf-bench)
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:?usage: perf_bench.sh BUILDDIR [SIZE_MB...]}" && pwd)
shift
SIZES=${*:-10 100}
RUNS=${RUNS:-3}
OUT=${OUT:-/tmp/perf-bench}
mkdir -p "$OUT"
PTFLAME=$BUILD/cmd/ptflame
cc -O2 -g -std=gnu11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -I"$SRC" -o "$OUT/ipt_bare" \
	"$SRC/bench/ipt_bare.c" "$SRC/decoder/perfdata.c" "$SRC/decoder/outfile.c" -lipt
# the trace's code is the generator's own text: keep the binary where it ran
cp "$BUILD/tests/e2e/decode/dc_ptenc_bench" "$OUT/ptenc_bench"

# run NAME CMD...: one timed run; appends "secs rss_kib" to $OUT/NAME.t
run() {
	local name=$1
	shift
	/usr/bin/time -f "%e %M" -o "$OUT/time.tmp" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
	cat "$OUT/time.tmp" >>"$OUT/$name.t"
}
median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

echo "$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%F %H:%M') UTC"
printf '| PT MiB | tool | median s | MiB/s | M branches/s | peak RSS MB | vs bare | vs perf |\n'
printf '|---|---|---|---|---|---|---|---|\n'
for size in $SIZES; do
	data=$OUT/b$size.data
	nice "$OUT/ptenc_bench" -s "$size" -o "$OUT/b.bin" -p "$data" >/dev/null
	rm -f "$OUT/b.bin" "$OUT"/*.t
	mib=$(stat -c %s "$data" | awk '{printf "%.1f", $1 / 1048576}')
	for ((i = 0; i < RUNS; i++)); do
		run report "$PTFLAME" report -i "$data" -o /dev/null
		run bare "$OUT/ipt_bare" "$data"
	done
	branches=$(sed -n 's/.*branches=\([0-9]*\).*/\1/p' "$OUT/bare.out")
	tools="report bare"
	if [ "$size" -le 10 ] && command -v perf >/dev/null; then
		run perf perf script -i "$data" --itrace=cr -F flags,ip,addr
		tools="$tools perf"
	fi
	declare -A med
	for t in $tools; do
		med[$t]=$(cut -d' ' -f1 "$OUT/$t.t" | median)
	done
	for t in $tools; do
		rss=$(cut -d' ' -f2 "$OUT/$t.t" | sort -n | tail -1)
		awk -v s="$size" -v t="$t" -v m="${med[$t]}" -v mib="$mib" -v br="$branches" \
			-v rss="$rss" -v bare="${med[bare]}" -v perf="${med[perf]:-}" 'BEGIN {
			vb = (t == "report") ? sprintf("%.2fx", bare / m) : "";
			vp = (t == "report" && perf != "") ? sprintf("%.1fx", perf / m) : "";
			printf "| %s | %s | %.2f | %.2f | %.2f | %.1f | %s | %s |\n", s, t, m,
			       mib / m, br / m / 1e6, rss / 1024, vb, vp }'
	done
	unset med
	rm -f "$data"
done
