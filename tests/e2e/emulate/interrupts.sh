#!/bin/bash
# record --emulate --inject-interrupts (issue 11 item 11: real user-only
# traces are full of asynchronous exits): every emu_* testdata program on
# 1 CPU and on 3 CPUs, both with 300-instruction time slices (preemption),
# at two rates. For each recording:
#  - the truth log has interrupts, and each "interrupt IP" is a perf
#    "tr end async" at IP of that thread followed by its "tr strt" at IP
#    (FUP + TIP.PGD, then TIP.PGE where the thread was);
#  - perf script --itrace=cr decodes it without a warning or error, and its
#    calls and returns are the truth's, in order, times within an MTC
#    period (perfcmp.pl, as perf.sh);
#  - ptflame report (and --per-thread) is exact against the truth model
#    (truth_profile.py compare: the dwell is [kernel] time on the stack).
# Run by e2e-emulate-interrupts (ptrace) and e2e-qemu-interrupts.
. "$REPORT_DIR/common.sh"
MAXDT=288
command -v perf >/dev/null || { echo "perf not installed: skipped"; exit 77; }

# async_pairs TRUTH PERF: every truth interrupt has its async end and
# restart at the same ip in perf's output (per thread, in order)
async_pairs() {
	perl -e '
		my ($truth, $perf) = @ARGV;
		my (%want, %got);
		open(my $t, "<", $truth) or die "$truth: $!";
		while (<$t>) {
			my @f = split;
			push @{$want{$f[3]}}, hex($f[5]) if @f > 5 && $f[4] eq "interrupt";
		}
		open(my $p, "<", $perf) or die "$perf: $!";
		my %prev;
		while (<$p>) {
			next unless /^\s*\d+\/(\d+)\s+\S+:\s+tr (end|strt)\s*(\S*)\s+([0-9a-f]+) =>\s+([0-9a-f]+)/;
			my ($tid, $what, $fl, $from, $to) = ($1, $2, $3, hex($4), hex($5));
			if ($what eq "end" && $fl eq "async") { $prev{$tid} = $from; next; }
			if ($what eq "strt" && defined $prev{$tid} && $prev{$tid} == $to) {
				push @{$got{$tid}}, $to;
			}
			delete $prev{$tid};
		}
		my ($n, $bad) = (0, 0);
		for my $tid (keys %want) {
			my @g = @{$got{$tid} || []};
			for my $ip (@{$want{$tid}}) {
				$n++;
				shift @g while @g && $g[0] != $ip;
				if (!@g) { printf "tid %d: interrupt at %#x: no async end + restart there\n", $tid, $ip; $bad++; last; }
				shift @g;
			}
		}
		print "$n interrupts, each an async trace end and restart at its ip\n";
		exit($bad || !$n ? 1 : 0);
	' "$1" "$2"
}

run() {  # NAME PROG [record options]
	local n=$1 p=$2; shift 2
	record "$n" "emu_$p" "$@" || return
	local k; k=$(grep -c ' interrupt ' "$n.truth")
	[ "$k" -gt 0 ] || { fail "$n: no interrupt in the truth log"; return; }
	perf script --itrace=cr --ns -F pid,tid,time,flags,ip,addr -i "$n.data" >"$n.perf" 2>"$n.perferr"
	if grep -qi "error\|warning" "$n.perferr"; then
		fail "$n: perf complained: $(head -c 300 "$n.perferr")"
	elif perl "$EMU_DIR/perfcmp.pl" "$n.truth" "$n.perf" "$MAXDT" >"$n.cmp" 2>&1; then
		pass "$n: perf: $(tr '\n' ';' <"$n.cmp")"
	else
		fail "$n: perf: $(head -c 600 "$n.cmp")"
	fi
	if async_pairs "$n.truth" "$n.perf" >"$n.pairs" 2>&1; then pass "$n: $(cat "$n.pairs")"
	else fail "$n: $(head -c 600 "$n.pairs")"; fi
	for v in "" --per-thread; do
		report "$n.out$v" -i "$n.data" $v || continue
		if $TP compare "$n.truth" "$n.out$v" $v >"$n.cmp$v" 2>&1; then
			pass "$n $v ($k interrupts): $(tail -1 "$n.cmp$v")"
		else
			fail "$n $v ($k interrupts): $(head -c 1500 "$n.cmp$v")"
		fi
	done
}
for p in ${TRUTH_PROGRAMS:-$EMU_PROGRAMS}; do
	# (.cold parts are no interrupt question: report/truth.sh has them)
	case $p in cold|coldxx) continue ;; esac
	run "$p.irq1" "$p" --cpus 1 --time-slice 300 --inject-interrupts 20000 --seed 7
	run "$p.irq3" "$p" --cpus 3 --time-slice 300 --inject-interrupts 2000 --seed 11
done
# the same seed and schedule give the same exits (nested: one thread; the
# ips' page offsets, as ASLR moves the pages)
ipoffs() { awk '$5 == "interrupt" || $5 == "iret" {print $5, substr($6, length($6) - 2)}' "$1"; }
if [ -s nested.irq1.truth ]; then
	record nested.again emu_nested --cpus 1 --time-slice 300 --inject-interrupts 20000 --seed 7
	a=$(ipoffs nested.irq1.truth | md5sum)
	b=$(ipoffs nested.again.truth | md5sum)
	if [ "$a" = "$b" ]; then pass "nested: --seed 7 twice, the same interrupts"
	else fail "nested: --seed 7 twice, other interrupts"; fi
	record nested.seed8 emu_nested --cpus 1 --time-slice 300 --inject-interrupts 20000 --seed 8
	if [ "$(ipoffs nested.seed8.truth | md5sum)" != "$a" ]; then pass "nested: --seed 8, other interrupts"
	else fail "nested: --seed 8 gave the interrupts of --seed 7"; fi
fi
# the model must notice the kernel time: without its interrupt lines the
# truth log does not fit the report
if [ -s nested.irq1.out ]; then
	grep -v ' interrupt \| iret ' nested.irq1.truth >bad.truth
	if $TP compare bad.truth nested.irq1.out >bad.cmp 2>&1; then
		fail "truth_profile.py accepted a truth log without its interrupts"
	else
		pass "truth_profile.py rejects a truth log without its interrupts"
	fi
fi
finish
