# 050_standby.pl — copies of the index files follow the primary through WAL
# (issue 18: the records of our resource manager carry every change).
#
# For every access method:
#  - a streaming standby made from a base backup replays inserts, deletes
#    and VACUUM made after the backup, an index created after it and the
#    drop of another; it is crash-restarted (kill -9) in the middle of
#    replay; as a hot standby its queries use our indexes and answer
#    exactly (index, bitmap and kNN scans against its own sequential scan)
#    after the backup, after each batch replayed, after its own crash, and
#    after the primary crashed with a transaction in flight whose rows'
#    line pointers VACUUM then handed to new rows; promoted, every index
#    answers exactly at once (no REINDEX), and keeps answering after writes
#    on the promoted server;
#  - a base backup taken during a load of committed single-row inserts,
#    restored, answers exactly through the index, every row it has;
#  - a PITR restore to a point between two batches of inserts answers with
#    exactly the first batch;
#  - a copy that lacks records WAL no longer has (its log file damaged)
#    refuses with an error naming the index and a REINDEX hint, never
#    answering short; REINDEX makes it exact;
#  - the primary's own crash recovery replays the same records and answers
#    exactly; pg_walinspect shows the records; a server without the library
#    preloaded cannot replay them and says so.
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

my $primary = HiTest::new_node('primary', streaming => 1, archiving => 1);
sub P { return $primary->safe_psql('postgres', $_[0]); }

my @ams = grep { HiAM::exists_in($primary, 'postgres', $_->{am}) } HiAM::selected();
sub using_of { my ($e) = @_; return $e->{opclass} ? "geom $e->{opclass}" : 'geom'; }

for my $e (@ams)
{
	my $am = $e->{am};
	my $using = using_of($e);
	P(qq{
		SELECT setseed(0.5);
		CREATE TABLE s_$am (id bigint, geom geometry);
		INSERT INTO s_$am SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 3000) i;
		INSERT INTO s_$am VALUES (90001, NULL), (90002, 'POINT EMPTY');
		CREATE INDEX s_${am}_idx ON s_$am USING $am ($using) INCLUDE (id);
		CREATE TABLE d_$am (id bigint, geom geometry);
		INSERT INTO d_$am SELECT i, ST_MakePoint(i, i) FROM generate_series(1, 100) i;
		CREATE INDEX d_${am}_idx ON d_$am USING $am ($using);});
}
P('CHECKPOINT');
$primary->backup('b1');

# every copy keeps its WAL to itself: only the primary archives
sub copy_of
{
	my ($name, $backup, %o) = @_;
	my $n = PostgreSQL::Test::Cluster->new($name);
	$n->init_from_backup($primary, $backup, %o);
	$n->append_conf('postgresql.conf', "archive_mode = off\n");
	return $n;
}

# ---- a streaming standby follows inserts, deletes, VACUUM, builds, drops ----
my $s1 = copy_of('standby1', 'b1', has_streaming => 1);
$s1->start;
$s1->poll_query_until('postgres', 'SELECT pg_is_in_recovery()') or die 'no hot standby';
my $window = 'geom && ST_MakeEnvelope(100, 100, 600, 450)';
for my $e (@ams)
{
	my $am = $e->{am};
	like($s1->safe_psql('postgres', "SET enable_seqscan = off; EXPLAIN (COSTS OFF) SELECT count(*) FROM s_$am WHERE $window"),
		qr/s_${am}_idx/, "$am: the hot standby's plan uses our index");
	HiTest::full_check($s1, 'postgres', "$am on the hot standby after the backup", "s_$am", "s_${am}_idx");
	# loaded here, dropped on the primary below: replay releases it
	HiTest::full_check($s1, 'postgres', "$am on the hot standby, before its drop", "d_$am", "d_${am}_idx");
}

my $lsn0 = P('SELECT pg_current_wal_insert_lsn()');
my %dropped;
for my $e (@ams)
{
	my $am = $e->{am};
	my $using = using_of($e);
	P("INSERT INTO s_$am SELECT 100000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 500) i");
	P("DELETE FROM s_$am WHERE id % 10 = 0");
	P("VACUUM s_$am");
	P(qq{CREATE TABLE l_$am (id bigint, geom geometry);
		INSERT INTO l_$am SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 800) i;
		INSERT INTO l_$am VALUES (90001, NULL);
		CREATE INDEX l_${am}_idx ON l_$am USING $am ($using);
		INSERT INTO l_$am SELECT 1000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 200) i;});
	# a parallel build: the worker writes part of the index and logs its
	# writes, or inserts the WAL records of the files the leader writes;
	# the grids' small pages make both processes build a side
	my $with = ($am eq 'lbgrid' || $am eq 'hgrid') ? ' WITH (page_size = 4096)' : '';
	P(qq{CREATE TABLE p_$am (id bigint, geom geometry) WITH (parallel_workers = 1);
		INSERT INTO p_$am SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 20000) i;
		INSERT INTO p_$am VALUES (90001, NULL);
		SET max_parallel_maintenance_workers = 1;
		SET min_parallel_table_scan_size = 0;
		CREATE INDEX p_${am}_idx ON p_$am USING $am ($using)$with;});
	# a transaction whose records an index checkpoint took into the pages
	# before it committed: the standby's log still needs its COMMIT
	P(qq{BEGIN;
		INSERT INTO s_$am SELECT 110000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 300) i;
		SELECT hybrid_index_checkpoint('s_${am}_idx');
		COMMIT;});
	$dropped{$am} = P("SELECT relfilenode FROM pg_class WHERE relname = 'd_${am}_idx'");
	P("DROP INDEX d_${am}_idx");
}
$primary->wait_for_catchup($s1);
for my $e (@ams)
{
	my $am = $e->{am};
	# s_ was loaded before the batch (it follows the log), l_ is new
	HiTest::full_check($s1, 'postgres', "$am on the hot standby after the batch", "s_$am", "s_${am}_idx");
	HiTest::full_check($s1, 'postgres', "$am on the hot standby, created after the backup", "l_$am", "l_${am}_idx");
	HiTest::full_check($s1, 'postgres', "$am on the hot standby, built in parallel", "p_$am", "p_${am}_idx");
	# WAL carried every write and cut of the build: the same bytes
	my $rfn = P("SELECT relfilenode FROM pg_class WHERE relname = 'p_${am}_idx'");
	my @pf = sort grep { m{/hyb_\d+_$rfn\.(flash|optane|map)$} } HiTest::hyb_files($primary->data_dir);
	my @sf = sort grep { m{/hyb_\d+_$rfn\.(flash|optane|map)$} } HiTest::hyb_files($s1->data_dir);
	is(scalar(@sf), scalar(@pf), "$am: the standby has the files of the parallel build");
	for my $i (0 .. $#pf)
	{
		is(slurp_file($sf[$i] // ''), slurp_file($pf[$i]),
			"$am: the standby's copy of $pf[$i] is the primary's, byte for byte");
	}
}

# the records of our resource manager, as pg_walinspect shows them
P('CREATE EXTENSION pg_walinspect');
my $lsn1 = P('SELECT pg_current_wal_insert_lsn()');
for my $type ('LOG', 'DURABLE', 'IMAGE', 'DROP')
{
	cmp_ok(P(qq{SELECT count(*) FROM pg_get_wal_records_info('$lsn0', '$lsn1')
		WHERE resource_manager = 'hybrid_index' AND record_type = '$type' AND description LIKE 'index %'}),
		'>', 0, "pg_walinspect shows our $type records");
}

# kill -9 of the standby while it replays a stream of single-row commits
my $reader_errors = '';
my $load = join('; ', map { "INSERT INTO s_$_->{am} VALUES (200000 + g, ST_MakePoint(g % 1000, g % 997))" } @ams);
for my $g (1 .. 40)
{
	(my $q = $load) =~ s/\bg\b/$g/g;
	P($q);
	$s1->stop('immediate') if $g == 20;
	# readers on the standby while it replays: through our indexes, no error
	if ($g < 20)
	{
		for my $e (@ams)
		{
			my ($ret, $o, $er) = $s1->psql('postgres',
				"SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM s_$e->{am} WHERE $window");
			$reader_errors .= "$e->{am}: $er\n" if $ret != 0;
		}
	}
}
is($reader_errors, '', 'queries on the standby during replay ran without error');
$s1->start;
$primary->wait_for_catchup($s1);

for my $e (@ams)
{
	my $am = $e->{am};
	my $q = "SELECT count(*), coalesce(sum(id), 0) FROM s_$am WHERE $window";
	is($s1->safe_psql('postgres', "SET enable_seqscan = off; $q"), P($q),
		"$am: the hot standby answers as the primary does");
	HiTest::full_check($s1, 'postgres', "$am on the hot standby after its crash", "s_$am", "s_${am}_idx");
	my @files = grep { /hyb_\d+_$dropped{$am}\./ } HiTest::hyb_files($s1->data_dir);
	is(scalar(@files), 0, "$am: the standby removed the files of the dropped index");
}

# The primary crashes with a transaction in flight.  The hot standby's
# indexes hold its entries (as the primary's did); the primary's recovery
# drops them, and after VACUUM their line pointers hold new rows far away:
# the standby must not answer them for the old boxes.
my $flight = join('; ', map { "INSERT INTO s_$_->{am} SELECT 400000 + i, ST_MakePoint(200 + i % 300, 150 + i % 250) FROM generate_series(1, 400) i" } @ams);
my $bg = IPC::Run::start(['psql', '-X', '-h', $primary->host, '-p', $primary->port, '-d', 'postgres',
	'-c', "BEGIN; $flight; SELECT pg_sleep(600);"], '>', \my $bgout, '2>', \my $bgerr);
$primary->poll_query_until('postgres',
	"SELECT count(*) = 1 FROM pg_stat_activity WHERE query LIKE 'BEGIN;%pg_sleep%' AND wait_event = 'PgSleep'")
  or die 'the transaction in flight did not start';
P('SELECT pg_switch_wal()');
$primary->wait_for_catchup($s1, 'replay', P('SELECT pg_current_wal_insert_lsn()'));
for my $e (@ams)
{
	HiTest::full_check($s1, 'postgres', "$e->{am} on the hot standby, a transaction in flight", "s_$e->{am}", "s_$e->{am}_idx");
}
$primary->stop('immediate');
$bg->kill_kill;
$primary->start;
for my $e (@ams)
{
	my $am = $e->{am};
	P("VACUUM s_$am");
	P("INSERT INTO s_$am SELECT 450000 + i, ST_MakePoint(5000 + i, 5000 + i) FROM generate_series(1, 800) i");
}
$primary->wait_for_catchup($s1);
for my $e (@ams)
{
	my $am = $e->{am};
	my $q = "SELECT count(*), coalesce(sum(id), 0) FROM s_$am WHERE $window";
	is($s1->safe_psql('postgres', "SET enable_seqscan = off; $q"), P($q),
		"$am: after the primary's crash the hot standby answers as the primary does");
	HiTest::full_check($s1, 'postgres', "$am on the hot standby after the primary's crash", "s_$am", "s_${am}_idx");
}
my $maps = sub {
	my ($node) = @_;
	return join(',', sort map { m{/(hyb_\d+_\d+)\.map$} ? $1 : () } HiTest::hyb_files($node->data_dir));
};
is($maps->($s1), $maps->($primary), 'the standby has the same index files as the primary');

$s1->promote;
for my $e (@ams)
{
	my $am = $e->{am};
	for my $t ("s_$am", "l_$am")
	{
		is($s1->safe_psql('postgres', "SELECT count(*) FROM $t"), P("SELECT count(*) FROM $t"),
			"$am: the promoted server has every row of $t");
		HiTest::full_check($s1, 'postgres', "$am promoted", $t, "${t}_idx");
		is(HiTest::try_psql($s1, 'postgres', "SELECT hybrid_index_check('${t}_idx', heapallindexed => true)"), 't',
			"$am promoted: ${t}_idx holds every row of its table (heapallindexed)");
	}
	$s1->safe_psql('postgres',
		"INSERT INTO s_$am SELECT 300000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 300) i");
	$s1->safe_psql('postgres', "DELETE FROM s_$am WHERE id % 7 = 0");
	HiTest::full_check($s1, 'postgres', "$am promoted, after writes on it", "s_$am", "s_${am}_idx");
}
is(scalar(grep { /\.stale$/ } HiTest::hyb_files($s1->data_dir)), 0, 'the promoted standby marked nothing stale');
$s1->stop;

# ---- a base backup taken during a load of single-row commits ----
my $script = $primary->basedir . '/load.sql';
PostgreSQL::Test::Utils::append_to_file($script,
	join('', map { "INSERT INTO s_$_->{am} VALUES (nextval('load_ids'), ST_MakePoint(random() * 1000, random() * 1000));\n" } @ams));
P('CREATE SEQUENCE load_ids START 10000000');
my ($out, $err) = ('', '');
my $h = IPC::Run::start(['pgbench', '-n', '-T', '8', '-c', '2', '-f', $script,
	'-h', $primary->host, '-p', $primary->port, 'postgres'], '>', \$out, '2>', \$err);
sleep 2;
$primary->backup('b_load');
$h->finish;
is($h->result(0), 0, 'the insert load ran through the backup') or diag($err);
my $r1 = copy_of('restored_load', 'b_load');
$r1->start;
for my $e (@ams)
{
	my $am = $e->{am};
	cmp_ok($r1->safe_psql('postgres', "SELECT count(*) FROM s_$am WHERE id >= 10000000"), '>', 0,
		"$am: the restored backup has rows of the load");
	HiTest::full_check($r1, 'postgres', "$am restored from a backup under load", "s_$am", "s_${am}_idx");
	is(HiTest::try_psql($r1, 'postgres', "SELECT hybrid_index_check('s_${am}_idx', heapallindexed => true)"), 't',
		"$am restored: the index holds every row of its table (heapallindexed)");
	# the backup wrote the main fork's zeros out; the first use gave them back
	HiTest::sparse_main_fork($r1, 'postgres', "s_${am}_idx", "$am restored");
}
$r1->stop;

# ---- PITR to a point between two batches ----
$primary->backup('b2');
for my $e (@ams)
{
	P("INSERT INTO s_$e->{am} SELECT 500000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 200) i");
}
P("SELECT pg_create_restore_point('between_batches')");
for my $e (@ams)
{
	P("INSERT INTO s_$e->{am} SELECT 600000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 200) i");
}
HiTest::switch_and_archive($primary);
my $r2 = copy_of('pitr', 'b2', has_restoring => 1);
$r2->append_conf('postgresql.conf', "recovery_target_name = 'between_batches'\nrecovery_target_action = 'promote'\n");
$r2->start;
$r2->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'PITR did not end';
for my $e (@ams)
{
	my $am = $e->{am};
	is($r2->safe_psql('postgres', "SET enable_seqscan = off; SELECT count(*) FROM s_$am WHERE id BETWEEN 500001 AND 500200 AND geom && ST_MakeEnvelope(-1, -1, 1001, 1001)"),
		'200', "$am: PITR has the first batch, through the index");
	is($r2->safe_psql('postgres', "SET enable_seqscan = off; SELECT count(*) FROM s_$am WHERE id BETWEEN 600001 AND 600200 AND geom && ST_MakeEnvelope(-1, -1, 1001, 1001)"),
		'0', "$am: PITR has none of the second batch, through the index");
	HiTest::full_check($r2, 'postgres', "$am after PITR", "s_$am", "s_${am}_idx");
	is(HiTest::try_psql($r2, 'postgres', "SELECT hybrid_index_check('s_${am}_idx', heapallindexed => true)"), 't',
		"$am after PITR: the index holds every row of its table (heapallindexed)");
}
$r2->stop;

# ---- a copy that lacks what WAL no longer has refuses ----
$primary->backup('b3');
for my $e (@ams)
{
	P("INSERT INTO s_$e->{am} SELECT 700000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 50) i");
}
my $s2 = copy_of('standby2', 'b3', has_streaming => 1);
# damage the copy: its index logs lose the records made before the backup
for my $e (@ams)
{
	my $rfn = P("SELECT relfilenode FROM pg_class WHERE relname = 's_$e->{am}_idx'");
	for my $f (grep { /hyb_\d+_$rfn\.log$/ } HiTest::hyb_files($s2->data_dir))
	{
		open(my $fh, '>', $f) or die "truncate $f: $!";
		close($fh);
	}
}
$s2->start;
$primary->wait_for_catchup($s2);
$s2->promote;
for my $e (@ams)
{
	my $am = $e->{am};
	my ($ret, $o, $er) = $s2->psql('postgres',
		"SET enable_seqscan = off; SELECT count(*) FROM s_$am WHERE geom && ST_MakeEnvelope(0, 0, 1000, 1000)");
	isnt($ret, 0, "$am: the copy that lacks records refuses");
	like($er, qr/index "s_${am}_idx" is out of date on this server/, "$am: the error names the index");
	like($er, qr/HINT:\s+REINDEX INDEX s_${am}_idx/, "$am: the error says to REINDEX");
	$s2->safe_psql('postgres', "REINDEX INDEX s_${am}_idx");
	HiTest::full_check($s2, 'postgres', "$am after REINDEX", "s_$am", "s_${am}_idx");
}
$s2->stop;

# ---- a server that replays our records without the library stops, saying so ----
# (from the archive: the backup's own WAL need not hold a record of ours, a
# checkpoint logs none for an index whose log did not change)
my $s3 = copy_of('standby3', 'b1', has_restoring => 1);
$s3->append_conf('postgresql.conf', "shared_preload_libraries = ''\n");
$s3->start(fail_ok => 1);
# pg_ctl may see it up: when no record of ours falls before the backup's
# end, a hot standby opens before replay reaches one and stops then
my $s3_pidfile = $s3->data_dir . '/postmaster.pid';
for (1 .. 600)
{
	last unless -e $s3_pidfile;
	select(undef, undef, undef, 0.1);
}
ok(!-e $s3_pidfile, 'without the library preloaded, the server stops at our first record');
$s3->_update_pid(0);
my $log = slurp_file($s3->logfile);
like($log, qr/resource manager with ID \d+ not registered|custom resource manager/i,
	'without the library preloaded, replay stops and the log says why');

# ---- the primary's own crash recovery replays the same records ----
for my $e (@ams)
{
	my $am = $e->{am};
	P("INSERT INTO s_$am SELECT 800000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 300) i");
}
$primary->stop('immediate');
$primary->start;
for my $e (@ams)
{
	HiTest::full_check($primary, 'postgres', "$e->{am} after the primary's crash", "s_$e->{am}", "s_$e->{am}_idx");
	HiTest::full_check($primary, 'postgres', "$e->{am} after the primary's crash", "l_$e->{am}", "l_$e->{am}_idx");
}
is(scalar(grep { /\.stale$/ } HiTest::hyb_files($primary->data_dir)), 0, 'the primary marked nothing stale');
$primary->stop;
done_testing();
