#!/bin/bash
# The scaling curve of `ptflame report -j` (run by hand): on each input
# (N, sqlite or xz as bench/bench_lib.sh makes them, or the path of a
# perf.data; default "10 sqlite xz"), RUNS times (default 3), interleaved:
# `report -j C` confined to the first C CPUs (taskset) for C = 1, 2, 4, ...
# up to the online CPUs (or the list in CPUS="1 2 4"). Each output is
# compared with the -j 1 output (a difference is an error: every -j must
# give the same bytes). Prints, per input and C, the median wall and CPU
# time and the speed-up over C = 1. SYMFS=DIR passes --symfs DIR (a
# recording made on another machine, with a copy of its binaries).
# usage: bench/scale_bench.sh BUILDDIR [N|sqlite|xz|FILE...]
#        (RUNS=n, CPUS="1 2 ...", OUT=dir for the files, default /tmp/scale-bench)
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:?usage: scale_bench.sh BUILDDIR [N|sqlite|xz|FILE...]}" && pwd)
shift
INPUTS=${*:-10 sqlite xz}
RUNS=${RUNS:-3}
OUT=${OUT:-/tmp/scale-bench}
mkdir -p "$OUT"
PTFLAME=$BUILD/cmd/ptflame
NCPU=$(nproc)
if [ -z "${CPUS:-}" ]; then
	CPUS=1
	for ((c = 2; c < NCPU; c *= 2)); do CPUS="$CPUS $c"; done
	[ "$NCPU" -gt 1 ] && CPUS="$CPUS $NCPU"
fi
SYMFS_ARG=()
[ -n "${SYMFS:-}" ] && SYMFS_ARG=(--symfs "$SYMFS")
. "$SRC/bench/bench_lib.sh"

echo "$NCPU CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%F %H:%M') UTC"
printf '| input | CPUs = -j | median wall s | median CPU s | vs 1 CPU |\n|---|---|---|---|---|\n'
for in in $INPUTS; do
	bench_data "$in" "$BUILD" "$OUT" || exit 1
	rm -f "$OUT"/*.t
	"$PTFLAME" report -q -j 1 -i "$data" "${SYMFS_ARG[@]}" -o "$OUT/ref.folded"
	for ((i = 0; i < RUNS; i++)); do
		for c in $CPUS; do
			bench_run "c$c" taskset -c "0-$((c - 1))" "$PTFLAME" report -q -j "$c" -i "$data" \
				"${SYMFS_ARG[@]}" -o "$OUT/c$c.folded"
			cmp -s "$OUT/ref.folded" "$OUT/c$c.folded" ||
				{ echo "report -j $c differs from -j 1 on $label" >&2; exit 1; }
		done
	done
	base=$(cut -d' ' -f1 "$OUT/c1.t" | median)
	for c in $CPUS; do
		awk -v inp="$label" -v c="$c" -v m="$(cut -d' ' -f1 "$OUT/c$c.t" | median)" \
			-v cpu="$(cut -d' ' -f2 "$OUT/c$c.t" | median)" -v b="$base" \
			'BEGIN { printf "| %s | %d | %.2f | %.2f | %.2fx |\n", inp, c, m, cpu, b / m }'
	done
	[ -f "$in" ] || rm -f "$data"
done
