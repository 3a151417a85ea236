#!/bin/bash
# skylake-echo.intel_pt.data: a real Skylake user+kernel recording of
# `echo` whose binaries (and kernel) are not available. Nothing in it was
# lost (no OVF, no truncated AUX): code that cannot be decoded is
# "[unknown] (path)" (missing user binary; what it did after is "[lost]"
# under it, counted apart from lost data) or "[kernel]" (no kernel image),
# on the traced thread only; each missing file is named once.
. "$E2E_LIB"
R="$SRCDIR/../shared/realtraces"
D="$R/skylake-echo.intel_pt.data"
if [ ! -f "$D" ]; then echo "SKIP: $R/skylake-echo.intel_pt.data not found (real PT traces absent)"; exit 77; fi

"$PTFLAME" report -i "$D" --per-thread --plain >sky.folded 2>sky.err
rc=$?
[ $rc -eq 0 ] && pass "report exits 0" || fail "report: exit $rc: $(head -c 300 sky.err)"
# ([lost] only where decoding cannot follow the missing code: right under
# its [unknown] (path) frame, and the summary counts it apart)
bad=$(grep '\[lost\]' sky.folded | grep -vcE '\[unknown\] \([^)]*\);\[lost\]')
[ "$bad" -eq 0 ] && pass "[lost] only under [unknown] (path) frames" ||
	fail "[lost] elsewhere than under a missing binary's frame: $bad lines"
expect_grep ' 0 lost segments' sky.err "summary: 0 lost segments"
expect_grep '^ptflame report: [0-9]+ stretch(es)? in code that cannot be decoded' sky.err \
	"summary: the undecodable code counted apart"
expect_grep '^echo-3174;\[unknown\] \(/lib64/ld-2\.23\.so\)( |;)' sky.folded "missing ld.so code is [unknown] (path) on echo's stack"
expect_grep '^echo-3174;\[kernel\] ' sky.folded "kernel code without an image is [kernel]"
# only the traced task owns PT data: the threads a CPU-wide switch record
# names (kworkers, an unrelated process) get none of it
others=$(cut -d';' -f1 sky.folded | sort -u | grep -vc '^echo-3174$')
[ "$others" -eq 0 ] && pass "only echo-3174 has time" ||
	fail "$others other threads have time: $(cut -d';' -f1 sky.folded | sort -u | tr '\n' ' ')"
# each missing file named once
dups=$(grep 'cannot find' sky.err | sort | uniq -d | wc -l)
n=$(grep -c 'cannot find' sky.err)
[ "$dups" -eq 0 ] && [ "$n" -ge 1 ] && pass "$n missing files, each named once" ||
	fail "missing-file warnings: $n, $dups repeated"
# the thread's stacks sum to its traced time (the summary's, in ms)
sum=$(awk '{s += $NF} END {print s}' sky.folded)
traced=$(sed -n 's/.*traced \([0-9.]*\) ms.*/\1/p' sky.err)
if awk -v s="$sum" -v t="$traced" 'BEGIN {d = s / 1e6 - t; exit !(d < 0.001 && d > -0.001 && t > 1)}'; then
	pass "stacks sum to the traced time ($sum ns, $traced ms)"
else fail "stacks sum $sum ns, traced $traced ms"; fi

# the pipe-mode recording (perf record -o -: attrs and features as records
# in the stream). A separate run of the same command (another pid), so the
# same checks, not the same numbers.
P="$R/skylake-echo.intel_pt.piped.data"
"$PTFLAME" report -i "$P" --per-thread --plain >pipe.folded 2>pipe.err
rc=$?
[ $rc -eq 0 ] && pass "pipe mode: report exits 0" || fail "pipe mode: exit $rc: $(head -c 300 pipe.err)"
expect_grep ' 0 lost segments' pipe.err "pipe mode: 0 lost segments"
expect_grep '^echo-[0-9]+;\[unknown\] \(/lib64/ld-2\.23\.so\)( |;)' pipe.folded "pipe mode: ld.so code is [unknown] (path)"
expect_grep '^echo-[0-9]+;\[kernel\] ' pipe.folded "pipe mode: [kernel]"
n=$(cut -d';' -f1 pipe.folded | sort -u | wc -l)
[ "$n" -eq 1 ] && pass "pipe mode: one thread" || fail "pipe mode: $n threads"
# --timeline agrees with the folded stacks: each thread's outermost calls
# cover its folded time, and none runs past the recording's end (the
# thread's EXIT: the kernel's exit path switches it after, as here)
tl_agrees() {  # DATA LABEL
	"$PTFLAME" report -q -i "$1" --timeline tl.json -o tl.folded 2>tl.err ||
		{ fail "$2: report --timeline: $(head -c 300 tl.err)"; return; }
	"$PTFLAME" report -i "$1" -o /dev/null 2>tl.sum
	local end
	end=$(sed -n 's/.* in [0-9.]*,\([0-9.]*\),.*/\1/p' tl.sum)
	python3 - tl.json tl.folded "$end" "$2" <<'PY' && pass "$2: timeline = folded" || fail "$2: timeline and folded disagree"
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "X"]
folded = sum(int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[2]) if l.strip())
end_us = float(sys.argv[3]) * 1e6
ivs = sorted((e["ts"], e["ts"] + e["dur"]) for e in ev)
cover, hi = 0.0, None
for a, b in ivs:          # union of the intervals (one thread here)
    if hi is None or a > hi:
        cover += b - a; hi = b
    elif b > hi:
        cover += b - hi; hi = b
late = max(b for _, b in ivs) - end_us
ok = abs(cover * 1000 - folded) <= 0.5 * len(ivs) + 1 and late <= 0.001
print(f"{sys.argv[4]}: timeline covers {cover * 1000:.0f} ns, folded {folded} ns, "
      f"last end {late * 1000:.0f} ns after the recording's end", file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}
tl_agrees "$D" "file mode"
tl_agrees "$P" "pipe mode"
# with --time, the summary says what the window kept: the folded total
"$PTFLAME" report -i "$D" --time 641.2570,641.2575 -o win.folded 2>win.err
sum=$(awk '{s += $NF} END {print s}' win.folded)
said=$(sed -n 's/.*--time 641\.257000000,641\.257500000: the output holds \([0-9.]*\) µs of thread time$/\1/p' win.err)
if [ -n "$said" ] && awk -v s="$sum" -v t="$said" 'BEGIN {d = s / 1e3 - t; exit !(d < 0.001 && d > -0.001)}'
then pass "--time: the summary's kept time is the output's ($said µs)"
else fail "--time: summary says '${said:-nothing}' µs, the output has $sum ns: $(grep -v warning win.err)"; fi
finish
