# 012_grid_shared_cache.pl — lbgrid and hgrid with default settings (their
# buffers read through the shared page cache and write out into it, dirty)
# on a cache far smaller than the index: the cache evicts and writes their
# pages between checkpoints, a batch of inserted rows reads its
# sub-directories and buckets ahead (grid_insert_read_ahead), and a crash
# leaves pages the cache wrote after the checkpoint that recovery must
# ignore.  After each step the index passes hybrid_index_check and answers
# as a sequential scan does; after VACUUM it holds one entry per row.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# 1 MB: 32 frames of the tests' 32 kB pages
my $node = HiTest::new_node('grid_shared_cache', conf => "hybrid_index.cache_size = 1\n");

sub check
{
	my ($label, $tbl, $idx) = @_;
	HiTest::full_check($node, 'postgres', $label, $tbl, $idx,
		windows => 15, knn_points => 6, k => 20, seed => 5, group => 1);
	return;
}

# reads and read batches of an index's tier files so far
sub reads
{
	my ($idx) = @_;
	return split /\|/, $node->safe_psql('postgres',
		"SELECT sum(reads), sum(read_batches) FROM hybrid_index_stats('$idx')");
}

for my $am (qw(lbgrid hgrid))
{
	my ($tbl, $idx) = ("t_$am", "t_${am}_idx");

	$node->safe_psql(
		'postgres', qq{
		SELECT setseed(0.4);
		CREATE TABLE $tbl (id bigint, geom geometry);
		INSERT INTO $tbl SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 100000) i;
		INSERT INTO $tbl SELECT 100000 + i, ST_Buffer(ST_MakePoint(random() * 1000, random() * 1000), random() * 10, 'quad_segs=2')
		  FROM generate_series(1, 1000) i;
		INSERT INTO $tbl VALUES (200001, NULL), (200002, 'POINT EMPTY');
		CREATE INDEX $idx ON $tbl USING $am (geom) WITH (page_size = 2048);
	});
	cmp_ok($node->safe_psql('postgres',
			"SELECT sum(bytes) FROM hybrid_index_files('$idx') WHERE kind IN ('flash', 'optane')"),
		'>', 2 * 1024 * 1024, "$am: the index is more than twice the 1 MB cache");

	# cold: one statement's rows go in as a batch, read ahead
	$node->restart;
	my ($r0, $b0) = reads($idx);
	$node->safe_psql('postgres', qq{
		INSERT INTO $tbl SELECT 300000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 6000) i;
	});
	my ($r1, $b1) = reads($idx);
	cmp_ok($r1 - $r0, '>', $b1 - $b0, "$am: the batch read pages several to a read batch")
	  if $am eq 'hgrid';
	check("$am after a batch into a cold index", $tbl, $idx);

	# changes, splits and merges under a cache that keeps evicting dirty pages
	$node->safe_psql('postgres', qq{
		DELETE FROM $tbl WHERE id % 4 = 0;
		VACUUM $tbl;
		INSERT INTO $tbl SELECT 400000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 3000) i;
	});
	check("$am after deletes, VACUUM and inserts", $tbl, $idx);
	my $fp = HiTest::fingerprint($node, 'postgres', $tbl);

	# a crash: what the cache wrote since the checkpoint is not the index's
	$node->stop('immediate');
	$node->start;
	check("$am after an immediate stop", $tbl, $idx);
	is(HiTest::fingerprint($node, 'postgres', $tbl), $fp, "$am: same answers after the crash");
	HiTest::entries_match_heap($node, 'postgres', $tbl, $idx, "$am after the crash");

	# a checkpoint writes the dirty pages; a clean restart finds them
	$node->safe_psql('postgres', qq{
		INSERT INTO $tbl SELECT 500000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 3000) i;
		CHECKPOINT;
	});
	$fp = HiTest::fingerprint($node, 'postgres', $tbl);
	$node->restart;
	check("$am after a checkpoint and a restart", $tbl, $idx);
	is(HiTest::fingerprint($node, 'postgres', $tbl), $fp, "$am: same answers after the restart");
	HiTest::entries_match_heap($node, 'postgres', $tbl, $idx, "$am after the restart");
}

$node->stop;
done_testing();
