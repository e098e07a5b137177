# 051_standby_checkpoints.pl — index checkpoints travel through WAL
# (issue 18: a standby's log stays short; backups copied while an index
# checkpoints restore exactly).
#
# With hybrid_index.checkpoint_log_size at its minimum (64 kB, about 1,300
# redo log records) the primary checkpoints every index many times.  Each
# checkpoint's pages (PAGES records) and map file (MAP) go to WAL.  For
# every access method:
#  - a streaming hot standby replays them: its copy of each index's log is
#    cut at every checkpoint exactly as the primary's is (same length after
#    catch-up, far below what the changes replayed would fill), and its
#    queries answer exactly while checkpoints arrive (index scan against
#    sequential scan in one snapshot), after them, after a restart of the
#    standby, and once it is promoted and written to;
#  - a base backup taken slowly (--max-rate) while single-row inserts make
#    the indexes checkpoint again and again, restored, answers exactly and
#    holds every row (heapallindexed), with no index refusing;
#  - pg_walinspect shows PAGES and MAP records naming each index.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiAM;
use HiTest;
use File::Copy ();
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = HiTest::new_node('primary', streaming => 1,
	conf => "hybrid_index.checkpoint_log_size = '64kB'\nwal_keep_size = '2GB'\n");
sub P { return $primary->safe_psql('postgres', $_[0]); }

my @ams = grep { HiAM::exists_in($primary, 'postgres', $_->{am}) } HiAM::selected();
sub using_of { my ($e) = @_; return $e->{opclass} ? "geom $e->{opclass}" : 'geom'; }

P('CREATE EXTENSION pg_walinspect');
for my $e (@ams)
{
	my $am = $e->{am};
	my $using = using_of($e);
	# eFIND checkpoints at its own log size (the paper's log compaction)
	my $with = $am eq 'efind' ? 'WITH (log_size = 64)' : '';
	P(qq{
		SELECT setseed(0.25);
		CREATE TABLE c_$am (id bigint, geom geometry);
		INSERT INTO c_$am SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 2000) i;
		INSERT INTO c_$am VALUES (90001, NULL), (90002, 'POINT EMPTY');
		CREATE INDEX c_${am}_idx ON c_$am USING $am ($using) $with;});
}
P('CHECKPOINT');
$primary->backup('b1');
my $s1 = PostgreSQL::Test::Cluster->new('standby1');
$s1->init_from_backup($primary, 'b1', has_streaming => 1);
$s1->start;
$s1->poll_query_until('postgres', 'SELECT pg_is_in_recovery()') or die 'no hot standby';
for my $e (@ams)
{
	HiTest::full_check($s1, 'postgres', "$e->{am} on the standby before the load", "c_$e->{am}", "c_$e->{am}_idx");
}

# index scan and sequential scan of the standby, in one snapshot; a
# statement cancelled for a conflict with recovery is tried again
sub standby_counts_agree
{
	my ($am) = @_;
	my $w = 'geom && ST_MakeEnvelope(200, 150, 700, 600)';
	for my $try (1 .. 5)
	{
		my ($ret, $out, $err) = $s1->psql('postgres', qq{
			BEGIN ISOLATION LEVEL REPEATABLE READ;
			SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;
			SELECT count(*) FROM c_$am WHERE $w;
			SET LOCAL enable_seqscan = on; SET LOCAL enable_indexscan = off;
			SET LOCAL enable_bitmapscan = off;
			SELECT count(*) FROM c_$am WHERE $w;
			COMMIT;});
		if ($ret != 0)
		{
			next if $err =~ /conflict with recovery/;
			return "error: $err";
		}
		my @c = split /\n/, $out;
		return scalar(@c) == 2 && $c[0] == $c[1] ? 'ok' : "index $c[0], seqscan $c[1]";
	}
	return 'cancelled five times';
}

# ---- a hot standby follows many checkpoints ----
my $lsn0 = P('SELECT pg_current_wal_insert_lsn()');
for my $batch (1 .. 8)
{
	for my $e (@ams)
	{
		my $am = $e->{am};
		my $base = 100000 * $batch;
		P(qq{INSERT INTO c_$am SELECT $base + i, ST_MakePoint(random() * 1000, random() * 1000)
			FROM generate_series(1, 1000) i;
			DELETE FROM c_$am WHERE id % 11 = $batch;});
		P("VACUUM c_$am") if $batch % 3 == 0;
		is(standby_counts_agree($am), 'ok', "$am batch $batch: the standby's index scan equals its seq scan while checkpoints replay");
	}
}
my $lsn1 = P('SELECT pg_current_wal_insert_lsn()');
$primary->wait_for_catchup($s1);

# the log file of an index, its length
sub log_size
{
	my ($node, $idx) = @_;
	return $node->safe_psql('postgres',
		"SELECT coalesce(bytes, 0) FROM hybrid_index_files('$idx') WHERE kind = 'log'");
}

for my $e (@ams)
{
	my $am = $e->{am};
	my $oid = P("SELECT 'c_${am}_idx'::regclass::oid");
	my %n = map { $_ => P(qq{SELECT count(*) FROM pg_get_wal_records_info('$lsn0', '$lsn1')
		WHERE resource_manager = 'hybrid_index' AND record_type = '$_' AND description LIKE 'index $oid,%'}) }
	  ('PAGES', 'MAP', 'LOG');
	cmp_ok($n{MAP}, '>=', 5, "$am: the primary checkpointed the index (MAP records: $n{MAP})");
	cmp_ok($n{PAGES}, '>', 0, "$am: the pages the checkpoints wrote are in WAL (PAGES records: $n{PAGES})");
	my ($plog, $slog) = (log_size($primary, "c_${am}_idx"), log_size($s1, "c_${am}_idx"));
	is($slog, $plog, "$am: the standby's log is as long as the primary's ($slog bytes)");
	cmp_ok($slog, '<', $n{LOG} * 48 / 4,
		"$am: the standby's log is cut at checkpoints ($slog bytes, $n{LOG} records replayed)");
	HiTest::full_check($s1, 'postgres', "$am on the standby after the checkpoints", "c_$am", "c_${am}_idx");
}
is(scalar(grep { /\.stale$/ } HiTest::hyb_files($s1->data_dir)), 0,
	'the standby marked nothing stale');

# a restart of the standby: its first queries replay only what follows the
# last checkpoint
$s1->restart;
$s1->poll_query_until('postgres', 'SELECT pg_is_in_recovery()') or die 'no hot standby';
for my $e (@ams)
{
	HiTest::full_check($s1, 'postgres', "$e->{am} on the standby after its restart", "c_$e->{am}", "c_$e->{am}_idx");
}

# ---- a crash of the standby while index checkpoints replay ----
# Its recovery starts again from its last restartpoint, before PAGES and
# MAP records it had already replayed: the pages it had parked or written
# are parked and written again, and the index answers exactly
for my $round (1 .. 2)
{
	for my $e (@ams)
	{
		my $am = $e->{am};
		my $base = 2000000 + 100000 * $round;
		P(qq{INSERT INTO c_$am SELECT $base + i, ST_MakePoint(random() * 1000, random() * 1000)
			FROM generate_series(1, 3000) i;
			DELETE FROM c_$am WHERE id % 13 = $round;});
	}
	$primary->wait_for_catchup($s1);
	$s1->stop('immediate');
	$s1->start;
	$s1->poll_query_until('postgres', 'SELECT pg_is_in_recovery()') or die 'no hot standby';
	$primary->wait_for_catchup($s1);
	for my $e (@ams)
	{
		HiTest::full_check($s1, 'postgres', "$e->{am} on the standby after a crash during checkpoint replay (round $round)",
			"c_$e->{am}", "c_$e->{am}_idx");
	}
}
is(scalar(grep { /\.stale$/ } HiTest::hyb_files($s1->data_dir)), 0,
	'the standby marked nothing stale after its crashes');

# ---- a copy whose map file is older than its log ----
# What a base backup copies when an index checkpoints between its map file
# and its log: replay finds the log lacking records it needs, marks the
# index stale, and the checkpoint's MAP record later in WAL makes them
# unnecessary: the index answers exactly again.  Made here by stopping the
# standby and giving it the primary's newer log.  A restartpoint first, so
# that replay resumes after the records the copy's log then lacks.
P('CHECKPOINT');
$primary->wait_for_catchup($s1);
$s1->safe_psql('postgres', 'CHECKPOINT');
$s1->stop;
for my $e (@ams)
{
	my $am = $e->{am};
	P(qq{INSERT INTO c_$am SELECT 7000000 + i, ST_MakePoint(random() * 1000, random() * 1000)
		FROM generate_series(1, 3000) i});
	P("INSERT INTO c_$am VALUES (7100000 + $_, ST_MakePoint($_, $_))") for 1 .. 5;
	my $plog = P("SELECT path FROM hybrid_index_files('c_${am}_idx') WHERE kind = 'log'");
	(my $slog = $plog) =~ s/^\Q@{[$primary->data_dir]}\E/@{[$s1->data_dir]}/;
	$plog = $primary->data_dir . "/$plog" unless $plog =~ m{^/};
	$slog = $s1->data_dir . "/$slog" unless $slog =~ m{^/};
	File::Copy::copy($plog, $slog) or die "copy $plog: $!";
	P("INSERT INTO c_$am SELECT 7200000 + i, ST_MakePoint(random() * 1000, random() * 1000)
		FROM generate_series(1, 3000) i");
}
$s1->start;
$s1->poll_query_until('postgres', 'SELECT pg_is_in_recovery()') or die 'no hot standby';
$primary->wait_for_catchup($s1);
my $slog_text = slurp_file($s1->logfile);
for my $e (@ams)
{
	my $am = $e->{am};
	my $rel = $s1->safe_psql('postgres', "SELECT pg_relation_filenode('c_${am}_idx')");
	like($slog_text, qr/relfilenode $rel\) lacks changes its map file is older than/,
		"$am: the copy with an older map file was marked stale, awaiting a checkpoint");
	like($slog_text, qr/relfilenode $rel has every change again/, "$am: a later checkpoint in WAL closed the gap");
	HiTest::full_check($s1, 'postgres', "$am after a gap closed by a checkpoint", "c_$am", "c_${am}_idx");
}
is(scalar(grep { /\.stale$/ } HiTest::hyb_files($s1->data_dir)), 0, 'no index stays stale');

# ---- a base backup copied slowly while the indexes checkpoint ----
my $script = $primary->basedir . '/load.sql';
PostgreSQL::Test::Utils::append_to_file($script,
	join('', map { "INSERT INTO c_$_->{am} VALUES (nextval('load_ids'), ST_MakePoint(random() * 1000, random() * 1000));\n" } @ams));
P('CREATE SEQUENCE load_ids START 10000000');
my $dbsize = P('SELECT sum(pg_database_size(oid)) FROM pg_database');
# about eight seconds of copying, whatever the size of the cluster
my $rate = int($dbsize / 1024 / 8) + 32;
my ($out, $err) = ('', '');
my $lsn2 = P('SELECT pg_current_wal_insert_lsn()');
my $h = IPC::Run::start(['pgbench', '-n', '-T', '14', '-c', '2', '-f', $script,
	'-h', $primary->host, '-p', $primary->port, 'postgres'], '>', \$out, '2>', \$err);
sleep 1;
$primary->backup('b_slow', backup_options => ["--max-rate=${rate}k"]);
my $lsn3 = P('SELECT pg_current_wal_insert_lsn()');
$h->finish;
is($h->result(0), 0, 'the insert load ran through the backup') or diag($err);
my $maps = P(qq{SELECT count(*) FROM pg_get_wal_records_info('$lsn2', '$lsn3')
	WHERE resource_manager = 'hybrid_index' AND record_type = 'MAP'});
cmp_ok($maps, '>=', scalar(@ams), "the indexes checkpointed while the backup was copied ($maps MAP records)");
my $r1 = PostgreSQL::Test::Cluster->new('restored_slow');
$r1->init_from_backup($primary, 'b_slow');
$r1->start;
for my $e (@ams)
{
	my $am = $e->{am};
	cmp_ok($r1->safe_psql('postgres', "SELECT count(*) FROM c_$am WHERE id >= 10000000"), '>', 0,
		"$am: the restored backup has rows of the load");
	HiTest::full_check($r1, 'postgres', "$am restored from a backup copied while it checkpointed", "c_$am", "c_${am}_idx");
	is(HiTest::try_psql($r1, 'postgres', "SELECT hybrid_index_check('c_${am}_idx', heapallindexed => true)"), 't',
		"$am restored: the index holds every row of its table (heapallindexed)");
}
is(scalar(grep { /\.stale$/ } HiTest::hyb_files($r1->data_dir)), 0, 'the restored backup marked nothing stale');
$r1->stop;

# ---- promotion after replayed checkpoints ----
$primary->wait_for_catchup($s1);
$s1->promote;
$s1->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'not promoted';
for my $e (@ams)
{
	my $am = $e->{am};
	HiTest::full_check($s1, 'postgres', "$am promoted after replayed checkpoints", "c_$am", "c_${am}_idx");
	$s1->safe_psql('postgres', qq{INSERT INTO c_$am SELECT 5000000 + i, ST_MakePoint(random() * 1000, random() * 1000)
		FROM generate_series(1, 3000) i; DELETE FROM c_$am WHERE id % 13 = 0});
	HiTest::full_check($s1, 'postgres', "$am promoted, after writes and checkpoints on it", "c_$am", "c_${am}_idx");
}
is(scalar(grep { /\.pending$/ } HiTest::hyb_files($s1->data_dir)), 0, 'promotion left no pages parked');

# A copy stopped while in recovery keeps its parked pages; started as a
# primary without replaying anything of ours, its first load removes the
# pending files of every database (one sweep), which no map references.
{
	my $am = $ams[0]{am};
	my $db = $s1->safe_psql('postgres', q{SELECT oid FROM pg_database WHERE datname = 'postgres'});
	my $t1 = $s1->safe_psql('postgres', q{SELECT oid FROM pg_database WHERE datname = 'template1'});
	my $rfn = $s1->safe_psql('postgres', "SELECT relfilenode FROM pg_class WHERE relname = 'c_${am}_idx'");
	$s1->stop;
	my @planted = ($s1->data_dir . "/base/$db/hyb_1663_$rfn.pending", $s1->data_dir . "/base/$t1/hyb_1663_4000000000.pending");
	for my $f (@planted)
	{
		open(my $fh, '>', $f) or die "cannot plant $f: $!";
		print $fh 'x' x 100;
		close($fh);
	}
	$s1->start;
	HiTest::full_check($s1, 'postgres', "$am after a restart with pending files left", "c_$am", "c_${am}_idx");
	is(scalar(grep { -e $_ } @planted), 0, "the first load removed the server's pending files, in every database");
}
$s1->stop;
$primary->stop;
done_testing();
