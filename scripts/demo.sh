#!/bin/bash
# The demo: set up, build, record a small two-thread program with the PT
# emulator (no Intel PT hardware needed), rebuild its stacks in wall-clock
# time and draw a flame graph.
# DEMO_BUILD=DIR: use that build as it is (no setup, no build; the e2e test
# e2e-cli-demo runs the demo so). DEMO_OUT=DIR: where its files go.
set -eu
cd "$(dirname "$0")/.."
build=${DEMO_BUILD:-}
if [ -z "$build" ]; then
	build=build
	./scripts/setup.sh
	[ -f build/build.ninja ] || meson setup build >/dev/null
	ninja -C build >/dev/null
fi

out=${DEMO_OUT:-/tmp/ptflame-demo}
mkdir -p "$out"
ptflame=$build/cmd/ptflame

echo "== record: testdata/emu_demo.c (nested calls, a sleep, a mutex wait between two threads)"
"$ptflame" record --emulate -o "$out/perf.data" --truth "$out/truth.log" -- "$build/testdata/emu_demo"
echo
echo "== report: folded stacks and an SVG flame graph"
"$ptflame" report -i "$out/perf.data" -o "$out/demo.folded" --svg "$out/demo.svg"
echo
echo "== the heaviest stacks (self time, ns):"
# (by the count, the line's last field: frame names may hold blanks, such
# as "futex_wait (inlined)", so it is not the second)
awk '{ print $NF "\t" $0 }' "$out/demo.folded" | sort -t"$(printf '\t')" -k1,1nr |
	cut -f2- | head -n 8 | sed 's/^/  /'
echo
echo "== per-function latencies:"
"$ptflame" report -q -i "$out/perf.data" --table --top 10
echo
echo "folded stacks: $out/demo.folded   (flamegraph.pl input)"
echo "flame graph:   $out/demo.svg"
echo "recording:     $out/perf.data     (also: perf script --itrace=cr -i $out/perf.data)"
