# 008_clean_shutdown.pl — a clean shutdown leaves no index log to replay
# (issue 18: "a clean shutdown leaves nothing to replay").
#
# For every access method, in two databases (the log sync worker, which
# checkpoints the indexes at shutdown, has no database of its own): rows
# inserted after the build reach the index's log; after `pg_ctl stop -m
# fast` every log file is empty; after the start no index replays a record
# and every index answers exactly (index, bitmap and kNN scans against a
# sequential scan) and takes writes.  A smart shutdown does the same, and
# an immediate one (a crash) still replays and answers exactly.  Each time,
# pg_relation_size reports the index's files, and the main fork that
# stands for them takes no disk space.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiAM;
use HiTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = HiTest::new_node('clean_shutdown');
$node->safe_psql('postgres', 'CREATE DATABASE other');
HiTest::setup_db($node, 'other');
my @ams = grep { HiAM::exists_in($node, 'postgres', $_->{am}) } HiAM::selected();
my @dbs = ('postgres', 'other');

for my $db (@dbs)
{
	for my $e (@ams)
	{
		my $am = $e->{am};
		my $using = $e->{opclass} ? "geom $e->{opclass}" : 'geom';
		$node->safe_psql($db, qq{
			SELECT setseed(0.3);
			CREATE TABLE c_$am (id bigint, geom geometry);
			INSERT INTO c_$am SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 5000) i;
			INSERT INTO c_$am VALUES (90001, NULL), (90002, 'POINT EMPTY');
			CREATE INDEX c_${am}_idx ON c_$am USING $am ($using);});
	}
}

# the log files of the indexes, with their sizes
sub log_sizes
{
	my %size;
	for my $f (grep { /\.log$/ } HiTest::hyb_files($node->data_dir))
	{
		$size{$f} = -s $f;
	}
	return %size;
}

sub changes
{
	my ($base) = @_;
	for my $db (@dbs)
	{
		for my $e (@ams)
		{
			$node->safe_psql($db, qq{
				INSERT INTO c_$e->{am} SELECT $base + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 3000) i;
				DELETE FROM c_$e->{am} WHERE id % 11 = 0 AND id < $base;
				VACUUM c_$e->{am};});
		}
	}
	my %size = log_sizes();
	cmp_ok(scalar(grep { $_ > 0 } values %size), '>=', scalar(@ams) * scalar(@dbs),
		"changes from $base: every index's log holds records");
	return;
}

sub after_start
{
	my ($label, $offset) = @_;
	for my $db (@dbs)
	{
		for my $e (@ams)
		{
			my $am = $e->{am};
			HiTest::full_check($node, $db, "$am in $db, $label", "c_$am", "c_${am}_idx");
			is(HiTest::try_psql($node, $db, "SELECT hybrid_index_check('c_${am}_idx', heapallindexed => true)"), 't',
				"$am in $db, $label: every row is in the index");
			HiTest::sparse_main_fork($node, $db, "c_${am}_idx", "$am in $db, $label");
		}
	}
	my $replays = () = substr(slurp_file($node->logfile), $offset) =~ /hybrid_index: replayed \d+ log records/g;
	return $replays;
}

for my $mode ('fast', 'smart')
{
	changes($mode eq 'fast' ? 100000 : 200000);
	$node->stop($mode);
	my %size = log_sizes();
	is(join(',', grep { $size{$_} > 0 } sort keys %size), '',
		"after a $mode shutdown no index log holds a record");
	my $offset = -s $node->logfile;
	$node->start;
	is(after_start("after a $mode shutdown", $offset), 0,
		"after a $mode shutdown no index replayed its log");
}

# an immediate shutdown is a crash: the logs replay, the answers are exact
changes(300000);
$node->stop('immediate');
my $offset = -s $node->logfile;
$node->start;
cmp_ok(after_start('after an immediate shutdown', $offset), '>', 0,
	'after an immediate shutdown the indexes replayed their logs');

$node->stop;
done_testing();
