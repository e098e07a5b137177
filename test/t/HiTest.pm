# HiTest.pm — shared helpers for the hybrid_index TAP tests (test/t/*.pl).
#
# Nodes are PostgreSQL::Test::Cluster nodes with hybrid_index preloaded and
# every hyrtree page size allowed. The differential helpers come from
# sql/hyrtree_00_setup.sql (schema "hit"), loaded into each database used.
package HiTest;

use strict;
use warnings;

use Cwd qw(realpath);
use File::Basename qw(dirname);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use HiAM;

our $SRCDIR = realpath(dirname(__FILE__) . '/../..');

# new_node(name, preload => 1, conf => "extra lines", start => 1, fsync => 0,
#          streaming => 0 (a primary that standbys and base backups can use),
#          install_path => undef (the PATH's server),
#          initdb_extra => [initdb options]);
# $ENV{HI_TAP_CONF} adds lines to every node's postgresql.conf, after conf
sub new_node
{
	my ($name, %opts) = @_;
	my $preload = exists $opts{preload} ? $opts{preload} : 1;
	# install_path: a server of another version (pg_upgrade's old cluster)
	my $node = PostgreSQL::Test::Cluster->new($name,
		$opts{install_path} ? (install_path => $opts{install_path}) : ());
	$node->init(allows_streaming => $opts{streaming} ? 1 : 0,
		has_archiving => $opts{archiving} ? 1 : 0,
		$opts{initdb_extra} ? (extra => $opts{initdb_extra}) : ());
	my $conf = "max_connections = 30\n"
	  . "shared_buffers = 64MB\n"
	  . "log_statement = none\n"
	  . "lc_messages = 'C'\n";
	$conf .= "shared_preload_libraries = 'hybrid_index'\n"
	  . "hybrid_index.max_page_size = 32768\n"
	  if $preload;
	$conf .= "fsync = on\n" if $opts{fsync};
	$conf .= $opts{conf} if $opts{conf};
	# e.g. HI_TAP_CONF="hybrid_index.io_method = sync": every node, last
	$conf .= "$ENV{HI_TAP_CONF}\n" if $ENV{HI_TAP_CONF};
	$node->append_conf('postgresql.conf', $conf);
	if (!exists $opts{start} || $opts{start})
	{
		$node->start;
		setup_db($node, 'postgres') if $preload;
	}
	return $node;
}

# Create postgis, hybrid_index and the "hit" helpers in a database
sub setup_db
{
	my ($node, $db) = @_;
	$node->safe_psql($db,
		"CREATE EXTENSION IF NOT EXISTS postgis; CREATE EXTENSION IF NOT EXISTS hybrid_index;");
	my $helpers = slurp_file("$SRCDIR/sql/hyrtree_00_setup.sql");
	$node->safe_psql($db, $helpers);
	return;
}

# SQL VALUES list of query windows inside [0,size]^2, deterministic
sub windows_sql
{
	my ($count, $size, $seed) = @_;
	$seed //= 1;
	my @w;
	my $s = $seed;
	my $rnd = sub { $s = ($s * 1103515245 + 12345) % 2147483648; return $s / 2147483648; };
	for my $i (1 .. $count)
	{
		my $x = $rnd->() * $size;
		my $y = $rnd->() * $size;
		my $w = $rnd->() * $rnd->() * $size * 0.3;
		my $h = $rnd->() * $rnd->() * $size * 0.3;
		push @w, sprintf("(%d, ST_MakeEnvelope(%.6f, %.6f, %.6f, %.6f))",
			$i, $x, $y, $x + $w, $y + $h);
	}
	push @w, sprintf("(%d, ST_MakeEnvelope(-1e7, -1e7, 1e7, 1e7))", $count + 1);
	return "(VALUES " . join(",\n", @w) . ") AS w(wid, g)";
}

# Like safe_psql, but an error comes back as the string "ERROR: ..." (so
# that a failing check fails its test and the script goes on)
sub try_psql
{
	my ($node, $db, $sql) = @_;
	my ($ret, $out, $err) = $node->psql($db, $sql, on_error_stop => 1);
	return $out if $ret == 0;
	$err =~ s/\s+/ /g;
	return "ERROR: $err";
}

# Differential check of && over windows: returns "ok" or a description.
sub filters_differential
{
	my ($node, $db, $table, $idx, $nwin, $size, $seed) = @_;
	my $w = windows_sql($nwin, $size, $seed);
	my $bad = try_psql($node,
		$db, qq{
		SELECT coalesce(string_agg(format('window %s: n=%s seq_plan=%s index_same=%s index_plan=%s bitmap_same=%s bitmap_plan=%s',
		       wid, n, seq_plan, index_same, index_plan, bitmap_same, bitmap_plan), '; '), 'ok')
		FROM $w, LATERAL hit.diff(format('SELECT id FROM $table WHERE geom && %L::geometry', g), '$idx') d
		WHERE NOT (seq_plan AND index_same AND index_plan AND bitmap_same AND bitmap_plan)});
	return $bad;
}

# Differential check of kNN: returns "ok" or a description.
sub knn_differential
{
	my ($node, $db, $table, $idx, $npts, $size, $k, $seed) = @_;
	my $w = windows_sql($npts, $size, $seed);
	my $bad = try_psql($node,
		$db, qq{
		SELECT coalesce(string_agg(format('point %s: n=%s dist_same=%s ids_same=%s index_plan=%s',
		       wid, n, dist_same, ids_same, index_plan), '; '), 'ok')
		FROM $w, LATERAL hit.knn_diff('$table', '$idx', ST_PointN(ST_ExteriorRing(g), 1), $k) d
		WHERE wid <= $npts AND NOT (dist_same AND ids_same AND index_plan AND seq_plan)});
	return $bad;
}

# Index scan over everything: returns (rows, distinct ids, distinct ctids)
sub index_scan_counts
{
	my ($node, $db, $table, $env) = @_;
	$env //= 'ST_MakeEnvelope(-1e9, -1e9, 1e9, 1e9)';
	my $r = try_psql($node,
		$db, qq{
		SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;
		SELECT count(*), count(DISTINCT id), count(DISTINCT ctid) FROM $table WHERE geom && $env;});
	return ($r, $r, $r) if $r =~ /^ERROR/;
	return split /\|/, $r;
}

# kNN over every row (k = all) from one point: the index scan must return
# the sequential scan's rows in the same distance order, NULL and EMPTY
# geometries (NULL distance) last. Returns "ok" or a description.
sub knn_all_differential
{
	my ($node, $db, $table, $idx, $x, $y) = @_;
	return try_psql($node,
		$db, qq{
		SELECT CASE WHEN dist_same AND ids_same AND index_plan AND seq_plan THEN 'ok'
		  ELSE format('kNN of all %s rows: dist_same=%s ids_same=%s index_plan=%s seq_plan=%s',
		              n, dist_same, ids_same, index_plan, seq_plan) END
		FROM hit.knn_diff('$table', '$idx', ST_MakePoint($x, $y), NULL) d});
}

# Group point query (geom ~= ANY (array)): index scan equals sequential scan.
# Returns "t" when equal.
sub group_differential
{
	my ($node, $db, $table, $modulus) = @_;
	return try_psql($node,
		$db, qq{
		CREATE TEMP TABLE grp AS SELECT array_agg(geom) AS a FROM $table WHERE id % $modulus = 7;
		SET enable_seqscan = off; SET enable_bitmapscan = off;
		CREATE TEMP TABLE gi AS SELECT id FROM $table WHERE geom ~= ANY ((SELECT a FROM grp)::geometry[]);
		RESET enable_seqscan; RESET enable_bitmapscan; SET enable_indexscan = off;
		CREATE TEMP TABLE gs AS SELECT id FROM $table WHERE geom ~= ANY ((SELECT a FROM grp)::geometry[]);
		SELECT (SELECT count(*) FROM gi) = (SELECT count(*) FROM gs)
		   AND NOT EXISTS (SELECT id FROM gi EXCEPT ALL SELECT id FROM gs);});
}

# The differential check of one index, as tests (10 + 1 with group):
# hybrid_index_check, window filters (index and bitmap scans == seq scan),
# kNN with a LIMIT and kNN of every row (NULL and EMPTY included) in true
# distance order, and a full-window index scan finding every non-empty heap
# row exactly once. %o: windows, knn_points, k, seed, group (1/0).
sub full_check
{
	my ($node, $db, $label, $tbl, $idx, %o) = @_;
	my $seed = $o{seed} // 7;
	# (heapallindexed, which also compares INCLUDE values with the table's,
	# needs a lock a hot standby cannot take)
	is(try_psql($node, $db,
			"SELECT hybrid_index_check('$idx', heapallindexed => NOT pg_is_in_recovery())"), 't',
		"$label: $idx passes hybrid_index_check");
	is(filters_differential($node, $db, $tbl, $idx, $o{windows} // 15, 1000, $seed), 'ok',
		"$label: $idx index and bitmap scans equal seq scan");
	is(knn_differential($node, $db, $tbl, $idx, $o{knn_points} // 4, 1000, $o{k} // 25, $seed + 1),
		'ok', "$label: $idx kNN equals sorted seq scan");
	is(knn_all_differential($node, $db, $tbl, $idx, 100 + $seed * 37 % 800, 900 - $seed * 53 % 800),
		'ok', "$label: $idx kNN of every row (NULL, EMPTY last) equals sorted seq scan");
	my ($rows, $ids, $ctids) = index_scan_counts($node, $db, $tbl);
	is($rows, $node->safe_psql($db, "SELECT count(*) FROM $tbl WHERE geom IS NOT NULL AND NOT ST_IsEmpty(geom)"),
		"$label: $idx finds every row");
	is($ids, $rows, "$label: $idx returns no duplicate ids");
	is($ctids, $rows, "$label: $idx returns no duplicate TIDs");
	is(group_differential($node, $db, $tbl, 101), 't', "$label: $idx group point query equals seq scan")
	  if $o{group};
	return;
}

# pg_relation_size of one of our indexes reports its files (rounded up to
# blocks), and the main fork that stands for them is sparse: it takes no
# more than a few blocks of disk (issue 19, sizes)
sub sparse_main_fork
{
	my ($node, $db, $idx, $label) = @_;
	my ($size, $files, $path) = split /\|/, $node->safe_psql($db, qq{
		SELECT pg_relation_size('$idx'),
		       (SELECT ceil(sum(bytes) / 8192.0)::bigint * 8192 FROM hybrid_index_files('$idx')),
		       pg_relation_filepath('$idx')});
	is($size, $files, "$label: pg_relation_size of $idx is its files' size");
	my @st = stat($node->data_dir . "/$path");
	cmp_ok(($st[12] // 0) * 512, '<=', 65536,
		"$label: the main fork of $idx takes no disk space ($size bytes long)");
	return;
}

# Run $code->($entry) as one subtest per access method of HiAM (those named
# in HI_AMS, default all); the code calls skip_unless_am once its node runs.
sub for_each_am
{
	my ($code) = @_;
	for my $e (HiAM::selected())
	{
		my $t0 = time;
		subtest $e->{am} => sub { $code->($e) };
		diag(sprintf('%s: %d s', $e->{am}, time - $t0));
	}
	return;
}

# End the current subtest as skipped (stopping the node) when the entry's
# access method is not installed, e.g. one still being written.
sub skip_unless_am
{
	my ($node, $e) = @_;
	return if HiAM::exists_in($node, 'postgres', $e->{am});
	$node->stop;
	plan skip_all => "access method $e->{am} is not in pg_am";
	return;
}

# What an index answers, to compare across a restart: count and id sum of a
# window, the 5 nearest ids to (500, 500) (ties by id), and $extra_sql
sub fingerprint
{
	my ($node, $db, $tbl, $extra_sql) = @_;
	return try_psql($node,
		$db, qq{
		SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*), sum(id) FROM $tbl WHERE geom && ST_MakeEnvelope(100, 100, 600, 450);
		@{[ $extra_sql // '' ]}
		SELECT string_agg(id::text, ',') FROM (SELECT id FROM $tbl ORDER BY geom <-> 'POINT(500 500)'::geometry, id LIMIT 5) s;});
}

# After VACUUM (INDEX_CLEANUP ON: VACUUM may otherwise skip index vacuuming
# when few heap pages have dead items) with no other session, the index
# holds exactly one entry per non-empty heap row and one null entry per
# NULL or EMPTY row: nothing of an aborted, lost or deleted row is left.
sub entries_match_heap
{
	my ($node, $db, $tbl, $idx, $label) = @_;
	$node->safe_psql($db, "VACUUM (INDEX_CLEANUP ON) $tbl");
	is( $node->safe_psql($db,
			"SELECT (j->>'entries') || '/' || (j->>'null_entries') FROM hybrid_index_inspect('$idx') j"),
		$node->safe_psql($db,
			"SELECT count(*) FILTER (WHERE geom IS NOT NULL AND NOT ST_IsEmpty(geom)) || '/' || "
			  . "count(*) FILTER (WHERE geom IS NULL OR ST_IsEmpty(geom)) FROM $tbl"),
		"$label: $idx entries/null entries equal the heap's rows after VACUUM");
	return;
}

# All hyb_* files below a directory (recursively), sorted
sub hyb_files
{
	my (@dirs) = @_;
	my @found;
	for my $d (@dirs)
	{
		next unless -d $d;
		my @stack = ($d);
		while (my $dir = pop @stack)
		{
			opendir(my $dh, $dir) or next;
			for my $e (readdir $dh)
			{
				next if $e eq '.' || $e eq '..';
				my $p = "$dir/$e";
				if (-d $p && !-l $p) { push @stack, $p; }
				elsif ($e =~ /^hyb_\d+_\d+\./) { push @found, $p; }
			}
			closedir $dh;
		}
	}
	return sort @found;
}


# Switch the node's WAL file and wait until the archiver has the file it
# switched away from.  (Waiting for the file of pg_current_wal_lsn() - 1
# instead races: a record written after the switch, such as the
# background writer's standby snapshot, moves that position into a file
# nobody archives until it fills.)
sub switch_and_archive
{
	my ($node) = @_;
	my $seg = $node->safe_psql('postgres', 'SELECT pg_walfile_name(pg_switch_wal() - 1)');
	$node->poll_query_until('postgres',
		"SELECT last_archived_wal IS NOT NULL AND last_archived_wal >= '$seg' FROM pg_stat_archiver")
	  or die "WAL file $seg was not archived";
	return;
}

1;
