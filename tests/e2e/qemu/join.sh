#!/bin/bash
# Joins of threads that exited on the host first (record/qemu.c join_wait,
# the plugin's RC_QP_JOIN). qemu runs the guest's threads in parallel for
# real, but each on a virtual clock: testdata/wake_join's main sleeps until
# both workers are gone on the host, then joins them, and each
# pthread_join finds the clear-tid word 0 and makes no futex wait; at 10
# us an instruction the workers' spins end long after that in virtual
# time (12 and 24 s: main's sleeps count the host's time, which under a
# loaded machine passed 300 ns an instruction's 0.36 s, and a join that
# rightly waited for nothing then failed the test). Before the fix the joins took a few instructions and the workers
# exited after main's exit_group. Now, three times: each worker's exit
# comes before main's exit_group, wakes main (a truth "wake" line at the
# exit, within a wait of main: wakes.py waits) and has its
# sched:sched_waking record (wakes.py match, with Debian's perf); report
# (plain and --wakers) matches the truth model, main's join wait an
# [off-cpu] on a [kernel] (a user-mode block, as a fault that sleeps).
command -v qemu-x86_64 >/dev/null ||
	{ echo "qemu-x86_64 not installed (apt-get install qemu-user): skipped"; exit 77; }
. "$E2E_LIB"
. "$SRCDIR/tests/e2e/qemu/wake_checks.sh"
# (--mtc-period 9: an MTC every 16 us, longer than an instruction's 10 us;
# the emulator, like the hardware, sends one every period)
for i in 1 2 3; do
	n=join$i
	if ! "$PTFLAME" record --emulate=qemu -q --cpus 4 --ns-per-insn 10000 --mtc-period 9 -o "$n.data" \
		--truth "$n.truth" -- "$TESTDATA/wake_join" >"$n.out" 2>&1; then
		fail "$n: record failed: $(head -c 400 "$n.out")"
		continue
	fi
	expect_grep '^joined$' "$n.out" "$n: the program ran"
	# workers: the threads other than the first; their exits, wakes of main
	if msg=$(awk 'NR > 1 && !m { m = $4 }
		$5 == "exit" && $4 != m { ex[$4] = $1; nx++ }
		$5 == "syscall" && $6 == 231 && $4 == m { eg = $1 }
		$5 == "wake" && $6 == m { wk[$4] = $1 }
		END {
			if (nx != 2 || !eg) { print "want 2 worker exits and main exit_group, got " nx; exit 1 }
			for (w in ex) {
				if (ex[w] > eg) { printf "worker %s exits %d ns after main exit_group\n", w, ex[w] - eg; exit 1 }
				if (!(w in wk) || wk[w] != ex[w]) { print "worker " w " exit woke no main"; exit 1 }
			}
			print "2 worker exits before main exit_group, each waking main"
		}' "$n.truth"); then
		pass "$n: $msg"
	else
		fail "$n: $msg"
	fi
	wake_checks "$n" "T0<-*:2"
done
finish
