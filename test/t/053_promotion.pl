# 053_promotion.pl — a promoted hot standby takes over the indexes its
# readers loaded, without loading them again (issue 41, item 4).
#
# For every access method, two tables on a primary with a hot standby:
#  - a_<am>: queried on the standby (its readers load it and follow the
#    log), then more committed inserts and a transaction still in flight
#    when the primary fails; the standby is promoted.  The first query on
#    the promoted server takes the readers' state over (the log since the
#    last index checkpoint is not replayed again: no "replayed ... log
#    records" line for it), answers exactly, and keeps answering after
#    VACUUM hands the cut-off transaction's line pointers to new rows far
#    away, and after writes;
#  - b_<am>: queried on the standby, then more committed inserts that its
#    readers never applied, and not used at all after the promotion: a
#    checkpoint of the promoted server must not tell crash recovery that
#    its log ends where the readers stopped; after kill -9 of the promoted
#    server both tables answer exactly and hold every row (heapallindexed).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiAM;
use HiTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = HiTest::new_node('primary', streaming => 1);
sub P { return $primary->safe_psql('postgres', $_[0]); }

my @ams = grep { HiAM::exists_in($primary, 'postgres', $_->{am}) } HiAM::selected();
sub using_of { my ($e) = @_; return $e->{opclass} ? "geom $e->{opclass}" : 'geom'; }

for my $e (@ams)
{
	my $am = $e->{am};
	my $using = using_of($e);
	for my $t ("a_$am", "b_$am")
	{
		P(qq{
			SELECT setseed(0.3);
			CREATE TABLE $t (id bigint, geom geometry);
			INSERT INTO $t SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 3000) i;
			INSERT INTO $t VALUES (90001, NULL), (90002, 'POINT EMPTY');
			CREATE INDEX ${t}_idx ON $t USING $am ($using);});
	}
}
P('CHECKPOINT');
$primary->backup('b1');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b1', has_streaming => 1);
$standby->start;
$standby->poll_query_until('postgres', 'SELECT pg_is_in_recovery()') or die 'no hot standby';
sub S { return $standby->safe_psql('postgres', $_[0]); }
my $window = 'geom && ST_MakeEnvelope(100, 100, 600, 450)';
sub indexed_count
{
	my ($t) = @_;
	return S("SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*), coalesce(sum(id), 0) FROM $t WHERE $window");
}

# the readers load both indexes and follow a first batch
for my $e (@ams)
{
	my $am = $e->{am};
	P("INSERT INTO $_ SELECT 10000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 2000) i")
	  for ("a_$am", "b_$am");
}
$primary->wait_for_catchup($standby);
for my $e (@ams)
{
	my $am = $e->{am};
	for my $t ("a_$am", "b_$am")
	{
		is(indexed_count($t), P("SELECT count(*), coalesce(sum(id), 0) FROM $t WHERE $window"),
			"$am: $t on the hot standby answers as the primary does");
	}
}

# b_: committed rows its readers never apply before the promotion
for my $e (@ams)
{
	P("INSERT INTO b_$e->{am} SELECT 20000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 1500) i");
}
# a_: a transaction in flight when the primary fails, which a_'s readers apply
my $flight = join('; ', map { "INSERT INTO a_$_->{am} SELECT 40000 + i, ST_MakePoint(200 + i % 300, 150 + i % 250) FROM generate_series(1, 400) i" } @ams);
my $bg = IPC::Run::start(['psql', '-X', '-h', $primary->host, '-p', $primary->port, '-d', 'postgres',
	'-c', "BEGIN; $flight; SELECT pg_sleep(600);"], '>', \my $bgout, '2>', \my $bgerr);
$primary->poll_query_until('postgres',
	"SELECT count(*) = 1 FROM pg_stat_activity WHERE query LIKE 'BEGIN;%pg_sleep%' AND wait_event = 'PgSleep'")
  or die 'the transaction in flight did not start';
for my $e (@ams)
{
	P("INSERT INTO a_$e->{am} SELECT 30000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 1500) i");
}
P('SELECT pg_switch_wal()');
$primary->wait_for_catchup($standby, 'replay', P('SELECT pg_current_wal_insert_lsn()'));
my %expect;
for my $e (@ams)
{
	my $am = $e->{am};
	# the readers of a_ apply every record, the running transaction's too
	is(indexed_count("a_$am"), P("SELECT count(*), coalesce(sum(id), 0) FROM a_$am WHERE $window"),
		"$am: a_$am on the hot standby with a transaction in flight");
	$expect{$_} = P("SELECT count(*), coalesce(sum(id), 0) FROM $_ WHERE $window") for ("a_$am", "b_$am");
}
$primary->stop('immediate');
$bg->kill_kill;

my $log_offset = -s $standby->logfile;
$standby->promote;
for my $e (@ams)
{
	my $am = $e->{am};
	is(indexed_count("a_$am"), $expect{"a_$am"},
		"$am: the first query on the promoted server answers as the primary did");
}
my $log = slurp_file($standby->logfile, $log_offset);
for my $e (@ams)
{
	unlike($log, qr/replayed \d+ log records of index "a_$e->{am}_idx"/,
		"$e->{am}: promotion took the loaded index over (its log was not replayed again)");
}
for my $e (@ams)
{
	my $am = $e->{am};
	HiTest::full_check($standby, 'postgres', "$am promoted", "a_$am", "a_${am}_idx");
	is(HiTest::try_psql($standby, 'postgres', "SELECT hybrid_index_check('a_${am}_idx', heapallindexed => true)"), 't',
		"$am promoted: a_${am}_idx holds every row of its table");
	# the cut-off transaction's rows are dead: VACUUM frees their line
	# pointers, which new rows far away take
	S("VACUUM a_$am");
	S("INSERT INTO a_$am SELECT 50000 + i, ST_MakePoint(5000 + i, 5000 + i) FROM generate_series(1, 800) i");
	S("DELETE FROM a_$am WHERE id % 11 = 0");
	HiTest::full_check($standby, 'postgres', "$am promoted, after VACUUM and writes", "a_$am", "a_${am}_idx");
	is(S("SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM a_$am WHERE geom && ST_MakeEnvelope(200, 150, 500, 400) AND id BETWEEN 40001 AND 40400"),
		'0', "$am promoted: no entry of the cut-off transaction answers for its old box");
}

# b_ was never used since the promotion; a checkpoint, then a crash
S('CHECKPOINT');
for my $e (@ams)
{
	S("INSERT INTO a_$e->{am} SELECT 60000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 200) i");
}
S('CHECKPOINT');
$standby->stop('immediate');
$standby->start;
for my $e (@ams)
{
	my $am = $e->{am};
	is(indexed_count("b_$am"), $expect{"b_$am"},
		"$am: after the promoted server's crash b_$am answers as the primary did");
	for my $t ("a_$am", "b_$am")
	{
		HiTest::full_check($standby, 'postgres', "$am promoted, after its crash", $t, "${t}_idx");
		is(HiTest::try_psql($standby, 'postgres', "SELECT hybrid_index_check('${t}_idx', heapallindexed => true)"), 't',
			"$am promoted, after its crash: ${t}_idx holds every row of its table");
	}
}
is(scalar(grep { /\.stale$/ } HiTest::hyb_files($standby->data_dir)), 0, 'nothing was marked stale');
$standby->stop;
done_testing();
