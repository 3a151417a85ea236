#!/usr/bin/perl
# Normalize sideband records to one comparable line each:
#   TID TIME_US KIND fields...
# from `perf script --show-task-events --show-mmap-events --show-switch-events`
# (mode "perf") or from `ptflame dump` (mode "dump"). Hex stays text (no
# 64-bit float trouble); 0 is written "0" as perf does.
use strict;
use warnings;

my $mode = shift or die "usage: norm.pl perf|dump < in\n";

sub hx { my $v = shift; $v = lc $v; return $v eq '0x0' ? '0' : $v; }
sub us {
	my $ns = shift;
	return sprintf("%d.%06d", int($ns / 1000000000), int(($ns % 1000000000) / 1000));
}

while (my $l = <STDIN>) {
	chomp $l;
	if ($mode eq 'perf') {
		next unless $l =~ /(-?\d+) +\[[ \d-]+\] +(\d+\.\d+): (PERF_RECORD_\S+)(.*)$/;
		my ($tid, $t, $kind, $rest) = ($1, $2, $3, $4);
		$kind =~ s/^PERF_RECORD_//;
		$kind =~ s/:$//;
		$rest =~ s/\s+$//;
		if ($kind eq 'COMM') {
			my $exec = $rest =~ s/^ exec:// ? 'exec' : 'noexec';
			$rest =~ s/^:?\s*//;
			$rest =~ /^(.*):(-?\d+)\/(-?\d+)$/ or die "bad COMM: $l\n";
			print "$tid $t COMM $2/$3 $1 $exec\n";
		} elsif ($kind eq 'MMAP2') {
			$rest =~ /^ (-?\d+\/-?\d+): \[(0x[0-9a-f]+|0)\((0x[0-9a-f]+|0)\) @ (0x[0-9a-f]+|0) ([0-9a-f]+:[0-9a-f]+) (\d+) (\d+)\]: (\S+) (.*)$/
				or die "bad MMAP2: $l\n";
			print "$tid $t MMAP2 $1 ", hx($2), " ", hx($3), " ", hx($4), " $5 $6 $7 $8 $9\n";
		} elsif ($kind eq 'MMAP') {
			$rest =~ /^ (-?\d+\/-?\d+): \[(0x[0-9a-f]+|0)\((0x[0-9a-f]+|0)\) @ (0x[0-9a-f]+|0)\]: (\S+) (.*)$/
				or die "bad MMAP: $l\n";
			print "$tid $t MMAP $1 ", hx($2), " ", hx($3), " ", hx($4), " $5 $6\n";
		} elsif ($kind =~ /^(FORK|EXIT)\((-?\d+):(-?\d+)\):\((-?\d+):(-?\d+)\)$/) {
			print "$tid $t $1 $2:$3 $4:$5\n";
		} elsif ($kind eq 'SWITCH' || $kind eq 'SWITCH_CPU_WIDE') {
			my @w = split ' ', $rest;
			my $dir = $w[0];
			my $pre = (@w > 1 && $w[1] eq 'preempt') ? ' preempt' : '';
			my $np = '';
			if ($kind eq 'SWITCH_CPU_WIDE') {
				$rest =~ /pid\/tid:\s*(-?\d+)\/(-?\d+)/ or die "bad SWITCH: $l\n";
				$np = " $1/$2";
			}
			print "$tid $t $kind $dir$pre$np\n";
		}
		next;
	}
	# dump mode
	next unless $l =~ /^0x[0-9a-f]+ \[0x[0-9a-f]+\] (\S+)(.*?)(?: \| (.*))?$/;
	my ($kind, $body, $trail) = ($1, $2, $3 // '');
	my %t = $trail =~ /(\w+) (\S+)/g;
	my $tid = $t{tid} // '-1';
	my $t = us($t{time} // 0);
	my %b;
	# key value pairs, skipping bare flag words
	my @w = split ' ', $body;
	for (my $i = 0; $i < @w; $i++) {
		if ($w[$i] =~ /^(exec|in|out|preempt|not_preempt|data)$/) { $b{$w[$i]} = 1; next; }
		$b{$w[$i]} = $w[$i + 1];
		$i++;
	}
	my $unesc = sub { my $s = shift; $s =~ s/\\x([0-9a-f]{2})/chr(hex($1))/ge; $s };
	if ($kind eq 'COMM') {
		print "$tid $t COMM $b{pid}/$b{tid} ", $unesc->($b{comm}), " ",
			($b{exec} ? 'exec' : 'noexec'), "\n";
	} elsif ($kind eq 'MMAP2') {
		my $dev = $b{build_id} ? $b{build_id} : sprintf("%02x:%02x", $b{maj}, $b{min});
		print "$tid $t MMAP2 $b{pid}/$b{tid} ", hx($b{start}), " ", hx($b{len}), " ",
			hx($b{pgoff}), " $dev $b{ino} $b{ino_generation} $b{perm} ",
			$unesc->($b{file}), "\n";
	} elsif ($kind eq 'MMAP') {
		print "$tid $t MMAP $b{pid}/$b{tid} ", hx($b{start}), " ", hx($b{len}), " ",
			hx($b{pgoff}), " ", ($b{data} ? 'r' : 'x'), " ", $unesc->($b{file}), "\n";
	} elsif ($kind eq 'FORK' || $kind eq 'EXIT') {
		print "$tid $t $kind $b{pid}:$b{tid} $b{ppid}:$b{ptid}\n";
	} elsif ($kind eq 'SWITCH' || $kind eq 'SWITCH_CPU_WIDE') {
		my $dir = $b{out} ? 'OUT' : 'IN';
		my $pre = $b{preempt} ? ' preempt' : '';
		my $np = '';
		if ($kind eq 'SWITCH_CPU_WIDE') {
			$np = $b{out} ? " $b{next_pid}/$b{next_tid}" : " $b{prev_pid}/$b{prev_tid}";
		}
		print "$tid $t $kind $dir$pre$np\n";
	}
}
