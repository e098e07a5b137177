# 010_efind_restart.pl — efind indexes across restarts. Their write buffers
# live in shared memory only; what makes them durable is the index's redo
# log (its records in WAL) and, after a crash, the replay at first use that
# rebuilds the Write Buffer Table (Alg. 7's effect) before a checkpoint
# writes it out; a clean shutdown checkpoints the indexes instead, leaving
# nothing to replay. Checked after a clean restart and after an immediate
# (crash) stop, for an index whose pages were all still in the write buffer
# and for indexes that flushed all along under different policies: no
# replay after the clean restart, the replay after the crash (server log,
# efind counters), check passes, every row is found, answers equal a
# sequential scan and are those of before, and the index keeps working.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# a setting in postgresql.conf reaches the indexes built afterwards
my $node = HiTest::new_node('efind_restart', fsync => 1,
	conf => "hybrid_index.efind_flush_unit = 4\n");

# w: built empty, a buffer too big to ever flush: every page in the buffer
# f: built over rows, 16 kB buffer, FP_m and LRU; g: FP_mhao and full 2Q
$node->safe_psql(
	'postgres', q{
	SELECT setseed(0.4);
	CREATE TABLE w (id bigint, geom geometry);
	CREATE INDEX w_idx ON w USING efind (geom) WITH (page_size = 4096, buffer_size = 65536);
	INSERT INTO w SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 8000) i;
	INSERT INTO w VALUES (100001, NULL), (100002, 'POINT EMPTY');

	CREATE TABLE f (id bigint, geom geometry);
	INSERT INTO f SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 10000) i;
	CREATE INDEX f_idx ON f USING efind (geom)
	  WITH (page_size = 2048, buffer_size = 16, flush_policy = 'm', read_buffer_policy = 'lru');
	INSERT INTO f SELECT 20000 + i, ST_Buffer(ST_MakePoint(random() * 1000, random() * 1000), random() * 10, 'quad_segs=2')
	  FROM generate_series(1, 4000) i;
	DELETE FROM f WHERE id % 7 = 0;

	CREATE TABLE g (id bigint, geom geometry);
	CREATE INDEX g_idx ON g USING efind (geom)
	  WITH (page_size = 2048, buffer_size = 24, flush_policy = 'mhao', read_buffer_policy = '2q',
	        temporal_control = 'writes');
	INSERT INTO g SELECT i, ST_Buffer(ST_MakePoint(random() * 1000, random() * 1000), random() * 15, 'quad_segs=2')
	  FROM generate_series(1, 6000) i;
});
$node->safe_psql('postgres', 'VACUUM f');

my @indexes = (['w', 'w_idx'], ['f', 'f_idx'], ['g', 'g_idx']);

sub ef
{
	my ($idx, $path) = @_;
	return $node->safe_psql('postgres', "SELECT hybrid_index_inspect('$idx')->'efind' #>> '{$path}'");
}

sub fingerprint
{
	my ($tbl) = @_;
	return HiTest::fingerprint($node, 'postgres', $tbl);
}

sub full_check
{
	my ($label) = @_;
	HiTest::full_check($node, 'postgres', $label, $_->[0], $_->[1], windows => 15, knn_points => 5, k => 20, seed => 7) for @indexes;
	return;
}

# Open every index (the first use after a start replays its log)
sub touch_all
{
	$node->safe_psql('postgres', "SELECT hybrid_index_check('$_->[1]')") for @indexes;
	return;
}

full_check('before restart');
is($node->safe_psql('postgres', 'SHOW hybrid_index.efind_flush_unit'), '4',
	'hybrid_index.efind_flush_unit set in postgresql.conf');
is(ef('f_idx', 'flush_unit'), '4', 'f_idx took its flushing unit size from postgresql.conf');
is(ef('w_idx', 'flushes,count'), '0', 'w_idx never flushed');
cmp_ok(ef('w_idx', 'write_buffer,new'), '>', 50, 'w_idx pages live in the write buffer');
cmp_ok(ef('f_idx', 'flushes,count'), '>', 50, 'f_idx flushed many times');
# (g's 6000 rows go in as one batch, along a Hilbert curve: the changes of
# a leaf are flushed together, a few dozen flushes)
cmp_ok(ef('g_idx', 'flushes,count'), '>', 20, 'g_idx flushed many times');
my %fp = map { $_->[0] => fingerprint($_->[0]) } @indexes;

# ---- clean restart: the shutdown checkpoint wrote the buffers out ----
my $log_offset = -s $node->logfile;
$node->restart;
touch_all();
my $log = slurp_file($node->logfile, $log_offset);
like($log, qr/hybrid_index: checkpointed 3 indexes for shutdown/,
	'clean restart: the log sync worker checkpointed the indexes at shutdown');
for my $ti (@indexes)
{
	my ($tbl, $idx) = @$ti;
	unlike($log, qr/hybrid_index: replayed \d+ log records of index "$idx"/,
		"clean restart: $idx had no log to replay");
	is(ef($idx, 'write_buffer,entries'), '0', "clean restart: $idx write buffer written out");
	is(ef($idx, 'log,bytes'), '0', "clean restart: $idx log compacted");
	is(fingerprint($tbl), $fp{$tbl}, "clean restart: $tbl answers as before");
}
is(ef('f_idx', 'flush_policy'), 'm', 'f_idx keeps its flushing policy');
is(ef('f_idx', 'flush_unit'), '4', 'f_idx keeps its flushing unit size');
is(ef('g_idx', 'read_buffer_policy'), '2q', 'g_idx keeps its read buffer policy');
full_check('after clean restart');

# ---- more changes, then an immediate stop (no shutdown at all) ----
$node->safe_psql(
	'postgres', q{
	INSERT INTO w SELECT 200000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 3000) i;
	INSERT INTO f SELECT 200000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 3000) i;
	DELETE FROM g WHERE id % 4 = 0;
	INSERT INTO g SELECT 200000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 3000) i;
});
$node->safe_psql('postgres', 'VACUUM g');
# an uncommitted transaction at the time of the crash
my $bg = $node->background_psql('postgres');
$bg->query_safe(q{BEGIN; INSERT INTO w SELECT -i, ST_MakePoint(500, 500) FROM generate_series(1, 500) i;});
%fp = map { $_->[0] => fingerprint($_->[0]) } @indexes;
cmp_ok(ef('w_idx', 'write_buffer,entries'), '>', 0, 'w_idx has buffered changes before the crash');
$log_offset = -s $node->logfile;
$node->stop('immediate');
$bg->quit;
$node->start;
touch_all();
$log = slurp_file($node->logfile, $log_offset);
for my $ti (@indexes)
{
	my ($tbl, $idx) = @$ti;
	like($log, qr/hybrid_index: replayed \d+ log records of index "$idx"/,
		"crash: $idx replayed its log");
	is(fingerprint($tbl), $fp{$tbl}, "crash: $tbl answers as before the crash");
}
is($node->safe_psql('postgres', q{
	SET enable_seqscan = off; SET enable_bitmapscan = off;
	SELECT count(*) FROM w WHERE geom && ST_MakeEnvelope(499, 499, 501, 501) AND id < 0}),
	'0', 'crash: the uncommitted rows are not returned');
full_check('after crash');

# ---- the indexes keep working: more flushes, another clean restart ----
$node->safe_psql(
	'postgres', q{
	INSERT INTO f SELECT 300000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 3000) i;
	INSERT INTO g SELECT 300000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 3000) i;
	SELECT hybrid_index_checkpoint('w_idx');
});
cmp_ok(ef('f_idx', 'flushes,count'), '>', 0, 'f_idx flushes again after the crash');
$node->restart;
full_check('after the last restart');

# ---- a replay that fails half-way, then is retried ----
# After a crash, c_idx's log holds insertions in ascending x. One stored
# leaf at the far right is corrupted, so the first replay fails after
# having rebuilt most of the write buffer; the slot stays unloaded. Once
# the page is repaired, the next use replays the whole log again from the
# checkpoint: nothing of the failed attempt may survive in the buffer.
$node->safe_psql('postgres', q{
	CREATE TABLE c (id bigint, geom geometry);
	INSERT INTO c SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 20000) i;
	CREATE INDEX c_idx ON c USING efind (geom) WITH (page_size = 4096, buffer_size = 65536);
});
# the build's files in WAL (IMAGE) would repair the page at crash recovery:
# begin recovery after them
$node->safe_psql('postgres', 'CHECKPOINT');
my $target = $node->safe_psql('postgres', q{
	SELECT pageno FROM hybrid_index_pages('c_idx') WHERE level = 0 ORDER BY box[1] DESC LIMIT 1});
my $flash = $node->safe_psql('postgres', q{SELECT path FROM hybrid_index_files('c_idx') WHERE kind = 'flash'});
$node->safe_psql('postgres', q{
	INSERT INTO c SELECT 100000 + i, ST_MakePoint(i / 20.0, random() * 1000) FROM generate_series(1, 20000) i;
});
my $c_rows = $node->safe_psql('postgres', 'SELECT count(*) FROM c');
$node->stop('immediate');

# flip a byte of every stored copy of the target page, remembering them
my %saved;
open(my $fh, '+<', $flash) or die "cannot open $flash: $!";
binmode $fh;
for (my $off = 0; ; $off += 4096)
{
	seek($fh, $off, 0);
	last if read($fh, my $page, 4096) != 4096;
	next unless unpack('V', substr($page, 4, 4)) == $target;
	$saved{$off} = substr($page, 40, 1);
	seek($fh, $off + 40, 0);
	print $fh chr(ord($saved{$off}) ^ 0xFF);
}
close $fh;
ok(scalar(keys %saved) > 0, "corrupted the stored copies of leaf $target of c_idx");

$node->start;
$log_offset = -s $node->logfile;
my ($ret, $out, $err) = $node->psql('postgres', "SELECT hybrid_index_check('c_idx')");
like($err, qr/corrupted page $target/, 'the first replay of c_idx failed on the corrupted leaf');
unlike(slurp_file($node->logfile, $log_offset), qr/replayed \d+ log records of index "c_idx"/,
	'the failed replay did not finish');

open($fh, '+<', $flash) or die "cannot open $flash: $!";
binmode $fh;
for my $off (keys %saved)
{
	seek($fh, $off + 40, 0);
	print $fh $saved{$off};
}
close $fh;

is(HiTest::try_psql($node, 'postgres', "SELECT hybrid_index_check('c_idx')"), 't',
	'retried replay: c_idx passes hybrid_index_check');
like(slurp_file($node->logfile, $log_offset), qr/replayed 20000 log records of index "c_idx"/,
	'retried replay: the whole log was replayed');
my ($rows, $ids, $ctids) = HiTest::index_scan_counts($node, 'postgres', 'c');
is($rows, $c_rows, 'retried replay: c_idx finds every row');
is($ids, $rows, 'retried replay: c_idx returns no duplicates');
is(HiTest::filters_differential($node, 'postgres', 'c', 'c_idx', 15, 1000, 31), 'ok',
	'retried replay: c_idx filters equal seq scan');

$node->stop;
done_testing();
