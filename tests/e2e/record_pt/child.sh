#!/bin/bash
# The hardware recorder's targets, with --sideband-only (no PT needed):
# - -- CMD starts with the signal dispositions ptflame was given (ptflame
#   ignores SIGPIPE itself; an ignored SIGHUP, as under nohup, stays);
# - record exits with CMD's status (128+N for signal N) and says how it ended;
# - -p follows a process whose leader thread has exited while another
#   thread runs on (testdata/ending leader-exit).
. "$E2E_LIB"
if [ "$(id -u)" -ne 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 2 ]; then
	echo "skip: kernel.perf_event_paranoid > 2 forbids perf events to non-root users"; exit 77
fi
R=("$PTFLAME" record --sideband-only)
PROG=$TESTDATA/ending

want=$(trap '' HUP; grep -E '^Sig(Ign|Blk)' /proc/self/status)
got=$(trap '' HUP; "${R[@]}" -o sig.data -- grep -E '^Sig(Ign|Blk)' /proc/self/status 2>sig.err)
[ "$got" = "$want" ] && pass "CMD gets the signal dispositions ptflame was given" ||
	fail "CMD's signals: got '$got', want '$want' ($(cat sig.err))"
got=$("${R[@]}" -o pipe.data -- sh -c 'yes | head -1' 2>pipe.err)
[ "$got" = y ] && ! grep -q yes: pipe.err && pass "yes | head: no broken pipe message" ||
	fail "yes | head: '$got' $(cat pipe.err)"

expect_rc 3 "CMD exits 3: record exits 3" -- "${R[@]}" -o st.data -- "$PROG" status 3
expect_grep 'ending exited with status 3$' "$T/err" "says the status"
[ -s st.data ] && pass "status 3: file written" || fail "status 3: no file"
expect_rc 139 "a thread's SIGSEGV: record exits 139" -- "${R[@]}" -o segv.data -- "$PROG" thread-segv
expect_grep 'ending was killed by signal 11 \(Segmentation fault\)' "$T/err" "says the signal"
expect_rc 0 "report reads it" -- "$PTFLAME" dump segv.data
expect_rc 0 "CMD exits 0: record exits 0" -- "${R[@]}" -o ok.data -- "$PROG" status 0
grep -q 'ending' "$T/err" && fail "status 0: said $(cat "$T/err")" || pass "status 0: no note"

# -p: the leader is a zombie before recording starts; the other thread
# renames itself and exits only when told, and that must be recorded
rm -f go
"$PROG" leader-exit go &
victim=$!
for _ in $(seq 100); do [ "$(cut -d' ' -f3 /proc/$victim/stat 2>/dev/null)" = Z ] && break; sleep 0.05; done
"${R[@]}" -o lead.data -p "$victim" 2>lead.err &
rec=$!
sleep 1
kill -0 "$rec" 2>/dev/null && pass "-p: still recording after the leader exited" ||
	fail "-p: stopped when the leader exited: $(cat lead.err)"
touch go
timeout 30 tail --pid="$rec" -f /dev/null
wait "$rec" && pass "-p: ends when the last thread exits" || fail "-p: exit $?: $(cat lead.err)"
"$PTFLAME" dump lead.data 2>&1 | grep -q 'COMM.*late-worker' && pass "-p: the other thread recorded to its end" ||
	fail "-p: no COMM late-worker in lead.data"
kill "$victim" 2>/dev/null
finish
