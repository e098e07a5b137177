# 033_cut_short.pl — changes of a grid index cut short half-way.
#
# A bucket split that fails after rewriting one of its two buckets
# (hybrid_index.debug_fail_split) leaves a half-done state in shared
# memory.  The index must not be used in that state: its next user loads
# it again from its files and replays its log.  Then every committed row is
# found, so are the rows of a transaction that was running across the
# failure once it commits, and nothing is lost after a restart or a crash.
# Statement timeouts that cancel inserts and VACUUM at arbitrary points
# must leave the index exact as well.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = HiTest::new_node('cut', fsync => 1);

sub S { return $node->safe_psql('postgres', $_[0]); }

sub healthy
{
	my ($what, $tbl, $idx) = @_;
	is(HiTest::try_psql($node, 'postgres', "SELECT hybrid_index_check('$idx')"), 't', "$what: hybrid_index_check passes");
	is(HiTest::filters_differential($node, 'postgres', $tbl, $idx, 10, 1000, 5), 'ok', "$what: filters equal seq scan");
	is(HiTest::knn_differential($node, 'postgres', $tbl, $idx, 3, 1000, 10, 6), 'ok', "$what: kNN equals sorted seq scan");
	my ($rows, $ids) = HiTest::index_scan_counts($node, 'postgres', $tbl);
	is($rows, S("SELECT count(*) FROM $tbl WHERE geom IS NOT NULL AND NOT ST_IsEmpty(geom)"), "$what: index finds every row");
	is($ids, $rows, "$what: no duplicates");
	return;
}

sub points
{
	my ($tbl, $from, $n) = @_;
	return "INSERT INTO $tbl SELECT $from + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, $n) i";
}

# n points in a 10 x 10 corner: more than a bucket holds, so one surely
# splits (spread over the whole extent, 5,000 points may fill none)
sub cluster_points
{
	my ($tbl, $from, $n) = @_;
	return "INSERT INTO $tbl SELECT $from + i, ST_MakePoint(random() * 10, random() * 10) FROM generate_series(1, $n) i";
}

for my $am (qw(lbgrid hgrid))
{
	my $tbl = "c_$am";
	my $idx = "${tbl}_idx";
	S("SELECT setseed(0.4); CREATE TABLE $tbl (id bigint, geom geometry); " . points($tbl, 0, 20000)
		  . "; CREATE INDEX $idx ON $tbl USING $am (geom)");

	# a transaction that stays open across the failure
	my $bg = $node->background_psql('postgres');
	$bg->query_safe('BEGIN; ' . points($tbl, 500000, 500));

	my $logpos = -s $node->logfile;
	my ($ret, $out, $err) = $node->psql('postgres',
		"SET hybrid_index.debug_fail_split = on; " . cluster_points($tbl, 600000, 5000));
	isnt($ret, 0, "$am: an insert whose bucket split is cut short fails");
	like($err, qr/split of a bucket of index "\Q$idx\E" cut short/, "$am: with the error of the split");
	like(substr(slurp_file($node->logfile), $logpos), qr/a change to index "\Q$idx\E" failed half-way/,
		"$am: the server log says the change failed half-way");

	$bg->query_safe('COMMIT');
	$bg->quit;
	is(S("SELECT count(*) FROM $tbl"), '20500', "$am: the running transaction's rows committed, the failed ones not");
	healthy("$am after a split cut short", $tbl, $idx);
	like(substr(slurp_file($node->logfile), $logpos), qr/index "\Q$idx\E" loaded again after a failed change/,
		"$am: the index was loaded again from its files");
	is(S("SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM $tbl WHERE id > 500000 AND geom && ST_MakeEnvelope(-1, -1, 1001, 1001)"),
		'500', "$am: the index has the rows of the transaction that ran across the reload");

	# changes go on, and survive a clean restart and a crash
	S(points($tbl, 700000, 3000));
	healthy("$am after more inserts", $tbl, $idx);
	$node->restart;
	healthy("$am after a restart", $tbl, $idx);
	S(points($tbl, 800000, 2000) . "; DELETE FROM $tbl WHERE id % 3 = 0");
	$node->stop('immediate');
	$node->start;
	healthy("$am after a crash", $tbl, $idx);

	# statement timeouts cut inserts and VACUUM at arbitrary points
	my ($cut_ins, $cut_vac) = (0, 0);
	for my $ms (1, 3, 7, 15, 30, 60, 120)
	{
		($ret) = $node->psql('postgres', "SET statement_timeout = '${ms}ms'; " . points($tbl, 1000000 + $ms * 100000, 20000));
		$cut_ins++ if $ret != 0;
	}
	S("DELETE FROM $tbl WHERE id % 5 = 1");
	for my $ms (1, 3, 7, 15, 30, 60, 120, 0)
	{
		($ret) = $node->psql('postgres', "SET statement_timeout = '${ms}ms'; VACUUM $tbl");
		$cut_vac++ if $ret != 0;
	}
	note("$am: $cut_ins inserts and $cut_vac VACUUMs cancelled by statement_timeout");
	ok($cut_ins > 0, "$am: statement_timeout cancelled some inserts");
	healthy("$am after cancelled inserts and VACUUMs", $tbl, $idx);
	$node->restart;
	healthy("$am after cancelled statements and a restart", $tbl, $idx);
	S("DROP TABLE $tbl");
}

my @bad = grep { /terminated by signal|PANIC/ } split /\n/, slurp_file($node->logfile);
is(scalar(@bad), 0, 'no backend crashed') or diag(join("\n", @bad));
$node->stop;
done_testing();
