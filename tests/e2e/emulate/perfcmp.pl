#!/usr/bin/perl
# perfcmp.pl TRUTH PERF_SCRIPT_OUT MAX_DT_NS
# Compare the calls and returns `perf script --itrace=cr --ns -F
# pid,tid,time,flags,ip,addr` printed with the emulator's truth log, per
# thread and in order (kind, from, to), and check that each time perf
# printed is within MAX_DT_NS of the truth's. Prints one summary line per
# thread; exit 0 when everything matches.
use strict;
use warnings;
no warnings "portable";

my ($truth, $perf, $maxdt) = @ARGV;
die "usage: perfcmp.pl TRUTH PERF_OUT MAX_DT_NS\n" unless defined $maxdt;

my (%want, %got);
open(my $t, '<', $truth) or die "$truth: $!\n";
while (<$t>) {
	next if /^#/;
	my ($time, $cpu, $pid, $tid, $ev, $from, $to) = split;
	next unless $ev eq 'call' || $ev eq 'ret';
	push @{$want{$tid}}, [$ev, hex($from), hex($to), $time];
}
close $t;

open(my $p, '<', $perf) or die "$perf: $!\n";
my $bad_lines = 0;
while (<$p>) {
	if (/^\s*(\d+)\/(\d+)\s+(\d+)\.(\d{9}):\s+(.*?)\s+([0-9a-f]+) =>\s+([0-9a-f]+)\s*$/) {
		my ($tid, $ns, $flags) = ($2, $3 * 1000000000 + $4, $5);
		my $ev = $flags eq 'call' ? 'call' : $flags eq 'return' ? 'ret' : next;
		push @{$got{$tid}}, [$ev, hex($6), hex($7), $ns];
	} elsif (/instruction trace error/) {
		print STDERR "perf: $_";
		$bad_lines++;
	}
}
close $p;

my $fail = $bad_lines;
my %tids = (%want, %got);
for my $tid (sort { $a <=> $b } keys %tids) {
	my $w = $want{$tid} // [];
	my $g = $got{$tid} // [];
	my $n = @$w < @$g ? @$w : @$g;
	my $i = 0;
	$i++ while $i < $n && $w->[$i][0] eq $g->[$i][0] && $w->[$i][1] == $g->[$i][1] &&
		   $w->[$i][2] == $g->[$i][2];
	if ($i != @$w || $i != @$g) {
		my $fmt = sub { my $e = shift; $e ? sprintf("%s %#x -> %#x", @$e[0..2]) : 'nothing' };
		printf STDERR "tid %d: truth has %d calls/returns, perf %d; #%d differs: truth %s, perf %s\n",
			$tid, scalar @$w, scalar @$g, $i, $fmt->($w->[$i]), $fmt->($g->[$i]);
		$fail++;
		next;
	}
	my ($worst, $late) = (0, 0);
	for my $k (0 .. $#$w) {
		my $dt = $w->[$k][3] - $g->[$k][3];
		$worst = abs($dt) if abs($dt) > $worst;
		if (abs($dt) > $maxdt) {
			printf STDERR "tid %d: #%d %s %#x: truth time %d, perf %d (%+d ns)\n", $tid, $k,
				$w->[$k][0], $w->[$k][1], $w->[$k][3], $g->[$k][3], $dt if $late < 5;
			$late++;
		}
	}
	$fail++ if $late;
	printf "tid %d: %d calls/returns match, max |dt| %d ns%s\n", $tid, scalar @$w, $worst,
		$late ? " ($late beyond $maxdt)" : '';
}
exit($fail ? 1 : 0);
