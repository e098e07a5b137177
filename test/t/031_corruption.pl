# 031_corruption.pl — damaged tier files are reported, never answered from.
#
# With the server stopped after an index checkpoint:
#   (a) one byte in the middle of a leaf page of the .flash file flipped:
#       a query touching the page fails with ERRCODE_INDEX_CORRUPTED (XX002)
#       naming the file and the page, hybrid_index_check too; no wrong rows;
#       REINDEX repairs;
#   (b) the .flash file truncated: a clear error naming the file (XX001/XX002
#       /58030), never silently fewer rows; REINDEX repairs;
#   (c) the .map file corrupted, truncated, deleted or of an older format
#       version: a clear error naming
#       the map file with the hint REINDEX; REINDEX repairs and leaves no
#       orphan file;
#   (e) for every AM, a page whose checksum is right but whose header is
#       not (an entry count past the page's capacity; for grid indexes
#       also a sub-directory larger than its page): what a bug, not a
#       disk, would write. Reading it fails with XX002 naming the page and
#       the file; it is never decoded past its end;
#   (d) the tail of the .log torn after an unflushed-checkpoint workload
#       (garbage appended, last record cut, last record corrupted; also a
#       cut inside committed records): replay stops cleanly at the tear,
#       every row whose record lies before it is found, uncommitted rows
#       never come back, hybrid_index_check passes, and the index keeps
#       working (and recovering) afterwards;
#   (f) the index's files put back as they were before 50 more rows, while
#       the server was stopped cleanly: the index is consistent but lacks
#       rows; hybrid_index_check(heapallindexed => true) names a missing row
#       (XX002) with a REINDEX hint.
# The server never crashes (its log shows no backend killed by a signal).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $PSIZE = 2048;
my $node = HiTest::new_node('corruption', fsync => 1);
my $pgdata = $node->data_dir;

sub S { return $node->safe_psql('postgres', $_[0]); }

# run sql; returns (ok, stdout, stderr) with VERBOSITY verbose
sub run
{
	my ($sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql", on_error_stop => 1);
	return ($ret == 0, $out, $err);
}

sub no_crash
{
	my ($what) = @_;
	my $log = slurp_file($node->logfile);
	my @bad = grep { /terminated by signal|PANIC/ } split /\n/, $log;
	is(scalar(@bad), 0, "$what: no backend crashed") or diag(join("\n", @bad));
	is(HiTest::try_psql($node, 'postgres', 'SELECT 1'), '1', "$what: server up");
	return;
}

# tier => path of the index's files
sub files_of
{
	my ($idx) = @_;
	my %f;
	for my $row (split /\n/, S("SELECT tier, path FROM hybrid_index_files('$idx') AS f(tier, path, bytes)"))
	{
		my ($tier, $path) = split /\|/, $row;
		$f{$tier} = $path;
	}
	return \%f;
}

# page table of a map file: pageno => [tier, slot]
sub read_map
{
	my ($path) = @_;
	my $buf = slurp_file($path);
	my ($magic, $version, $crc, $npte) = unpack('V4', $buf);
	my %pt;
	for my $p (0 .. $npte - 1)
	{
		# header: 120 bytes (map version 3)
		my $e = unpack('V', substr($buf, 120 + 4 * $p, 4));
		next unless ($e & 0x3FFFFFFF) != 0;
		$pt{$p} = [ $e >> 31, ($e & 0x3FFFFFFF) - 1 ];
	}
	return \%pt;
}

sub patch_file
{
	my ($path, $offset, $bytes) = @_;
	open(my $fh, '+<', $path) or die "open $path: $!";
	binmode $fh;
	sysseek($fh, $offset, 0) or die "seek: $!";
	syswrite($fh, $bytes) == length($bytes) or die "write: $!";
	close $fh;
	return;
}

sub flip_byte
{
	my ($path, $offset) = @_;
	open(my $fh, '<', $path) or die "open $path: $!";
	binmode $fh;
	sysseek($fh, $offset, 0);
	sysread($fh, my $b, 1);
	close $fh;
	patch_file($path, $offset, chr(ord($b) ^ 0x5A));
	return;
}

sub ids_sql
{
	my ($path, $where) = @_;
	return "SET enable_seqscan = off; SET enable_bitmapscan = " . ($path eq 'bitmap' ? 'on' : 'off')
	  . "; SET enable_indexscan = " . ($path eq 'index' ? 'on' : 'off')
	  . "; SELECT count(*), coalesce(sum(id), 0) FROM t WHERE $where";
}

my $PLANE = 'geom && ST_MakeEnvelope(-1e9, -1e9, 1e9, 1e9)';

# the index answers like a seq scan, passes its check, no orphan files
sub healthy
{
	my ($what) = @_;
	is(HiTest::try_psql($node, 'postgres', "SELECT hybrid_index_check('t_idx')"), 't', "$what: hybrid_index_check passes");
	is(HiTest::filters_differential($node, 'postgres', 't', 't_idx', 12, 1000, 11), 'ok', "$what: filters equal seq scan");
	is(HiTest::knn_differential($node, 'postgres', 't', 't_idx', 4, 1000, 15, 12), 'ok', "$what: kNN equals sorted seq scan");
	my ($rows, $ids) = HiTest::index_scan_counts($node, 'postgres', 't');
	is($rows, S("SELECT count(*) FROM t WHERE geom IS NOT NULL AND NOT ST_IsEmpty(geom)"), "$what: index finds every row");
	S('CHECKPOINT');
	my @disk = sort(HiTest::hyb_files($pgdata));
	my @listed = sort grep { -e $_ } values %{ files_of('t_idx') };
	is_deeply(\@disk, \@listed, "$what: no orphan index files") or diag("disk: @disk\nlisted: @listed");
	return;
}

S(qq{
	SELECT setseed(0.31);
	CREATE TABLE t (id bigint PRIMARY KEY, geom geometry) WITH (autovacuum_enabled = off);
	INSERT INTO t SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 20000) i;
	INSERT INTO t VALUES (900001, NULL), (900002, 'POINT EMPTY');
	CREATE INDEX t_idx ON t USING hyrtree (geom) WITH (page_size = $PSIZE, placement = 'none');
	SELECT hybrid_index_checkpoint('t_idx');
});
healthy('fresh index');

# ---------------------------------------------------------------------------
# (a) one byte flipped in the middle of a leaf page of the .flash file
# ---------------------------------------------------------------------------
{
	my $f = files_of('t_idx');
	# a leaf in the middle of the tree, with its box
	my ($pageno, $box) = split /\|/, S(q{
		SELECT pageno, array_to_string(box, ',') FROM hybrid_index_pages('t_idx')
		WHERE level = 0 ORDER BY pageno OFFSET 5 LIMIT 1});
	my ($xmin, $ymin, $xmax, $ymax) = split /,/, $box;
	my $expect = S("SET enable_indexscan = off; SET enable_bitmapscan = off; SELECT count(*), coalesce(sum(id), 0) FROM t WHERE geom && ST_MakeEnvelope($xmin, $ymin, $xmax, $ymax)");
	S("SELECT hybrid_index_checkpoint('t_idx')");
	$node->stop;
	my $pt = read_map($f->{map});
	my ($tier, $slot) = @{ $pt->{$pageno} };
	is($tier, 0, "leaf page $pageno is on the flash tier");
	flip_byte($f->{flash}, $slot * $PSIZE + $PSIZE / 2 + 3);
	$node->start;

	for my $path (qw(index bitmap))
	{
		my ($ok, $out, $err) = run(ids_sql($path, "geom && ST_MakeEnvelope($xmin, $ymin, $xmax, $ymax)"));
		ok(!$ok, "(a) $path scan over the corrupted page fails") or diag("returned $out, seq scan $expect");
		like($err, qr/ERROR:\s+XX002:/, "(a) $path scan: ERRCODE_INDEX_CORRUPTED");
		like($err, qr/page $pageno\b/, "(a) $path scan: the error names page $pageno");
		like($err, qr/\Q$f->{flash}\E/, "(a) $path scan: the error names the .flash file");
		like($err, qr/HINT:\s+REINDEX/, "(a) $path scan: hint REINDEX");
	}
	my ($ok, $out, $err) = run(ids_sql('index', $PLANE));
	ok(!$ok, '(a) a scan of everything fails too (never silently fewer rows)');
	($ok, $out, $err) = run("SELECT hybrid_index_check('t_idx')");
	like($err, qr/ERROR:\s+XX002:.*page $pageno/, '(a) hybrid_index_check reports the page');
	no_crash('(a)');
	S('REINDEX INDEX t_idx');
	is(S(ids_sql('index', "geom && ST_MakeEnvelope($xmin, $ymin, $xmax, $ymax)")), $expect, '(a) after REINDEX the page\'s rows are found');
	healthy('(a) after REINDEX');
}

# ---------------------------------------------------------------------------
# (b) the .flash file truncated
# ---------------------------------------------------------------------------
{
	S("SELECT hybrid_index_checkpoint('t_idx')");
	my $f = files_of('t_idx');
	$node->stop;
	my $size = -s $f->{flash};
	truncate($f->{flash}, int($size / 2) + 100) or die "truncate: $!";
	$node->start;
	for my $path (qw(index bitmap))
	{
		my ($ok, $out, $err) = run(ids_sql($path, $PLANE));
		ok(!$ok, "(b) $path scan over a truncated .flash fails") or diag("returned $out");
		like($err, qr/ERROR:\s+(XX001|XX002|58030):/, "(b) $path scan: data corrupted / index corrupted / I/O error");
		like($err, qr/\Q$f->{flash}\E/, "(b) $path scan: the error names the .flash file");
		like($err, qr/(page|offset) \d+/, "(b) $path scan: the error names the page (or its offset)");
	}
	no_crash('(b)');
	S('REINDEX INDEX t_idx');
	healthy('(b) after REINDEX');
}

# ---------------------------------------------------------------------------
# (c) the .map file corrupted / truncated / deleted
# ---------------------------------------------------------------------------
my @map_damage = (
	[ 'one byte flipped', sub { flip_byte($_[0], int((-s $_[0]) / 2)) }, 'XX002', qr/map file ".*" of index "t_idx" is corrupted/ ],
	[ 'header flipped', sub { flip_byte($_[0], 20) }, 'XX002', qr/is corrupted/ ],
	[ 'written by an older format', sub { patch_file($_[0], 4, pack('V', 1)) }, 'XX002',
	  qr/map file ".*" of index "t_idx" has format version 1, this build of hybrid_index reads versions 2 to 4/ ],
	[ 'truncated', sub { truncate($_[0], 50) or die }, 'XX002', qr/is corrupted/ ],
	[ 'emptied', sub { truncate($_[0], 0) or die }, 'XX002', qr/is corrupted/ ],
	[ 'deleted', sub { unlink($_[0]) or die }, '58P01', qr/files of index "t_idx" are missing/ ],
);
for my $m (@map_damage)
{
	my ($what, $damage, $state, $re) = @$m;
	S("SELECT hybrid_index_checkpoint('t_idx')");
	my $f = files_of('t_idx');
	$node->stop;
	$damage->($f->{map});
	$node->start;
	my ($ok, $out, $err) = run(ids_sql('index', $PLANE));
	ok(!$ok, "(c) map $what: a query fails") or diag("returned $out");
	like($err, qr/ERROR:\s+$state:/, "(c) map $what: SQLSTATE $state");
	like($err, $re, "(c) map $what: message");
	like($err, qr/\Q$f->{map}\E/, "(c) map $what: names the map file");
	like($err, qr/HINT:\s+REINDEX/, "(c) map $what: hint REINDEX");
	($ok, $out, $err) = run("INSERT INTO t VALUES (800000, 'POINT(1 1)')");
	ok(!$ok, "(c) map $what: an insert fails too (nothing written to a broken index)");
	no_crash("(c) map $what");
	S('REINDEX INDEX t_idx');
	healthy("(c) map $what: after REINDEX");
	# drop leftovers so that the next round counts only its own
	my %current = map { $_ => 1 } values %{ files_of('t_idx') };
	unlink grep { !$current{$_} } HiTest::hyb_files($pgdata);
}

# ---------------------------------------------------------------------------
# (d) torn log tail after a workload that did not reach an index checkpoint
# ---------------------------------------------------------------------------
my $round = 0;

# committed rows (two transactions), then an open transaction's rows, then
# an immediate stop: the log holds A + COMMIT(A), B + COMMIT(B) (fsynced at
# commit) and C (no COMMIT record).
sub log_workload
{
	my ($checkpoint_between) = @_;
	$round++;
	my $base = 1_000_000 * $round;
	S("SELECT hybrid_index_checkpoint('t_idx')");
	my $f = files_of('t_idx');
	# (a build makes no log file: none counts as empty)
	is((-s $f->{log}) || 0, 0, "(d$round) the log is empty after the checkpoint");
	S("INSERT INTO t SELECT $base + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 300) i");
	# crash recovery then starts after the first transaction's WAL
	S('CHECKPOINT') if $checkpoint_between;
	S("INSERT INTO t SELECT $base + 500 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 10) i");
	my $bg = $node->background_psql('postgres');
	$bg->query_safe("BEGIN");
	$bg->query_safe("INSERT INTO t SELECT -($base + i), ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 20) i");
	# the session's next statement puts the rows' entries in (and their
	# records in the log): hybrid_index.insert_batch
	$bg->query_safe("SELECT 1");
	$node->stop('immediate');
	eval { $bg->quit; };
	my $len = -s $f->{log};
	is($len, 332 * 48, "(d$round) the log holds the 330 records and 2 COMMIT records of the workload");
	return ($f, $base, $len);
}

# records of the log: [type, xid, "(block,offset)"]
sub log_records
{
	my ($path, $upto) = @_;
	my $buf = slurp_file($path);
	my @r;
	for (my $off = 0; $off + 48 <= $upto; $off += 48)
	{
		my ($type) = unpack('C', substr($buf, $off + 4, 1));
		my ($xid) = unpack('V', substr($buf, $off + 16, 4));
		my ($hi, $lo, $pos) = unpack('v3', substr($buf, $off + 36, 6));
		push @r, [ $type, $xid, sprintf('(%d,%d)', ($hi << 16) | $lo, $pos) ];
	}
	return @r;
}

# after recovery: every row of a transaction whose COMMIT record precedes
# $cut is found through the index, no uncommitted row, check passes.  (A
# transaction's records count only with its COMMIT record, which reaches
# disk before PostgreSQL's commit; a tear before it is corruption of
# fsynced data, and those rows need the REINDEX done below.)
sub after_tear
{
	my ($what, $f, $base, $cut, $all_committed_found) = @_;
	$node->start;
	unless ($all_committed_found)
	{
		# WAL after the checkpoint holds records beyond where the torn log
		# now ends (LOG): the index refuses instead of answering without
		# committed rows
		my ($ok, $out, $err) = run(ids_sql('index', "$PLANE AND id >= $base"));
		ok(!$ok, "$what: the index refuses (committed changes are missing)") or diag("returned $out");
		like($err, qr/index "t_idx" is out of date on this server/, "$what: the error names the index");
		like($err, qr/HINT:\s+REINDEX INDEX t_idx/, "$what: the error says to REINDEX");
		no_crash($what);
		return;
	}
	my @before = log_records($f->{log} . '.orig', $cut);
	my %committed = map { $_->[1] => 1 } grep { $_->[0] == 3 } @before;
	my %ctids = map { $_->[2] => 1 } grep { $_->[0] == 1 && $committed{ $_->[1] } } @before;
	ok(scalar(keys %ctids) >= 300, "$what: " . scalar(keys %ctids) . " committed records before the tear");
	my $found = S("SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT ctid FROM t WHERE $PLANE AND id >= $base");
	my %got = map { $_ => 1 } split /\n/, $found;
	my @missing = grep { !$got{$_} } sort keys %ctids;
	is(scalar(@missing), 0, "$what: every committed row whose log record precedes the tear is found")
	  or diag("missing ctids: @missing");
	is(S("SELECT count(*) FROM t WHERE id < 0"), '0', "$what: no uncommitted row in the table");
	is(S(ids_sql('index', "$PLANE AND id < 0")), '0|0', "$what: no uncommitted row through the index");
	my $log_len = -s $f->{log};
	is($log_len % 48, 0, "$what: the log was cut at a record boundary ($log_len bytes)");
	is(HiTest::try_psql($node, 'postgres', "SELECT hybrid_index_check('t_idx')"), 't', "$what: hybrid_index_check passes");
	if ($all_committed_found)
	{
		is(S(ids_sql('index', "$PLANE AND id >= $base")),
			S("SELECT count(*), coalesce(sum(id), 0) FROM t WHERE id >= $base"), "$what: all committed rows found");
		is(HiTest::filters_differential($node, 'postgres', 't', 't_idx', 8, 1000, 20 + $round), 'ok',
			"$what: filters equal seq scan");
	}
	no_crash($what);
	return;
}

my @tears = (
	[ 'garbage appended', sub { my ($p, $len) = @_; patch_file($p, $len, pack('C*', map { ($_ * 37 + 11) % 256 } 1 .. 30)); return $len; }, 1 ],
	[ 'last record cut in half', sub { my ($p, $len) = @_; truncate($p, $len - 20) or die; return $len - 48; }, 1 ],
	[ 'last record corrupted', sub { my ($p, $len) = @_; patch_file($p, $len - 30, 'XXXXXXXX'); return $len - 48; }, 1 ],
	# WAL holds the records since the last checkpoint (LOG): crash recovery
	# writes back what the tear took, committed transactions' included
	[ 'cut inside the last committed transaction (repaired from WAL)', sub {
		my ($p, $len) = @_;
		# 300 + COMMIT, then 10 + COMMIT, then 20 uncommitted: cut after 308
		truncate($p, 308 * 48 + 10) or die; return 308 * 48; }, 1 ],
	# WAL after the checkpoint holds the second transaction's records, which
	# the torn log no longer reaches: the index refuses
	[ 'cut inside a committed transaction older than the last checkpoint', sub {
		my ($p, $len) = @_;
		truncate($p, 200 * 48 + 10) or die; return 200 * 48; }, 0, 1 ],
);
for my $t (@tears)
{
	my ($what, $tear, $all, $checkpoint_between) = @$t;
	my ($f, $base, $len) = log_workload($checkpoint_between);
	system('cp', $f->{log}, $f->{log} . '.orig') == 0 or die;
	my $cut = $tear->($f->{log}, $len);
	after_tear("(d$round) log $what", $f, $base, $cut, $all);
	unlink $f->{log} . '.orig';
	# rows of a torn committed transaction that the index lost: REINDEX
	unless ($all)
	{
		S('REINDEX INDEX t_idx');
		healthy("(d$round) log $what: after REINDEX");
	}
}

# the recovered index keeps working: more inserts, a crash, recovery
S("INSERT INTO t SELECT 9000000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 500) i");
$node->stop('immediate');
$node->start;
healthy('(d) inserts and crash recovery after the torn-log rounds');

# (f) an index that silently lacks rows: its files put back as they were
# before 50 more rows, while the server was stopped cleanly (a clean stop
# checkpoints the index and no WAL replay follows it).  The structure is
# consistent; heapallindexed finds the rows it lacks.
S("SELECT hybrid_index_checkpoint('t_idx')");
my $ffiles = files_of('t_idx');
$node->stop;
my %saved;
for my $f (values %$ffiles)
{
	next unless -e $f;
	$saved{$f} = slurp_file($f);
}
$node->start;
S("INSERT INTO t SELECT 9500000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 50) i");
is(S("SELECT hybrid_index_check('t_idx', heapallindexed => true)"), 't',
	'(f) heapallindexed: a healthy index holds every row of its table');
$node->stop;
for my $f (keys %saved)
{
	open(my $fh, '>:raw', $f) or die "write $f: $!";
	print $fh $saved{$f};
	close($fh);
}
$node->start;
is(S("SELECT hybrid_index_check('t_idx')"), 't', '(f) the earlier files make a consistent structure');
my ($fok, $fout, $ferr) = run("SELECT hybrid_index_check('t_idx', heapallindexed => true)");
ok(!$fok, '(f) heapallindexed fails on the index that lacks rows');
like($ferr, qr/XX002/, '(f) with ERRCODE_INDEX_CORRUPTED');
like($ferr, qr/index "t_idx" lacks the table row at \(\d+,\d+\)/, '(f) naming the index and the row');
like($ferr, qr/HINT:\s+REINDEX INDEX t_idx/, '(f) and saying to REINDEX');
S('REINDEX INDEX t_idx');
is(S("SELECT hybrid_index_check('t_idx', heapallindexed => true)"), 't', '(f) after REINDEX it holds every row');
no_crash('end');

# ---------------------------------------------------------------------------
# (e) a right checksum over a wrong header, for every access method
# ---------------------------------------------------------------------------
my @crc_table = map {
	my $c = $_;
	$c = ($c & 1) ? (($c >> 1) ^ 0x82F63B78) : ($c >> 1) for 1 .. 8;
	$c
} 0 .. 255;

# CRC-32C as hi_page_checksum computes it (over the page after its first 4 bytes)
sub crc32c
{
	my ($data) = @_;
	my $crc = 0xFFFFFFFF;
	$crc = $crc_table[ ($crc ^ $_) & 0xFF ] ^ ($crc >> 8) for unpack('C*', $data);
	return $crc ^ 0xFFFFFFFF;
}

# rewrite page $pageno of index $idx: $edit->($page) returns the new page
sub rewrite_page
{
	my ($idx, $pageno, $edit) = @_;
	my $f = files_of($idx);
	S("SELECT hybrid_index_checkpoint('$idx')");
	$node->stop;
	my $pt = read_map($f->{map});
	my ($tier, $slot) = @{ $pt->{$pageno} };
	my $path = $tier ? $f->{optane} : $f->{flash};
	open(my $fh, '<', $path) or die "open $path: $!";
	binmode $fh;
	sysseek($fh, $slot * $PSIZE, 0);
	sysread($fh, my $page, $PSIZE) == $PSIZE or die "short read of $path";
	close $fh;
	my $orig_sum = unpack('V', $page);
	is($orig_sum, crc32c(substr($page, 4)), "(e) $idx: the test computes the page checksum like the server");
	$page = $edit->($page);
	substr($page, 0, 4) = pack('V', crc32c(substr($page, 4)));
	patch_file($path, $slot * $PSIZE, $page);
	$node->start;
	return $path;
}

sub expect_layout_error
{
	my ($what, $idx, $pageno, $path, $detail) = @_;
	for my $scan (qw(index bitmap))
	{
		my ($ok, $out, $err) = run("SET enable_seqscan = off; SET enable_bitmapscan = "
			  . ($scan eq 'bitmap' ? 'on' : 'off') . "; SET enable_indexscan = " . ($scan eq 'index' ? 'on' : 'off')
			  . "; SELECT count(*) FROM e_$idx WHERE $PLANE");
		ok(!$ok, "$what: $scan scan fails") or diag("returned $out");
		like($err, qr/ERROR:\s+XX002:\s+corrupted page $pageno in index file "\Q$path\E"/, "$what: $scan scan: XX002 naming page $pageno and the file");
		like($err, qr/DETAIL:\s+The checksum is right but $detail/, "$what: $scan scan: says what is wrong");
	}
	my ($ok, $out, $err) = run("SELECT hybrid_index_check('$idx')");
	like($err, qr/ERROR:\s+XX002:/, "$what: hybrid_index_check fails with XX002");
	no_crash($what);
	S("REINDEX INDEX $idx");
	is(S("SELECT hybrid_index_check('$idx')"), 't', "$what: REINDEX repairs");
	is(S("SET enable_seqscan = off; SELECT count(*) FROM e_$idx WHERE $PLANE"),
		S("SELECT count(*) FROM e_$idx WHERE geom IS NOT NULL AND NOT ST_IsEmpty(geom)"), "$what: every row found again");
	return;
}

for my $am (qw(hyrtree efind lbgrid hgrid))
{
	my $idx = "${am}_e";
	S(qq{
		SELECT setseed(0.5);
		CREATE TABLE e_$idx (id bigint PRIMARY KEY, geom geometry) WITH (autovacuum_enabled = off);
		INSERT INTO e_$idx SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 5000) i;
		INSERT INTO e_$idx VALUES (900001, NULL), (900002, 'POINT EMPTY');
		CREATE INDEX $idx ON e_$idx USING $am (geom) WITH (page_size = $PSIZE);
	});
	# a leaf (R-tree) or bucket page (grid): entry count 0xFFFF
	my $leaf = S("SELECT pageno FROM hybrid_index_pages('$idx') WHERE level = 0 AND entries > 2 ORDER BY entries DESC, pageno LIMIT 1");
	my $path = rewrite_page($idx, $leaf, sub { my $p = shift; substr($p, 12, 2) = pack('v', 0xFFFF); return $p; });
	expect_layout_error("(e) $am leaf/bucket page with 65535 entries", $idx, $leaf, $path,
		qr/its (entry|record) count exceeds the (page|log-bucket)'s capacity/);
	if ($am eq 'lbgrid')
	{
		# a sealed log-bucket that says its records are in bucket order
		# (searches binary-search it), with its first and last swapped
		$leaf = S("SELECT pageno FROM hybrid_index_pages('$idx') WHERE level = 0 AND entries > 2 ORDER BY entries DESC, pageno LIMIT 1");
		$path = rewrite_page($idx, $leaf, sub {
			my $p = shift;
			my ($flags, $n) = unpack('vv', substr($p, 10, 4));
			die "page $leaf is not a sorted log-bucket" unless ($flags & 0x0800) && $n >= 2;
			# records of 40 bytes after the 24-byte page header
			my ($first, $last) = (substr($p, 24, 40), substr($p, 24 + 40 * ($n - 1), 40));
			substr($p, 24, 40) = $last;
			substr($p, 24 + 40 * ($n - 1), 40) = $first;
			return $p;
		});
		expect_layout_error("(e) lbgrid log-bucket out of the order it claims", $idx, $leaf, $path,
			qr/its records are not in bucket order although it says so/);
	}
	next unless $am =~ /grid/;
	# a sub-directory claiming 65535 x 65535 cells
	my $dir = S("SELECT pageno FROM hybrid_index_pages('$idx') WHERE level = 1 ORDER BY pageno LIMIT 1");
	$path = rewrite_page($idx, $dir, sub { my $p = shift; substr($p, 24, 4) = pack('vv', 0xFFFF, 0xFFFF); return $p; });
	expect_layout_error("(e) $am sub-directory larger than its page", $idx, $dir, $path,
		qr/its directory is larger than the page/);
	# a cell naming a region that does not exist
	$path = rewrite_page($idx, $dir, sub {
		my $p = shift;
		my ($nx, $ny, $nr) = unpack('vvv', substr($p, 24, 6));
		# page header 24 bytes, directory header 24, scales, regions of 20 bytes, then the cells
		my $cells = 24 + 24 + 8 * ($nx + 1 + $ny + 1) + 20 * $nr;
		substr($p, $cells, 2) = pack('v', $nr + 7);
		return $p;
	});
	expect_layout_error("(e) $am sub-directory cell naming no region", $idx, $dir, $path,
		qr/a cell of its directory names no region/);
}

# ---------------------------------------------------------------------------
# (f) a map file of the previous format (version 2, before exact points and
# INCLUDE columns) is read: the index keeps answering, as boxes only (no
# index-only scans), until it is rebuilt
# ---------------------------------------------------------------------------
{
	# (e)'s tables go first: healthy() wants t_idx's files alone on disk
	S(q{DO $$DECLARE r record; BEGIN
		FOR r IN SELECT relname FROM pg_class WHERE relkind = 'r' AND relname LIKE 'e\_%' LOOP
			EXECUTE format('DROP TABLE %I', r.relname);
		END LOOP; END $$});
	S("SELECT hybrid_index_checkpoint('t_idx')");
	my $f = files_of('t_idx');
	$node->stop;
	my $buf = slurp_file($f->{map});
	# version 2's header ended before HiMeta's payload_root and reserved
	my $v2 = substr($buf, 0, 112) . substr($buf, 120);
	substr($v2, 4, 4) = pack('V', 2);
	substr($v2, 52, 4) = pack('V', 1);    # HiMeta.version: boxes only
	substr($v2, 8, 4) = pack('V', crc32c(substr($v2, 12)));
	open(my $fh, '>', $f->{map}) or die "open $f->{map}: $!";
	binmode $fh;
	print $fh $v2;
	close $fh;
	$node->start;
	healthy('(f) map of format version 2');
	is(S("SELECT hybrid_index_inspect('t_idx')->>'entry_format'"), 'boxes',
		'(f) map of format version 2: entry format boxes only');
	S('REINDEX INDEX t_idx');
	is(S("SELECT hybrid_index_inspect('t_idx')->>'entry_format'"), 'boxes and exact points',
		'(f) after REINDEX: exact points');
}

$node->stop;
done_testing();
