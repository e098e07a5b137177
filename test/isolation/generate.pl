#!/usr/bin/perl
# generate.pl — isolation specs per access method.
#
#   perl test/isolation/generate.pl --list   names of the generated tests
#   perl test/isolation/generate.pl OUTDIR   writes OUTDIR/specs/*.spec and
#                                            OUTDIR/expected/*.out
#
# Every test/isolation/NAME.spec is a template for every access method of
# test/t/HiAM.pm that the extension script creates (sql/ext/*.sql; an AM
# still being written is left out): @USING@ becomes the AM's first index
# configuration ("USING am (geom) WITH (...)"), @PAUSED_SCAN@ the function
# of paused_scan.sql. The steps print no AM-specific text, so every AM
# must produce test/isolation/expected/NAME.out exactly; the generated
# test NAME_AM compares against a copy of it.
use strict;
use warnings;

use Cwd qw(realpath);
use File::Basename qw(dirname basename);

my $dir;
BEGIN { $dir = dirname(realpath(__FILE__)); }
use lib "$dir/../t";
use HiAM;

my $root = realpath("$dir/../..");

sub slurp
{
	my ($f) = @_;
	open my $fh, '<', $f or die "cannot read $f: $!";
	local $/;
	return scalar <$fh>;
}

sub installed_ams
{
	my %am;
	for my $f (glob("$root/sql/ext/*.sql"))
	{
		my $sql = slurp($f);
		$am{ lc $1 } = 1 while $sql =~ /CREATE\s+ACCESS\s+METHOD\s+(\w+)/gi;
	}
	return grep { $am{ $_->{am} } } @HiAM::AMS;
}

my @templates = map { basename($_, '.spec') } sort glob("$dir/*.spec");
my @ams = installed_ams();
my @tests;
for my $t (@templates)
{
	push @tests, map { { name => "${t}_$_->{am}", template => $t, e => $_ } } @ams;
}

if (@ARGV && $ARGV[0] eq '--list')
{
	print join(' ', map { $_->{name} } @tests), "\n";
	exit 0;
}

my $out = shift @ARGV or die "usage: $0 --list | OUTDIR\n";
mkdir $out;
mkdir "$out/$_" for qw(specs expected);
my $paused = slurp("$dir/paused_scan.sql");
for my $test (@tests)
{
	my $spec = slurp("$dir/$test->{template}.spec");
	my $using = HiAM::index_clause($test->{e}, 0);
	$spec =~ s/\@USING\@/$using/g;
	$spec =~ s/\@PAUSED_SCAN\@/$paused/g;
	for my $f (["specs/$test->{name}.spec", $spec],
		["expected/$test->{name}.out", slurp("$dir/expected/$test->{template}.out")])
	{
		open my $fh, '>', "$out/$f->[0]" or die "cannot write $out/$f->[0]: $!";
		print $fh $f->[1];
		close $fh;
	}
}
