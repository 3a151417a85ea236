#!/bin/bash
# issue 4, done-when 3 (and 6): `perf script --itrace=cr` text and pt-flame's
# `perf script --itrace=b --ns -F-event,-period,+addr,-comm,+flags,-dso`
# text (both with --ns: without it perf prints microseconds) of an emulated recording, read by our importer (auto-detected), give
# the same contexts and call counts as decoding the perf.data directly, and
# self times within one MTC period (256 ns here: mtc_freq 3, CTC = 64 TSC of
# 0.5 ns) at each end of each interval (truth_profile.py same).
# What perf script text cannot carry is normalized on both sides: PLT stub
# names (perf prints "_init+0x..", "@plt" or [unknown] for some), switch
# events ([off-cpu]/[preempted] folded into the frame above) and the
# thread's end after its last branch (a [kernel] open at the end).
. "$REPORT_DIR/common.sh"
if ! command -v perf >/dev/null; then echo "perf not installed"; exit 77; fi
# emu_except left out: libstdc++/libgcc_s bind lazily, and perf names their
# PLT stubs and the resolver path differently enough that the stub-name
# normalization above merges distinct contexts. --itrace=cr on the
# single-threaded programs only (threads: see known issues in the report).
# emu_cold: perf prints "process.cold+0x.."; the importer's key is process's,
# as the ELF symbolizer's (no .cold frame either way).
for p in nested signal tail longjmp fptr threads cold; do
	# emu_threads with frequent preemption: a preempted thread's last
	# packets must stay its own in perf's decoding too (the emulator stamps
	# the switch-out 1 ns after them)
	opt=
	[ "$p" = threads ] && opt="--time-slice 300 --cpus 2"
	record "$p" "emu_$p" $opt || continue
	report "$p.direct" -i "$p.data" || continue
	perf script -i "$p.data" --itrace=cr --ns >"$p.cr.txt" 2>"$p.cr.err" ||
		{ fail "$p: perf script --itrace=cr: $(head -c 300 "$p.cr.err")"; continue; }
	perf script -i "$p.data" --itrace=b --ns -F-event,-period,+addr,-comm,+flags,-dso \
		>"$p.b.txt" 2>"$p.b.err" ||
		{ fail "$p: perf script --itrace=b: $(head -c 300 "$p.b.err")"; continue; }
	forms="cr b"
	[ "$p" = threads ] && forms=b
	for f in $forms; do
		report "$p.$f" -i "$p.$f.txt" || continue
		opt=
		[ "$f" = cr ] && opt=--jump-only-ok   # no jmp lines in cr text
		if $TP same "$p.truth" "$p.direct" "$p.$f" $opt >"$p.$f.same" 2>&1; then
			pass "$p --itrace=$f text: $(tail -1 "$p.$f.same")"
		else
			fail "$p --itrace=$f text vs perf.data: $(cat "$p.$f.same")"
		fi
	done
	if [ "$p" = cold ]; then
		grep -q '\.cold+0x' "$p.b.txt" || fail "cold: perf script names no .cold part"
		if grep -q '\.cold' "$p.cr" "$p.b" 2>/dev/null; then
			fail "cold: a .cold frame from perf script text: $(grep -m1 '\.cold' "$p.cr" "$p.b")"
		else
			pass "cold: perf script text's .cold parts are their functions'"
		fi
	fi
done
finish
