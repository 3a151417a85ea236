#!/bin/bash
# issue 16 (reading): report --wakers[=N] on a real recording (emu_threads:
# two workers contend for a mutex on 1 CPU). Whatever the file holds:
#  - the blocked time only moves below [off-cpu] (and a new thread's wait
#    for its first run below its [preempted]): cutting every line at its
#    "[woken by ...]" frame gives the plain report exactly (same stacks,
#    same times, per thread), for N = 1 and 3;
#  - --table --wakers: its waits and blocked time are all the [off-cpu]
#    calls and time of the plain report, and the new threads' first waits
#    (a [preempted] on a [kernel] at a thread's root) are its [preempted]
#    rows;
#  - the same output at -j 1 and -j 4;
#  - a file without wake records says so once and shows plain [off-cpu];
#    one with them shows [woken by COMM-TID] frames;
#  - bad uses are one line and exit 2.
. "$REPORT_DIR/common.sh"
expect_same() { if cmp -s "$1" "$2"; then pass "$3"; else fail "$3: $1 and $2 differ: $(diff "$1" "$2" | head -4 | tr '\n' '|')"; fi; }
expect_nogrep() { if grep -qE -- "$1" "$2"; then fail "$3: /$1/ in $2: $(grep -m2 -E -- "$1" "$2")"; else pass "$3"; fi; }
expect_eq() { if [ "$1" = "$2" ]; then pass "$3 ($1)"; else fail "$3: '$1' != '$2'"; fi; }

# cut_wakers IN OUT: every line cut at its first "[woken by" frame, summed
cut_wakers() {
	python3 - "$1" "$2" <<'EOF'
import sys
acc = {}
for line in open(sys.argv[1]):
    stack, val = line.rstrip("\n").rsplit(" ", 1)
    frames = stack.split(";")
    for i, f in enumerate(frames):
        if f.startswith("[woken by ") and i and frames[i - 1] in ("[off-cpu]", "[preempted]"):
            frames = frames[:i]
            break
    key = ";".join(frames)
    acc[key] = acc.get(key, 0) + int(val)
with open(sys.argv[2], "w") as out:
    for k in sorted(acc):
        if acc[k]:
            out.write("%s %d\n" % (k, acc[k]))
EOF
}
# sorted, summed, zero lines dropped (the plain report as cut_wakers writes)
norm() { awk '{v = $NF; $NF = ""; sub(/ $/, ""); s[$0] += v} END {for (k in s) if (s[k]) print k, s[k]}' "$1" | LC_ALL=C sort >"$2"; }

"$PTFLAME" record --emulate -q -o thr.data --truth thr.truth --cpus 1 --time-slice 150 \
	-- "$TESTDATA/emu_threads" >thr.rec 2>&1 || { fail "record: $(head -c 300 thr.rec)"; finish; }
if "$PTFLAME" dump --header-only thr.data | grep -q '(wakes)'; then has_wakes=1; else has_wakes=0; fi

report plain.folded -i thr.data --plain --per-thread
norm plain.folded plain.norm
for n in 1 3; do
	report w$n.folded -i thr.data --plain --per-thread --wakers=$n
	cut_wakers w$n.folded w$n.cut
	LC_ALL=C sort w$n.cut -o w$n.cut
	if cmp -s plain.norm w$n.cut; then
		pass "--wakers=$n: cut at [woken by], the plain report ($(wc -l <plain.norm) stacks)"
	else
		fail "--wakers=$n: cut at [woken by] differs from the plain report: $(diff plain.norm w$n.cut | head -4 | tr '\n' '|')"
	fi
done

# the note tells a file without the wake event from one where none came
"$PTFLAME" record --emulate -q -o nw.data --no-wakers -- "$TESTDATA/emu_nested" &&
	"$PTFLAME" record --emulate -q -o zw.data -- "$TESTDATA/emu_nested" ||
	fail "recording emu_nested failed"
"$PTFLAME" report -q -i nw.data --wakers >/dev/null 2>nw.err
expect_grep 'no wake records in this file: .*-e sched:sched_waking' nw.err "--no-wakers file: how to get wakes"
"$PTFLAME" report -q -i zw.data --wakers >/dev/null 2>zw.err
expect_grep 'zw.data records wakes \(sched:sched_waking\), but none came in it' zw.err \
	"a file with the wake event and no wake: says so, no advice to record them"

# --wakers alone is --wakers=1; the note is said once, or wakes show
"$PTFLAME" report -i thr.data --plain --per-thread --wakers >w.folded 2>w.err
expect_same w1.folded w.folded "--wakers is --wakers=1"
if [ $has_wakes = 0 ]; then
	expect_lines 1 <(grep 'no wake records in this file: showing plain \[off-cpu\]' w.err) \
		"no wake records: said once"
	expect_nogrep '\[woken by' w.folded "no wake records: plain [off-cpu]"
else
	expect_nogrep 'no wake records' w.err "wake records: no note"
	expect_grep ';\[off-cpu\];\[woken by [^;]*-[0-9]+\]' w.folded "wake records: [woken by COMM-TID] frames"
	expect_grep '^ptflame report: --wakers: [1-9][0-9]* of [0-9]+ waits \(\[off-cpu\]\) ended by a wake record$' \
		w.err "wake records: the summary says how many waits had one"
fi
"$PTFLAME" report -q -i thr.data --plain >/dev/null 2>nw.err
expect_nogrep 'wake' nw.err "without --wakers: nothing said of wakes"

# the table: every [off-cpu] call and its time, once
report ann.folded -i thr.data
"$PTFLAME" report -q -i thr.data --table --wakers --format csv >t.csv 2>t.err ||
	fail "--table --wakers --format csv: $(head -c 300 t.err)"
waits=$(awk -F, 'NR > 1 && $1 != "[preempted]" {s += $(NF - 4)} END {print s + 0}' t.csv)
total=$(awk -F, 'NR > 1 && $1 != "[preempted]" {s += $(NF - 3)} END {print s + 0}' t.csv)
off_calls=$(awk '{l = $0; sub(/ [0-9]+$/, "", l); n = split(l, f, ";"); if (f[n] ~ /^\[off-cpu\]:/) {c = f[n]; sub(/^\[off-cpu\]:/, "", c); sub(/[(,].*/, "", c); s += c}} END {print s + 0}' ann.folded)
off_ns=$(grep '\[off-cpu\]' plain.folded | awk '{s += $NF} END {print s + 0}')
expect_eq "$waits" "$off_calls" "--table --wakers: the waits are the [off-cpu] calls"
expect_eq "$total" "$off_ns" "--table --wakers: the blocked time is the [off-cpu] time"
# (the new threads' first waits: [preempted] on a [kernel] at the root)
bwaits=$(awk -F, 'NR > 1 && $1 == "[preempted]" {s += $(NF - 4)} END {print s + 0}' t.csv)
btotal=$(awk -F, 'NR > 1 && $1 == "[preempted]" {s += $(NF - 3)} END {print s + 0}' t.csv)
born_calls=$(awk '{l = $0; sub(/ [0-9]+$/, "", l); n = split(l, f, ";"); if (n == 2 && f[1] ~ /^\[kernel\]:/ && f[2] ~ /^\[preempted\]:/) {c = f[2]; sub(/^\[preempted\]:/, "", c); sub(/[(,].*/, "", c); s += c}} END {print s + 0}' ann.folded)
born_ns=$(grep -E '^[^;]+;\[kernel\];\[preempted\] ' plain.folded | awk '{s += $NF} END {print s + 0}')
expect_eq "$bwaits $btotal" "$born_calls $born_ns" "--table --wakers: its [preempted] rows are the new threads' first waits"
expect_eq "$(grep -c ' clone ' thr.truth)" "$born_calls" "one first wait per thread the recording made"
expect_eq "$(head -1 t.csv)" "wait_site,waker_site,waits,total_ns,avg_ns,p50_ns,p99_ns" "csv header"
"$PTFLAME" report -q -i thr.data --table --wakers >t.txt 2>&1
expect_grep '^ +waits +total +avg +p50 +p99  Wait site -> waker site$' t.txt "text table header"
[ $has_wakes = 1 ] || expect_grep ' -> \[no wake record\]$' t.txt "without wake records: [no wake record] rows"
"$PTFLAME" report -q -i thr.data --table --wakers --format json >t.json 2>/dev/null
expect_rc 0 "--format json is JSON" -- python3 -c 'import json, sys; json.load(open(sys.argv[1]))' t.json

# -j does not change it
"$PTFLAME" report -q -i thr.data --plain --wakers=3 -j 1 >j1.folded 2>/dev/null
"$PTFLAME" report -q -i thr.data --plain --wakers=3 -j 4 >j4.folded 2>/dev/null
expect_same j1.folded j4.folded "--wakers=3: -j 1 and -j 4 the same"
# the SVG and the timeline take the new frames
expect_rc 0 "--wakers --svg" -- "$PTFLAME" report -q -i thr.data --wakers --svg w.svg
expect_rc 0 "--wakers --timeline" -- "$PTFLAME" report -q -i thr.data --wakers --timeline w.json
expect_rc 0 "--wakers timeline is JSON" -- python3 -c 'import json, sys; json.load(open(sys.argv[1]))' w.json
# every wake arrow goes forward in time, also under a --time window that
# ends inside a wait, before its wake: that span has no arrow
arrows_forward() {
	python3 - "$1" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
s = {e["id"]: e["ts"] for e in ev if e.get("ph") == "s"}
f = {e["id"]: e["ts"] for e in ev if e.get("ph") == "f"}
bad = [i for i in f if i not in s or s[i] > f[i]]
print("%d arrows, %d backwards or unpaired" % (len(f), len(bad)))
sys.exit(1 if bad or set(s) != set(f) else 0)
PY
}
arrows_forward w.json >arr.txt && pass "--wakers timeline: $(cat arr.txt)" || fail "--wakers timeline: $(cat arr.txt)"
win=$(python3 - w.json <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
t0 = min(e["ts"] for e in ev if "ts" in e)
for e in ev:
    a = e.get("args", {})
    if e.get("ph") == "X" and "wake ts" in a and a["wake ts"] - e["ts"] > 2:
        end = (e["ts"] + a["wake ts"]) / 2
        print("%.9f,%.9f" % (t0 / 1e6, end / 1e6))
        break
PY
)
if [ -n "$win" ]; then
	"$PTFLAME" report -q -i thr.data --wakers --time "$win" --timeline wt.json 2>wt.err &&
		arrows_forward wt.json >arrt.txt && pass "--wakers --time $win timeline: $(cat arrt.txt)" ||
		fail "--wakers --time $win timeline: $(cat arrt.txt wt.err)"
else
	fail "no woken wait in w.json to cut with --time"
fi

# diff: the new frames are frames (folded inputs), and --wakers of trace inputs
if "$PTFLAME" diff w1.folded w3.folded >d13.txt 2>d13.err; then
	expect_eq "$(awk '{a += $(NF - 1); b += $NF} END {print a + 0, b + 0}' d13.txt)" \
		"$(sum_col w1.folded) $(sum_col w3.folded)" "diff of --wakers=1 and =3 outputs: both totals"
else
	fail "diff of --wakers outputs: $(head -c 300 d13.err)"
fi
"$PTFLAME" diff --wakers thr.data thr.data >dd.txt 2>dd.err || fail "diff --wakers: $(head -c 300 dd.err)"
awk '{print $(NF - 1) == $NF ? "same" : "differs"}' dd.txt | sort -u >dd.same
expect_eq "$(cat dd.same)" "same" "diff --wakers of one recording: every stack the same"
expect_eq "$(awk '{s += $NF} END {print s + 0}' dd.txt)" "$(sum_col w1.folded)" \
	"diff --wakers: report --wakers's total"
[ $has_wakes = 0 ] || expect_grep '\[woken by ' dd.txt "diff --wakers: [woken by] stacks"

# bad uses: one line, exit 2
for bad in "--wakers=0" "--wakers=65" "--wakers=x" "--wakers= " "--table --wakers --by-stack" \
	"--table --wakers --srcline" "--table --wakers --sort self"; do
	# shellcheck disable=SC2086
	expect_rc 2 "$bad refused" -- "$PTFLAME" report -q -i thr.data $bad
	expect_lines 1 "$T/err" "$bad: one line"
done
finish
