#!/bin/bash
# Waits on sockets, an eventfd, epoll/poll/select and signals that a traced
# thread ends (record/qemu.c: parse_chunk's wake keys, qemu_proto.h
# RC_QP_KEY_*; the plugin's fd_key, wait_keys). testdata/wake_fd's waiter
# blocks in 12 waits in turn (recv, EOF, eventfd read, epoll_wait, poll,
# select, unix and TCP accept, TCP recv, sigwait, sigsuspend, a read
# interrupted by a signal); main waits until the kernel says it sleeps, spins
# (at 10 us an instruction: seconds of virtual time, milliseconds on the
# host) and does what ends the wait (send, shutdown, eventfd write, pipe
# write, connect, pthread_kill). Before the fix each wait took its host
# duration: it ended seconds of virtual time before its cause, with no wake.
# Now each ends no earlier than its cause, which wakes it (a truth "wake" of
# the waiter by main at the action), with its sched:sched_waking record
# (wakes.py match, with Debian's perf); report (plain and --wakers) matches
# the truth model. The ptrace stepper (record/emulate.c, the same keys:
# record/wake_keys.h) as well, at fewer spins (it steps each instruction),
# the read a signal interrupted too (virtual_duration's sig_intr; before
# 2026-11-28 it matched no interrupted call: that read kept its host time,
# no wake, and its fdp check asked 11 wakes). Before it matched the accepts (to their
# connect), an accept lasted its host time, the waiter's clock ran hundreds
# of ms ahead of main's, the next waits' wakes were stamped before the
# waits began, and report --wakers gave them to the accept's [off-cpu] or
# to none (21 us vs 10.5 on a recv's [off-cpu]: 1 run in 4; 12 of 12, two
# at once, on a loaded host).
command -v qemu-x86_64 >/dev/null ||
	{ echo "qemu-x86_64 not installed (apt-get install qemu-user): skipped"; exit 77; }
. "$E2E_LIB"
. "$SRCDIR/tests/e2e/qemu/wake_checks.sh"
# (an MTC every 16 us, longer than an instruction's 10 us: the emulator,
# like the hardware, sends one every period, 39 an instruction at period 3)
NS=10000 MTC=9
for n in fd1 fd2 fdp; do
	be=qemu spins=100000 nowake= want=12
	[ $n = fdp ] && be=ptrace spins=2000
	if ! "$PTFLAME" record --emulate=$be -q --cpus 4 --ns-per-insn $NS --mtc-period $MTC -o "$n.data" \
		--truth "$n.truth" -- "$TESTDATA/wake_fd" $spins >"$n.out" 2>&1; then
		fail "$n: record failed: $(head -c 400 "$n.out")"
		continue
	fi
	expect_grep '^fd waits 12$' "$n.out" "$n: the program ran"
	if msg=$(awk -v ns=$NS -v nowake="$nowake" \
		-v waits="45 0 0 232 7 270 43 43 45 128 130 0" \
		-v acts="44 48 1 1 1 44 42 42 44 234 234 234" \
		-v names="recv/send shutdown/EOF eventfd-read/write epoll/write poll/write select/send unix-accept/connect tcp-accept/connect tcp-recv/send sigwait/tgkill sigsuspend/tgkill EINTR/tgkill" \
		-f "$SRCDIR/tests/e2e/qemu/wait_action.awk" "$n.truth"); then
		pass "$n: $msg"
	else
		fail "$n: $msg"
	fi
	wake_checks "$n" "T1<-T0:$want"
done
finish
