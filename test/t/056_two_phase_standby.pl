# 056_two_phase_standby.pl — a prepared transaction's index files on a
# standby (the gap 054 left: they were not in WAL, so a promoted standby
# left them behind).  For every AM, on a primary with a streaming standby:
#  - DROP INDEX prepared, CREATE INDEX prepared: the standby gets each
#    transaction's hyb2pc/<xid> file from WAL;
#  - one of each committed and rolled back on the primary: the files of
#    the dropped index and of the rolled-back build go on both servers,
#    and so do the hyb2pc files;
#  - the standby is promoted with the others still prepared: COMMIT
#    PREPARED of the drop and ROLLBACK PREPARED of the build on the new
#    primary remove their files there, the surviving indexes answer
#    exactly, and nothing is left in hyb2pc.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiAM;
use HiTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $conf = "max_prepared_transactions = 20\nhybrid_index.checkpoint_log_size = 256\n";
my $primary = HiTest::new_node('tpp', streaming => 1, conf => $conf);
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('tps');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->append_conf('postgresql.conf', "hot_standby = on\n");
$standby->start;

my $dboid = $primary->safe_psql('postgres', "SELECT oid FROM pg_database WHERE datname = 'postgres'");

# files of a relfilenode in the database directory of a server
sub files_of
{
	my ($node, $relnum) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT count(*) FROM pg_ls_dir('base/$dboid') f WHERE f LIKE 'hyb\\_%\\_$relnum.%'});
}

sub prepared_files
{
	my ($node) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT coalesce(string_agg(f, ',' ORDER BY f), '')
		FROM pg_ls_dir('base/$dboid/hyb2pc', true, false) f});
}

sub caught_up
{
	$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
	return;
}

my (%drop_rel, %build_rel, %xid);
my @ams = HiAM::selected();
for my $e (@ams)
{
	my $am = $e->{am};
	my $col = $e->{opclass} ? "geom $e->{opclass}" : 'geom';
	for my $k (1, 2)
	{
		my $t = "tps_${am}_$k";
		# (a prepared DROP INDEX keeps its table locked: the build gets a
		# table of its own)
		for my $tt ($t, "${t}_b")
		{
			$primary->safe_psql('postgres', qq{
				SELECT setseed(0.4);
				CREATE TABLE $tt (id bigint, geom geometry);
				INSERT INTO $tt SELECT i, ST_MakePoint(random() * 1000, random() * 1000)
				  FROM generate_series(1, 2000) i;
				CREATE INDEX ${tt}_keep ON $tt USING $am ($col) WITH ($e->{indexes}[0]);});
		}
		$primary->safe_psql('postgres', "CREATE INDEX ${t}_idx ON $t USING $am ($col)");
		$drop_rel{$t} = $primary->safe_psql('postgres', "SELECT pg_relation_filenode('${t}_idx')");
		# DROP INDEX prepared
		$xid{"drop_$t"} = $primary->safe_psql('postgres', qq{
			BEGIN; DROP INDEX ${t}_idx; SELECT txid_current(); PREPARE TRANSACTION 'drop_$t';});
		# CREATE INDEX prepared
		my $out = $primary->safe_psql('postgres', qq{
			BEGIN; CREATE INDEX ${t}_new ON ${t}_b USING $am ($col);
			SELECT pg_relation_filenode('${t}_new') || ' ' || txid_current();
			PREPARE TRANSACTION 'build_$t';});
		($build_rel{$t}, $xid{"build_$t"}) = split ' ', $out;
	}
}
caught_up();
my $want = join(',', sort map { $xid{$_} } keys %xid);
is(prepared_files($standby), $want, 'the standby holds every prepared transaction\'s hyb2pc file');
for my $e (@ams)
{
	my $t = "tps_$e->{am}_1";
	cmp_ok(files_of($standby, $build_rel{$t}), '>', 0, "$e->{am}: the standby has the prepared build's files");
}

# the first of each pair ends on the primary
for my $e (@ams)
{
	my $t = "tps_$e->{am}_1";
	$primary->safe_psql('postgres', "COMMIT PREPARED 'drop_$t'");
	$primary->safe_psql('postgres', "ROLLBACK PREPARED 'build_$t'");
}
caught_up();
for my $e (@ams)
{
	my $am = $e->{am};
	my $t = "tps_${am}_1";
	for my $node ($primary, $standby)
	{
		my $n = $node->name;
		is(files_of($node, $drop_rel{$t}), 0, "$am on $n: the committed DROP INDEX removed its files");
		is(files_of($node, $build_rel{$t}), 0, "$am on $n: the rolled-back build's files are gone");
	}
}
my $left = join(',', sort map { $xid{$_} } grep { /_2$/ } keys %xid);
is(prepared_files($primary), $left, 'the primary keeps the files of the transactions still prepared');
is(prepared_files($standby), $left, 'so does the standby: the finished ones went through WAL');

# promotion with transactions still prepared
$primary->stop('immediate');
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'promotion timed out';
for my $e (@ams)
{
	my $t = "tps_$e->{am}_2";
	$standby->safe_psql('postgres', "COMMIT PREPARED 'drop_$t'");
	$standby->safe_psql('postgres', "ROLLBACK PREPARED 'build_$t'");
}
for my $e (@ams)
{
	my $am = $e->{am};
	my $t = "tps_${am}_2";
	is(files_of($standby, $drop_rel{$t}), 0, "$am after promotion: COMMIT PREPARED removed the dropped index's files");
	is(files_of($standby, $build_rel{$t}), 0, "$am after promotion: ROLLBACK PREPARED removed the build's files");
	is($standby->safe_psql('postgres', "SELECT count(*) FROM pg_class WHERE relname IN ('${t}_idx', '${t}_new')"),
		0, "$am after promotion: neither index is in the catalog");
	for my $tt ($t, "${t}_b")
	{
		is(HiTest::filters_differential($standby, 'postgres', $tt, "${tt}_keep", 6, 1000, 5), 'ok',
			"$am after promotion: ${tt}_keep answers exactly");
	}
}
is(prepared_files($standby), '', 'nothing is left in hyb2pc on the promoted server');

$standby->stop;
done_testing();
