#!/bin/bash
# issue 4, done-when 1 (and 6): for every emu_* testdata program recorded
# with --emulate, every stack of `ptflame report` (annotated, and with
# --per-thread, whose root frames must be the truth's comm-tid) is a
# context of the truth log's profile, every frame's call
# count equals the truth's exactly, "(inferred)" exactly where no call of
# the context was seen whole, every truth leaf context is there, and each
# stack's self time is within 0.1 % of the truth plus the PT timing floor
# that truth_profile.py documents (--slack-ns; why the floor: its docstring).
# TRUTH_SLACK_NS (default 256) and TRUTH_PROGRAMS (default all) override.
. "$REPORT_DIR/common.sh"
slack=${TRUTH_SLACK_NS:-256}
for p in ${TRUTH_PROGRAMS:-$EMU_PROGRAMS}; do
	record "$p" "emu_$p" || continue
	for v in "" --per-thread; do
		report "$p.out$v" -i "$p.data" $v || continue
		if $TP compare "$p.truth" "$p.out$v" $v --slack-ns "$slack" >"$p.cmp$v" 2>&1; then
			pass "$p $v: $(tail -1 "$p.cmp$v")"
		else
			fail "$p $v: $(cat "$p.cmp$v")"
		fi
	done
done
finish
