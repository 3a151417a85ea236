#!/bin/bash
# issue 15.4d: inline frames from DWARF, report's default (--no-inline:
# none). testdata/emu_inline (-O2) has `scale`, a static function with a
# loop and a call in it, forced inline into main; recorded with the
# emulator at 3 ns per instruction.
#  - main;scale (inlined);work: every self time and call count under main
#    exactly as inline_expect.py derives them without ptflame (perf's own
#    instruction trace, binutils' addr2line -i, the truth log's calls)
#  - --no-inline: no inline frame; the default output with its inline
#    frames folded back is that output, line for line; the truth model
#    accepts it; --plain, --table, --svg and diff show the frames
#  - a copy of the program without DWARF: no inline frame of its own, no
#    error; perf script text (no inline frames in it): none either
. "$REPORT_DIR/common.sh"
if ! command -v perf >/dev/null || ! command -v addr2line >/dev/null || ! command -v objcopy >/dev/null; then
	echo "skip: needs perf, addr2line and objcopy"
	exit 77
fi
BIN="$TESTDATA/emu_inline"
record inl emu_inline --ns-per-insn 3 || exit 1
report inl.out -i inl.data || exit 1
report inl.noinl -i inl.data --no-inline || exit 1
if ! perf script -i inl.data --itrace=i1i -F ip,sym,symoff >inl.insns 2>inl.insns.err; then
	fail "perf script --itrace=i1i: $(head -c 300 inl.insns.err)"
elif python3 "$REPORT_DIR/inline_expect.py" check "$BIN" main 3 inl.insns inl.truth inl.out >inl.exp 2>&1; then
	pass "default: $(cat inl.exp)"
else
	fail "default: inline frames under main differ from perf+addr2line: $(head -c 600 inl.exp)"
fi
grep -q ';main:1,[^;]*;scale (inlined):[0-9]*,avg:[0-9]*;work:6,avg:[0-9]* ' inl.out &&
	pass "main;scale (inlined);work with work's 6 calls from the inlined loop" ||
	fail "no main;scale (inlined);work:6 line: $(grep main inl.out | head -c 400)"

# --no-inline
if grep -q '(inlined)' inl.noinl; then fail "--no-inline: an inline frame: $(grep -m1 '(inlined)' inl.noinl)"
else pass "--no-inline: no inline frame"; fi
python3 - "$REPORT_DIR" inl.out inl.noinl >inl.fold 2>&1 <<'PY'
import re, sys
sys.path.insert(0, sys.argv[1])
from truth_profile import parse_folded   # folds inline frames, adds calls
def stacks(path):
    out = {}
    for _, frames, val, _ in parse_folded(path):
        k = re.sub(r",avg:[0-9]+", ",avg", ";".join(frames))
        out[k] = out.get(k, 0) + val
    return out
a, b = stacks(sys.argv[2]), stacks(sys.argv[3])
bad = [k for k in set(a) | set(b) if a.get(k) != b.get(k)]
print("\n".join("%s: %s vs %s" % (k, a.get(k), b.get(k)) for k in sorted(bad)[:5]))
sys.exit(1 if bad else 0)
PY
[ $? -eq 0 ] && pass "default with inline frames folded back (calls added) = --no-inline ($(wc -l <inl.noinl) stacks)" ||
	fail "default folded back differs from --no-inline: $(head -c 400 inl.fold)"
if $TP compare inl.truth inl.noinl >inl.cmp 2>&1; then pass "--no-inline against the truth: $(tail -1 inl.cmp)"
else fail "--no-inline against the truth: $(head -c 400 inl.cmp)"; fi

# other outputs
report inl.plain -i inl.data --plain || true
grep -q '^\(.*;\)\?main;scale (inlined);work [0-9]*$' inl.plain && pass "--plain: main;scale (inlined);work" ||
	fail "--plain: no main;scale (inlined);work line"
"$PTFLAME" report -q -i inl.data --table --raw >inl.tab 2>&1 && grep -q 'scale (inlined)' inl.tab &&
	! "$PTFLAME" report -q -i inl.data --table --raw --no-inline 2>&1 | grep -q '(inlined)' &&
	pass "--table: a row for scale (inlined), none with --no-inline" || fail "--table: $(head -c 300 inl.tab)"
"$PTFLAME" report -q -i inl.data --svg inl.svg >/dev/null 2>&1 && grep -q 'scale (inlined)' inl.svg &&
	pass "--svg: a frame scale (inlined)" || fail "--svg: no scale (inlined) frame"
# (diff matches an inlined function as the function itself: its frame is
# scale, unlabelled, so that a build that stopped inlining it compares)
"$PTFLAME" diff inl.data inl.data >inl.diff 2>&1 && grep -q '^\(.*;\)\?main;scale;work [0-9]* [0-9]*$' inl.diff &&
	! grep -q '(inlined)' inl.diff &&
	"$PTFLAME" diff --no-inline inl.data inl.data >inl.diff2 2>&1 && ! grep -q 'main;scale' inl.diff2 &&
	pass "diff: the inline frame as main;scale;work, none with --no-inline" || fail "diff: $(head -c 300 inl.diff)"

# no DWARF: no inline frames of the program, no error
mkdir -p nodw && objcopy --strip-debug "$BIN" nodw/emu_inline && chmod +x nodw/emu_inline
if "$PTFLAME" record --emulate -q --ns-per-insn 3 -o nodw.data -- ./nodw/emu_inline >nodw.rec 2>&1; then
	report nodw.out -i nodw.data || true
	if grep -q 'scale (inlined)' nodw.out; then fail "no DWARF: an inline frame scale"
	elif grep -q ';main:1,avg:[0-9]*;work:8,avg:[0-9]* ' nodw.out && ! grep -qi 'error\|warn' nodw.out.err; then
		pass "no DWARF: main;work:8, no inline frame, no message"
	else fail "no DWARF: $(grep main nodw.out | head -c 300) $(head -c 200 nodw.out.err)"; fi
else
	fail "record the copy without DWARF: $(head -c 300 nodw.rec)"
fi

# perf script text carries no inline frames: report shows none
if perf script -i inl.data --itrace=cr --ns >inl.cr.txt 2>inl.cr.err; then
	report inl.txt.out -i inl.cr.txt || true
	if grep -q '(inlined)' inl.txt.out; then fail "perf script text: an inline frame"
	elif grep -q ';main:1,avg:[0-9]*;work:8,avg:[0-9]* ' inl.txt.out; then pass "perf script text: no inline frame"
	else fail "perf script text: $(grep main inl.txt.out | head -c 300)"; fi
else
	fail "perf script --itrace=cr: $(head -c 300 inl.cr.err)"
fi
# the timeline (issue 14) has inline frames as calls too: as many events
# as their calls in the folded output, nested in main and around work
if "$PTFLAME" report -q -i inl.data --timeline inl.json 2>inl.json.err &&
	python3 "$REPORT_DIR/timeline_check.py" check inl.json >inl.json.chk 2>&1; then
	ev=$(grep -o '"name":"scale (inlined)"' inl.json | wc -l)
	calls=$(grep -o ';scale (inlined):[0-9]*' inl.out | head -n 1 | sed 's/.*://')
	if [ "$ev" -gt 0 ] && [ "$ev" = "$calls" ]; then
		pass "timeline: $ev scale (inlined) events, nested ($(cat inl.json.chk))"
	else
		fail "timeline: $ev scale (inlined) events, folded says ${calls:-none}"
	fi
else
	fail "timeline with inline frames: $(cat inl.json.err inl.json.chk 2>/dev/null | tail -2)"
fi
finish
