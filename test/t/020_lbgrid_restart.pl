# 020_lbgrid_restart.pl — lbgrid indexes (LB-Grid and GFFM) survive clean
# restarts and immediate stops: the root directory and the Bucket
# Translation Table come back from the checkpoint's AM blob plus redo log
# replay; the index passes hybrid_index_check, answers exactly like a
# sequential scan (filters, group queries, kNN), keeps its structure
# counters and entry counts, and keeps accepting changes.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = HiTest::new_node('lbgrid_restart');

$node->safe_psql(
	'postgres', q{
	SELECT setseed(0.2);
	CREATE TABLE t (id bigint, geom geometry);
	INSERT INTO t SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 20000) i;
	INSERT INTO t SELECT 100000 + i, ST_Buffer(ST_MakePoint(random() * 1000, random() * 1000), random() * 20, 'quad_segs=2')
	  FROM generate_series(1, 2000) i;
	INSERT INTO t VALUES (200001, NULL), (200002, 'POINT EMPTY');
	CREATE INDEX t_idx ON t USING lbgrid (geom) WITH (page_size = 2048, bucket_capacity = 24, buffer_size = 128);
	CREATE TABLE u AS SELECT * FROM t;
	CREATE INDEX u_idx ON u USING lbgrid (geom) WITH (page_size = 4096, logging = off, buffer_size = 128);
	-- changes after the build: splits, deletes, merges, compactions
	INSERT INTO t SELECT 300000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 10000) i;
	DELETE FROM t WHERE id % 4 = 0;
	VACUUM t;
	INSERT INTO u SELECT 300000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 8000) i;
	DELETE FROM u WHERE id % 3 = 0;
	VACUUM u;
});

sub fingerprint
{
	my ($tbl) = @_;
	return HiTest::fingerprint($node, 'postgres', $tbl,
		"SELECT count(*) FROM $tbl WHERE geom ~= ANY ((SELECT array_agg(geom) FROM $tbl WHERE id % 97 = 1)::geometry[]);");
}

# structure that must survive: entries, buckets, directories, BTT size
sub structure
{
	my ($idx) = @_;
	return $node->safe_psql('postgres',
		"SELECT concat_ws('/', j->>'entries', j->>'null_entries', j->>'buckets', j->>'directories', "
		  . "j->>'splits', j->>'merges', j->'btt'->>'buckets') FROM hybrid_index_inspect('$idx') j");
}

sub full_check
{
	my ($label) = @_;
	HiTest::full_check($node, 'postgres', $label, $_->[0], $_->[1], windows => 20, knn_points => 6, k => 20, seed => 7, group => 1) for (['t', 't_idx'], ['u', 'u_idx']);
	return;
}

full_check('before restart');
my %fp = (t => fingerprint('t'), u => fingerprint('u'));

# a checkpoint saves the grid's state (root directory, BTT) in the map
# file: after a restart without changes nothing is replayed and the
# structure is exactly the same
$node->safe_psql('postgres', "SELECT hybrid_index_checkpoint('t_idx'), hybrid_index_checkpoint('u_idx')");
my %st = (t_idx => structure('t_idx'), u_idx => structure('u_idx'));
$node->restart;
full_check('after restart');
is(fingerprint($_), $fp{$_}, "same answers for $_ after restart") for sort keys %fp;
is(structure($_), $st{$_}, "structure of $_ survives restart") for sort keys %st;

# changes after the restart, not checkpointed, then an immediate stop:
# the state comes back from the last checkpoint plus log replay
$node->safe_psql(
	'postgres', q{
	INSERT INTO t SELECT 400000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 6000) i;
	DELETE FROM t WHERE id % 7 = 0;
	VACUUM t;
	INSERT INTO u SELECT 400000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 6000) i;
	INSERT INTO t VALUES (500001, NULL), (500002, 'POINT EMPTY'), (500003, 'POINT(-3000 4000)');
});
full_check('after post-restart changes');
%fp = (t => fingerprint('t'), u => fingerprint('u'));
my %entries = map {
	$_ => $node->safe_psql('postgres',
		"SELECT (hybrid_index_inspect('$_')->>'entries') || '/' || (hybrid_index_inspect('$_')->>'null_entries')")
} qw(t_idx u_idx);
$node->stop('immediate');
$node->start;
full_check('after immediate stop');
is(fingerprint($_), $fp{$_}, "same answers for $_ after immediate stop") for sort keys %fp;
for my $idx (sort keys %entries)
{
	is($node->safe_psql('postgres',
			"SELECT (hybrid_index_inspect('$idx')->>'entries') || '/' || (hybrid_index_inspect('$idx')->>'null_entries')"),
		$entries{$idx}, "entry counts of $idx survive the immediate stop");
}
like(slurp_file($node->logfile), qr/replayed \d+ log records of index "t_idx"/,
	'the redo log of t_idx was replayed');

# a restart with a tiny buffer: pages come from the files, batches are small
$node->safe_psql('postgres', 'ALTER INDEX t_idx SET (buffer_size = 32, cold_size = 2)');
$node->restart;
full_check('tiny buffers');
is(HiTest::try_psql($node, 'postgres', q{
	SET hybrid_index.io_method = sync;
	INSERT INTO t SELECT 600000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 3000) i;
	SELECT hybrid_index_check('t_idx');}), 't', 'inserts with tiny buffers and sync I/O');
$node->stop('fast');
$node->start;
full_check('fast stop after inserts');

$node->stop;
done_testing();
