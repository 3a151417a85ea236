#!/bin/bash
# Decoder throughput (run by hand): a SIZE MiB per-thread perf.data made by
# bench/ptenc_bench.c (a steady loop of real code: calls, returns, branches)
# decoded by decoder/ (tests/e2e/decode/dc_events --bench: every branch
# event delivered and its target symbolized) and by `perf script --itrace=cr`.
# usage: bench/decode_bench.sh BUILDDIR [SIZE_MB]   (default 20; OUT=dir, default /tmp/decode-bench)
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:?usage: decode_bench.sh BUILDDIR [SIZE_MB]}
SIZE=${2:-20}
OUT=${OUT:-/tmp/decode-bench}
mkdir -p "$OUT"
cc -O2 -g -std=gnu11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -I"$SRC" -I/usr/include/capstone \
	-o "$OUT/ptenc_bench" "$SRC/bench/ptenc_bench.c" "$SRC/record/ptenc.c" \
	"$SRC/tests/unit/ptenc_walk.c" "$SRC/record/perfwriter.c" "$SRC/decoder/outfile.c" "$SRC/decoder/perfdata.c" \
	"$SRC/decoder/packed.c" -lipt -lcapstone -lzstd
"$OUT/ptenc_bench" -s "$SIZE" -o "$OUT/b.bin" -p "$OUT/b.data" | grep -E 'expected_calls|libipt'
echo "== decoder/ (dc_events --bench)"
/usr/bin/time -f "wall %e s, max RSS %M KiB" "$BUILD/tests/e2e/decode/dc_events" "$OUT/b.data" --bench
if command -v perf >/dev/null; then
	echo "== perf script --itrace=cr"
	/usr/bin/time -f "wall %e s, max RSS %M KiB" perf script -i "$OUT/b.data" --itrace=cr \
		-F flags,ip,addr >/dev/null 2>"$OUT/perf.err" || true
fi
rm -f "$OUT/b.bin" "$OUT/b.data"
