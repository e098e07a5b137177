# 052_backup_checkpoint.pl — a file-level base backup whose copy races an
# index checkpoint (issue 18: "base backups and PITR restores copy the files
# in an unknown state").
#
# A backup tool copies files one by one, in an order of its own, while the
# server runs.  An index checkpoint writes pages into new slots of the tier
# files, may move pages to compact them, rewrites the map and empties the
# log.  So a backup can hold a map and tier files from before a checkpoint
# next to a log from after it (emptied), or the reverse.  WAL replay from
# the backup's start must still make every index exact: the checkpoint's
# PAGES and MAP records and the LOG records after it are in the WAL the
# backup needs.
#
# With the low-level backup API (pg_backup_start / pg_backup_stop), for
# every access method, in both orders:
#  (a) the map and tier files are copied, the index checkpoints (its log
#      emptied), then its log is copied: empty;
#  (b) the log is copied, the index checkpoints, then the map and the tier
#      files are copied;
# with committed rows before, between and after, and rows deleted and
# vacuumed.  The restored server finds every row committed before the
# backup ended through the index (index, bitmap and kNN scans equal its
# sequential scan, heapallindexed), at once, without REINDEX.  In (a) the
# copy's log says nothing of where it begins: replay holds the index
# refused until the checkpoint's MAP record, whose PAGES records carry
# every page written since the copied map (before, such a copy refused
# for good).  Were it still to refuse, the test checks that the error
# names the index and says to REINDEX, and fails.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use File::Copy qw(copy);
use File::Find qw(find);
use File::Path qw(make_path);
use File::Spec;
use HiAM;
use HiTest;
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
	P(qq{
		SELECT setseed(0.25);
		CREATE TABLE b_$am (id bigint, geom geometry);
		INSERT INTO b_$am SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 4000) i;
		INSERT INTO b_$am VALUES (90001, NULL), (90002, 'POINT EMPTY');
		CREATE INDEX b_${am}_idx ON b_$am USING $am (@{[ using_of($e) ]}) INCLUDE (id);});
}
P('CHECKPOINT');

# Rows committed one statement at a time, so that the logs hold records
sub batch
{
	my ($base, $n) = @_;
	for my $e (@ams)
	{
		P("INSERT INTO b_$e->{am} SELECT $base + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, $n) i");
	}
	return;
}

sub is_log { return $_[0] =~ m{(^|/)hyb_\d+_\d+\.log$}; }

# Copy the data directory into $dst: the files $want accepts (relative
# paths), without WAL and the server's own run files
sub copy_files
{
	my ($dst, $want) = @_;
	my $src = $primary->data_dir;
	make_path($dst);
	find(
		{
			no_chdir => 1,
			wanted => sub {
				my $rel = File::Spec->abs2rel($File::Find::name, $src);
				return if $rel eq '.';
				if ($rel =~ m{^(pg_wal|pg_replslot|pg_stat_tmp)/.} || $rel =~ m{^postmaster\.(pid|opts)$})
				{
					$File::Find::prune = 1 if -d $File::Find::name;
					return;
				}
				if (-d $File::Find::name)
				{
					make_path("$dst/$rel");
					return;
				}
				return unless $want->($rel);
				# a file may go while it is copied, as for any backup tool
				copy($File::Find::name, "$dst/$rel") or !-e $File::Find::name or die "copy $rel: $!";
			}
		},
		$src);
	return;
}

my $round = 0;
for my $order ('map first, log copied empty', 'log first, map after')
{
	$round++;
	my $name = "manual$round";
	my $dst = $primary->backup_dir . "/$name";
	batch(100000 * $round, 300);
	for my $e (@ams)
	{
		P("DELETE FROM b_$e->{am} WHERE id % 17 = $round");
	}
	P("VACUUM b_$_->{am}") for @ams;

	my $bg = $primary->background_psql('postgres');
	$bg->query_safe('SET client_min_messages = warning');
	$bg->query_safe("SELECT pg_backup_start('$name', true)");
	batch(100000 * $round + 10000, 200);

	my $first = $round == 1 ? sub { !is_log($_[0]) } : sub { is_log($_[0]) };
	my $second = $round == 1 ? sub { is_log($_[0]) } : sub { !is_log($_[0]) };
	copy_files($dst, $first);
	batch(100000 * $round + 20000, 200);
	for my $e (@ams)
	{
		P("SELECT hybrid_index_checkpoint('b_$e->{am}_idx')");
		if ($round == 1)
		{
			my $rfn = P("SELECT relfilenode FROM pg_class WHERE relname = 'b_$e->{am}_idx'");
			my @logs = grep { /hyb_\d+_$rfn\.log$/ } HiTest::hyb_files($primary->data_dir);
			ok(@logs && !grep({ -s $_ } @logs), "$e->{am}: the log is empty when it is copied ($order)");
		}
	}
	copy_files($dst, $second);
	batch(100000 * $round + 30000, 200);

	my $label = $bg->query_safe("SELECT labelfile FROM pg_backup_stop(true)");
	$bg->quit;
	open(my $fh, '>', "$dst/backup_label") or die "backup_label: $!";
	print $fh "$label\n";
	close($fh);
	make_path("$dst/pg_wal/archive_status");

	HiTest::switch_and_archive($primary);

	my $r = PostgreSQL::Test::Cluster->new("restored$round");
	$r->init_from_backup($primary, $name, has_restoring => 1, standby => 0);
	$r->append_conf('postgresql.conf', "archive_mode = off\n");
	$r->start;
	$r->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'recovery did not end';
	for my $e (@ams)
	{
		my $am = $e->{am};
		my $idx = "b_${am}_idx";
		my ($ret, $n, $err) = $r->psql('postgres',
			"SET enable_seqscan = off; SELECT count(*) FROM b_$am WHERE geom && ST_MakeEnvelope(-1, -1, 1001, 1001)");
		if ($ret != 0)
		{
			like($err, qr/index "$idx" is out of date on this server.*\n.*HINT:\s+REINDEX INDEX $idx/s,
				"$am ($order): the restored index refuses, naming itself, with the REINDEX hint");
			fail("$am ($order): the restored index answers") ;
			$r->safe_psql('postgres', "REINDEX INDEX $idx");
		}
		else
		{
			is($n, $r->safe_psql('postgres',
					"SELECT count(*) FROM b_$am WHERE geom IS NOT NULL AND NOT ST_IsEmpty(geom)"),
				"$am ($order): the restored index answers with every row");
		}
		is($r->safe_psql('postgres',
				"SET enable_seqscan = off; SELECT count(*) FROM b_$am WHERE id > 100000 * $round + 30000 AND id <= 100000 * $round + 30200 AND geom && ST_MakeEnvelope(-1, -1, 1001, 1001)"),
			'200', "$am ($order): rows committed after the copy, before the backup ended, are found through the index");
		HiTest::full_check($r, 'postgres', "$am restored ($order)", "b_$am", $idx);
		is(HiTest::try_psql($r, 'postgres', "SELECT hybrid_index_check('$idx', heapallindexed => true)"), 't',
			"$am restored ($order): the index holds every row of its table (heapallindexed)");
	}
	$r->stop;
}

$primary->stop;
done_testing();
