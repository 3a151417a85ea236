#!/bin/bash
# report --svg and diff --svg from the command line: the SVG's options
# (--title, --width, --minwidth, --inverted), frame values against the folded
# stacks drawn, the differential graph's colours against diff's 3 columns
# (check_svg.py), and one-line errors for bad option values.
. "$E2E_LIB"
CHECK_SVG=$1
EW="$TESTDATA/extra_work"

for r in "a 0 a" "b 40 b"; do
	set -- $r
	"$PTFLAME" record --emulate -q --ns-per-insn 100 -o "$1.data" -- "$EW" "$2" "$3" \
		>/dev/null 2>err || { fail "record --emulate extra_work $2: $(head -c 300 err)"; finish; }
done

# report --svg with every option; the folded output of the same run
if "$PTFLAME" report -q -i a.data --svg a.svg --minwidth 0 --title 'run <a> & "b"' \
	--width 900 -o a.folded 2>err; then
	python3 "$CHECK_SVG" a.svg a.folded --minwidth 0 --width 900 --title 'run <a> & "b"' ||
		fail "report --svg --title --width: the SVG (above)"
else
	fail "report --svg: $(head -c 300 err)"
fi
"$PTFLAME" report -q -i a.data --svg inv.svg --minwidth 0 --inverted -o a2.folded 2>err ||
	fail "report --svg --inverted: $(head -c 300 err)"
python3 "$CHECK_SVG" inv.svg a2.folded --minwidth 0 --inverted || fail "report --svg --inverted: the SVG (above)"
grep -q '>Icicle Graph<' inv.svg 2>/dev/null || grep -q 'ptflame: wall-clock' inv.svg ||
	fail "--inverted: no title"
# report --wakers --svg: "[woken by ..]" frames and the wakers' stacks above
# them in colours of their own, named in the legend (check_svg.py)
if "$PTFLAME" record --emulate -q -o w.data -- "$TESTDATA/wake_mutex" >/dev/null 2>err &&
	"$PTFLAME" report -q -i w.data --wakers --svg w.svg --minwidth 0 -o w.folded 2>err; then
	python3 "$CHECK_SVG" w.svg w.folded --minwidth 0 --want-kinds 'code,[off-cpu],[woken by,waker' ||
		fail "report --wakers --svg: the SVG (above)"
else
	fail "report --wakers --svg: $(head -c 300 err)"
fi
# report --svg without -o: the SVG only, no folded stacks on stdout (issue 15.3);
# with --table the table that was asked for
if "$PTFLAME" report -q -i a.data --svg only.svg >only.out 2>err; then
	if [ -s only.out ]; then fail "report --svg without -o also printed $(wc -l <only.out) lines"
	elif ! grep -q '<g class="f"' only.svg; then fail "report --svg without -o: no frames in the SVG"
	else pass "report --svg without -o: only the SVG"; fi
else
	fail "report --svg without -o: $(head -c 300 err)"
fi
"$PTFLAME" report -q -i a.data --svg only.svg --table >tab.out 2>err ||
	fail "report --svg --table: $(head -c 300 err)"
grep -q 'extra_work\|main' tab.out || fail "report --svg --table: no table on stdout"
# --minwidth drops narrow frames
"$PTFLAME" report -q -i a.data --svg wide.svg --minwidth 50 -o /dev/null 2>err ||
	fail "report --minwidth 50: $(head -c 300 err)"
n0=$(grep -c '<g class="f"' a.svg) n50=$(grep -c '<g class="f"' wide.svg)
if [ "$n50" -lt "$n0" ] && [ "$n50" -gt 1 ]; then pass "--minwidth 50 keeps $n50 of $n0 frames"
else fail "--minwidth 50 keeps $n50 of $n0 frames"; fi

# diff --svg: only the SVG without -o; with -o the text too
if "$PTFLAME" diff --svg d.svg a.data b.data >d.out 2>err; then
	[ -s d.out ] && fail "diff --svg without -o also printed the 3 columns"
	"$PTFLAME" diff a.data b.data >d.txt
	python3 "$CHECK_SVG" d.svg d.txt --diff || fail "diff --svg: the SVG (above)"
	grep -q 'Differential Flame Graph' d.svg || fail "diff --svg: no title"
else
	fail "diff --svg: $(head -c 300 err)"
fi
"$PTFLAME" diff --svg d2.svg -o d2.txt a.data b.data 2>err || fail "diff --svg -o: $(head -c 300 err)"
cmp -s d2.txt d.txt && pass "diff --svg -o FILE writes the 3 columns too" ||
	fail "diff --svg -o: the 3 columns differ from diff's"

# bad values: one line naming the option, exit 2, nothing written
one_line() { # DESC WORD CMD...
	local desc=$1 word=$2; shift 2
	"$@" >out 2>err; local rc=$?
	if [ "$rc" -eq 2 ] && [ "$(wc -l <err)" -eq 1 ] && grep -q -- "$word" err && [ ! -e x.svg ]; then
		pass "$desc: $(cat err)"
	else
		fail "$desc: exit $rc, stderr: $(head -c 300 err)"
	fi
}
one_line "--width 10" "--width" "$PTFLAME" report -i a.data --svg x.svg --width 10
one_line "--width abc" "--width" "$PTFLAME" report -i a.data --svg x.svg --width abc
one_line "--minwidth -1" "--minwidth" "$PTFLAME" report -i a.data --svg x.svg --minwidth -1
one_line "diff --svg with --table" "--table" "$PTFLAME" diff --svg x.svg --table a.data b.data
finish
