#!/bin/bash
# Without CYC, the thread a TIP.PGE belongs to is picked among the stints
# the sideband has on its CPU in one MTC period (session.c, "the thread at
# a TIP.PGE"). After clone, parent and child resume at the same ip; a
# parent preempted right after clone returned gave its empty stint's
# successor, the child's first code, to itself, and from there the two
# threads' code was swapped (a CI recording lost 1.96 ms of a thread's
# 9.86 ms). Each thread's first decoded branch must be its own, the one
# the truth log has first for it: on 2 CPUs, 1 and 7 ns per instruction,
# MTC period 9 (16 us), where 28 of 40 recordings had a child's first
# branch wrong before.
. "$E2E_LIB"
first() {  # FILE KIND_COL FROM_COL: the first branch of each thread but the process's
	awk -v k="$2" -v f="$3" '$1 !~ /^#/ && $4 != $3 && $k ~ /^(call|ret|jump)$/ && !seen[$4]++ {
		print $4, $k, $f, $(f + 1) }' "$1" | sort
}
for i in 1 2 3; do
	for ns in 1 7; do
		n=c$i-ns$ns
		if ! "$PTFLAME" record --emulate=ptrace -q -o "$n.data" --truth "$n.truth" --no-cyc \
			--ns-per-insn "$ns" --mtc-period 9 --cpus 2 --time-slice 300 \
			-- "$TESTDATA/emu_threads" >"$n.rec" 2>&1; then
			fail "record $n: $(head -c 300 "$n.rec")"; continue
		fi
		"$DC_EVENTS" "$n.data" >"$n.ev" 2>"$n.err" || { fail "dc_events $n: $(head -c 300 "$n.err")"; continue; }
		first "$n.truth" 5 6 >"$n.want"
		first "$n.ev" 5 7 >"$n.got"
		if [ "$(wc -l <"$n.want")" -ne 2 ]; then fail "$n: not 2 threads in the truth: $(cat "$n.want")"
		elif cmp -s "$n.want" "$n.got"; then pass "$n: each thread's first branch is its own"
		else fail "$n: first branches $(tr '\n' ' ' <"$n.got"), truth $(tr '\n' ' ' <"$n.want")"; fi
	done
done
finish
