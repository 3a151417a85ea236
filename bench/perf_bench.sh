#!/bin/bash
# Decoding speed and memory of `ptflame report` against its ceiling (run by
# hand). Inputs, each given as an argument: N (a synthetic trace of N MiB of
# PT), sqlite or xz, as bench/bench_lib.sh makes them (default: "10 100
# sqlite"). On each, interleaved, RUNS times (default 3):
#   report-j1     ptflame report -j 1 -o /dev/null (one thread)
#   report-jN     ptflame report -o /dev/null (-j: the online CPUs)
#   report-jN@1   the same, confined to one CPU (taskset -c 0)
#   libipt-j1, libipt-jN  report -j 1 and -j N with --pt-decoder libipt
#                 (libipt's block decoder only, not ptflame's own walker)
#   bare          bench/ipt_bare.c: the bare libipt block-decoder loop
#   bare-ticks    ipt_bare -T: the same loop with tick events, as report
#                 configures libipt's block decoder (report's decoder floor
#                 with --pt-decoder libipt)
#   ours          ipt_bare -W: that loop with report's own block decoder
#                 (decoder/ptwalk.c over decoder/ptquery.c, ticks too)
#   walk          ipt_bare -w: bench/ipt_walk.c, the moonshot's prototype, a
#                 walker of our own with a cache of block ends over libipt's
#                 packet decoder
#                 (ours and walk must find the bare loop's calls and returns
#                 exactly, their count and hash, or the run stops)
#   pgo-j1, pgo-jN  report -j 1 and -j N from the build PGO=DIR, when given
#                 (scripts/build-pgo.sh DIR: the same code, optimized with a
#                 profile of training runs on other inputs)
# and once, on inputs up to 25 MiB of PT, `perf script --itrace=cr` (minutes on
# 100 MiB). Prints per tool the median wall time, its median user+system
# CPU time, MiB/s of PT, M branches/s (calls + returns, as the bare loop
# counts them), the largest peak RSS (file pages included) and the ratios
# to the bare loop and to perf script. Timings on a shared machine are
# noisy: the load average is printed; compare medians of one run only.
# usage: bench/perf_bench.sh BUILDDIR [N|sqlite|xz...]
#        (RUNS=n, OUT=dir for the files, default /tmp/perf-bench, PGO=dir)
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:?usage: perf_bench.sh BUILDDIR [N|sqlite...]}" && pwd)
shift
INPUTS=${*:-10 100 sqlite}
RUNS=${RUNS:-3}
OUT=${OUT:-/tmp/perf-bench}
mkdir -p "$OUT"
PTFLAME=$BUILD/cmd/ptflame
PGO=${PGO:+$(cd "$PGO" && pwd)}
[ -z "$PGO" ] || [ -x "$PGO/cmd/ptflame" ] || { echo "perf_bench: no $PGO/cmd/ptflame" >&2; exit 1; }
NCPU=$(nproc)
cc -O2 -flto=auto -g -std=gnu11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -I"$SRC" -o "$OUT/ipt_bare" \
	"$SRC/bench/ipt_bare.c" "$SRC/bench/ipt_walk.c" "$SRC/decoder/perfdata.c" "$SRC/decoder/packed.c" \
	"$SRC/decoder/wdec.c" "$SRC/decoder/ptwalk.c" "$SRC/decoder/ptquery.c" \
	"$SRC/decoder/pttime.c" "$SRC/decoder/outfile.c" -lipt -lZydis -lzstd
. "$SRC/bench/bench_lib.sh"


echo "$NCPU CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%F %H:%M') UTC"
printf '| input | tool | median wall s | median CPU s | MiB/s | M branches/s | peak RSS MB | vs bare | vs perf |\n'
printf '|---|---|---|---|---|---|---|---|---|\n'
for in in $INPUTS; do
	data=$OUT/in.data
	rm -f "$OUT"/*.t
	label=$(bench_input "$in" "$data" "$BUILD" "$OUT") || exit 1
	tools="report-j1 report-j$NCPU report-j$NCPU@1 libipt-j1 libipt-j$NCPU bare bare-ticks ours walk"
	[ -z "$PGO" ] || tools="$tools pgo-j1 pgo-j$NCPU"
	for ((i = 0; i < RUNS; i++)); do
		bench_run report-j1 "$PTFLAME" report -q -j 1 -i "$data" -o /dev/null
		bench_run "report-j$NCPU" "$PTFLAME" report -q -i "$data" -o /dev/null
		bench_run "report-j$NCPU@1" taskset -c 0 "$PTFLAME" report -q -i "$data" -o /dev/null
		bench_run libipt-j1 "$PTFLAME" report -q -j 1 --pt-decoder libipt -i "$data" -o /dev/null
		bench_run "libipt-j$NCPU" "$PTFLAME" report -q --pt-decoder libipt -i "$data" -o /dev/null
		bench_run bare "$OUT/ipt_bare" "$data"
		bench_run bare-ticks "$OUT/ipt_bare" -T "$data"
		bench_run ours "$OUT/ipt_bare" -W "$data"
		bench_run walk "$OUT/ipt_bare" -w "$data"
		if [ -n "$PGO" ]; then
			bench_run pgo-j1 "$PGO/cmd/ptflame" report -q -j 1 -i "$data" -o /dev/null
			bench_run "pgo-j$NCPU" "$PGO/cmd/ptflame" report -q -i "$data" -o /dev/null
		fi
	done
	if [ -n "$PGO" ] && ! cmp -s <("$PTFLAME" report -q -i "$data") <("$PGO/cmd/ptflame" report -q -i "$data"); then
		echo "perf_bench: the PGO build's output differs on $in" >&2
		exit 1
	fi
	flow() { grep -o 'branches=[0-9]* .*hash=[0-9a-f]*' "$1" | sed 's/mbranch_s=[0-9.]* //'; }
	for t in walk ours; do
		if [ "$(flow "$OUT/bare.out")" != "$(flow "$OUT/$t.out")" ]; then
			echo "perf_bench: $t's calls and returns differ from libipt's on $in:" \
				"$(flow "$OUT/$t.out") against $(flow "$OUT/bare.out")" >&2
			exit 1
		fi
	done
	branches=$(sed -n 's/.*branches=\([0-9]*\).*/\1/p' "$OUT/bare.out")
	# MiB of PT: what the bare loop decoded (all of it from the first PSB)
	mib=$(sed -n 's/^bytes=\([0-9]*\).*/\1/p' "$OUT/bare.out" | awk '{printf "%.1f", $1 / 1048576}')
	if awk -v m="$mib" 'BEGIN { exit !(m <= 25) }' && command -v perf >/dev/null; then
		bench_run perf perf script -i "$data" --itrace=cr -F flags,ip,addr
		tools="$tools perf"
	fi
	declare -A med
	for t in $tools; do
		med[$t]=$(cut -d' ' -f1 "$OUT/$t.t" | median)
	done
	for t in $tools; do
		cpu=$(cut -d' ' -f2 "$OUT/$t.t" | median)
		rss=$(cut -d' ' -f3 "$OUT/$t.t" | sort -n | tail -1)
		awk -v inp="$mib MiB $label" -v t="$t" -v m="${med[$t]}" -v c="$cpu" -v mib="$mib" \
			-v br="$branches" -v rss="$rss" -v bare="${med[bare]}" -v perf="${med[perf]:-}" 'BEGIN {
			vb = (t != "bare" && t != "perf") ? sprintf("%.2fx", bare / m) : "";
			vp = (t ~ /^(report|libipt|pgo)/ && perf != "") ? sprintf("%.1fx", perf / m) : "";
			printf "| %s | %s | %.2f | %.2f | %.2f | %.2f | %.1f | %s | %s |\n", inp, t, m, c,
			       mib / m, br / m / 1e6, rss / 1024, vb, vp }'
	done
	unset med
	rm -f "$data"
done
