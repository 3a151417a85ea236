#!/bin/bash
# Fuzz ptflame's input readers for longer than CI does (tests/fuzz/):
#   scripts/fuzz.sh [-B BUILDDIR] [-j] [-r RUNS] [SECONDS [TARGET...]]
# Builds BUILDDIR (default build-fuzz) with clang and -Dfuzz=true, then runs
# each TARGET (default: perfdata report script folded ptquery) for SECONDS (default
# 600) or until it has run RUNS inputs (-r, e.g. 10000000), whichever comes
# first, one after another, or all at once with -j. The corpus grows in
# BUILDDIR/tests/fuzz/corpus/TARGET from run to run; an input that crashes,
# hangs (FUZZ_TIMEOUT s, default 30) or takes FUZZ_RSS_MB (default 2048) is
# saved in BUILDDIR/tests/fuzz/artifacts/TARGET/. Exit 0: none did.
# On a shared machine: nice -n 19 scripts/fuzz.sh -r 10000000 3600 perfdata
set -u
cd "$(dirname "$0")/.."
dir=build-fuzz parallel=
while [ $# -gt 0 ]; do
	case $1 in
	-B) dir=$2; shift 2 ;;
	-j) parallel=1; shift ;;
	-r) case ${2:-} in
		''|*[!0-9]*|0) echo "fuzz.sh: -r RUNS must be a positive number, not '${2:-}'" >&2; exit 2 ;;
		esac
		export FUZZ_RUNS=$2; shift 2 ;;
	-h|--help) sed -n '2,12s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*) echo "fuzz.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	*) break ;;
	esac
done
secs=${1:-600}
[ $# -gt 0 ] && shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(perfdata report script folded ptquery)
case $secs in
''|*[!0-9]*|0) echo "fuzz.sh: SECONDS must be a positive number, not '$secs'" >&2; exit 2 ;;
esac
command -v clang >/dev/null ||
	{ echo "fuzz.sh: clang is missing: run scripts/setup.sh (it installs clang and libclang-rt-14-dev)" >&2; exit 2; }
if [ ! -d "$dir" ]; then
	CC=clang CXX=clang++ meson setup "$dir" -Dfuzz=true -Db_lto=false >/dev/null || exit 1
elif ! meson configure "$dir" | grep -qE '^ *fuzz +true'; then
	echo "fuzz.sh: $dir is not a -Dfuzz=true build (use -B DIR)" >&2; exit 2
fi
ninja -C "$dir" >/dev/null || { echo "fuzz.sh: build failed in $dir (ninja -C $dir)" >&2; exit 1; }
for t in "${targets[@]}"; do
	[ -x "$dir/tests/fuzz/fuzz_$t" ] ||
		{ echo "fuzz.sh: no target '$t' (perfdata, report, script, folded, ptquery)" >&2; exit 2; }
done
export PTFLAME=$PWD/$dir/cmd/ptflame TESTDATA=$PWD/$dir/testdata SRCDIR=$PWD \
	FUZZ_DIR=$PWD/$dir/tests/fuzz FUZZ_SECONDS=$secs
rc=0 pids=()
for t in "${targets[@]}"; do
	if [ -n "$parallel" ]; then
		tests/fuzz/run.sh "$t" "$FUZZ_DIR/fuzz_$t" & pids+=($!)
	else
		tests/fuzz/run.sh "$t" "$FUZZ_DIR/fuzz_$t" || rc=1
	fi
done
for p in "${pids[@]}"; do wait "$p" || rc=1; done
exit $rc
