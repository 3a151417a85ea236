#!/bin/bash
# Cost of inline frames (run by hand): `ptflame report` with them (the
# default) against --no-inline, user CPU seconds, the least of RUNS runs each,
# on two recordings: bench/ptenc_bench.c's loop (SIZE MiB of PT, code with
# next to no inlining) and ptflame's own -O2 code recorded with the emulator
# (report of a testdata recording: many inline contexts, with DWARF).
# usage: bench/inline_bench.sh BUILDDIR [SIZE_MB [RUNS]]   (default 10, 5; OUT=dir, default /tmp/inline-bench)
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:?usage: inline_bench.sh BUILDDIR [SIZE_MB [RUNS]]}
SIZE=${2:-10}
RUNS=${3:-5}
OUT=${OUT:-/tmp/inline-bench}
P="$BUILD/cmd/ptflame"
mkdir -p "$OUT"
cc -O2 -g -std=gnu11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -I"$SRC" -I/usr/include/capstone \
	-o "$OUT/ptenc_bench" "$SRC/bench/ptenc_bench.c" "$SRC/record/ptenc.c" \
	"$SRC/tests/unit/ptenc_walk.c" "$SRC/record/perfwriter.c" "$SRC/decoder/outfile.c" "$SRC/decoder/perfdata.c" \
	"$SRC/decoder/packed.c" -lipt -lcapstone -lzstd
"$OUT/ptenc_bench" -s "$SIZE" -o "$OUT/b.bin" -p "$OUT/loop.data" >/dev/null
"$P" record --emulate -q -o "$OUT/small.data" -- "$BUILD/testdata/emu_demo" >/dev/null
cp "$P" "$OUT/ptflame-traced"
"$P" record --emulate -q -o "$OUT/self.data" -- "$OUT/ptflame-traced" report -q \
	-i "$OUT/small.data" -o /dev/null >/dev/null
least() {  # FILE [options]: the least user time of RUNS reports
	local f=$1 best=; shift
	for _ in $(seq "$RUNS"); do
		local u
		u=$( { /usr/bin/time -f %U "$P" report -q -i "$f" "$@" -o /dev/null; } 2>&1 | tail -1)
		best=$(echo "$u ${best:-$u}" | awk '{print ($1 < $2) ? $1 : $2}')
	done
	echo "$best"
}
for d in loop self; do
	off=$(least "$OUT/$d.data" --no-inline)
	on=$(least "$OUT/$d.data")
	n=$("$P" report -q -i "$OUT/$d.data" | grep -c '(inlined)' || true)
	echo "$d.data ($(du -m "$OUT/$d.data" | cut -f1) MB): --no-inline ${off}s, inline frames ${on}s" \
		"($(echo "$on $off" | awk '{printf "%+.1f %%", ($1 / $2 - 1) * 100}')), $n stacks with an inline frame"
done
rm -f "$OUT/b.bin"
