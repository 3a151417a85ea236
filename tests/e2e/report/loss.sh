#!/bin/bash
# issue 4, done-when 4 (and 6): recordings with injected overflows
# (--inject-ovf N: an OVF packet every N packets) and dropped AUX data
# (--drop-aux N: every Nth AUX chunk lost, AUX record TRUNCATED) still give
# a profile; the lost time shows under [lost] (and the summary counts lost
# segments); no stack, pseudo-frames removed, is a call path the program
# never had (each must be a contiguous sub-path of a truth call path:
# truth_profile.py paths); with OVF, every thread's stacks still add up to
# its traced wall time, and so does each thread's under dropped AUX data.
. "$REPORT_DIR/common.sh"
check_loss() {   # NAME: the recording NAME.data/NAME.truth
	local n=$1
	report "$n.out" -i "$n.data" || return 1
	"$PTFLAME" report -i "$n.data" >/dev/null 2>"$n.sum" || { fail "$n: summary run"; return 1; }
	[ -s "$n.out" ] || { fail "$n: empty profile"; return 1; }
	local lost
	lost=$(awk '/\[lost\]/ {s += $NF} END {printf "%d\n", s}' "$n.out")
	if [ "$lost" -gt 0 ]; then pass "$n: $lost ns under [lost]"
	else fail "$n: no time under [lost]: $(head -c 300 "$n.out")"; fi
	if grep -qE ', [1-9][0-9]* lost segments?' "$n.sum"; then pass "$n: summary: $(cat "$n.sum")"
	else fail "$n: summary counts no lost segment: $(cat "$n.sum")"; fi
	if $TP paths "$n.truth" "$n.out" >"$n.paths" 2>&1; then pass "$n: $(tail -1 "$n.paths")"
	else fail "$n: $(cat "$n.paths")"; fi
}
for p in nested signal threads; do
	n=$p.ovf
	record "$n" "emu_$p" --inject-ovf 20 || continue
	grep -q ' ovf ' "$n.truth" || { fail "$n: the truth log has no ovf line"; continue; }
	check_loss "$n" || continue
	want=$($TP walltime "$n.truth" | awk '{s += $2} END {print s}')
	got=$(sum_col "$n.out")
	if [ "$got" = "$want" ]; then pass "$n: all threads sum $got ns = truth"
	else fail "$n: all threads sum $got ns, truth $want ns"; fi
done
# Dropped AUX data: also every thread's stacks add up to its traced wall
# time (per thread, --per-thread): a thread whose first packet was dropped
# is known from its switch-in on, all [lost] (walltime --perf-data).
for run in "nested 2" "threads 2" "threads 3" "threads 4"; do
	set -- $run
	p=$1 n=$1.drop$2
	record "$n" "emu_$p" --drop-aux "$2" --aux-chunk 256 || continue
	grep -q ' drop-aux ' "$n.truth" || { fail "$n: the truth log has no drop-aux line"; continue; }
	check_loss "$n"
	report "$n.pt" -i "$n.data" --per-thread --plain || continue
	while read -r tid ns comm; do
		got=$(awk -v t="$tid" '{split($0, f, ";"); if (f[1] ~ ("-" t "$")) s += $NF}
			END {printf "%d\n", s}' "$n.pt")
		if [ "$got" = "$ns" ]; then pass "$n: tid $tid sum $got ns = truth"
		else fail "$n: tid $tid sum $got ns, truth $ns ns"; fi
	done < <($TP walltime "$n.truth" --perf-data "$n.data")
done
# After a loss the trace resumes in step(), which four callers call, each
# with a leaf of its own (testdata/loss_resume.c): the stack kept at the
# resync is a guess that only the returns after it confirm or refute (held
# events, doc/DESIGN.md section 4). No leaf may come out under another
# caller's step (1-2 such paths on each of these before).
for d in 3 5; do
	n=resume.drop$d
	record "$n" loss_resume --psb-period 256 --drop-aux "$d" --aux-chunk 256 || continue
	check_loss "$n"
done
finish
