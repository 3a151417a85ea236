#!/bin/bash
# Wake records (issue 16): record --emulate writes a sched:sched_waking
# sample for each traced wait a traced thread ended, at the waker's time;
# Debian's perf reads the file (with and without --itrace=cr, exit 0, no
# complaint) and prints them as the truth's "wake" lines, one to one
# (wakes.py match); each lies in a wait of its wakee (wakes.py waits).
# tests/e2e/qemu reruns this on the qemu backend.
. "$E2E_LIB"
command -v perf >/dev/null || { echo "perf not installed: skipped"; exit 77; }
W=(python3 "$EMU_DIR/wakes.py")

# rec NAME [--none] [RECORD ARGS] -- PROG [ARGS]: record with the truth,
# then check the records against it (--none: there are none). Sets OK=1
# when the recording worked.
rec() {
	local name=$1 none=; shift
	[ "$1" = --none ] && { none=--none; shift; }
	OK=0
	if ! "$PTFLAME" record --emulate -q -o "$name.data" --truth "$name.truth" "$@" \
		>"$name.out" 2>&1; then
		fail "$name: record failed: $(head -c 400 "$name.out")"
		return
	fi
	OK=1
	local o
	for o in "" "--itrace=cr"; do
		if perf script $o -i "$name.data" >"$name.ps" 2>"$name.pserr"; then
			[ -s "$name.pserr" ] && fail "$name: perf script $o complained: $(head -c 300 "$name.pserr")"
		else
			fail "$name: perf script $o failed: $(head -c 300 "$name.pserr")"
		fi
	done
	perf script --ns -F trace:tid,cpu,time,event,trace -i "$name.data" >"$name.wk" 2>"$name.wkerr"
	if "${W[@]}" match "$name.truth" "$name.wk" $none >"$name.match" 2>&1; then
		pass "$name: $(tail -1 "$name.match")"
	else
		fail "$name: $(head -c 800 "$name.match")"
	fi
}

# waits NAME EXPECT...: wakes.py waits with --expect each
waits() {
	local name=$1; shift
	[ "$OK" = 1 ] || return
	local a=() e
	for e in "$@"; do a+=(--expect "$e"); done
	if "${W[@]}" waits "$name.truth" "${a[@]}" >"$name.waits" 2>&1; then
		pass "$name: $(tail -1 "$name.waits")"
	else
		fail "$name: $(head -c 800 "$name.waits")"
	fi
}

# two workers taking turns on a mutex (with sleeps: whether they contend
# depends on real time), joined by main (who exits first too)
rec threads -- "$TESTDATA/emu_threads"
waits threads "emu_threads<-emu_threads:1"

# the wake attr is there even when nothing woke anyone (emu_nested has one
# thread): a reader can tell "no wakes" from "not recorded"
rec nested --none -- "$TESTDATA/emu_nested"
grep -q "sched:sched_waking" <(perf report --header-only -i nested.data 2>&1) &&
	pass "nested: the file names the sched:sched_waking event" ||
	fail "nested: no sched:sched_waking event in the header"
finish
