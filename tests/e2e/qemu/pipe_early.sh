#!/bin/bash
# Pipe reads of data that was already there on the host (record/qemu.c:
# parse_chunk's pipe accounting, struct qpipe). qemu runs the guest's
# threads and processes in parallel for real, but each on a virtual clock:
# testdata/wake_pipe_early's reader sleeps until the host says both of
# main's bytes are in the pipe, then reads them one at a time, and neither
# read blocks on the host; at 10 us an instruction main's spins put each
# write long after the reads began in virtual time. Before the fix both
# reads took their host duration (the write's entry came before the
# read's in the pipe: no wake was looked for) and returned hundreds of ms
# of virtual time before main wrote. Now, as a thread and as a forked
# process (--follow-fork), twice each: the first read ends at the write of
# "a" (not before it, and before "b" was written: it took only "a"), the
# second at the write of "b", each woken by that write (a truth "wake" line
# at the write, within a wait of the reader: wakes.py waits), with its
# sched:sched_waking record (wakes.py match, with Debian's perf); report
# (plain and --wakers) matches the truth model.
command -v qemu-x86_64 >/dev/null ||
	{ echo "qemu-x86_64 not installed (apt-get install qemu-user): skipped"; exit 77; }
. "$E2E_LIB"
. "$SRCDIR/tests/e2e/qemu/wake_checks.sh"
# (an MTC every 16 us, longer than an instruction's 10 us: the emulator,
# like the hardware, sends one every period, 39 an instruction at period 3)
NS=10000 MTC=9
for mode in thread fork; do
	for i in 1 2; do
		n=$mode$i
		args=()
		ff=()
		[ "$mode" = fork ] && args=(fork) && ff=(--follow-fork)
		if ! "$PTFLAME" record --emulate=qemu -q "${ff[@]}" --cpus 4 --ns-per-insn $NS --mtc-period $MTC \
			-o "$n.data" --truth "$n.truth" -- "$TESTDATA/wake_pipe_early" "${args[@]}" \
			>"$n.out" 2>&1; then
			fail "$n: record failed: $(head -c 400 "$n.out")"
			continue
		fi
		expect_grep '^read ab$' "$n.out" "$n: the program ran"
		# main: the first thread; the reader: the one named pe-reader
		if msg=$(awk -v ns=$NS '$1 ~ /^[0-9]+$/ && !m { m = $4 }
			$5 == "comm" && $6 == "pe-reader" { rd = $4 }
			$5 == "syscall" && $6 == 1 && $4 == m && nw < 2 { w[++nw] = $1 }
			$5 == "sysret" && $6 == 0 && rd && $4 == rd && nr < 2 { r[++nr] = $1 }
			$5 == "wake" && $4 == m && rd && $6 == rd { wk[$1] = 1 }
			END {
				if (nw != 2 || nr != 2) { print "want 2 writes of main and 2 reads of pe-reader, got " nw ", " nr; exit 1 }
				if (r[1] < w[1]) { printf "read 1 returns %.0f ns before the write of a\n", w[1] - r[1]; exit 1 }
				if (r[1] >= w[2]) { printf "read 1 returns %.0f ns after the write of b\n", r[1] - w[2]; exit 1 }
				if (r[2] < w[2]) { printf "read 2 returns %.0f ns before the write of b\n", w[2] - r[2]; exit 1 }
				for (k = 1; k <= 2; k++)
					if (!(sprintf("%.0f", w[k] + ns) in wk)) { print "write " k " woke no reader"; exit 1 }
				print "each read ends at its write, which wakes the reader"
			}' "$n.truth"); then
			pass "$n: $msg"
		else
			fail "$n: $msg"
		fi
		wake_checks "$n" "T1<-T0:2"
	done
done
finish
