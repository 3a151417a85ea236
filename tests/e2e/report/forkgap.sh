#!/bin/bash
# A thread the recording made (a FORK record: clone, fork) lives from its
# creation, not from its first packet: on a run queue until its first
# switch-in (the kernel's wake_up_new_task), in the kernel until its trace
# starts. Checked from the truth log's own lines, not from the model:
#  - per thread (--per-thread, --tid), the stacks add up to its life: from
#    its clone/fork line (the first thread, exec'd by record, from its
#    start line) to its exit;
#  - at its root, [kernel];[preempted] holds exactly its first switch-in
#    less its clone, [kernel] the 500 ns from that switch-in to its start;
#    the first thread has no such frames;
#  - --wakers: under that [preempted], [woken by COMM-CREATOR] (and, in
#    emu_threads, the creator's stack: main;pthread_create;...;clone), the
#    same time; a
#    [preempted] row per new thread in --table --wakers; the --timeline
#    has the [preempted] span with its creator as waker and an arrow, as
#    the model (truth_profile.py wakes) has it;
#  - the model (truth_profile.py compare) agrees, plain and --wakers;
#  - without switch records (noswitch.py hides them: perf record without
#    --switch-events) the first new thread's time before its first packet
#    is [kernel] alone;
#  - --follow-fork: a child process from its fork.
# Recordings: emu_threads on 2 CPUs (the new thread runs at once), wake_balance
# on 1 CPU (4 threads wait for it), emu_forkexec --follow-fork.
. "$REPORT_DIR/common.sh"
expect_eq() { if [ "$1" = "$2" ]; then pass "$3 ($1)"; else fail "$3: '$1' != '$2'"; fi; }

# life TRUTH: "TID NS BORN" per thread with an exit line, NS from its
# clone/fork line (BORN 1) or else its first start/sysret line to its exit
life() {
	sort -s -n -k1,1 "$1" | awk '$1 ~ /^[0-9]+$/ {
		t = $1; tid = $4; ev = $5
		if ((ev == "clone" || ev == "fork") && !(tid in b)) b[tid] = t
		if ((ev == "start" || ev == "sysret") && !(tid in s)) s[tid] = t
		if (ev == "exit") e[tid] = t
	} END {
		for (tid in e) if (tid in b) print tid, e[tid] - b[tid], 1
			else if (tid in s) print tid, e[tid] - s[tid], 0
	}' | sort -n
}
# first_run TRUTH: "TID NS" per new thread: its first switch-in less its
# clone (only threads whose trace starts with a start line)
first_run() {
	sort -s -n -k1,1 "$1" | awk '$1 ~ /^[0-9]+$/ {
		t = $1; tid = $4; ev = $5
		if (ev == "clone" && !(tid in b)) b[tid] = t
		if (ev == "switch-in" && (tid in b) && !(tid in i)) i[tid] = t
	} END { for (tid in i) print tid, i[tid] - b[tid] }' | sort -n
}
# per_thread FOLDED TID: the sum of its lines under "comm-TID"
per_thread() { awk -v t="$2" '{split($0, f, ";"); r = f[1]; sub(/:[^:]*$/, "", r)
	if (r ~ ("-" t "$")) s += $NF} END {printf "%d\n", s}' "$1"; }

check() {   # NAME: NAME.data, NAME.truth recorded
	local n=$1 tid ns born nborn=0 want got creator comm
	life "$n.truth" >"$n.life"
	[ -s "$n.life" ] || { fail "$n: no thread with an exit in the truth log"; return; }
	report "$n.pt" -i "$n.data" --per-thread --plain || return
	report "$n.ptw" -i "$n.data" --per-thread --plain --wakers || return
	while read -r tid ns born; do
		expect_eq "$(per_thread "$n.pt" "$tid")" "$ns" "$n: tid $tid (born in the recording: $born) sums to its life"
		report "$n.t$tid" -i "$n.data" --tid "$tid" --plain || continue
		expect_eq "$(sum_col "$n.t$tid")" "$ns" "$n: --tid $tid sums to its life"
		if [ "$born" = 0 ]; then
			if grep -qE "^[^;]*-$tid;\\[kernel\\];\\[preempted\\] " "$n.pt"; then
				fail "$n: tid $tid (not made in the recording) has a first-run wait"
			else pass "$n: tid $tid (not made in the recording): no first-run wait"; fi
		fi
		nborn=$((nborn + born))
	done <"$n.life"
	first_run "$n.truth" >"$n.first"
	# (every check below goes by these lines: none would pass them all)
	[ -s "$n.first" ] || fail "$n: no new thread with a clone and a first switch-in in the truth"
	while read -r tid ns; do
		got=$(awk -v t="$tid" '$0 ~ ("^[^;]*-" t ";\\[kernel\\];\\[preempted\\] ") {print $NF}' "$n.pt")
		expect_eq "$got" "$ns" "$n: tid $tid: [kernel];[preempted] at its root = its first switch-in less its clone"
		got=$(awk -v t="$tid" '$0 ~ ("^[^;]*-" t ";\\[kernel\\] ") {print $NF}' "$n.pt")
		expect_eq "$got" 500 "$n: tid $tid: [kernel] at its root = its switch-in to its first packet"
		creator=$(awk -v t="$tid" '$4 == t && $5 == "clone" {print $6; exit}' "$n.truth")
		comm=$(awk -v t="$creator" '$4 == t && $5 == "comm" {c = $6} END {print c}' "$n.truth")
		got=$(grep -E "^[^;]*-$tid;\\[kernel\\];\\[preempted\\];\\[woken by $comm-$creator\\][; ]" \
			"$n.ptw" | awk '{s += $NF} END {print s + 0}')
		expect_eq "$got" "$ns" "$n: tid $tid --wakers: all of it under [woken by $comm-$creator]"
		[ "$n" = threads ] || continue
		got=$(grep -E "^[^;]*-$tid;\\[kernel\\];\\[preempted\\];\\[woken by $comm-$creator\\];([^;]*;)*(__)?clone3? " \
			"$n.ptw" | awk '{s += $NF} END {print s + 0}')
		expect_eq "$got" "$ns" "$n: tid $tid --wakers: under the creator's stack down to its clone"
	done <"$n.first"
	"$PTFLAME" report -q -i "$n.data" --table --wakers --format csv >"$n.csv" 2>/dev/null
	expect_eq "$(awk -F, '$1 == "[preempted]" {s += $3} END {print s + 0}' "$n.csv")" \
		"$(wc -l <"$n.first")" "$n: --table --wakers: a [preempted] row's wait per new thread"
	"$PTFLAME" report -q -i "$n.data" --wakers --timeline "$n.json" 2>/dev/null ||
		fail "$n: --wakers --timeline"
	if $TP wakes "$n.truth" "$n.json" >"$n.wk" 2>&1; then pass "$n: timeline: $(tail -1 "$n.wk")"
	else fail "$n: timeline: $(cat "$n.wk")"; fi
	got=$(python3 - "$n.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
print(sum(1 for e in ev if e.get("cat") == "preempted" and "woken by tid" in e.get("args", {})))
PY
)
	expect_eq "$got" "$(wc -l <"$n.first")" "$n: timeline: a [preempted] span with its creator per new thread"
	if $TP compare "$n.truth" "$n.pt" --per-thread >"$n.cmp" 2>&1; then pass "$n: model: $(tail -1 "$n.cmp")"
	else fail "$n: model: $(cat "$n.cmp")"; fi
	# diff of the recording with itself: the new frames the same on both sides
	"$PTFLAME" diff --per-thread "$n.data" "$n.data" >"$n.diff" 2>/dev/null || fail "$n: diff"
	# (threads of one name are one root there)
	expect_eq "$(awk '/^[^;]*;\[kernel\];\[preempted\] / {a += $(NF - 1); b += $NF}
		END {print a + 0, b + 0}' "$n.diff")" \
		"$(awk '{s += $2} END {print s + 0, s + 0}' "$n.first")" "$n: diff --per-thread: the first-run waits"
	# (--wakers against the model on emu_threads only: under a loaded host
	# the ptrace backend once stamped a FORK of wake_balance after its
	# creator's clone had returned, where the model takes the creator's
	# stack at its clone syscall and report the one at the FORK)
	[ "$n" = threads ] || return
	report "$n.ptwa" -i "$n.data" --per-thread --wakers || return
	if $TP compare "$n.truth" "$n.ptwa" --per-thread --wakers >"$n.cmpw" 2>&1; then
		pass "$n: model --wakers: $(tail -1 "$n.cmpw")"
	else fail "$n: model --wakers: $(cat "$n.cmpw")"; fi
}

record threads emu_threads --cpus 2 && check threads
record balance wake_balance --cpus 1 && check balance

# without switch records: [kernel] from the clone to the first packet
if record ns emu_threads --cpus 2 && python3 "$REPORT_DIR/noswitch.py" ns.data ns2.data >ns.hide; then
	report ns.pt -i ns2.data --per-thread --plain
	read -r tid ns < <(sort -s -n -k1,1 ns.truth | awk '$5 == "clone" && !b {b = $1; t = $4}
		$4 == t && $5 == "start" && b {print t, $1 - b; exit}')
	expect_eq "$(awk -v t="$tid" '$0 ~ ("^[^;]*-" t ";\\[kernel\\] ") {print $NF}' ns.pt)" "$ns" \
		"no switch records: tid $tid: [kernel] from its clone to its first packet"
	if grep -qE '\[(preempted|off-cpu)\]' ns.pt; then fail "no switch records: a wait"
	else pass "no switch records: no [preempted], no [off-cpu] ($(cat ns.hide))"; fi
fi

# a child process (--follow-fork) from its fork; the model agrees
if record ff emu_forkexec --follow-fork; then
	life ff.truth >ff.life
	report ff.pt -i ff.data --per-thread --plain
	while read -r tid ns born; do
		expect_eq "$(per_thread ff.pt "$tid")" "$ns" "--follow-fork: tid $tid (forked: $born) sums to its life"
	done <ff.life
	expect_eq "$(awk '$3 == 1' ff.life | wc -l)" 1 "--follow-fork: one forked child"
	if $TP compare ff.truth ff.pt --per-thread >ff.cmp 2>&1; then pass "--follow-fork: model: $(tail -1 ff.cmp)"
	else fail "--follow-fork: model: $(cat ff.cmp)"; fi
fi
finish
