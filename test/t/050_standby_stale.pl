# 050_standby_stale.pl — never a silent wrong answer on a copy of the index
# files (issue 18, first step: WAL records of our resource manager).
#
# A streaming standby made from a base backup, then promoted:
#  - with no index change after the backup, every access method answers
#    exactly (full_check);
#  - with committed changes after the backup, which the standby's copy of
#    the index files lacks, the index refuses with an error naming it and a
#    REINDEX hint; REINDEX makes it answer exactly, with every row;
#  - an index created after the backup refuses likewise (its files are
#    missing);
#  - before promotion, as a hot standby, queries answer exactly from the
#    tables (the planner leaves our indexes out during recovery).
# The primary's own crash recovery replays the same records and must not
# mark anything (its files hold the changes): answers stay exact.
# pg_walinspect shows the records; a server without the library preloaded
# cannot replay them and says so.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiAM;
use HiTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = HiTest::new_node('primary', streaming => 1);
sub P { return $primary->safe_psql('postgres', $_[0]); }

my @ams = grep { HiAM::exists_in($primary, 'postgres', $_->{am}) } HiAM::selected();
for my $e (@ams)
{
	my $am = $e->{am};
	my $using = $e->{opclass} ? "geom $e->{opclass}" : 'geom';
	P(qq{
		SELECT setseed(0.5);
		CREATE TABLE s_$am (id bigint, geom geometry);
		INSERT INTO s_$am SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 3000) i;
		INSERT INTO s_$am VALUES (90001, NULL), (90002, 'POINT EMPTY');
		CREATE INDEX s_${am}_idx ON s_$am USING $am ($using);});
}
P('CHECKPOINT');
$primary->backup('b1');

# a standby promoted with nothing changed since the backup: exact answers
my $s1 = PostgreSQL::Test::Cluster->new('standby1');
$s1->init_from_backup($primary, 'b1', has_streaming => 1);
$s1->start;
$primary->wait_for_catchup($s1);
$s1->promote;
for my $e (@ams)
{
	HiTest::full_check($s1, 'postgres', "$e->{am} promoted, unchanged", "s_$e->{am}", "s_$e->{am}_idx");
}
$s1->stop;

# the records of our resource manager, as pg_walinspect shows them
my $lsn0 = P('SELECT pg_current_wal_insert_lsn()');
for my $e (@ams)
{
	my $am = $e->{am};
	P("INSERT INTO s_$am SELECT 100000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 500) i");
	P("DELETE FROM s_$am WHERE id % 10 = 0");
	P("VACUUM s_$am");
}
P("CREATE TABLE s_late (id bigint, geom geometry)");
P("INSERT INTO s_late SELECT i, ST_MakePoint(i, i) FROM generate_series(1, 100) i");
P("CREATE INDEX s_late_idx ON s_late USING hyrtree (geom)");
P('CREATE EXTENSION pg_walinspect');
my $lsn1 = P('SELECT pg_current_wal_insert_lsn()');
cmp_ok(P(qq{SELECT count(*) FROM pg_get_wal_records_info('$lsn0', '$lsn1')
	WHERE resource_manager = 'hybrid_index' AND record_type = 'DURABLE' AND description LIKE 'index %'}),
	'>=', 2 * scalar(@ams), 'pg_walinspect shows our DURABLE records (a committed insert and a VACUUM per index)');

# a standby from the same backup replays them.  As a hot standby it
# answers from the tables: the planner does not choose our indexes during
# recovery, so queries are exact and do not fail (even with every other
# path disabled)
my $s2 = PostgreSQL::Test::Cluster->new('standby2');
$s2->init_from_backup($primary, 'b1', has_streaming => 1);
$s2->start;
$primary->wait_for_catchup($s2);
for my $e (@ams)
{
	my $am = $e->{am};
	my $q = "SELECT count(*), coalesce(sum(id), 0) FROM s_$am WHERE geom && ST_MakeEnvelope(100, 100, 600, 450)";
	is($s2->safe_psql('postgres', "SET enable_seqscan = off; $q"), $primary->safe_psql('postgres', $q),
		"$am: the hot standby answers as the primary does");
	unlike($s2->safe_psql('postgres', "SET enable_seqscan = off; EXPLAIN (COSTS OFF) $q"), qr/s_${am}_idx/,
		"$am: the hot standby's plan leaves our index out");
	is($s2->safe_psql('postgres', "SELECT count(*) FROM (SELECT id FROM s_$am ORDER BY geom <-> 'POINT(500 500)' LIMIT 10) s"),
		'10', "$am: a kNN query on the hot standby works (sorted from the table)");
}
# promoted, it refuses the indexes whose copies lack committed changes
$s2->promote;
for my $e (@ams)
{
	my $am = $e->{am};
	my ($ret, $out, $err) = $s2->psql('postgres',
		"SET enable_seqscan = off; SELECT count(*) FROM s_$am WHERE geom && ST_MakeEnvelope(0, 0, 1000, 1000)");
	isnt($ret, 0, "$am: the promoted standby refuses the index that lacks committed changes");
	like($err, qr/index "s_${am}_idx" is out of date on this server/, "$am: the error names the index");
	like($err, qr/HINT:\s+REINDEX INDEX s_${am}_idx/, "$am: the error says to REINDEX");
	$s2->safe_psql('postgres', "REINDEX INDEX s_${am}_idx");
	is($s2->safe_psql('postgres', "SELECT count(*) FROM s_$am"),
		$primary->safe_psql('postgres', "SELECT count(*) FROM s_$am"), "$am: the promoted server has every row");
	HiTest::full_check($s2, 'postgres', "$am promoted, after REINDEX", "s_$am", "s_${am}_idx");
}
my ($ret, $out, $err) = $s2->psql('postgres',
	"SET enable_seqscan = off; SELECT count(*) FROM s_late WHERE geom && ST_MakeEnvelope(0, 0, 50, 50)");
isnt($ret, 0, 'an index created after the backup refuses on the promoted standby');
like($err, qr/s_late_idx/, 'its error names it');
like($err, qr/REINDEX/, 'its error says to REINDEX');
$s2->stop;

# a server that replays our records without the library stops, saying so
my $s3 = PostgreSQL::Test::Cluster->new('standby3');
$s3->init_from_backup($primary, 'b1', has_streaming => 1);
$s3->append_conf('postgresql.conf', "shared_preload_libraries = ''\n");
$s3->start(fail_ok => 1);
$s3->_update_pid(0);
my $log = slurp_file($s3->logfile);
like($log, qr/resource manager with ID \d+ not registered|custom resource manager/i,
	'without the library preloaded, replay stops and the log says why');

# the primary's own crash recovery replays the same records: nothing marked
for my $e (@ams)
{
	my $am = $e->{am};
	P("INSERT INTO s_$am SELECT 200000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 300) i");
}
$primary->stop('immediate');
$primary->start;
for my $e (@ams)
{
	HiTest::full_check($primary, 'postgres', "$e->{am} after the primary's crash", "s_$e->{am}", "s_$e->{am}_idx");
}
is(scalar(grep { /\.stale$/ } HiTest::hyb_files($primary->data_dir)), 0, 'the primary marked nothing stale');
$primary->stop;
done_testing();
