#!/usr/bin/perl
# Normalize the records of one perf.data, keyed by file offset:
#   OFFSET SIZE KIND [cpu C time T] fields...
# from `perf script -D` (mode "perf") or `ptflame dump` (mode "dump"), for
# COMM MMAP2 ITRACE_START SWITCH(_CPU_WIDE) FORK EXIT AUX AUXTRACE AUXTRACE_INFO.
use strict;
use warnings;
no warnings "portable";

my $mode = shift or die "usage: normD.pl perf|dump < in\n";
my @pt = qw(pmu_type time_shift time_mult time_zero cap_user_time_zero tsc_bit
	noretcomp_bit have_sched_switch snapshot_mode per_cpu_mmaps mtc_bit mtc_freq_bits
	tsc_ctc_ratio_n tsc_ctc_ratio_d cyc_bit max_non_turbo_ratio);
my %perfname = ('PMU Type' => 'pmu_type', 'Time Shift' => 'time_shift',
	'Time Muliplier' => 'time_mult', 'Time Zero' => 'time_zero',
	'Cap Time Zero' => 'cap_user_time_zero', 'TSC bit' => 'tsc_bit',
	'NoRETComp bit' => 'noretcomp_bit', 'Have sched_switch' => 'have_sched_switch',
	'Snapshot mode' => 'snapshot_mode', 'Per-cpu maps' => 'per_cpu_mmaps',
	'MTC bit' => 'mtc_bit', 'MTC freq bits' => 'mtc_freq_bits',
	'TSC:CTC numerator' => 'tsc_ctc_ratio_n', 'TSC:CTC denominator' => 'tsc_ctc_ratio_d',
	'CYC bit' => 'cyc_bit', 'Max non-turbo ratio' => 'max_non_turbo_ratio');

sub num { my $v = shift; return $v =~ /^0x/i ? hex($v) : $v; }
sub hx { my $v = lc shift; return $v eq '0x0' ? '0' : $v; }

my ($info, %info);
sub flush_info {
	return unless $info;
	print "$info ", join(' ', map { "$_ " . ($info{$_} // '?') } @pt), "\n";
	$info = undef;
	%info = ();
}

while (my $l = <STDIN>) {
	chomp $l;
	if ($mode eq 'perf') {
		if ($info && $l =~ /^  (.+?)\s+(\S+)$/ && $perfname{$1}) {
			$info{$perfname{$1}} = num($2);
			next;
		}
		# (no cpu column when the attrs do not sample it)
		next unless $l =~ /^(?:(-?\d+) )?(\d+) (0x[0-9a-f]+) \[(0x[0-9a-f]+)\]: PERF_RECORD_(\w+)(.*)$/;
		flush_info();
		my ($cpu, $t, $off, $size, $kind, $rest) = ($1 // -1, $2, $3, $4, $5, $6);
		my $k = "$off $size $kind";
		my $s = "cpu $cpu time $t";
		$rest =~ s/\s+$//;
		if ($kind eq 'COMM') {
			my $exec = $rest =~ s/^ exec:// ? 'exec' : 'noexec';
			$rest =~ s/^:?\s*//;
			$rest =~ /^(.*):(-?\d+)\/(-?\d+)$/ or die "bad COMM: $l\n";
			print "$k $s $2/$3 $1 $exec\n";
		} elsif ($kind eq 'MMAP2') {
			$rest =~ /^ (-?\d+\/-?\d+): \[(0x[0-9a-f]+|0)\((0x[0-9a-f]+|0)\) @ (0x[0-9a-f]+|0) ([0-9a-f]+:[0-9a-f]+) (\d+) (\d+)\]: (\S+) (.*)$/
				or die "bad MMAP2: $l\n";
			print "$k $s $1 ", hx($2), " ", hx($3), " ", hx($4), " $5 $6 $7 $8 $9\n";
		} elsif ($kind eq 'ITRACE_START') {
			$rest =~ /pid: (-?\d+) tid: (-?\d+)/ or die "bad ITRACE_START: $l\n";
			print "$k $s $1/$2\n";
		} elsif ($kind eq 'FORK' || $kind eq 'EXIT') {
			$rest =~ /^\((-?\d+):(-?\d+)\):\((-?\d+):(-?\d+)\)$/ or die "bad $kind: $l\n";
			print "$k $s $1:$2 $3:$4\n";
		} elsif ($kind =~ /^SWITCH/) {
			my @w = split ' ', $rest;
			my $pre = (@w > 1 && $w[1] eq 'preempt') ? ' preempt' : '';
			my $np = $rest =~ /pid\/tid:\s*(-?\d+)\/(-?\d+)/ ? " $1/$2" : '';
			print "$k $s $w[0]$pre$np\n";
		} elsif ($kind eq 'AUX') {
			$rest =~ /offset: (\S+) size: (\S+) flags: (\S+)/ or die "bad AUX: $l\n";
			print "$k $s ", num($1), " ", num($2), " ", num($3), "\n";
		} elsif ($kind eq 'AUXTRACE') {
			$rest =~ /size: (\S+)\s+offset: (\S+)\s+ref: (\S+)\s+idx: (\S+)\s+tid: (\S+)\s+cpu: (\S+)/
				or die "bad AUXTRACE: $l\n";
			print "$k ", join(' ', map { num($_) } ($1, $2, $3, $4, $5, $6)), "\n";
		} elsif ($kind eq 'AUXTRACE_INFO') {
			$rest =~ /type: (\d+)/;
			$info = "$k type $1";
		}
		next;
	}
	# (a record a compressed record held: "zstd" before its kind)
	next unless $l =~ /^(0x[0-9a-f]+) \[(0x[0-9a-f]+)\] (?:zstd )?(\S+)(.*?)(?: \| (.*))?$/;
	my ($off, $size, $kind, $body, $trail) = ($1, $2, $3, $4, $5 // '');
	my %t = $trail =~ /(\w+) (\S+)/g;
	my $k = "$off $size $kind";
	my $s = "cpu " . ($t{cpu} // -1) . " time " . ($t{time} // 0);
	my %b;
	my @w = split ' ', $body;
	for (my $i = 0; $i < @w; $i++) {
		if ($w[$i] =~ /^(exec|in|out|preempt|not_preempt|data|truncated|overwrite|partial|collision)$/) {
			$b{$w[$i]} = 1;
			next;
		}
		$b{$w[$i]} = $w[$i + 1];
		$i++;
	}
	if ($kind eq 'COMM') {
		print "$k $s $b{pid}/$b{tid} $b{comm} ", ($b{exec} ? 'exec' : 'noexec'), "\n";
	} elsif ($kind eq 'MMAP2') {
		print "$k $s $b{pid}/$b{tid} ", hx($b{start}), " ", hx($b{len}), " ", hx($b{pgoff}),
			sprintf(" %02x:%02x", $b{maj}, $b{min}), " $b{ino} $b{ino_generation} $b{perm} $b{file}\n";
	} elsif ($kind eq 'ITRACE_START') {
		print "$k $s $b{pid}/$b{tid}\n";
	} elsif ($kind eq 'FORK' || $kind eq 'EXIT') {
		print "$k $s $b{pid}:$b{tid} $b{ppid}:$b{ptid}\n";
	} elsif ($kind =~ /^SWITCH/) {
		my $np = '';
		$np = $b{out} ? " $b{next_pid}/$b{next_tid}" : " $b{prev_pid}/$b{prev_tid}"
			if $kind eq 'SWITCH_CPU_WIDE';
		print "$k $s ", ($b{out} ? 'OUT' : 'IN'), ($b{preempt} ? ' preempt' : ''), "$np\n";
	} elsif ($kind eq 'AUX') {
		print "$k $s ", num($b{aux_offset}), " ", num($b{aux_size}), " ", num($b{flags}), "\n";
	} elsif ($kind eq 'AUXTRACE') {
		print "$k ", join(' ', map { num($b{$_}) } qw(size offset reference idx tid cpu)), "\n";
	} elsif ($kind eq 'AUXTRACE_INFO') {
		print "$k type $b{type} ", join(' ', map { "$_ " . num($b{$_}) } @pt), "\n";
	}
}
flush_info();
