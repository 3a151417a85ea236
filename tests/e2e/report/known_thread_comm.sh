#!/bin/bash
# Known to fail: with --per-thread, the root frame of every thread is
# "comm-tid" with the comm the thread had (a cloned thread inherits its
# parent's: perf's FORK record; perf script names it so). Counts and times
# are checked by truth.sh; this checks the names only.
. "$REPORT_DIR/common.sh"
for p in threads demo; do
	record "$p" "emu_$p" || continue
	report "$p.pt" -i "$p.data" --per-thread || continue
	$TP compare "$p.truth" "$p.pt" --per-thread --no-time >"$p.cmp" 2>&1
	if grep -q 'thread frame' "$p.cmp"; then
		fail "$p: $(grep 'thread frame' "$p.cmp" | sed 's/.*thread frame//' | sort -u | head -5)"
	elif grep -q 'compare:' "$p.cmp"; then
		pass "$p: thread frames named comm-tid"
	else
		fail "$p: compare did not run: $(head -c 300 "$p.cmp")"
	fi
done
finish
