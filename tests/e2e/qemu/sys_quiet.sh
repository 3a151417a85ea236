#!/bin/bash
# Syscalls that do not sleep last their work, not the host's run queue
# (record/qemu.c: sys_duration, the RET of a held syscall in step; the
# plugin's rc_qp_ret cpu_ns and vcsw). testdata/sys_quiet makes 7,500
# syscalls that never sleep (getpid, a futex wake with no waiter, writes to
# /dev/null and to an eventfd, a futex wait that finds its word changed:
# EAGAIN) while busy loops keep every host CPU taken, so that qemu's
# thread is preempted, often in the middle of one. Before the fix each
# lasted its host wall time (up to 8 ms of [kernel] for a write, measured
# on 2 loaded CPUs) and every futex wait left its CPU at its entry
# (1,500 switch-outs, [off-cpu] with no wake in report --wakers). Now,
# three times: each lasts at most 1 ms (its host thread's CPU time in it:
# 1 us typical, 32 us the most seen under two busy loops on 2 CPUs; a host
# time slice, what a preemption costs, is some ms); main leaves no CPU
# before its exit_group; report has no [off-cpu] and no [preempted], and
# its slowest call of each function is under 1 ms.
command -v qemu-x86_64 >/dev/null ||
	{ echo "qemu-x86_64 not installed (apt-get install qemu-user): skipped"; exit 77; }
. "$E2E_LIB"
BUSY=()
nb=$(nproc 2>/dev/null || echo 2)
[ "$nb" -gt 8 ] && nb=8
for ((k = 0; k < nb; k++)); do
	( while :; do :; done ) &
	BUSY+=($!)
done
trap 'kill "${BUSY[@]}" 2>/dev/null; rm -rf "$T"' EXIT
LIMIT=1000000   # ns
to_ns() { awk -v v="$1" -v u="$2" 'BEGIN { m = u == "s" ? 1e9 : u == "ms" ? 1e6 : u == "ns" ? 1 : 1e3; printf "%.0f", v * m }'; }
for i in 1 2 3; do
	n=quiet$i
	if ! "$PTFLAME" record --emulate=qemu -q -o "$n.data" --truth "$n.truth" -- \
		"$TESTDATA/sys_quiet" >"$n.out" 2>&1; then
		fail "$n: record failed: $(head -c 400 "$n.out")"
		continue
	fi
	expect_grep '^quiet 1500$' "$n.out" "$n: the program ran"
	if msg=$(awk -v lim=$LIMIT '$1 ~ /^[0-9]+$/ && !m { m = $4 }
		$4 != m { next }
		$5 == "syscall" && $6 == 231 { eg = 1 }
		$5 == "syscall" { nr = $6; t0 = $1 }
		$5 == "switch-out" && !eg { out++ }
		$5 == "sysret" && (nr == 39 || nr == 202 || nr == 1) {
			d = $1 - t0; nq++
			if (d > max) { max = d; mnr = nr }
		}
		END {
			if (nq < 7500) { print "want 7500 quiet syscalls of main (and its printf), got " nq; exit 1 }
			if (max > lim) { print "a syscall " mnr " lasted " max " ns"; exit 1 }
			if (out) { print out " switch-outs of main before its exit_group"; exit 1 }
			print nq " quiet syscalls, the longest " max " ns (syscall " mnr "), no switch-out"
		}' "$n.truth"); then
		pass "$n: $msg"
	else
		fail "$n: $msg"
	fi
	if "$PTFLAME" report -q -i "$n.data" >"$n.rep" 2>"$n.rep.err" &&
		! grep -E '\[off-cpu\]|\[preempted\]' "$n.rep" >"$n.off"; then
		pass "$n: report: no [off-cpu], no [preempted]"
	else
		fail "$n: report: $(head -c 300 "$n.rep.err") $(head -c 400 "$n.off")"
	fi
	for f in q_getpid q_wake q_devnull q_eventfd q_eagain; do
		"$PTFLAME" report -q -i "$n.data" --slowest 1 $f >"$n.$f" 2>&1
		read -r v u < <(awk -v f=$f '$1 == "#1" && $2 == f { sub(/,$/, "", $4); print $3, $4 }' "$n.$f")
		if [ -n "${v:-}" ] && [ "$(to_ns "$v" "$u")" -le $LIMIT ]; then
			pass "$n: slowest $f $v $u"
		else
			fail "$n: slowest $f: $(head -c 400 "$n.$f")"
		fi
	done
done
finish
