#!/bin/bash
# Emulator PT-encoder bench (run by hand): builds bench/ptenc_bench.c and
#  1. encodes SIZE MiB (default 1024) of PT into a perf.data (and the same
#     bytes into a raw file) and decodes all of the raw stream with libipt's
#     block decoder (must give back every instruction, no error);
#  2. makes a 10 MiB perf.data the same way and decodes it with
#     `perf script --itrace=cr`: it must report exactly the calls and returns
#     encoded, and no error.
# usage: bench/ptenc_bench.sh [SIZE_MB]     (OUT=dir for the files, default /tmp/ptenc-bench)
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/ptenc-bench}
mkdir -p "$OUT"
cc -O2 -g -std=gnu11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -I"$SRC" -I/usr/include/capstone \
	-o "$OUT/ptenc_bench" "$SRC/bench/ptenc_bench.c" "$SRC/record/ptenc.c" \
	"$SRC/tests/unit/ptenc_walk.c" "$SRC/record/perfwriter.c" "$SRC/decoder/outfile.c" "$SRC/decoder/perfdata.c" \
	"$SRC/decoder/packed.c" -lipt -lcapstone -lzstd
SIZE=${1:-1024}
echo "== $SIZE MiB of PT into a perf.data, then libipt decodes all of it"
/usr/bin/time -f "total wall %e s, max RSS %M KiB" "$OUT/ptenc_bench" -s "$SIZE" -o "$OUT/big.bin" \
	-p "$OUT/big.data"
ls -l "$OUT/big.bin" "$OUT/big.data"
perf report -i "$OUT/big.data" --header-only 2>/dev/null | grep -m1 "data size" || true
rm -f "$OUT/big.bin" "$OUT/big.data"

echo "== 10 MiB perf.data, perf script --itrace=cr"
"$OUT/ptenc_bench" -s 10 -o "$OUT/small.bin" -p "$OUT/small.data" | tee "$OUT/small.log"
expected=$(sed -n 's/^expected_calls=//p' "$OUT/small.log")
start=$(date +%s.%N)
perf script -i "$OUT/small.data" --itrace=cr -F flags,ip,addr > "$OUT/small.txt" 2> "$OUT/small.err" || true
end=$(date +%s.%N)
calls=$(grep -c "^ *call " "$OUT/small.txt" || true)
rets=$(grep -c "^ *return " "$OUT/small.txt" || true)
errs=$( (grep -i "error\|warning" "$OUT/small.err" "$OUT/small.txt" || true) | wc -l)
echo "perf script: $calls calls + $rets returns (expected $expected each), $errs error lines, $(echo "$end - $start" | bc) s"
rm -f "$OUT/small.txt" "$OUT/small.bin"
if [ "$errs" -eq 0 ] && [ "$calls" -eq "$expected" ] && [ "$rets" -eq "$expected" ]; then
	echo OK
else
	echo FAIL; exit 1
fi
