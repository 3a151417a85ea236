#!/bin/bash
# Waits past the old limits of the fd wake keys (record/qemu.c parse_chunk,
# poll_wake, pipe_read_msg; record/wake_keys.h wk_wait_keys; the stepper's
# virtual_duration). testdata/wake_fdlim's waiter blocks in a poll, an
# epoll_wait and a select of 64 pipes, each woken through a pipe past the
# 30th, then in two recvs of 4 bytes from a datagram socketpair, each woken
# by a send of 8 bytes. Before, a wait sent at most 30 keys: the three
# polls kept their host time (they ended seconds of virtual time before
# the write, with no wake); and a datagram read was counted by bytes: the
# second recv took the first send's other 4 bytes and ended at it, before
# it began. Now each ends no earlier than its action, which wakes it (a
# truth "wake" of the waiter by main at the action, its sched:sched_waking
# record, report matching the truth), on both backends.
command -v qemu-x86_64 >/dev/null ||
	{ echo "qemu-x86_64 not installed (apt-get install qemu-user): skipped"; exit 77; }
. "$E2E_LIB"
. "$SRCDIR/tests/e2e/qemu/wake_checks.sh"
NS=10000
for n in fl1 flp; do
	be=qemu spins=100000
	[ $n = flp ] && be=ptrace spins=2000
	if ! "$PTFLAME" record --emulate=$be -q --cpus 4 --ns-per-insn $NS -o "$n.data" \
		--truth "$n.truth" -- "$TESTDATA/wake_fdlim" $spins >"$n.out" 2>&1; then
		fail "$n: record failed: $(head -c 400 "$n.out")"
		continue
	fi
	expect_grep '^fdlim waits 5$' "$n.out" "$n: the program ran"
	if msg=$(awk -v ns=$NS '
		BEGIN {
			nw = split("7 232 270 45 45", W)
			split("1 1 1 44 44", A)
			split("poll64/write epoll64/write select64/write dgram-recv/send dgram-recv2/send", N)
			wi = ai = 1
		}
		$1 !~ /^[0-9]+$/ { next }
		!m { m = $4 }
		$5 == "comm" && $6 == "fd-waiter" { wt = $4 }
		!wt { next }
		$4 == m && $5 == "syscall" && ai <= nw && $6 == A[ai] { a[ai++] = $1 }
		$4 == wt && $5 == "syscall" && wi <= nw && $6 == W[wi] && !open { s[wi] = $1; open = 1 }
		$4 == wt && open && ($5 == "sysret" || $5 == "signal") { r[wi++] = $1; open = 0 }
		$5 == "wake" && $4 == m && $6 == wt { wk[$1] = 1 }
		END {
			if (wi <= nw || ai <= nw) { printf "want %d waits and actions, got %d, %d\n", nw, wi - 1, ai - 1; exit 1 }
			bad = 0
			for (k = 1; k <= nw; k++) {
				if (r[k] < a[k]) { printf "%d %s: the wait ends %.0f ns before its action\n", k, N[k], a[k] - r[k]; bad = 1 }
				if (!(sprintf("%.0f", a[k] + ns) in wk)) { printf "%d %s: the action woke no waiter\n", k, N[k]; bad = 1 }
			}
			if (bad) exit 1
			print "each of the 5 waits ends no earlier than its action, which wakes the waiter"
		}
		' "$n.truth"); then
		pass "$n: $msg"
	else
		fail "$n: $msg"
	fi
	wake_checks "$n" "T1<-T0:5"
done
finish
