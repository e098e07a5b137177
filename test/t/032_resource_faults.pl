# 032_resource_faults.pl — the index under resource faults.
#
#   (a) a tier on a tiny filesystem (8 MB ext4 on a loop device, made by
#       test/setup_tiny_fs.sh as root; skipped with a reason when absent):
#       the whole index (flash tier, map and log) lives there; inserts fill
#       it until a statement fails with a clear "disk full" error
#       (SQLSTATE 53100); the index then still passes its check and answers
#       like a sequential scan; a CREATE INDEX on the full filesystem fails
#       the same way; once space is freed (a table on the same filesystem
#       dropped) inserts work again and survive a restart;
#   (b) hybrid_index.io_method = sync (the io_uring fallback): build,
#       inserts, deletes, restart, differential checks;
#   (c) a tier directory made unreadable (chmod 000): a clear error naming
#       the file, no crash; after restoring the permissions the index works
#       and is correct (skipped when the tests run as root, who ignores
#       permissions).
use strict;
use warnings;

use Cwd qw(realpath);
use File::Path qw(rmtree);
use FindBin;
use lib $FindBin::RealBin;
use HiTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = HiTest::new_node(
	'faults',
	fsync => 1,
	conf  => "hybrid_index.cache_size = 2\n"             # MB: pages get evicted and written
	  . "hybrid_index.checkpoint_log_size = 256\n");    # kB: frequent index checkpoints

sub S { return $node->safe_psql('postgres', $_[0]); }

sub run
{
	my ($sql) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql", on_error_stop => 1);
	return ($ret == 0, $out, $err);
}

sub no_crash
{
	my ($what) = @_;
	my @bad = grep { /terminated by signal|PANIC/ } split /\n/, slurp_file($node->logfile);
	is(scalar(@bad), 0, "$what: no backend crashed") or diag(join("\n", @bad));
	is(HiTest::try_psql($node, 'postgres', 'SELECT 1'), '1', "$what: server up");
	return;
}

# check + filters + kNN + every row found, for one table/index
sub healthy
{
	my ($what, $tbl, $idx, $size) = @_;
	is(HiTest::try_psql($node, 'postgres', "SELECT hybrid_index_check('$idx')"), 't', "$what: hybrid_index_check passes");
	is(HiTest::filters_differential($node, 'postgres', $tbl, $idx, 10, $size, 5), 'ok', "$what: filters equal seq scan");
	is(HiTest::knn_differential($node, 'postgres', $tbl, $idx, 3, $size, 10, 6), 'ok', "$what: kNN equals sorted seq scan");
	my ($rows, $ids) = HiTest::index_scan_counts($node, 'postgres', $tbl);
	is($rows, S("SELECT count(*) FROM $tbl WHERE geom IS NOT NULL AND NOT ST_IsEmpty(geom)"), "$what: index finds every row");
	is($ids, $rows, "$what: no duplicates");
	return;
}

# ---------------------------------------------------------------------------
# (b) io_method = sync
# ---------------------------------------------------------------------------
$node->append_conf('postgresql.conf', "hybrid_index.io_method = sync\nhybrid_index.io_depth = 4\n");
$node->reload;
is(S('SHOW hybrid_index.io_method'), 'sync', '(b) io_method = sync in effect');
S(q{
	SELECT setseed(0.25);
	CREATE TABLE s (id bigint, geom geometry);
	INSERT INTO s SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 20000) i;
	CREATE INDEX s_idx ON s USING hyrtree (geom) WITH (page_size = 4096);
	INSERT INTO s SELECT 100000 + i, ST_Buffer(ST_MakePoint(random() * 1000, random() * 1000), random() * 5, 'quad_segs=2')
	  FROM generate_series(1, 3000) i;
	DELETE FROM s WHERE id % 7 = 0;
	VACUUM s;
});
healthy('(b) sync I/O', 's', 's_idx', 1000);
$node->restart;
healthy('(b) sync I/O after restart (pages read back synchronously)', 's', 's_idx', 1000);
ok(S("SELECT sum(reads) > 0 FROM hybrid_index_stats('s_idx')") eq 't', '(b) pages were read from the files');
$node->append_conf('postgresql.conf', "hybrid_index.io_method = io_uring\nhybrid_index.io_depth = 64\n");
$node->reload;
healthy('(b) io_uring again over what sync I/O wrote', 's', 's_idx', 1000);
S('DROP TABLE s');

# ---------------------------------------------------------------------------
# (c) a tier directory made unreadable
# ---------------------------------------------------------------------------
SKIP:
{
	skip '(c) the tests run as root, who ignores directory permissions', 1 if $> == 0;
	my $fast = PostgreSQL::Test::Utils::tempdir();
	S("CREATE TABLESPACE fast LOCATION '$fast'");
	S(q{
		SELECT setseed(0.6);
		CREATE TABLE c (id bigint, geom geometry);
		INSERT INTO c SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 20000) i;
		CREATE INDEX c_idx ON c USING hyrtree (geom) WITH (page_size = 2048, placement = 'upper', optane_tablespace = 'fast');
		SELECT hybrid_index_checkpoint('c_idx');
	});
	my $optane = S("SELECT path FROM hybrid_index_files('c_idx') AS f(tier, path, bytes) WHERE tier = 'optane'");
	my ($dir) = $optane =~ m{^(.*)/[^/]+$};
	ok(-d $dir, "(c) the optane tier directory $dir exists");

	# unreadable at start-up: nothing cached, the first read must open the file
	$node->stop;
	chmod 0000, $dir or die "chmod: $!";
	$node->start;
	my ($ok, $out, $err) = run(q{SET enable_seqscan = off; SELECT count(*) FROM c WHERE geom && ST_MakeEnvelope(0, 0, 500, 500)});
	ok(!$ok, '(c) a query needing the unreadable tier fails') or diag("returned $out");
	like($err, qr/ERROR:\s+42501:.*\Q$optane\E.*Permission denied/, '(c) permission denied, naming the .optane file');
	($ok, $out, $err) = run(q{INSERT INTO c SELECT 500000 + i, ST_MakePoint(i, i) FROM generate_series(1, 100) i});
	ok(!$ok, '(c) an insert needing the unreadable tier fails');
	like($err, qr/ERROR:\s+42501:/, '(c) the insert fails with permission denied');
	no_crash('(c) unreadable at start');
	chmod 0700, $dir or die "chmod: $!";
	healthy('(c) permissions restored', 'c', 'c_idx', 1000);

	# unreadable while in use: new sessions must open the file to write
	# evicted pages (tiny cache) and to read uncached ones
	chmod 0000, $dir or die "chmod: $!";
	($ok, $out, $err) = run(q{
		INSERT INTO c SELECT 600000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 30000) i;
		SELECT hybrid_index_checkpoint('c_idx');});
	if ($ok) { pass('(c) inserts while the tier is unreadable: succeeded (from cache and open descriptors)'); }
	else { like($err, qr/ERROR:\s+42501:.*Permission denied/, '(c) inserts while the tier is unreadable: permission denied'); }
	no_crash('(c) unreadable while in use');
	chmod 0700, $dir or die "chmod: $!";
	healthy('(c) permissions restored again', 'c', 'c_idx', 1000);
	$node->restart;
	healthy('(c) after a restart', 'c', 'c_idx', 1000);
	S('DROP TABLE c; DROP TABLESPACE fast');
}

# ---------------------------------------------------------------------------
# (d) a fast tier on tmpfs.  With hybrid_index.direct_io off (the default)
#     both tier files go through the OS page cache.  With it on, where the
#     kernel refuses O_DIRECT on tmpfs (before Linux 6.6), that file falls
#     back to buffered I/O with a log line while the flash tier of the same
#     index keeps O_DIRECT; either way the tmpfs file's pages are copied
#     synchronously (tier_io.c) and answers stay exact across a restart
# ---------------------------------------------------------------------------
SKIP:
{
	my $shm = '/dev/shm';
	my $fstype = -d $shm ? `stat -f -c %T $shm 2>/dev/null` : '';
	chomp $fstype;
	skip "(d) $shm is not a tmpfs here ($fstype)", 1 unless $fstype eq 'tmpfs';
	my $loc = "$shm/hi_032_" . $node->port;
	rmtree($loc);
	mkdir $loc or die "mkdir $loc: $!";
	S("CREATE TABLESPACE memtier LOCATION '$loc'");
	S(q{
		SELECT setseed(0.7);
		CREATE TABLE m (id bigint, geom geometry);
		INSERT INTO m SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 20000) i;
		CREATE INDEX m_idx ON m USING hyrtree (geom) WITH (page_size = 2048, placement = 'upper', optane_tablespace = 'memtier');
		INSERT INTO m SELECT 100000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 5000) i;
		DELETE FROM m WHERE id % 5 = 0;
		VACUUM m;
		SELECT hybrid_index_checkpoint('m_idx');
	});
	healthy('(d) fast tier on tmpfs', 'm', 'm_idx', 1000);

	my %path = map { split /\|/ } split /\n/,
	  S("SELECT tier || '|' || path FROM hybrid_index_files('m_idx') AS f(tier, path, bytes) WHERE tier IN ('flash', 'optane')");
	# a session reads both tiers, then tells how its descriptors were opened
	my $open_flags = sub {
		my %direct;
		my $bg = $node->background_psql('postgres');
		$bg->query_safe(q{SET enable_seqscan = off; SELECT count(*) FROM m WHERE geom && ST_MakeEnvelope(0, 0, 1000, 1000)});
		my $pid = $bg->query_safe('SELECT pg_backend_pid()');
		chomp $pid;
		opendir(my $dh, "/proc/$pid/fd") or die "opendir /proc/$pid/fd: $!";
		for my $fd (grep { /^\d+$/ } readdir $dh)
		{
			my $target = readlink("/proc/$pid/fd/$fd") // next;
			for my $tier (keys %path)
			{
				next unless realpath($target) eq realpath($path{$tier});
				my ($flags) = slurp_file("/proc/$pid/fdinfo/$fd") =~ /^flags:\s*([0-7]+)/m;
				$direct{$tier} = (oct($flags) & 040000) ? 1 : 0;    # O_DIRECT on x86-64
			}
		}
		closedir $dh;
		$bg->quit;
		return %direct;
	};

	$node->restart;
	my %direct = $open_flags->();
	is($direct{flash}, 0, '(d) direct_io off (the default): the flash tier file uses the OS page cache');
	is($direct{optane}, 0, '(d) direct_io off: so does the tmpfs tier file');

	$node->append_conf('postgresql.conf', "hybrid_index.direct_io = on\n");
	$node->restart;
	my $logpos = -s $node->logfile;
	%direct = $open_flags->();
	is($direct{flash}, 1, '(d) the flash tier file (ext4) is opened with O_DIRECT');
	ok(defined $direct{optane}, '(d) the session has the tmpfs tier file open');
	if (!$direct{optane})
	{
		like(substr(slurp_file($node->logfile), $logpos), qr/O_DIRECT refused for "[^"]*\Q$loc\E/,
			'(d) tmpfs refused O_DIRECT: the fallback to buffered I/O is logged, naming the file');
	}
	else
	{
		pass('(d) this kernel accepts O_DIRECT on tmpfs (Linux >= 6.6): no fallback needed');
	}
	ok(S("SELECT reads > 0 FROM hybrid_index_stats('m_idx') WHERE tier = 'optane'") eq 't',
		'(d) the tmpfs tier was read from');
	healthy('(d) fast tier on tmpfs after a restart', 'm', 'm_idx', 1000);
	S('DROP TABLE m; DROP TABLESPACE memtier');
	ok(!-e $path{optane}, '(d) DROP removed the tmpfs tier file');
	rmtree($loc);
	# (a) runs with the default
	$node->append_conf('postgresql.conf', "hybrid_index.direct_io = off\n");
	$node->restart;
}

# ---------------------------------------------------------------------------
# (a) a tier on a tiny filesystem that fills up
# ---------------------------------------------------------------------------
my $tiny = $ENV{HI_TINY_FS} // '/tmp/hybrid_index_tinyfs';
my $tiny_ok = -d $tiny && -w $tiny && (stat($tiny))[0] != (stat("$tiny/.."))[0];
SKIP:
{
	skip "(a) no tiny filesystem at $tiny: run 'bash test/setup_tiny_fs.sh' as root first "
	  . '(an 8 MB ext4 loop mount the test user can write)', 1
	  unless $tiny_ok;
	my $loc = "$tiny/ts_$$";
	rmtree($loc);
	mkdir $loc or die "mkdir $loc: $!";
	S("CREATE TABLESPACE tiny LOCATION '$loc'");
	# something to delete later to free space: enough for the inserts after
	# it and for the crash recovery below, which parks the pages of the
	# index checkpoint it replays in a file of their own until that
	# checkpoint's map (with 3 MB it once lacked the room, and the index
	# then refused as out of date, which is the safe side)
	S(q{CREATE TABLE filler (pad text) TABLESPACE tiny;
		ALTER TABLE filler ALTER pad SET STORAGE PLAIN;
		INSERT INTO filler SELECT repeat('x', 1500) FROM generate_series(1, 3000);});
	S(q{
		SELECT setseed(0.8);
		CREATE TABLE f (id bigint, geom geometry);
		INSERT INTO f SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 5000) i;
		CREATE INDEX f_idx ON f USING hyrtree (geom) WITH (page_size = 8192, placement = 'none') TABLESPACE tiny;
	});
	my $real_loc = realpath($loc);
	for my $p (split /\n/, S("SELECT path FROM hybrid_index_files('f_idx') AS f(tier, path, bytes) WHERE tier IN ('flash', 'log', 'map')"))
	{
		like(realpath($p) // '', qr/^\Q$real_loc\E\//, "(a) $p is on the tiny filesystem");
	}

	my ($ok, $out, $err);
	my $batch = 0;
	my $next = 100000;
	while ($batch < 60)
	{
		$batch++;
		($ok, $out, $err) = run("INSERT INTO f SELECT $next + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 10000) i");
		last unless $ok;
		$next += 10000;
	}
	ok(!$ok, "(a) inserts fill the filesystem: statement $batch fails");
	# whether the tier file or the redo log hits the full disk first is a
	# matter of timing; either way it is a disk-full error
	like($err, qr/ERROR:\s+53100:/, '(a) SQLSTATE 53100 (disk full)') or diag($err);
	like($err, qr/No space left on device/i, '(a) the error says the disk is full');
	unlike($err, qr/Success/, '(a) the error does not say "Success"');
	like($err, qr/hyb_\d+_\d+\.(flash|log|map)|index "f_idx"/, '(a) the error names the file or the index');
	note("disk full after $batch batches: $err");
	no_crash('(a) disk full');
	# reads evict clean pages when dirty ones cannot be written
	healthy('(a) after disk full', 'f', 'f_idx', 1000);

	# still full: a write fails cleanly again
	($ok, $out, $err) = run("INSERT INTO f SELECT $next + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 20000) i");
	ok(!$ok, '(a) a second insert while full fails');
	like($err, qr/ERROR:\s+53100:/, '(a) a second insert while full: disk full again') or diag($err);
	no_crash('(a) still full');
	healthy('(a) still full', 'f', 'f_idx', 1000);

	# free space: the index works again
	S('DROP TABLE filler');
	S('CHECKPOINT');
	# slots rewritten since the last checkpoint are reused at once, so the
	# file does not grow by one page per eviction into the freed space
	($ok, $out, $err) = run("INSERT INTO f SELECT 900000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 5000) i;
		SELECT hybrid_index_checkpoint('f_idx');");
	ok($ok, '(a) after freeing space inserts and a checkpoint work again') or diag($err);
	healthy('(a) after freeing space', 'f', 'f_idx', 1000);
	no_crash('(a) after freeing space');

	my $pages = S("SELECT pages FROM hybrid_index_stats('f_idx') WHERE tier = 'flash'");
	my $bytes = S("SELECT bytes FROM hybrid_index_files('f_idx') WHERE kind = 'flash'");
	note("flash tier after a checkpoint: $pages pages in use, file of " . ($bytes / 8192) . ' slots');

	# a restart (crash recovery of the index) brings it back in any case
	$node->stop('immediate');
	$node->start;
	healthy('(a) after a crash-restart', 'f', 'f_idx', 1000);
	# checkpoints give the free tail of the tier file back, so the log has
	# room to grow
	($ok, $out, $err) = run("INSERT INTO f SELECT 950000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 3000) i;
		SELECT hybrid_index_checkpoint('f_idx');");
	ok($ok, '(a) after the restart inserts and a checkpoint work') or diag($err);
	is(S("SELECT count(*) FROM f WHERE id > 950000"), '3000', '(a) the rows inserted after recovery are there');
	healthy('(a) after the restart and more inserts', 'f', 'f_idx', 1000);
	$node->restart;
	healthy('(a) final', 'f', 'f_idx', 1000);

	S('DROP TABLE f; DROP TABLESPACE tiny');
	rmtree($loc);

	# the same disk-full cycle for the other access methods (their own
	# buffers, log-buckets, hot regions on the fast tier's file)
	for my $am (qw(efind lbgrid hgrid))
	{
		my $aloc = "$tiny/ts_${am}_$$";
		rmtree($aloc);
		mkdir $aloc or die "mkdir $aloc: $!";
		S("CREATE TABLESPACE tiny_$am LOCATION '$aloc'");
		S(qq{CREATE TABLE filler_$am (pad text) TABLESPACE tiny_$am;
			ALTER TABLE filler_$am ALTER pad SET STORAGE PLAIN;
			INSERT INTO filler_$am SELECT repeat('x', 1500) FROM generate_series(1, 2000);
			SELECT setseed(0.3);
			CREATE TABLE f_$am (id bigint, geom geometry);
			INSERT INTO f_$am SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 5000) i;
			CREATE INDEX f_${am}_idx ON f_$am USING $am (geom) TABLESPACE tiny_$am;});
		my $n = 100000;
		for my $b (1 .. 60)
		{
			($ok, $out, $err) = run("INSERT INTO f_$am SELECT $n + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 10000) i");
			last unless $ok;
			$n += 10000;
		}
		ok(!$ok, "(a) $am: inserts fill the filesystem");
		like($err, qr/ERROR:\s+53100:.*No space left on device/, "(a) $am: disk full, 53100") or diag($err);
		no_crash("(a) $am disk full");
		# a bulk load into the full filesystem: its page writes (left in
		# flight while it builds the next ones) fail, the build with them
		($ok, $out, $err) = run("CREATE INDEX f_${am}_big ON f_$am USING $am (geom) TABLESPACE tiny_$am");
		ok(!$ok, "(a) $am: a build on the full filesystem fails");
		like($err, qr/ERROR:\s+53100:.*No space left on device/, "(a) $am: build disk full, 53100") or diag($err);
		no_crash("(a) $am build disk full");
		healthy("(a) $am after disk full", "f_$am", "f_${am}_idx", 1000);
		S("DROP TABLE filler_$am");
		S('CHECKPOINT');
		($ok, $out, $err) = run("INSERT INTO f_$am SELECT 900000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 5000) i;
			SELECT hybrid_index_checkpoint('f_${am}_idx');");
		ok($ok, "(a) $am: after freeing space inserts and a checkpoint work again") or diag($err);
		healthy("(a) $am after freeing space", "f_$am", "f_${am}_idx", 1000);
		S("DROP TABLE f_$am; DROP TABLESPACE tiny_$am");
		rmtree($aloc);
	}
}

no_crash('end');
$node->stop;
done_testing();
