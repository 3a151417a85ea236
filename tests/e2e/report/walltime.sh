#!/bin/bash
# issue 4, done-when 2 (and 6): per thread, the sum over its stacks equals
# its traced wall time from the truth log (first event with an ip to its
# last event), with --per-thread (the comm-tid root frame) and without it
# (--tid T, and all threads together); --oncpu plus --offcpu plus [lost]
# is everything. Every output checked against flamegraph.pl's grammar.
. "$REPORT_DIR/common.sh"
for p in $EMU_PROGRAMS; do
	# (.cold parts change no span: report/truth.sh has them)
	case $p in cold|coldxx) continue ;; esac
	record "$p" "emu_$p" || continue
	$TP walltime "$p.truth" >"$p.wall"
	[ -s "$p.wall" ] || { fail "$p: no traced thread in the truth log"; continue; }
	report "$p.all" -i "$p.data" || continue
	report "$p.pt" -i "$p.data" --per-thread || continue
	report "$p.plain" -i "$p.data" --per-thread --plain || continue
	want_all=$(awk '{s += $2} END {print s}' "$p.wall")
	got_all=$(sum_col "$p.all")
	if [ "$got_all" = "$want_all" ]; then pass "$p: all threads sum $got_all ns = truth"
	else fail "$p: all threads sum $got_all ns, truth $want_all ns"; fi
	while read -r tid ns comm; do
		got=$(awk -v t="$tid" '{split($0, f, ";"); r = f[1]; sub(/:[^:]*$/, "", r)
			if (r ~ ("-" t "$")) s += $NF} END {printf "%d\n", s}' "$p.plain")
		if [ "$got" = "$ns" ]; then pass "$p: tid $tid --per-thread sum $got ns = truth"
		else fail "$p: tid $tid --per-thread sum $got ns, truth $ns ns"; fi
		report "$p.t$tid" -i "$p.data" --tid "$tid" || continue
		got=$(sum_col "$p.t$tid")
		if [ "$got" = "$ns" ]; then pass "$p: tid $tid --tid sum $got ns = truth"
		else fail "$p: tid $tid --tid sum $got ns, truth $ns ns"; fi
	done <"$p.wall"
	report "$p.on" -i "$p.data" --oncpu || continue
	report "$p.off" -i "$p.data" --offcpu || continue
	lost=$(awk '/\[lost\]/ {s += $NF} END {printf "%d\n", s}' "$p.all")
	s=$(( $(sum_col "$p.on") + $(sum_col "$p.off") + lost ))
	if [ "$s" = "$want_all" ]; then pass "$p: --oncpu + --offcpu + [lost] = $s ns"
	else fail "$p: --oncpu + --offcpu + [lost] = $s ns, truth $want_all ns"; fi
	# nothing of the off-CPU kinds in --oncpu, nothing on-CPU in --offcpu
	if grep -qE '\[(off-cpu|preempted)\][^;]* [1-9]' "$p.on"; then
		fail "$p: --oncpu output has off-CPU time"; fi
	if grep -vE '\[(off-cpu|preempted)\][^;]* [0-9]+$' "$p.off" | grep -qE ' [1-9][0-9]*$'; then
		fail "$p: --offcpu output has time not under [off-cpu]/[preempted]"; fi
done
pass "$GRAMMAR_CHECKED output lines checked against the folded grammar"
finish
