#!/bin/bash
# perf record's own file, read by our reader: every COMM/MMAP/MMAP2/SWITCH/
# FORK/EXIT record `perf script` shows must come out of `ptflame dump` with
# the same fields (pid/tid, addresses, len, pgoff, dev, inode, perms, file
# name, switch direction/preempt, fork/exit pids, time in µs).
. "$E2E_LIB"
NORM="$SRCDIR/tests/e2e/perfdata/norm.pl"

if ! command -v perf >/dev/null; then
	fail "perf is not installed (scripts/setup.sh installs linux-perf); cannot test the reader against perf"
	finish
fi
if ! perf record -q -e dummy --switch-events -o sb.data -- "$TESTDATA/sideband" >rec.out 2>&1; then
	fail "perf record -e dummy --switch-events failed (perf_event_open refused? run as root or lower kernel.perf_event_paranoid): $(head -c 300 rec.out)"
	finish
fi

perf script --show-task-events --show-mmap-events --show-switch-events -i sb.data \
	>perf.txt 2>perf.err || fail "perf script failed: $(head -c 300 perf.err)"
expect_rc 0 "ptflame dump reads perf record's file" -- "$PTFLAME" dump sb.data
cp "$T/out" dump.txt

perl "$NORM" perf <perf.txt | sort >perf.norm || fail "normalizing perf script output"
perl "$NORM" dump <dump.txt | sort >dump.norm || fail "normalizing ptflame dump output"

# The records must be there at all, or the comparison proves nothing.
pid=$(awk '$3 == "COMM" && $5 == "sideband" && $6 == "exec" {split($4, a, "/"); print a[1]; exit}' perf.norm)
[ -n "$pid" ] || fail "perf script shows no COMM exec of sideband: $(head -5 perf.norm)"
for kind in COMM MMAP2 SWITCH FORK EXIT; do
	n=$(awk -v k="$kind" '$3 == k' perf.norm | wc -l)
	[ "$n" -gt 0 ] && pass "perf shows $n $kind records" || fail "perf shows no $kind record"
done
# sideband's own events: its worker thread's COMM (inherit), its fork and
# the child's exit, a switch-out while it sleeps.
grep -qE "^[0-9]+ [0-9.]+ FORK [0-9]+:[0-9]+ $pid:$pid\$" dump.norm &&
	pass "dump shows sideband's fork" || fail "no FORK from sideband ($pid) in dump"
awk -v p="$pid" '$3 == "FORK" && $5 == p ":" p { split($4, a, ":"); if (a[1] == p && a[2] != p) t++; if (a[1] != p) c++ }
	END { exit !(t && c) }' dump.norm &&
	pass "dump shows the worker thread's and the child's FORK" ||
	fail "dump lacks the thread FORK ($pid:TID) or the child FORK of sideband"
grep -qE "^[0-9]+ [0-9.]+ SWITCH OUT" dump.norm &&
	pass "dump shows a switch-out" || fail "no SWITCH OUT in dump"
grep -qE "MMAP2 $pid/$pid .* r-xp .*/sideband\$" dump.norm &&
	pass "dump shows sideband's text mapping" || fail "no MMAP2 of sideband's text in dump"

missing=$(comm -23 perf.norm dump.norm)
if [ -z "$missing" ]; then
	pass "all $(wc -l <perf.norm) records perf shows are in the dump with the same fields"
else
	fail "records perf shows that the dump lacks or shows differently: $(echo "$missing" | head -5)"
fi
extra=$(comm -13 perf.norm dump.norm)
[ -z "$extra" ] && pass "the dump shows no sideband record perf does not" ||
	fail "records only in the dump: $(echo "$extra" | head -5)"
finish
