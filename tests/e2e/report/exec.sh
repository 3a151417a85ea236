#!/bin/bash
# A thread's life split at exec: emu_forkexec forks, and the child execs
# the program again (/proc/self/exe: the kernel names it "exe"). With
# --follow-fork the child's code before the exec (the fork's return, execv)
# is the forking program's: report --per-thread gives it a root frame of
# its own, named by the comm it had then, and the exec'd program another;
# --comm keeps exactly the parts that had the name, as perf report filters
# each sample by the comm at its time. The COMM record of the exec carries
# PERF_RECORD_MISC_COMM_EXEC (dump: "exec"). diff --per-thread matches each
# part by its name; the timeline, under --comm, has the kept part's calls.
. "$REPORT_DIR/common.sh"
record fe emu_forkexec --follow-fork || finish
"$PTFLAME" dump fe.data >fe.dump 2>&1 || fail "dump: $(head -c 300 fe.dump)"
# the exec's COMM record: pid tid comm ... exec
read -r _ child _ new <<<"$(awk '$3 == "COMM" && / exec \|/ {
	for (i = 1; i <= NF; i++) { if ($i == "tid") t = $(i + 1); if ($i == "comm") c = $(i + 1) }
	print "x", t, "y", c; exit }' fe.dump)"
if [ -z "${child:-}" ]; then
	# (the qemu backend cannot follow an exec: the child's new program
	# runs untraced, and no COMM record says it)
	echo "skip: no exec COMM record (backend ${PTFLAME_EMULATE:-default} does not follow exec)"
	finish
fi
old=emu_forkexec
pass "the exec's COMM record is marked exec (tid $child: $new)"

report fe.pt -i fe.data --per-thread --plain || finish
roots() { cut -d';' -f1 "$1" | sort -u | tr '\n' ' '; }
# lines of root R containing frame F
has() { awk -F';' -v r="$2" -v f="$3" '$1 == r { for (i = 2; i <= NF; i++) { x = $i
	if (i == NF) sub(/ [0-9]+$/, "", x); if (x == f) { n++; break } } } END { exit !n }' "$1"; }
has fe.pt "$old-$child" execv && pass "the child's execv is under $old-$child" ||
	fail "no execv under $old-$child: roots $(roots fe.pt)"
has fe.pt "$new-$child" child_work && pass "the exec'd program's child_work is under $new-$child" ||
	fail "no child_work under $new-$child: roots $(roots fe.pt)"
for f in execv __fork getenv; do
	has fe.pt "$new-$child" $f && fail "$f (before the exec) under $new-$child"
done
has fe.pt "$old-$child" child_work && fail "child_work (after the exec) under $old-$child"
# both parts together are the thread's whole time
report fe.tid -i fe.data --tid "$child" || finish
a=$(awk -v t="-$child" 'index($0, ";") && substr($1, 1, index($1, ";") - 1) ~ (t "$") {s += $NF}
	END {printf "%d\n", s}' fe.pt)
b=$(sum_col fe.tid)
[ "$a" = "$b" ] && pass "the parts of tid $child add up to its --tid total ($a ns)" ||
	fail "the parts of tid $child: $a ns, --tid: $b ns"

# --comm: exactly the parts that had the name
report fe.new -i fe.data --per-thread --plain --comm "$new" || finish
[ "$(roots fe.new)" = "$new-$child " ] && pass "--comm $new: only the exec'd part ($new-$child)" ||
	fail "--comm $new: roots $(roots fe.new)"
grep -qE ';(execv|__fork)[; ]' fe.new && fail "--comm $new keeps code from before the exec: $(grep -m1 -E ';execv[; ]' fe.new)"
report fe.old -i fe.data --per-thread --plain --comm $old || finish
grep -q "^$new-" fe.old && fail "--comm $old keeps the exec'd program: $(grep -m1 "^$new-" fe.old)"
has fe.old "$old-$child" execv && pass "--comm $old: the child's part before the exec, not after" ||
	fail "--comm $old: no execv under $old-$child: roots $(roots fe.old)"

# diff --per-thread: each part by its own name
"$PTFLAME" diff --per-thread fe.data fe.data >fe.diff 2>fe.diff.err ||
	fail "diff --per-thread: $(head -c 300 fe.diff.err)"
cut -d';' -f1 fe.diff | grep -qx "$new" && awk -F';' -v o="$old" -v f=execv \
	'$1 == o && index($0, ";" f) {n++} END {exit !n}' fe.diff &&
	pass "diff --per-thread: root frames $old (with execv) and $new" ||
	fail "diff --per-thread: roots $(cut -d';' -f1 fe.diff | sort -u | tr '\n' ' ')"

# the timeline under --comm: the kept part's calls, its track named
"$PTFLAME" report -q -i fe.data --comm "$new" --timeline fe.json -o /dev/null 2>fe.json.err ||
	fail "--timeline: $(head -c 300 fe.json.err)"
python3 - "$new" "$child" fe.json <<'EOF' && pass "--timeline --comm $new: its calls only" || fail "--timeline --comm $new"
import json, sys
new, child, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ev = json.load(open(path))["traceEvents"]
names = {e["name"] for e in ev if e.get("ph") != "M"}
bad = names & {"execv", "execve", "__fork", "getenv"}
tracks = {(e["tid"], e["args"]["name"]) for e in ev if e.get("name") == "thread_name"}
ok = not bad and "child_work" in names and tracks == {(child, new)}
if not ok:
    print("calls from before the exec:", bad, "tracks:", tracks, file=sys.stderr)
sys.exit(not ok)
EOF

# the truth log's model splits the same way (per part, its last comm)
record fx emu_forkexec --follow-fork || finish
report fx.pt -i fx.data --per-thread || finish
$TP compare fx.truth fx.pt --per-thread >fx.cmp 2>&1 && pass "per-thread vs truth: $(tail -1 fx.cmp)" ||
	fail "per-thread vs truth: $(head -c 600 fx.cmp)"
finish
