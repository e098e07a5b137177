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

our $SRCDIR = realpath(dirname(__FILE__) . '/../..');

# new_node(name, preload => 1, conf => "extra lines", start => 1, fsync => 0)
sub new_node
{
	my ($name, %opts) = @_;
	my $preload = exists $opts{preload} ? $opts{preload} : 1;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	my $conf = "max_connections = 30\n"
	  . "shared_buffers = 64MB\n"
	  . "log_statement = none\n"
	  . "lc_messages = 'C'\n";
	$conf .= "shared_preload_libraries = 'hybrid_index'\n"
	  . "hybrid_index.max_page_size = 32768\n"
	  if $preload;
	$conf .= "fsync = on\n" if $opts{fsync};
	$conf .= $opts{conf} if $opts{conf};
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

1;
