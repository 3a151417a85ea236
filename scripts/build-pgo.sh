#!/bin/bash
# Build ptflame with GCC's profile-guided optimization (meson's b_pgo) and
# -O3: once instrumented, then run on training recordings, then again with
# the profile those runs wrote. report runs about 20 % faster than the
# default build (-O2, no profile; README, Performance); every output is the
# plain build's, byte for byte (tests/e2e/install/pgo.sh checks). A later
# MESON-SETUP-ARGS -Doptimization=2 keeps -O2.
#
# The training recordings are not the benchmark's: a 4 MiB synthetic trace
# (bench/ptenc_bench.c) and Debian's python3 running a small JSON and regex
# workload, recorded with record --emulate=qemu (skipped, with a warning,
# without qemu-x86_64). Each is reported with -j 1 and -j 2, so that both
# the one-thread path and the decode-ahead workers are trained.
#
# usage: scripts/build-pgo.sh [BUILDDIR [MESON-SETUP-ARGS...]]
#        (default build-pgo; PGO_TRAIN=small: a short training, for tests)
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-build-pgo}
[ $# -gt 0 ] && shift
say() { echo "build-pgo: $*" >&2; }
die() { say "$*"; exit 1; }

cc=${CC:-cc}
"$cc" --version 2>/dev/null | grep -qiE 'gcc|free software foundation' ||
	die "needs GCC (meson's b_pgo with clang wants llvm-profdata by hand); CC is $cc"
command -v meson >/dev/null || die "meson is not installed (scripts/setup.sh installs it)"

# -Wno-missing-profile: code the training never runs (record, diff, ...)
# has no profile, which is expected, not worth a warning (or an error
# under -Dwerror=true)
if [ -f "$BUILD/build.ninja" ]; then
	meson configure "$BUILD" -Db_pgo=generate "$@" >/dev/null
else
	meson setup "$BUILD" "$SRC" -Db_pgo=generate -Dc_args=-Wno-missing-profile -Dcpp_args=-Wno-missing-profile \
		-Doptimization=3 "$@" >/dev/null
fi
find "$BUILD" -name '*.gcda' -delete
say "1/3 building instrumented ptflame in $BUILD"
ninja -C "$BUILD" cmd/ptflame record/libptflame_qemu.so tests/e2e/decode/dc_ptenc_bench >/dev/null

train=$BUILD/pgo-train
rm -rf "$train" && mkdir -p "$train"
ptflame=$BUILD/cmd/ptflame
small=${PGO_TRAIN:-}
say "2/3 training${small:+ (small)}"
# (the trace's code is the generator's own text: a copy of it stays with the
# recording, as bench/bench_lib.sh keeps it)
cp "$BUILD/tests/e2e/decode/dc_ptenc_bench" "$train/ptenc_bench"
"$train/ptenc_bench" -s "$([ "$small" = small ] && echo 1 || echo 4)" \
	-o "$train/b.bin" -p "$train/synthetic.data" >/dev/null
rm -f "$train/b.bin"
if command -v qemu-x86_64 >/dev/null && [ -x /usr/bin/python3 ]; then
	n=$([ "$small" = small ] && echo 150 || echo 800)
	cat >"$train/w.py" <<EOF
import json, re, collections
d = [{"k": i, "v": str(i) * 3, "t": [i, i * 2]} for i in range($n)]
back = json.loads(json.dumps(d))
c = collections.Counter(len(m) for m in re.findall(r"\d+", json.dumps(back)))
print(len(back), sorted(c.items())[:3], sum(x["k"] for x in sorted(back, key=lambda x: x["v"])))
EOF
	"$ptflame" record --emulate=qemu --start '' -q -o "$train/python3.data" -- \
		/usr/bin/python3 "$train/w.py" >/dev/null
else
	say "warning: no qemu-x86_64 or /usr/bin/python3: training on the synthetic trace only"
fi
for data in "$train"/*.data; do
	for j in 1 2; do
		"$ptflame" report -q -j "$j" -i "$data" -o /dev/null ||
			die "training run failed: report -j $j -i $data"
	done
done

say "3/3 building ptflame with the profile"
meson configure "$BUILD" -Db_pgo=use >/dev/null
ninja -C "$BUILD" cmd/ptflame record/libptflame_qemu.so >/dev/null
say "done: $BUILD/cmd/ptflame"
