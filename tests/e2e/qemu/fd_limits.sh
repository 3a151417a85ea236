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
# (an MTC every 16 us, longer than an instruction's 10 us: the emulator,
# like the hardware, sends one every period, 39 an instruction at period 3)
NS=10000 MTC=9
for n in fl1 flp; do
	be=qemu spins=100000
	[ $n = flp ] && be=ptrace spins=2000
	if ! "$PTFLAME" record --emulate=$be -q --cpus 4 --ns-per-insn $NS --mtc-period $MTC -o "$n.data" \
		--truth "$n.truth" -- "$TESTDATA/wake_fdlim" $spins >"$n.out" 2>&1; then
		fail "$n: record failed: $(head -c 400 "$n.out")"
		continue
	fi
	expect_grep '^fdlim waits 5$' "$n.out" "$n: the program ran"
	if msg=$(awk -v ns=$NS \
		-v waits="7 232 270 45 45" \
		-v acts="1 1 1 44 44" \
		-v names="poll64/write epoll64/write select64/write dgram-recv/send dgram-recv2/send" \
		-f "$SRCDIR/tests/e2e/qemu/wait_action.awk" "$n.truth"); then
		pass "$n: $msg"
	else
		fail "$n: $msg"
	fi
	wake_checks "$n" "T1<-T0:5"
done
finish
