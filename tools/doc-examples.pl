#!/usr/bin/env perl
# doc-examples.pl — run the SQL examples of README.md and docs/*.md against
# a running cluster (the PG* environment variables, e.g. from
# `bash tools/pgcluster.sh env DIR PORT`), as test/t/090_doc_examples.pl
# does on a node of its own:
#
#   perl tools/doc-examples.pl [--tsroot DIR] [file.md ...]
#
# Each file runs in a new database doc_examples_N, dropped afterwards.
# Tablespaces and roles the examples create are not dropped here (they are
# cluster-wide): use a throw-away cluster. --list prints the blocks only.
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../test/t";
use Getopt::Long;
use HiDocs;

my $root = "$FindBin::RealBin/..";
my ($tsroot, $list) = ('/tmp/hi_doc_tablespaces', 0);
GetOptions('tsroot=s' => \$tsroot, 'list' => \$list) or die "usage: $0 [--tsroot DIR] [--list] [file.md ...]\n";
my @files = @ARGV ? @ARGV : HiDocs::doc_files($root);
my ($fail, $n) = (0, 0);
for my $file (@files)
{
	my $path = -e $file ? $file : "$root/$file";
	my @blocks = HiDocs::parse($path);
	next unless @blocks;
	if ($list)
	{
		printf "%s:%d%s\n", $file, $_->{line},
		  defined $_->{skip} ? " skip: $_->{skip}" : defined $_->{expect_error} ? " expect error: $_->{expect_error}" : ''
		  for @blocks;
		next;
	}
	my $db = 'doc_examples_' . ++$n;
	system('psql', '-X', '-q', '-d', 'postgres', '-c', "DROP DATABASE IF EXISTS $db", '-c', "CREATE DATABASE $db") == 0 or die;
	system('psql', '-X', '-q', '-d', $db, '-c', 'CREATE EXTENSION postgis', '-c', 'CREATE EXTENSION hybrid_index') == 0 or die
	  unless HiDocs::creates_extension(@blocks);
	for my $b (@blocks)
	{
		if (defined $b->{skip}) { print "skip $file:$b->{line}: $b->{skip}\n"; next; }
		my ($ok, $msg) = HiDocs::run_block($b, $file, "dbname=$db", $tsroot);
		print $ok ? "ok   $msg\n" : "FAIL $msg\n";
		$fail++ unless $ok;
	}
	system('psql', '-X', '-q', '-d', 'postgres', '-c', "DROP DATABASE $db");
}
exit($fail ? 1 : 0);
