#!/bin/bash
# How `report -j 2`'s work splits between its threads, in instructions
# (run by hand; needs valgrind). On a shared or noisy machine, where wall
# times of two threads are not to be trusted, this says what limits -j 2
# without timing anything: the busiest thread's instructions. For each input
# (N, sqlite or xz as bench/bench_lib.sh makes them, or a perf.data;
# default "sqlite xz 10"): the instructions of `report -q -j 1` (one thread
# does everything) and of each thread of `report -q -j 2` (callgrind,
# --separate-threads), and the bound they set: -j 1's instructions over the
# busiest thread's, the speed-up two CPUs would give if instructions were
# time and nothing waited (issue 12 asks for 1.8). The main thread's count
# leaves out what it does while it waits for the worker's records (it builds
# the windows that come next, ah_peek_wait): that fills idle time, and under
# valgrind, where the threads take turns, its amount is the scheduler's.
# usage: bench/thread_budget.sh BUILDDIR [N|sqlite|xz|FILE...]  (OUT=dir)
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:?usage: thread_budget.sh BUILDDIR [N|sqlite|xz|FILE...]}" && pwd)
shift
INPUTS=${*:-sqlite xz 10}
OUT=${OUT:-/tmp/thread-budget}
PTFLAME=$BUILD/cmd/ptflame
mkdir -p "$OUT"
command -v valgrind >/dev/null || { echo "thread_budget: needs valgrind" >&2; exit 1; }
. "$SRC/bench/bench_lib.sh"

# total instructions in a callgrind output file
# (awk reads to the end: an early exit would end callgrind_annotate by
# SIGPIPE, a failure under pipefail)
ir() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ && !n { gsub(",", "", $1); n = $1 } END { print (n == "" ? 0 : n) }'; }
# instructions in and under ah_peek_wait (0 if it never ran)
waits() {
	callgrind_annotate --inclusive=yes "$1" 2>/dev/null |
		awk '/ptdecode.c:ah_peek_wait( |$)/ && !n { gsub(",", "", $1); n = $1 } END { print (n == "" ? 0 : n) }'
}
bn() { awk -v v="$1" 'BEGIN { printf "%.3f", v / 1e9 }'; }

echo "$(date -u '+%F %H:%M') UTC; instructions in billions (callgrind)"
printf '| input | -j 1 | -j 2: main thread (not waiting) | -j 2: worker | -j 2: others | -j 2 total | bound: -j 1 / busiest |\n'
printf '|---|---|---|---|---|---|---|\n'
for in in $INPUTS; do
	bench_data "$in" "$BUILD" "$OUT" || exit 1
	rm -f "$OUT"/cg.*
	valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.j1" \
		"$PTFLAME" report -q -j 1 -i "$data" -o "$OUT/j1.folded" 2>"$OUT/vg.err"
	valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$OUT/cg.j2" \
		"$PTFLAME" report -q -j 2 -i "$data" -o "$OUT/j2.folded" 2>>"$OUT/vg.err"
	cmp -s "$OUT/j1.folded" "$OUT/j2.folded" ||
		{ echo "thread_budget: $label: -j 2's output differs from -j 1's" >&2; exit 1; }
	j1=$(ir "$OUT/cg.j1")
	# thread 1 is the main thread; the worker is the decoding thread with
	# the most instructions; the rest (preload, other queues' workers)
	main=0 work=0 rest=0
	for f in "$OUT"/cg.j2-*; do
		n=$(ir "$f")
		case $f in
		*-01) main=$((n - $(waits "$f"))) ;;
		*) if [ "$n" -gt "$work" ]; then rest=$((rest + work)); work=$n; else rest=$((rest + n)); fi ;;
		esac
	done
	busiest=$((main > work ? main : work))
	printf '| %s | %s | %s | %s | %s | %s | %sx |\n' "$label" "$(bn "$j1")" "$(bn "$main")" \
		"$(bn "$work")" "$(bn "$rest")" "$(bn $((main + work + rest)))" \
		"$(awk -v a="$j1" -v b="$busiest" 'BEGIN { printf "%.2f", a / b }')"
done
