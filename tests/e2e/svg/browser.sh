#!/bin/bash
# The SVG flame graph in a real browser (headless Chromium, driven by
# browser.py through chromedriver): labels fit, legend and colours, click to
# zoom, search with highlight and matched share, resets. Screenshots are kept
# in $BUILDDIR/meson-logs/svg-browser/. Skips (77) without Chromium.
. "$E2E_LIB"
BROWSER_PY=$1
# Debian's python3-selenium is for Debian's python3, which may not be first
# on PATH.
PY=
for p in python3 /usr/bin/python3; do
	if command -v "$p" >/dev/null && "$p" -c 'import selenium' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || { echo "SKIP: python3-selenium is not installed (scripts/setup.sh installs it)"; exit 77; }
command -v chromium >/dev/null || { echo "SKIP: chromium is not installed (scripts/setup.sh installs it)"; exit 77; }

"$PTFLAME" record --emulate -q -o demo.data -- "$TESTDATA/emu_demo" 2>err ||
	{ fail "record --emulate emu_demo: $(head -c 300 err)"; finish; }
"$PTFLAME" report -q -i demo.data --svg demo.svg --minwidth 0 -o demo.folded 2>err ||
	{ fail "report --svg: $(head -c 300 err)"; finish; }
"$PY" "$BROWSER_PY" demo.svg demo.folded "$BUILDDIR/meson-logs/svg-browser"
rc=$?
[ "$rc" -eq 77 ] && exit 77
[ "$rc" -eq 0 ] || fail "the SVG in Chromium (screenshots in $BUILDDIR/meson-logs/svg-browser)"
finish
