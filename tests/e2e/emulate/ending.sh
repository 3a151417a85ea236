#!/bin/bash
# How the traced program ends (testdata/ending): by its own status, a
# signal it sends itself, exit() or a SIGSEGV in a thread other than the
# leader (while the leader is being stepped, or waits in pthread_join).
# The recording must end (no hang), say in one line how the program ended,
# exit with its status (128+N for signal N), and leave a file that decodes
# exactly and that report reads.
. "$E2E_LIB"
E=("$PTFLAME" record --emulate -q)
PROG=$TESTDATA/ending

# ending NAME WANT_RC NOTE_RE -- MODE ARGS...
ending() {
	local name=$1 want=$2 note=$3; shift 4
	timeout -s KILL 60 "${E[@]}" -o "$name.data" --dump-insns "$name.dump" -- "$PROG" "$@" \
		>"$name.out" 2>"$name.err"
	local rc=$?
	[ "$rc" -eq 137 ] && { fail "$name: record hung (killed after 60 s)"; return; }
	[ "$rc" -eq "$want" ] && pass "$name: exit $rc" || fail "$name: exit $rc, want $want: $(cat "$name.err")"
	if [ -z "$note" ]; then
		[ -s "$name.err" ] && fail "$name: said $(cat "$name.err")" || pass "$name: nothing said"
	else
		expect_lines 1 "$name.err" "$name: one line"
		expect_grep "^ptflame record: .*ending $note\$" "$name.err" "$name: says how it ended"
	fi
	"$EMU_CHECK" "$name.data" "$name.dump" >"$name.chk" 2>&1 && pass "$name: trace decodes exactly" ||
		fail "$name: $(head -c 400 "$name.chk")"
	"$PTFLAME" report -i "$name.data" --plain >"$name.folded" 2>"$name.rerr" && [ -s "$name.folded" ] &&
		pass "$name: report reads it" || fail "$name: report: $(head -c 400 "$name.rerr")"
}

ending status0 0 '' -- status 0
ending status3 3 'exited with status 3' -- status 3
ending kill 143 'was killed by signal 15 \(Terminated\)' -- kill 15
ending thread-exit 4 'exited with status 4' -- thread-exit 4
ending thread-segv 139 'was killed by signal 11 \(Segmentation fault\)(, core dumped)?' -- thread-segv
ending join-exit 5 'exited with status 5' -- join-exit 5
# both threads' code is in the profile
grep -q '^main' thread-exit.folded && grep -q 'start_thread;second' thread-exit.folded &&
	pass "thread-exit: both threads in the profile" || fail "thread-exit: $(head -5 thread-exit.folded)"
finish
