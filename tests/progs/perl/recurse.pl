#!/usr/bin/perl
# A known chain for cfiprof's Perl frames: <main> -> Work::run -> recurse x5 -> leaf, the
# leaf spinning on the line marked LEAF; and sort's comparator (a runops loop of its own,
# called from pp_sort's C code) calling leaf.  With PERL_BACKTRACE set (to the line of the
# mark LEAF) it prints both chains as perl itself sees them (caller()), in cfiprof's form,
# root first, and exits: the oracle.  A fixed amount of work, not of time.
use strict;
use warnings;

my %seen;

sub leaf {
	my ($n) = @_;
	trace_chain() if $ENV{PERL_BACKTRACE};
	my $x = 0;
	for my $i (1 .. $n) { $x += $i * $i; } # LEAF
	return $x;
}

sub recurse {
	my ($depth, $n) = @_;
	return leaf($n) if $depth == 0;
	return recurse($depth - 1, $n);
}

# "name (file:line)" of each frame, root first: a sub's line is the one it called its
# callee from (caller()'s line of the frame inside it); the main code's the outermost call's.
sub trace_chain {
	my @out;
	my $line = $ENV{PERL_BACKTRACE};
	for (my $i = 1; my @c = caller($i); $i++) {
		push @out, "$c[3] ($c[1]:$line)";
		$line = $c[2];
	}
	my $chain = join(';', "<main> ($0:$line)", reverse @out);
	$seen{$chain}++ or print "$chain\n";
	exit 0 if keys %seen == 2;
}

package Work;

sub run {
	my ($class, $iterations) = @_;
	my $sum = 0;
	for (1 .. $iterations) {
		$sum += main::recurse(4, 20000);
		my @sorted = sort { main::leaf(3000) <=> main::leaf(3000) } (1 .. 3);
	}
	return $sum;
}

package main;

print Work->run($ARGV[0] // 100), "\n";
