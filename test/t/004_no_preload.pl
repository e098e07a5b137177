# 004_no_preload.pl — hybrid_index needs shared_preload_libraries. Without
# it, CREATE EXTENSION fails with a clear message, and so does every use of
# an existing index or function after the preload line was removed. Adding
# the line back makes everything work again, with the data intact.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# ---- a cluster that never had the preload line ----
my $bare = HiTest::new_node('bare', preload => 0);
$bare->safe_psql('postgres', 'CREATE EXTENSION postgis');
my ($ret, $out, $err) = $bare->psql('postgres', 'CREATE EXTENSION hybrid_index');
isnt($ret, 0, 'CREATE EXTENSION fails without shared_preload_libraries');
like($err, qr/ERROR:.*shared_preload_libraries/s, 'the error mentions shared_preload_libraries');
note("error: $err");
is($bare->safe_psql('postgres', "SELECT count(*) FROM pg_extension WHERE extname = 'hybrid_index'"),
	'0', 'extension not created');
is($bare->safe_psql('postgres', "SELECT count(*) FROM pg_am WHERE amname = 'hyrtree'"),
	'0', 'no hyrtree access method left behind');
# LOAD is refused the same way
($ret, $out, $err) = $bare->psql('postgres', "LOAD 'hybrid_index'");
isnt($ret, 0, 'LOAD fails without shared_preload_libraries');
like($err, qr/shared_preload_libraries/, 'LOAD error mentions shared_preload_libraries');
# the server is unharmed
is($bare->safe_psql('postgres', 'SELECT 1'), '1', 'server still fine');
$bare->stop;

# ---- a cluster whose preload line is removed after use ----
my $node = HiTest::new_node('was_preloaded');
$node->safe_psql(
	'postgres', q{
	CREATE TABLE t (id int, geom geometry);
	INSERT INTO t SELECT i, ST_MakePoint(i % 100, i / 100) FROM generate_series(1, 10000) i;
	CREATE INDEX t_idx ON t USING hyrtree (geom);});
my $expected = $node->safe_psql('postgres',
	"SELECT count(*) FROM t WHERE geom && ST_MakeEnvelope(10, 10, 20, 20)");

$node->adjust_conf('postgresql.conf', 'shared_preload_libraries', "''");
$node->restart;
is($node->safe_psql('postgres', 'SHOW shared_preload_libraries'), '', 'preload line removed');

my @uses = (
	[ 'index scan',
		"SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM t WHERE geom && ST_MakeEnvelope(10, 10, 20, 20)" ],
	[ 'insert',             "INSERT INTO t VALUES (0, 'POINT(1 1)')" ],
	[ 'hybrid_index_stats', "SELECT * FROM hybrid_index_stats('t_idx')" ],
	[ 'hybrid_index_check', "SELECT hybrid_index_check('t_idx')" ],
	[ 'create index',       "CREATE INDEX t_idx2 ON t USING hyrtree (geom)" ]);
for my $u (@uses)
{
	my ($name, $sql) = @$u;
	($ret, $out, $err) = $node->psql('postgres', $sql);
	isnt($ret, 0, "$name fails without the preload");
	like($err, qr/shared_preload_libraries/, "$name error mentions shared_preload_libraries");
}
# planning any query on the table opens the index: it either works or
# fails with the same clear message, and the server survives
($ret, $out, $err) = $node->psql('postgres', 'SELECT count(*) FROM t');
ok(($ret == 0 && $out eq '10000') || $err =~ /shared_preload_libraries/,
	'a query on the table works or fails naming shared_preload_libraries')
  or diag("ret=$ret out=$out err=$err");
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'server still up');

# ---- the preload line back: everything works, nothing lost ----
$node->adjust_conf('postgresql.conf', 'shared_preload_libraries', "'hybrid_index'");
$node->restart;
is($node->safe_psql('postgres', "SELECT hybrid_index_check('t_idx')"), 't', 'index fine after preload is back');
is($node->safe_psql('postgres',
		"SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM t WHERE geom && ST_MakeEnvelope(10, 10, 20, 20)"),
	$expected, 'index answers as before');
is($node->safe_psql('postgres', 'SELECT count(*) FROM t'), '10000', 'the failed insert added nothing');

$node->stop;
done_testing();
