# 054_two_phase.pl — prepared transactions (PREPARE TRANSACTION, COMMIT
# PREPARED, ROLLBACK PREPARED) that build, drop or change our indexes, as
# Citus's two-phase commits do on every worker.  For every AM:
#  (a) CREATE INDEX and inserts prepared, committed from another session:
#      the index answers exactly;
#  (b) CREATE INDEX prepared and rolled back: its files are gone;
#  (c) inserts and deletes prepared, the server crashed (immediate stop),
#      COMMIT PREPARED: every committed row is in the index; the same with
#      ROLLBACK PREPARED;
#  (d) DROP INDEX prepared, crash, COMMIT PREPARED: the files are gone;
#      DROP INDEX prepared and rolled back: the index answers as before.
# Nothing is left in the database's hyb2pc directory.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiAM;
use HiTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = HiTest::new_node('twophase',
	conf => "max_prepared_transactions = 10\nhybrid_index.checkpoint_log_size = 256\n");

# files of a relfilenode in the database directory
sub files_of
{
	my ($relnum) = @_;
	return $node->safe_psql('postgres', qq{
		SELECT count(*) FROM pg_ls_dir('base/' || (SELECT oid FROM pg_database
		  WHERE datname = current_database())) f WHERE f LIKE 'hyb\\_%\\_$relnum.%'});
}

sub prepared_left
{
	return $node->safe_psql('postgres', q{
		SELECT count(*) FROM pg_ls_dir('base/' || (SELECT oid FROM pg_database
		  WHERE datname = current_database()) || '/hyb2pc', true, false)});
}

sub crash
{
	$node->stop('immediate');
	$node->start;
	return;
}

for my $e (HiAM::selected())
{
	my $am = $e->{am};
	my $col = $e->{opclass} ? "geom $e->{opclass}" : 'geom';
	my $with = $e->{indexes}[0];
	my $t = "tp_$am";
	$node->safe_psql('postgres', qq{
		SELECT setseed(0.3);
		CREATE TABLE $t (id bigint, geom geometry);
		INSERT INTO $t SELECT i, CASE WHEN i % 500 = 0 THEN NULL
		  ELSE ST_MakePoint(random() * 1000, random() * 1000) END FROM generate_series(1, 3000) i;
	});

	# (a) built and filled in a prepared transaction, committed elsewhere
	$node->safe_psql('postgres', qq{
		BEGIN;
		CREATE INDEX ${t}_idx ON $t USING $am ($col) INCLUDE (id) WITH ($with);
		INSERT INTO $t SELECT i, ST_MakePoint(random() * 1000, random() * 1000)
		  FROM generate_series(3001, 3600) i;
		PREPARE TRANSACTION 'a_$am';
	});
	ok(prepared_left() > 0, "$am (a): the prepared transaction's files wait in hyb2pc");
	$node->safe_psql('postgres', "COMMIT PREPARED 'a_$am'");
	is(prepared_left(), '0', "$am (a): COMMIT PREPARED finished them");
	HiTest::full_check($node, 'postgres', "$am (a) CREATE INDEX committed prepared", $t, "${t}_idx",
		windows => 8, group => $e->{group_query} ? 1 : 0);

	# (b) a second index built and rolled back
	my $relnum = $node->safe_psql('postgres', qq{
		BEGIN;
		CREATE INDEX ${t}_idx2 ON $t USING $am ($col) WITH ($with);
		SELECT pg_relation_filenode('${t}_idx2');
		PREPARE TRANSACTION 'b_$am';
	});
	ok(files_of($relnum) > 0, "$am (b): the prepared index has its files");
	$node->safe_psql('postgres', "ROLLBACK PREPARED 'b_$am'");
	is(files_of($relnum), '0', "$am (b): ROLLBACK PREPARED removed them");
	is(prepared_left(), '0', "$am (b): nothing left in hyb2pc");

	# (c) changes prepared, a crash, then COMMIT PREPARED / ROLLBACK PREPARED
	$node->safe_psql('postgres', qq{
		BEGIN;
		INSERT INTO $t SELECT i, ST_MakePoint(random() * 1000, random() * 1000)
		  FROM generate_series(4001, 4700) i;
		DELETE FROM $t WHERE id % 13 = 1;
		PREPARE TRANSACTION 'c_$am';
		BEGIN;
		INSERT INTO $t SELECT i, ST_MakePoint(random() * 1000, random() * 1000)
		  FROM generate_series(5001, 5400) i;
		PREPARE TRANSACTION 'c2_$am';
	});
	crash();
	# the index loads (and replays its log) while both are still prepared
	is((HiTest::index_scan_counts($node, 'postgres', $t))[0],
		$node->safe_psql('postgres', "SELECT count(*) FROM $t WHERE geom IS NOT NULL"),
		"$am (c): after the crash the index answers while two transactions are prepared");
	$node->safe_psql('postgres', "COMMIT PREPARED 'c_$am'; ROLLBACK PREPARED 'c2_$am'");
	is($node->safe_psql('postgres', "SELECT count(*) FROM $t WHERE id BETWEEN 4001 AND 5400"),
		'646', "$am (c): the committed rows are there, the rolled back ones not");
	HiTest::full_check($node, 'postgres', "$am (c) inserts prepared, crash, COMMIT PREPARED", $t,
		"${t}_idx", windows => 8, group => $e->{group_query} ? 1 : 0);
	# and once more after a clean restart (the index loaded from its files)
	$node->restart;
	is((HiTest::index_scan_counts($node, 'postgres', $t))[0],
		$node->safe_psql('postgres', "SELECT count(*) FROM $t WHERE geom IS NOT NULL"),
		"$am (c): after a restart the index finds every row");

	# (d) DROP INDEX prepared and rolled back, then prepared, crash, committed
	$node->safe_psql('postgres', "BEGIN; DROP INDEX ${t}_idx; PREPARE TRANSACTION 'd_$am'");
	$node->safe_psql('postgres', "ROLLBACK PREPARED 'd_$am'");
	HiTest::full_check($node, 'postgres', "$am (d) DROP INDEX rolled back prepared", $t, "${t}_idx",
		windows => 4);
	$relnum = $node->safe_psql('postgres', "SELECT pg_relation_filenode('${t}_idx')");
	$node->safe_psql('postgres', "BEGIN; DROP INDEX ${t}_idx; PREPARE TRANSACTION 'd2_$am'");
	crash();
	ok(files_of($relnum) > 0, "$am (d): the files stay while the DROP is prepared, across a crash");
	$node->safe_psql('postgres', "COMMIT PREPARED 'd2_$am'");
	is(files_of($relnum), '0', "$am (d): COMMIT PREPARED of the DROP removed the files");
	is(prepared_left(), '0', "$am (d): nothing left in hyb2pc");
	$node->safe_psql('postgres', "DROP TABLE $t");
}

$node->stop;
done_testing();
