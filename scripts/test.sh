#!/bin/bash
# Set up, build with -Werror, run every test, then the unit tests again under
# ASan+UBSan, then each fuzz target briefly. The last line is "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
./scripts/setup.sh || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }

passed=0 failed=0 skipped=0
# count BUILDDIR: add meson's Ok/Fail counts of the last run to the totals.
count() {
	local log=$1/meson-logs/testlog.txt ok fail skip
	[ -f "$log" ] || return 0
	ok=$(awk '/^Ok:/ {print $2}' "$log" | tail -n 1)
	fail=$(awk '/^(Fail|Unexpected Pass|Timeout):/ {n += $NF} END {print n + 0}' "$log")
	skip=$(awk '/^Skipped:/ {print $2}' "$log" | tail -n 1)
	passed=$((passed + ${ok:-0})); failed=$((failed + fail)); skipped=$((skipped + ${skip:-0}))
}
run() {  # run BUILDDIR SETUP-ARGS... -- TEST-ARGS...
	local dir=$1; shift
	local setup=() tests=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do setup+=("$1"); shift; done
	shift; tests=("$@")
	if [ -d "$dir" ]; then meson setup --reconfigure "$dir" "${setup[@]}" >/dev/null
	else meson setup "$dir" "${setup[@]}" >/dev/null; fi || { failed=$((failed + 1)); return; }
	if ! ninja -C "$dir"; then echo "build failed in $dir"; failed=$((failed + 1)); return; fi
	meson test -C "$dir" --print-errorlogs "${tests[@]}"
	count "$dir"
}

run build -Dwerror=true -- --num-processes 2
# UBSan only prints by default; make every report fail the test.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
run build-asan -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false -Db_lto=false -- --suite unit
# The libFuzzer targets (tests/fuzz, a clang build with ASan+UBSan), each
# FUZZ_SECONDS (45) long and counted as one test; scripts/fuzz.sh runs longer.
CC=clang CXX=clang++ run build-fuzz -Dfuzz=true -Db_lto=false -- --suite fuzz --num-processes 2

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
