#!/bin/bash
# Build ptflame with GCC's profile-guided optimization (meson's b_pgo) and
# -O3: once instrumented, then run on training recordings, then again with
# the profile those runs wrote. report -j 1 takes 11-29 % less time than
# with the default build (-O2, no profile; README, Performance); every
# output is the plain build's, byte for byte (tests/e2e/install/pgo.sh).
#
# The training recordings are not the benchmark's: Debian's python3 running
# a small JSON and regex script, recorded with record --emulate=qemu
# (skipped, with a warning, without qemu-x86_64), and a 4 MiB synthetic
# trace of bench/ptenc_bench.c's other loop (-r: a recursion 100 deep; the
# benchmark's synthetic inputs are its steady loop). Each is reported with
# -j 1 and -j 2, so that the decode-ahead workers are trained too.
#
# After a change to the sources, run the script again: GCC refuses a
# profile of other code (-Werror=coverage-mismatch), so a plain ninja in
# BUILDDIR then fails.
#
# usage: scripts/build-pgo.sh [BUILDDIR [MESON-SETUP-ARGS...]]
#   BUILDDIR: default build-pgo. MESON-SETUP-ARGS go to meson setup (or
#   configure, when BUILDDIR exists) after the script's own: a later
#   -Doptimization=2 keeps -O2; -Dc_args=/-Dcpp_args= are kept, with
#   -Wno-missing-profile added. The meson and ninja output is in
#   BUILDDIR/pgo.log.
#   PGO_TRAIN=small: a short training, and only ptflame and its qemu plugin
#   built with the profile (the test's); else everything is.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-build-pgo}
[ $# -gt 0 ] && shift
LOG=
say() { echo "build-pgo: $*" >&2; }
die() {
	say "$*"
	[ -n "$LOG" ] && [ -s "$LOG" ] && { tail -n 15 "$LOG" >&2; say "(all of it: $LOG)"; }
	exit 1
}
# run CMD...: its output to the log; on failure, say what failed
run() { "$@" >>"$LOG" 2>&1 || die "failed: $*"; }

cc=${CC:-cc}
"$cc" --version 2>/dev/null | grep -qiE 'gcc|free software foundation' ||
	die "needs GCC (meson's b_pgo with clang wants llvm-profdata by hand); CC is $cc"
command -v meson >/dev/null || die "meson is not installed (scripts/setup.sh installs it)"

# -Wno-missing-profile: code the training never runs (record, diff, tests)
# has no profile, which is expected, not worth a warning (or an error under
# -Dwerror=true); it is added to any c_args/cpp_args given
args=() c_args=-Wno-missing-profile cpp_args=-Wno-missing-profile
for a in "$@"; do
	case $a in
	-Dc_args=*) c_args="${a#-Dc_args=} -Wno-missing-profile" ;;
	-Dcpp_args=*) cpp_args="${a#-Dcpp_args=} -Wno-missing-profile" ;;
	*) args+=("$a") ;;
	esac
done
mkdir -p "$BUILD"
LOG=$(cd "$BUILD" && pwd)/pgo.log
: >"$LOG"
if [ -f "$BUILD/build.ninja" ]; then
	run meson configure "$BUILD" -Db_pgo=generate "-Dc_args=$c_args" "-Dcpp_args=$cpp_args" \
		"${args[@]}"
else
	run meson setup "$BUILD" "$SRC" -Db_pgo=generate -Doptimization=3 "-Dc_args=$c_args" \
		"-Dcpp_args=$cpp_args" "${args[@]}"
fi
find "$BUILD" -name '*.gcda' -delete
say "1/3 building instrumented ptflame in $BUILD"
run ninja -C "$BUILD" cmd/ptflame record/libptflame_qemu.so tests/e2e/decode/dc_ptenc_bench

train=$BUILD/pgo-train
rm -rf "$train" && mkdir -p "$train"
ptflame=$BUILD/cmd/ptflame
small=${PGO_TRAIN:-}
say "2/3 training${small:+ (small)}"
# (the trace's code is the generator's own text: a copy of it stays with the
# recording, as bench/bench_lib.sh keeps it)
cp "$BUILD/tests/e2e/decode/dc_ptenc_bench" "$train/ptenc_bench"
run "$train/ptenc_bench" -r -s "$([ "$small" = small ] && echo 1 || echo 4)" \
	-o "$train/b.bin" -p "$train/synthetic.data"
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
	run "$ptflame" record --emulate=qemu --start '' -q -o "$train/python3.data" -- \
		/usr/bin/python3 "$train/w.py"
else
	say "warning: no qemu-x86_64 or /usr/bin/python3: training on the synthetic trace only"
fi
for data in "$train"/*.data; do
	for j in 1 2; do
		run "$ptflame" report -q -j "$j" -i "$data" -o /dev/null
	done
done

say "3/3 building ${small:+ptflame }with the profile"
run meson configure "$BUILD" -Db_pgo=use
if [ "$small" = small ]; then
	run ninja -C "$BUILD" cmd/ptflame record/libptflame_qemu.so
else
	# (all of it, so that meson install, often run as root, builds nothing)
	run ninja -C "$BUILD"
fi
say "done: $BUILD/cmd/ptflame"
