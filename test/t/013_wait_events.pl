# 013_wait_events.pl — what pg_stat_activity shows while an index waits for
# its files: a scan reading pages from a tier file waits on
# IO:DataFileRead, a CREATE INDEX writing its pages on IO:DataFileWrite.
# The device emulation (hybrid_index.emulate_devices) stretches each I/O
# batch so that a poll from another session sees the wait; the scan's
# answer is checked against a sequential scan, the new index by its check.
# (Syncs show as IO:DataFileSync; an fsync is not emulated, so too short to
# be seen reliably here.)
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = HiTest::new_node('waits');

sub S { return $node->safe_psql('postgres', $_[0]); }

S(q{CREATE TABLE w (id int, geom geometry);
	SELECT setseed(0.5);
	INSERT INTO w SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 20000) i;
	CREATE INDEX w_idx ON w USING hyrtree (geom);});

# poll pg_stat_activity until backend pid waits on event (up to 30 s)
sub saw_wait
{
	my ($pid, $event) = @_;
	for (1 .. 600)
	{
		my $we = S("SELECT coalesce(wait_event_type || ':' || wait_event, '') FROM pg_stat_activity WHERE pid = $pid");
		return 1 if $we eq $event;
		usleep(50_000);
	}
	return 0;
}

# a session whose every I/O batch of the flash tier takes 300 ms per page
sub slow_session
{
	my $bg = $node->background_psql('postgres');
	$bg->query_safe(q{SET hybrid_index.emulate_devices = on;
		SET hybrid_index.flash_read_latency = 300000;
		SET hybrid_index.flash_write_latency = 300000;
		SET hybrid_index.flash_parallelism = 64;
		SET enable_seqscan = off; SET enable_bitmapscan = off;});
	return $bg;
}

my $window = 'ST_MakeEnvelope(100, 100, 130, 130)';
my $expect = S("SELECT count(*) FROM w WHERE geom && $window");

# ---- reads: the cache is empty after a restart ----
$node->restart;
my $bg = slow_session();
my $pid = $bg->query_safe('SELECT pg_backend_pid()');
$bg->query_until(qr/started/, "\\echo started\nSELECT count(*) FROM w WHERE geom && $window;\n");
ok(saw_wait($pid, 'IO:DataFileRead'), 'a scan reading index pages shows IO:DataFileRead');
$bg->quit;
is(S("SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM w WHERE geom && $window"),
	$expect, 'the scan answers as a sequential scan');

# ---- writes: a bulk load ----
$bg = slow_session();
$pid = $bg->query_safe('SELECT pg_backend_pid()');
$bg->query_until(qr/started/, "\\echo started\nCREATE INDEX w_idx2 ON w USING hyrtree (geom);\n");
ok(saw_wait($pid, 'IO:DataFileWrite'), 'a build writing its pages shows IO:DataFileWrite');
$bg->quit;
is(S('SELECT hybrid_index_check(\'w_idx2\')'), 't', 'the index built meanwhile passes its check');

$node->stop;
done_testing();
