#!/bin/bash
# Without CYC, the thread a TIP.PGE belongs to is picked among the stints
# the sideband has on its CPU in one MTC period (session.c, "the thread at
# a TIP.PGE"). After clone, parent and child resume at the same ip; a
# parent preempted right after clone returned gave its empty stint's
# successor, the child's first code, to itself, and from there the two
# threads' code was swapped (a CI recording lost 1.96 ms of a thread's
# 9.86 ms). Each thread's first decoded branch must be its own, the one
# the truth log has first for it, on 2 CPUs at 1 and 7 ns per instruction
# and MTC period 9 (16 us). Recordings differ from run to run and a rarer
# case is still open (a thread's code after a switch-out the session had
# already applied: about 1 recording in 30 here), so of 10 recordings at
# most 3 may have a wrong first branch. The decoder before the fix had one
# in 9 of 12 recordings on an idle machine, where this check fails it
# nearly always, but only in 2-4 of 10 while the test suite ran beside it,
# where the check caught it in 1 run of 3; a deterministic test of the
# rule is test_pge_clone (tests/unit).
. "$E2E_LIB"
first() {  # FILE KIND_COL FROM_COL: the first branch of each thread but the process's
	awk -v k="$2" -v f="$3" '$1 !~ /^#/ && $4 != $3 && $k ~ /^(call|ret|jump)$/ && !seen[$4]++ {
		print $4, $k, $f, $(f + 1) }' "$1" | sort
}
wrong=0 total=0
for i in 1 2 3 4 5; do
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
		if [ "$(wc -l <"$n.want")" -ne 2 ]; then fail "$n: not 2 threads in the truth: $(cat "$n.want")"; continue; fi
		total=$((total + 1))
		cmp -s "$n.want" "$n.got" ||
			{ wrong=$((wrong + 1)); echo "$n: first branches $(tr '\n' ' ' <"$n.got"), truth $(tr '\n' ' ' <"$n.want")"; }
	done
done
if [ "$total" -eq 10 ] && [ "$wrong" -le 3 ]; then pass "each thread's first branch is its own in $((total - wrong)) of $total recordings"
else fail "each thread's first branch its own in $((total - wrong)) of $total recordings (at least 7 of 10)"; fi
finish
