#!/bin/bash
# issue 14.3: distributions where the frames are. For recordings of
# slow_kth, emu_threads (1 CPU, preemption) and emu_except: every SVG frame
# that holds all of a function's calls has in its tooltip the calls, avg,
# p50/p90/p99/max of the text table's row for that function and a drawn
# log2 histogram from its min to its max; --table --format csv and json
# parse and equal the --raw text table row for row (also --by-stack and
# --top, and --srcline's source column) (distrib_check.py).
. "$REPORT_DIR/common.sh"
DC="python3 $REPORT_DIR/distrib_check.py"
run() {  # NAME [report options]
	local n=$1; shift
	"$PTFLAME" report -q -i "$n.data" --svg "$n.svg" --minwidth 0 --table "$@" >"$n.tab" &&
		"$PTFLAME" report -q -i "$n.data" --table --raw "$@" >"$n.raw" &&
		"$PTFLAME" report -q -i "$n.data" --table --format csv "$@" >"$n.csv" &&
		"$PTFLAME" report -q -i "$n.data" --table --format json "$@" >"$n.json" ||
		{ fail "$n $*: report failed"; return; }
	if $DC "$n.svg" "$n.tab" "$n.raw" "$n.csv" "$n.json" >"$n.cmp" 2>&1; then
		pass "$n $*: $(cat "$n.cmp")"
	else
		fail "$n $*: $(cat "$n.cmp")"
	fi
}
"$PTFLAME" record --emulate -q -o slow.data -- "$TESTDATA/slow_kth" 5 10 >/dev/null 2>&1 &&
	run slow
record thr emu_threads --cpus 1 --time-slice 150 && run thr && run thr --top 5 --sort p99
record exc emu_except && run exc
# by call path (no SVG comparison: rows are paths), and the source column
if [ -s exc.data ]; then
	"$PTFLAME" report -q -i exc.data --table --by-stack --raw >bs.raw
	"$PTFLAME" report -q -i exc.data --table --by-stack --format csv >bs.csv
	python3 - bs.raw bs.csv <<'PY' && pass "--by-stack --format csv: the rows of the text table" || fail "--by-stack csv"
import csv, sys
raw = [l.rstrip("\n") for l in open(sys.argv[1]) if l.strip() and not l.lstrip().startswith(("Calls", "="))]
rows = list(csv.DictReader(open(sys.argv[2], newline="")))
assert len(raw) == len(rows), (len(raw), len(rows))
for l, r in zip(raw, rows):
    f = l.split(None, 9)
    assert f[9] == r["function"], (f[9], r["function"])
    assert [None if v == "-" else int(v) for v in f[:9]] == \
        [None if r[c] == "" else int(r[c]) for c in ("calls", "inferred", "total_ns", "self_ns",
         "avg_ns", "p50_ns", "p90_ns", "p99_ns", "max_ns")], l
PY
	"$PTFLAME" report -q -i exc.data --table --srcline --format json >src.json
	python3 -c '
import json, sys
rows = json.load(open("src.json"))["rows"]
src = [r["source"] for r in rows if r["source"]]
assert any(s.startswith("emu_except.cpp:") for s in src), src[:5]
' && pass "--srcline --format json: a source per row" || fail "--srcline json"
fi
expect_rc 2 "--format without --table" -- "$PTFLAME" report -q -i thr.data --format csv
expect_rc 2 "--format xml" -- "$PTFLAME" report -q -i thr.data --table --format xml
expect_lines 1 "$T/err" "--format xml: one line"
finish
