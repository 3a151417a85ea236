#!/bin/bash
# A trace that starts inside a signal handler (record --start handler_work
# in emu_signal). The handler returns into the sigreturn trampoline
# (__restore_rt replaces the handler: it is no caller of it, though the
# handler's entry was not seen); rt_sigreturn then resumes the interrupted
# function in its middle, a function never seen on this stack: a new stack
# segment starts there (the trampoline is nobody's caller), as in the truth.
# The later SIGALRM is delivered while traced: its handler goes on top of
# the interrupted loop, and its sigreturn pops back to it.
. "$REPORT_DIR/common.sh"
n=signal.handler
record "$n" emu_signal --start handler_work || finish
# PT does not carry syscall numbers: the trampoline's name and the resume
# ip tell; --syscall-names may know rt_sigreturn's number as well.
for v in plain names; do
	opt=
	[ "$v" = names ] && opt=--syscall-names
	report "$n.$v" -i "$n.data" $opt || continue
	if $TP compare "$n.truth" "$n.$v" >"$n.$v.cmp" 2>&1; then pass "$n $opt: $(tail -1 "$n.$v.cmp")"
	else fail "$n $opt: $(head -5 "$n.$v.cmp")"; fi
	if $TP paths "$n.truth" "$n.$v" >"$n.$v.paths" 2>&1; then pass "$n $opt: $(tail -1 "$n.$v.paths")"
	else fail "$n $opt: $(head -3 "$n.$v.paths")"; fi
	# the trampoline's "mov $15,%rax; syscall" names it
	if [ "$v" = names ]; then
		grep -q '__restore_rt[^;]*;\[kernel\] rt_sigreturn' "$n.$v" &&
			pass "$n $opt: rt_sigreturn named under __restore_rt" ||
			fail "$n $opt: no [kernel] rt_sigreturn under __restore_rt"
	fi
	# nothing of the program below the trampoline
	if grep -q '^__restore_rt[^;]*;\(main\|spin_until_alarm\|__libc_start_call_main\)' "$n.$v"; then
		fail "$n $opt: program frames under __restore_rt: $(grep -m1 '^__restore_rt[^;]*;main' "$n.$v")"
	fi
done
# The same through perf script text with branch flags (the importer's
# events); --itrace=cr text has no flags to tell returns from calls.
if command -v perf >/dev/null; then
	if perf script -i "$n.data" --itrace=b --ns -F-event,-period,+addr,-comm,+flags,-dso \
		>"$n.b.txt" 2>"$n.b.err" && report "$n.b" -i "$n.b.txt"; then
		if $TP same "$n.truth" "$n.plain" "$n.b" >"$n.b.same" 2>&1; then
			pass "$n --itrace=b text: $(tail -1 "$n.b.same")"
		else
			fail "$n --itrace=b text vs perf.data: $(head -5 "$n.b.same")"
		fi
	else
		fail "$n: perf script --itrace=b: $(head -c 300 "$n.b.err")"
	fi
fi
finish
