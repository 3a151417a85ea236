# Sourced by the qemu wake tests (join.sh, pipe_early.sh), after lib.sh.
# wake_checks NAME EXPECT: recording NAME.data with truth NAME.truth has the
# waits EXPECT (wakes.py waits --expect), its sched:sched_waking records
# are the truth's wakes one to one (wakes.py match, with Debian's perf),
# and report (plain and --wakers, per thread) matches the truth model.
W=(python3 "$EMU_DIR/wakes.py")
TP=(python3 "$REPORT_DIR/truth_profile.py")
wake_checks() {
	local n=$1 expect=$2 v
	if "${W[@]}" waits "$n.truth" --expect "$expect" >"$n.waits" 2>&1; then
		pass "$n: $(tail -1 "$n.waits")"
	else
		fail "$n: $(head -c 600 "$n.waits")"
	fi
	if command -v perf >/dev/null; then
		perf script --ns -F trace:tid,cpu,time,event,trace -i "$n.data" >"$n.wk" 2>"$n.wkerr"
		if "${W[@]}" match "$n.truth" "$n.wk" >"$n.match" 2>&1; then
			pass "$n: $(tail -1 "$n.match")"
		else
			fail "$n: $(head -c 600 "$n.match")"
		fi
	fi
	for v in "" --wakers; do
		if "$PTFLAME" report -q -i "$n.data" --per-thread $v >"$n.rep$v" 2>"$n.rep$v.err" &&
			"${TP[@]}" compare "$n.truth" "$n.rep$v" --per-thread $v >"$n.cmp$v" 2>&1; then
			pass "$n report $v: $(tail -1 "$n.cmp$v")"
		else
			fail "$n report $v: $(head -c 400 "$n.rep$v.err") $(head -c 800 "$n.cmp$v")"
		fi
	done
}
