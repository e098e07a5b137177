# 055_build_evictions.pl — a build's pages written out by other backends.
#
# A build goes to WAL as an image of its tier files (log/wal_image.c),
# made of the writes the building process sees.  On a small page cache
# other backends evict the build's dirty pages and write them themselves;
# those writes were missing from the image, so crash recovery that replays
# the build (no checkpoint since) left zero pages where the map pointed
# (found by 080_citus: a worker killed after a rebalance had built shard
# indexes next to other sessions' work).  Here every access method's
# index (INCLUDE columns too) is built while another session scans a large
# index of its own on a 4 MB cache, then the server is killed (no
# checkpoint since the builds) and every index must pass the check with
# heapallindexed and answer like a sequential scan.  Last, a build's fsyncs
# wait for the next checkpoint, whose log sync worker does them.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiAM;
use HiCrash;
use HiTest;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = HiTest::new_node('evict', fsync => 1, conf => qq{
hybrid_index.cache_size = 4
checkpoint_timeout = 1h
max_wal_size = 4GB
});
my @ams = HiAM::selected();

# the reader's own index, larger than the cache
$node->safe_psql('postgres', q{
	SELECT setseed(0.5);
	CREATE TABLE big (id bigint, geom geometry);
	INSERT INTO big SELECT i, ST_MakePoint(random() * 1000, random() * 1000)
	  FROM generate_series(1, 200000) i;
	CREATE INDEX big_idx ON big USING hyrtree (geom);
	VACUUM ANALYZE big;
	CHECKPOINT;
});

# a session that keeps reading big_idx's pages (and so evicting others')
my $reader_sql = PostgreSQL::Test::Utils::tempdir() . '/reader.sql';
open my $fh, '>', $reader_sql or die $!;
print $fh "SET enable_seqscan = off; SET enable_bitmapscan = off;\n";
for my $i (1 .. 4000)
{
	my ($x, $y) = (($i * 37) % 900, ($i * 91) % 900);
	print $fh "SELECT count(*) FROM big WHERE geom && ST_MakeEnvelope($x, $y, $x + 100, $y + 100);\n";
}
close $fh;
my ($rout, $rerr) = ('', '');
my $reader = IPC::Run::start([ 'psql', '-X', '-At', '-q', '-v', 'ON_ERROR_STOP=0', '-f', $reader_sql,
		'-d', $node->connstr('postgres') ], '>', \$rout, '2>', \$rerr);

# the builds, while the reader runs; no checkpoint from here on
my $i = 0;
for my $e (@ams)
{
	my $t = "b_$e->{am}";
	my $clause = HiAM::index_clause($e, 0, undef);
	$clause =~ s/\) WITH/) INCLUDE (id, note) WITH/ or $clause .= ' INCLUDE (id, note)';
	$node->safe_psql('postgres', qq{
		SELECT setseed(0.$i);
		CREATE TABLE $t (id bigint, geom geometry, note text);
		INSERT INTO $t SELECT i,
		  CASE WHEN i % 500 = 0 THEN NULL ELSE ST_MakePoint(random() * 1000, random() * 1000) END,
		  'row ' || i FROM generate_series(1, 30000) i;
		CREATE INDEX ${t}_idx ON $t $clause;
	});
	$i++;
}
ok($reader->pumpable, 'the reader still runs after the builds') or diag($rerr);

# kill the server with the builds only in WAL and the files as the
# backends left them
HiCrash::crash_node($node);
$reader->finish;
# the case at hand happened: a build's pages were written by the reader
like(slurp_file($node->logfile), qr/other sessions wrote pages of index \d+ while it was built/,
	'other sessions wrote pages of a build in progress');
$node->start;

for my $e (@ams)
{
	my $t = "b_$e->{am}";
	HiTest::full_check($node, 'postgres', "$e->{am} built during evictions, after a crash", $t, "${t}_idx");
}
HiTest::full_check($node, 'postgres', 'the reader\'s index after the crash', 'big', 'big_idx');

# A build leaves its fsyncs to the next checkpoint (storage/tier_defer.c):
# the log sync worker syncs the listed files when the checkpoint begins
$node->append_conf('postgresql.conf', "log_min_messages = debug1\n");
$node->reload;
my $logpos = -s $node->logfile;
$node->safe_psql('postgres', q{CREATE INDEX big_idx2 ON big USING hyrtree (geom); CHECKPOINT;});
ok($node->wait_for_log(qr/hybrid_index: synced the files of \d+ builds for the checkpoint/, $logpos),
	'the checkpoint after a build syncs its files');
is(HiTest::try_psql($node, 'postgres', "SELECT hybrid_index_check('big_idx2', heapallindexed => true)"), 't',
	'the index built before the checkpoint is sound');
$node->stop;
done_testing();
