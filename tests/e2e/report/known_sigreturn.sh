#!/bin/bash
# Known to fail: a trace that starts inside a signal handler (record --start
# handler_work in emu_signal). The handler returns into the sigreturn
# trampoline (inferred caller __restore_rt), rt_sigreturn then resumes the
# interrupted function, which was never seen: the truth has a new stack
# there (the trampoline is nobody's caller). ptflame takes the resume ip
# for a signal handler entry and puts the whole rest of the program under
# __restore_rt: a call path the program never had.
. "$REPORT_DIR/common.sh"
n=signal.handler
record "$n" emu_signal --start handler_work || finish
report "$n.out" -i "$n.data" || finish
if $TP compare "$n.truth" "$n.out" >"$n.cmp" 2>&1; then pass "$n: $(tail -1 "$n.cmp")"
else fail "$n: $(head -5 "$n.cmp")"; fi
if $TP paths "$n.truth" "$n.out" >"$n.paths" 2>&1; then pass "$n: $(tail -1 "$n.paths")"
else fail "$n: $(head -3 "$n.paths")"; fi
finish
