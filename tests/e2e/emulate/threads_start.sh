#!/bin/bash
# record --emulate --start SYMBOL where SYMBOL runs in threads other than
# the main one, and SIGTERM/SIGINT at any point. Each run is guarded by
# `timeout -s KILL`: these used to hang (the new thread was stepped from
# its clone, ran into the start breakpoint's int3, the run failed and then
# waited forever for a thread group leader whose traced threads it had not
# reaped; SIGTERM did not help).
. "$E2E_LIB"
E=("$PTFLAME" record --emulate -q)
GUARD=(timeout -s KILL 30)  # a normal run takes about a second
TH=$TESTDATA/emu_threads

# runtime address of SYM of PROG in a truth log: nm value + text mapping
sym_addr() {  # TRUTH PROG SYM
	local off map
	off=$(nm "$2" | awk -v s="$3" '$3 == s {print $1; exit}')
	map=$(awk -v p="${2##*/}" '$5 == "mmap" && $9 ~ ("/" p "$") && $8 == "0x1000" {print $6; exit}' "$1")
	[ -n "$off" ] && [ -n "$map" ] && printf '%#x\n' $((map - 0x1000 + 0x$off))
}

# --start SYM: both workers are traced from their own first arrival at SYM;
# main (which never reaches it) is not; the trace decodes exactly.
for s in worker bump; do
	"${GUARD[@]}" "${E[@]}" -o $s.data --start $s --truth $s.truth --dump-insns $s.dump \
		-- "$TH" >$s.err 2>&1
	rc=$?
	[ $rc -eq 0 ] && pass "--start $s: finishes, exit 0" || { fail "--start $s: exit $rc: $(head -c 300 $s.err)"; continue; }
	a=$(sym_addr $s.truth "$TH" $s)
	pid=$(awk '$5 == "clone" {print $3; exit}' $s.truth)
	starts=$(awk '$5 == "start" {print $4, $6}' $s.truth | sort -u)
	n=$(printf '%s\n' "$starts" | awk -v a="$a" 'NF && $2 == a' | wc -l)
	[ -n "$a" ] && [ "$n" -eq 2 ] && [ "$(printf '%s\n' "$starts" | wc -l)" -eq 2 ] &&
		pass "--start $s: two threads start at $s ($a)" ||
		fail "--start $s: starts '$starts', $s at '$a'"
	printf '%s\n' "$starts" | awk -v p="$pid" '$1 == p {f = 1} END {exit !f}' &&
		fail "--start $s: the main thread was traced" || pass "--start $s: main thread untraced"
	"$EMU_CHECK" $s.data $s.dump >$s.chk 2>&1 && pass "--start $s: trace decodes exactly" ||
		fail "--start $s: $(head -c 400 $s.chk)"
done
# bump runs twice per worker: the second call, made by a thread already
# traced while main still waits for the breakpoint, is stepped through the
# breakpoint (original instruction) and seen as a call
if [ -s bump.truth ]; then
	a=$(sym_addr bump.truth "$TH" bump)
	n=$(awk -v a="$a" '$5 == "call" && $7 == a' bump.truth | wc -l)
	[ "$n" -eq 2 ] && pass "--start bump: the second call of each worker is traced" ||
		fail "--start bump: $n traced calls of bump, want 2"
fi

# --follow-fork: a child forked on the way to the start symbol runs to it
# natively too (its memory holds the breakpoint): emu_forkexec's child
# execs itself and is traced from child_work on, not from the fork
F=$TESTDATA/emu_forkexec
"${GUARD[@]}" "${E[@]}" --follow-fork --start child_work -o fork.data --truth fork.truth \
	--dump-insns fork.dump -- "$F" >fork.err 2>&1
rc=$?
[ $rc -eq 0 ] && pass "--follow-fork --start child_work: exit 0" || fail "--follow-fork: exit $rc: $(head -c 300 fork.err)"
if awk '$5 == "fork" {c = $4} $5 == "exec" && $4 == c {x = NR}
	$5 == "start" {n++; ok = $4 == c && x && NR > x}
	END {exit !(n == 1 && ok)}' fork.truth; then
	pass "--follow-fork --start child_work: the child alone is traced, after its exec"
else
	fail "--follow-fork --start child_work: $(grep -E ' (fork|exec|start) ' fork.truth | head -c 400)"
fi
"$EMU_CHECK" fork.data fork.dump >fork.chk 2>&1 && pass "--follow-fork: trace decodes exactly" ||
	fail "--follow-fork: $(head -c 400 fork.chk)"

# the default start, main, in a child that execs a program without one (a
# stripped binary): the child is traced from its exec, as the first
# program would be, and record says so
EMU_EXEC=$TESTDATA/strip_signal "${GUARD[@]}" "$PTFLAME" record --emulate=ptrace --follow-fork \
	--max-insns 40000 -o fx.data --truth fx.truth -- "$F" >fx.err 2>&1
rc=$?
[ $rc -eq 0 ] && pass "--follow-fork, exec of a stripped program: exit 0" ||
	fail "--follow-fork, exec of a stripped program: exit $rc: $(head -c 300 fx.err)"
if awk '$5 == "fork" {c = $4} $5 == "exec" && $4 == c {x = NR}
	$5 == "start" && $4 == c && x && NR > x {ok = 1} END {exit !ok}' fx.truth; then
	pass "--follow-fork, exec of a stripped program: traced from its exec"
else
	fail "--follow-fork, exec of a stripped program: $(grep -E ' (fork|exec|start|stop) ' fx.truth | head -c 400)"
fi
expect_grep "note: no 'main' in $TESTDATA/strip_signal .*traced from exec" fx.err \
	"--follow-fork, exec of a stripped program: the note names it"

# stop_with SIG SECS NAME CMD...: run CMD in the background, send SIG after
# SECS; sets rc, checks it ends within 10 s and that the program it ran is
# gone
stop_with() {
	local sig=$1 secs=$2 name=$3; shift 3
	"${GUARD[@]}" "$@" >$name.err 2>&1 &
	local rec=$! i pf prog
	sleep "$secs"
	pf=$(pgrep -P "$rec")             # timeout -> ptflame -> program
	prog=$(pgrep -P "${pf:-0}")
	[ -n "$prog" ] || fail "$name: no program under ptflame ($pf)"
	kill -"$sig" "$rec" 2>/dev/null
	for i in $(seq 100); do kill -0 "$rec" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$rec" 2>/dev/null; then
		fail "$name: still running 10 s after SIG$sig"
		kill -KILL $pf "$rec"
	fi
	wait "$rec"
	rc=$?
	if [ -n "$prog" ] && kill -0 "$prog" 2>/dev/null; then
		fail "$name: program $prog still runs after the recording"
		kill -KILL "$prog"
	else
		pass "$name: program terminated"
	fi
}
SP=$TESTDATA/spin_attach
# SIGTERM while stepping: tracing stops, the file is written and decodes,
# the program is terminated
stop_with TERM 1.5 term "${E[@]}" -o term.data --truth term.truth --dump-insns term.dump -- "$SP" 19
[ "$rc" -eq 0 ] && pass "SIGTERM while tracing: exit 0" || fail "SIGTERM while tracing: exit $rc: $(head -c 300 term.err)"
"$EMU_CHECK" term.data term.dump >term.chk 2>&1 && pass "SIGTERM while tracing: trace decodes exactly" ||
	fail "SIGTERM while tracing: $(head -c 400 term.chk)"
# SIGTERM while the program runs natively to a start symbol it reaches
# only at its end (ptflame waits in waitpid)
stop_with TERM 1 wait "${E[@]}" -o wait.data --truth wait.truth --start spin_done -- "$SP" 19
[ "$rc" -eq 0 ] && pass "SIGTERM while waiting: exit 0" || fail "SIGTERM while waiting: exit $rc: $(head -c 300 wait.err)"
"$PTFLAME" dump wait.data >wait.dump 2>&1 && pass "SIGTERM while waiting: a valid file" ||
	fail "SIGTERM while waiting: $(head -c 300 wait.dump)"
# SIGINT while the workers of --start worker are stepped or waited for
stop_with INT 0.3 int "${E[@]}" -o int.data --truth int.truth --start worker -- "$TH"
[ "$rc" -eq 0 ] && pass "SIGINT with --start worker: exit 0" || fail "SIGINT with --start worker: exit $rc: $(head -c 300 int.err)"

# without --follow-fork, a forked child runs untraced: record says so (in
# both backends; qemu-user only where installed), and a run that makes
# threads only does not
for be in ptrace qemu; do
	[ $be = qemu ] && ! command -v qemu-x86_64 >/dev/null && continue
	"${GUARD[@]}" "$PTFLAME" record --emulate=$be -o nf-$be.data -- "$F" >nf-$be.err 2>&1
	rc=$?
	[ $rc -eq 0 ] && grep -q "warning: 1 process(es) forked: the children ran untraced (--follow-fork traces them)" nf-$be.err &&
		pass "--emulate=$be without --follow-fork: the untraced child is said" ||
		fail "--emulate=$be without --follow-fork: exit $rc: $(head -c 300 nf-$be.err)"
	"${GUARD[@]}" "$PTFLAME" record --emulate=$be -o nt-$be.data -- "$TH" >nt-$be.err 2>&1
	grep -q "forked" nt-$be.err && fail "--emulate=$be: threads taken for forks: $(cat nt-$be.err)" ||
		pass "--emulate=$be: threads are no forks"
done
finish
