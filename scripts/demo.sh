#!/bin/bash
# Set up, build, and run the demo: record a testdata program with the
# emulator, report it, draw a flame graph.
set -eu
cd "$(dirname "$0")/.."
./scripts/setup.sh
[ -d build ] || meson setup build >/dev/null
ninja -C build
echo "demo: record/report are not built yet; see README" >&2
exit 1
