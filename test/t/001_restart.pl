# 001_restart.pl — hyrtree indexes survive clean restarts: after a restart
# (and after a restart with a tiny cache, so pages come from the files) the
# index passes hybrid_index_check, returns exactly what a sequential scan
# returns, and keeps accepting inserts.  The page cache's memory is
# allocated by its prefault worker after a start, unless turned off.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = HiTest::new_node('restart');
my $optane_dir = PostgreSQL::Test::Utils::tempdir();
$node->safe_psql('postgres', "CREATE TABLESPACE optane LOCATION '$optane_dir'");

$node->safe_psql(
	'postgres', q{
	SELECT setseed(0.1);
	CREATE TABLE t (id bigint, geom geometry);
	INSERT INTO t SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 30000) i;
	INSERT INTO t SELECT 100000 + i, ST_Buffer(ST_MakePoint(random() * 1000, random() * 1000), random() * 20, 'quad_segs=2')
	  FROM generate_series(1, 3000) i;
	INSERT INTO t VALUES (200001, NULL), (200002, 'POINT EMPTY');
	CREATE INDEX t_idx ON t USING hyrtree (geom) WITH (page_size = 4096);
	CREATE TABLE u AS SELECT * FROM t;
	CREATE INDEX u_idx ON u USING hyrtree (geom)
	  WITH (page_size = 2048, placement = 'upper', optane_tablespace = 'optane');
	-- changes after the build
	INSERT INTO t SELECT 300000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 10000) i;
	DELETE FROM t WHERE id % 5 = 0;
	INSERT INTO u SELECT 300000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 5000) i;
});

sub fingerprint
{
	my ($tbl) = @_;
	return HiTest::fingerprint($node, 'postgres', $tbl);
}

sub full_check
{
	my ($label) = @_;
	HiTest::full_check($node, 'postgres', $label, $_->[0], $_->[1], windows => 25, knn_points => 8, k => 20, seed => 7) for (['t', 't_idx'], ['u', 'u_idx']);
	return;
}

full_check('before restart');
my $fp_t = fingerprint('t');
my $fp_u = fingerprint('u');
my $entries = $node->safe_psql('postgres', "SELECT (hybrid_index_inspect('t_idx')->>'entries') || '/' || (hybrid_index_inspect('t_idx')->>'null_entries')");

# the page cache's memory is allocated by its worker after each start
$node->append_conf('postgresql.conf', "log_min_messages = debug1\n");
my $logpos = -s $node->logfile;
$node->restart;
ok($node->wait_for_log(qr/hybrid_index: page cache memory allocated \(\d+ MB/, $logpos),
	'the cache prefault worker allocated the page cache after the start');
full_check('after restart');
is(fingerprint('t'), $fp_t, 'same answers for t after restart');
is(fingerprint('u'), $fp_u, 'same answers for u after restart');
is($node->safe_psql('postgres', "SELECT (hybrid_index_inspect('t_idx')->>'entries') || '/' || (hybrid_index_inspect('t_idx')->>'null_entries')"),
	$entries, 'entry count survives restart');
is($node->safe_psql('postgres',
		"SELECT sum(pages) > 0 FROM hybrid_index_stats('u_idx') WHERE tier = 'optane'"),
	't', 'optane tier still has pages after restart');

# more work after the restart, then a restart with a minimal cache
$node->safe_psql(
	'postgres', q{
	INSERT INTO t SELECT 400000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 10000) i;
	DELETE FROM u WHERE id % 3 = 0;
	VACUUM t; VACUUM u;
});
full_check('after post-restart changes');
$fp_t = fingerprint('t');
$fp_u = fingerprint('u');

$node->append_conf('postgresql.conf', "hybrid_index.cache_size = 1\nhybrid_index.cache_prefault = off\n");
$logpos = -s $node->logfile;
$node->restart;
like($node->safe_psql('postgres', 'SHOW hybrid_index.cache_size'), qr/^1\s*(MB)?$/, 'tiny cache configured');
full_check('restart with tiny cache');
unlike(slurp_file($node->logfile, $logpos), qr/page cache memory allocated/,
	'no prefault worker with hybrid_index.cache_prefault = off');
is(fingerprint('t'), $fp_t, 'same answers for t with tiny cache');
is(fingerprint('u'), $fp_u, 'same answers for u with tiny cache');

# sync I/O instead of io_uring gives the same answers
is(HiTest::try_psql($node, 'postgres', q{
	SET hybrid_index.io_method = sync;
	SELECT hybrid_index_check('t_idx') AND hybrid_index_check('u_idx');}), 't',
	'check passes with io_method = sync');
is(HiTest::try_psql($node, 'postgres',
		"INSERT INTO t SELECT 450000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 3000) i"),
	'', 'inserts work with the tiny cache');

# back to a normal cache; restart with fast shutdown right after a burst of inserts
$node->append_conf('postgresql.conf',
	"hybrid_index.cache_size = 64\nhybrid_index.cache_prefault = on\nlog_min_messages = warning\n");
$node->restart;
full_check('normal cache again');
$node->safe_psql('postgres',
	"INSERT INTO t SELECT 500000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 5000) i");
$node->stop('fast');
$node->start;
full_check('fast stop after inserts');

# an index whose pages are larger than hybrid_index.max_page_size
$node->safe_psql('postgres', "CREATE INDEX t_big ON t USING hyrtree (geom) WITH (page_size = 16384)");
$node->append_conf('postgresql.conf', "hybrid_index.max_page_size = 8192\n");
$node->restart;
my ($ret, $out, $err) = $node->psql('postgres', "CREATE INDEX t_big2 ON t USING hyrtree (geom) WITH (page_size = 16384)");
isnt($ret, 0, 'page_size above hybrid_index.max_page_size is refused');
like($err, qr/max_page_size/, 'the error names hybrid_index.max_page_size');
($ret, $out, $err) = $node->psql('postgres', "SELECT hybrid_index_check('t_big')");
ok($ret == 0 ? $out eq 't' : $err =~ /max_page_size/,
	'an existing index with larger pages works or fails naming max_page_size')
  or diag("ret=$ret out=$out err=$err");
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'server still up');
$node->safe_psql('postgres', 'DROP INDEX t_big');
full_check('after lowering max_page_size');

$node->stop;
done_testing();
