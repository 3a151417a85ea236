#!/bin/bash
# issue 4, done-when 5 (and 6): a trace started mid-stack (record --start
# at a deep function) gives the right inferred callers: every frame above
# the start function comes from returns above the root and must be exactly
# the truth's caller chain, "name:N(inferred)" where none of its calls was
# seen whole, with the call counts and times of truth_profile.py compare
# (which rebuilds the same callers from the truth log's ret lines).
# (-p attach: no testdata program runs long enough to attach to.)
. "$REPORT_DIR/common.sh"
for run in "nested middle" "nested leaf" "tail tail_c" "signal work" "longjmp try_it" "longjmp deeper" \
	"demo sum_squares"; do
	set -- $run
	p=$1 start=$2 n=$1.$2
	record "$n" "emu_$p" --start "$start" || continue
	grep -q ' start ' "$n.truth" || { fail "$n: no start line in the truth log"; continue; }
	report "$n.out" -i "$n.data" || continue
	if $TP compare "$n.truth" "$n.out" >"$n.cmp" 2>&1; then pass "$n: $(tail -1 "$n.cmp")"
	else fail "$n: $(cat "$n.cmp")"; fi
	# the start function's callers are inferred: main at least
	if grep -qE "(^|;)main:1\(inferred\);.*$start:" "$n.out"; then
		pass "$n: main:1(inferred) above $start"
	else
		fail "$n: no main:1(inferred) caller above $start: $(grep -m2 "$start" "$n.out")"
	fi
done
finish
