#!/usr/bin/perl
# futexwait.pl TRUTH MAX_NS: for every futex wait that blocked (syscall 202
# then switch-out block), the thread's sysret must come after, and within
# MAX_NS of, the latest futex call or exit of ANOTHER thread before it.
# Prints "WAITS BAD".
use strict;
use warnings;
my ($truth, $max) = @ARGV;
open(my $t, '-|', 'sort', '-s', '-n', '-k1,1', $truth) or die "$truth: $!\n";
my (%pending, %blocked, %last);
my ($n, $bad) = (0, 0);
while (<$t>) {
	next if /^#/;
	my @F = split;
	my ($time, $tid, $ev) = ($F[0], $F[3], $F[4]);
	if ($ev eq 'syscall' && ($F[5] == 202 || $F[5] == 60)) {
		$last{$tid} = $time;
		$pending{$tid} = $F[5] == 202;
	} elsif ($ev eq 'switch-out' && $F[5] eq 'block' && $pending{$tid}) {
		$blocked{$tid} = 1;
	} elsif ($ev eq 'sysret' && $F[5] == 202 && $blocked{$tid}) {
		my ($w) = sort { $b <=> $a } map { $last{$_} } grep { $_ != $tid } keys %last;
		$n++;
		$bad++ if !defined $w || $time < $w || $time - $w > $max;
		delete $blocked{$tid};
	}
	$pending{$tid} = 0 if $ev ne 'syscall' && $ev ne 'switch-out';
}
print "$n $bad\n";
