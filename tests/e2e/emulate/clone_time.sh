#!/bin/bash
# A clone under the ptrace stepper lasts its CPU time, not its wall time
# (record/emulate.c native_done). A clone stops in ptrace twice (its event
# stop, then the trap that ends it): each stop is a voluntary switch that
# is the tracer's, not a sleep of the program's, and each waits for the
# tracer to run. Counted as sleeps, the clone lasted its wall time, the
# tracer's delays included: a clone3 under load lasted 8 ms, which a
# spinner on the other virtual CPU then single-stepped through (8 million
# steps: e2e-qemu-kill's self-ptrace ran past its 90 s). Here the tracer is
# stopped for 20 ms at a time (SIGSTOP) while testdata/clone_many makes its
# threads: every clone must still last under 2 ms of virtual time.
. "$E2E_LIB"
"$PTFLAME" record --emulate=ptrace -q -o c.data --truth c.truth -- "$TESTDATA/clone_many" 30 \
	>c.out 2>&1 &
rec=$!
while kill -0 $rec 2>/dev/null; do
	kill -STOP $rec 2>/dev/null; sleep 0.02; kill -CONT $rec 2>/dev/null; sleep 0.003
done
wait $rec || { fail "record: $(head -c 300 c.out)"; finish; }
# clone (56) and clone3 (435): from the syscall line to its sysret, per thread
read -r n max < <(awk '$5 == "syscall" && ($6 == 56 || $6 == 435) { at[$4] = $1 }
	$5 == "sysret" && ($4 in at) { d = $1 - at[$4]; delete at[$4]; n++; if (d > m) m = d }
	END { printf "%d %d\n", n, m }' c.truth)
[ "$n" -ge 30 ] && pass "$n clones in the truth" || fail "$n clones in the truth, want 30"
[ "$max" -lt 2000000 ] && pass "the longest clone lasted $max ns (< 2 ms)" ||
	fail "the longest clone lasted $max ns, want < 2 ms (its wall time, the tracer's stops included?)"
finish
