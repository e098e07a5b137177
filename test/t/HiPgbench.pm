# HiPgbench.pm — concurrency test of one access method (an entry of
# HiAM.pm) with pgbench: 8 clients run a weighted mix of custom scripts on
# one table per index configuration: single and batch inserts (NULL and
# EMPTY geometries among them), deletes, updates, VACUUM, index
# checkpoints, and self-checking readers. Inside the run every reader checks
# itself: index scans return no duplicate TIDs; within one REPEATABLE READ
# snapshot the index scan, the bitmap scan and the sequential scan return
# the same rows, kNN the same distances as a sorted sequential scan, group
# queries (AMs with group_query) the same rows. A failed check divides by
# zero, which fails pgbench. After the run: the differential checks of
# HiTest::full_check, then VACUUM and exactly one index entry per heap row;
# then the readers alone on the restarted node (concurrent first loads
# replay the logs).
package HiPgbench;

use strict;
use warnings;

use HiAM;
use HiTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use IPC::Run;
use Test::More;

my $CLIENTS = 8;

sub scripts
{
	my ($t, $e) = @_;
	my $idx = "${t}_idx";
	my %s = (
		"${t}_insert\@6" => qq{
\\set x random(0, 100000)
\\set y random(0, 100000)
INSERT INTO $t (geom) VALUES (CASE :x % 50 WHEN 0 THEN NULL WHEN 1 THEN 'POINT EMPTY'::geometry
  ELSE ST_MakePoint(:x / 100.0, :y / 100.0) END);
},
		"${t}_insert_batch\@1" => qq{
\\set x random(0, 900)
\\set y random(0, 900)
INSERT INTO $t (geom) SELECT ST_MakePoint(:x + random() * 100, :y + random() * 100) FROM generate_series(1, 50);
},
		"${t}_delete\@2" => qq{
\\set d random(1, 40000)
DELETE FROM $t WHERE id BETWEEN :d AND :d + 2;
},
		"${t}_update\@1" => qq{
\\set d random(1, 40000)
UPDATE $t SET geom = ST_Translate(geom, 1, -1) WHERE id BETWEEN :d AND :d + 2;
},
		"${t}_vacuum\@1" => qq{
VACUUM $t;
},
		"${t}_checkpoint\@1" => qq{
SELECT hybrid_index_checkpoint('$idx');
},
		"${t}_nodup\@3" => qq{
\\set x random(0, 950)
\\set y random(0, 950)
BEGIN;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SELECT 1 / (count(*) = count(DISTINCT ctid))::int FROM $t WHERE geom && ST_MakeEnvelope(:x, :y, :x + 50, :y + 50);
COMMIT;
},
		"${t}_snapshot\@3" => qq{
\\set x random(0, 900)
\\set y random(0, 900)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SELECT count(*) AS c1, coalesce(sum(id), 0) AS s1, coalesce(sum(hashint8(id)), 0) AS h1 FROM $t WHERE geom && ST_MakeEnvelope(:x, :y, :x + 100, :y + 100) \\gset
SET LOCAL enable_seqscan = on;
SET LOCAL enable_indexscan = off;
SELECT 1 / (count(*) = :c1 AND coalesce(sum(id), 0) = :s1 AND coalesce(sum(hashint8(id)), 0) = :h1)::int FROM $t WHERE geom && ST_MakeEnvelope(:x, :y, :x + 100, :y + 100);
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = on;
SELECT 1 / (count(*) = :c1 AND coalesce(sum(id), 0) = :s1 AND coalesce(sum(hashint8(id)), 0) = :h1)::int FROM $t WHERE geom && ST_MakeEnvelope(:x, :y, :x + 100, :y + 100);
COMMIT;
},
		"${t}_knn\@2" => qq{
\\set x random(0, 1000)
\\set y random(0, 1000)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SELECT count(*) AS kc, count(DISTINCT id) AS kd, max(d) AS kmax, coalesce(sum(d), 0) AS ksum FROM (SELECT id, geom <-> ST_MakePoint(:x, :y) AS d FROM $t ORDER BY geom <-> ST_MakePoint(:x, :y) LIMIT 20) s \\gset
SET LOCAL enable_seqscan = on;
SET LOCAL enable_indexscan = off;
SELECT 1 / (:kc = :kd AND count(*) = :kc AND max(d) = :kmax AND abs(coalesce(sum(d), 0) - :ksum) <= 1e-6)::int FROM (SELECT id, geom <-> ST_MakePoint(:x, :y) AS d FROM $t ORDER BY geom <-> ST_MakePoint(:x, :y) LIMIT 20) s;
COMMIT;
},
	);
	$s{"${t}_group\@2"} = qq{
\\set x random(0, 1000)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SELECT count(*) AS gc, coalesce(sum(id), 0) AS gs FROM $t WHERE geom ~= ANY ((SELECT array_agg(geom) FROM $t WHERE id BETWEEN :x * 20 AND :x * 20 + 30)::geometry[]) \\gset
SET LOCAL enable_seqscan = on;
SET LOCAL enable_indexscan = off;
SELECT 1 / (count(*) = :gc AND coalesce(sum(id), 0) = :gs)::int FROM $t WHERE geom ~= ANY ((SELECT array_agg(geom) FROM $t WHERE id BETWEEN :x * 20 AND :x * 20 + 30)::geometry[]);
COMMIT;
} if $e->{group_query};
	return \%s;
}

sub check_all
{
	my ($node, $e, $label, @tables) = @_;
	my $seed = 21;
	for my $t (@tables)
	{
		HiTest::full_check($node, 'postgres', $label, $t, "${t}_idx",
			windows    => 15,
			knn_points => 5,
			k          => 30,
			seed       => $seed++,
			group      => $e->{group_query});
	}
	return;
}

# A node with one table per index configuration of the entry (15000
# points, NULL and EMPTY rows); returns (node, tables), or skips the subtest
sub setup_node
{
	my ($e, $name, $conf) = @_;
	my $node = HiTest::new_node($name, conf => "max_connections = 40\n" . ($e->{conf} // '') . ($conf // ''));
	HiTest::skip_unless_am($node, $e);
	HiAM::create_tablespaces($node, $e);
	my @tables = HiAM::tables($e);
	my $sql = "SELECT setseed(0.6);\n";
	my $i = 0;
	for my $t (@tables)
	{
		my $clause = HiAM::index_clause($e, $i++, 'id');
		$sql .= qq{
		CREATE TABLE $t (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, geom geometry);
		INSERT INTO $t (id, geom) SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 15000) i;
		INSERT INTO $t (id, geom) VALUES (15001, NULL), (15002, 'POINT EMPTY'), (15003, 'POLYGON EMPTY');
		SELECT setval(pg_get_serial_sequence('$t', 'id'), 15003);
		CREATE INDEX ${t}_idx ON $t $clause;
		};
	}
	$node->safe_psql('postgres', $sql);
	return ($node, @tables);
}

# The same mix on a 1 MB page cache (32 frames for 8 clients that pin up to
# half of it each): statements may fail with "no unpinned hybrid_index cache
# frame available" (53200), but an error must never leave a frame marked
# as in I/O (every later reader of the page would wait for it forever), so
# pgbench ends on time, no session is left waiting, and the indexes answer
# like a sequential scan.
sub run_tiny_cache
{
	my ($e) = @_;
	my ($node, @tables) = setup_node($e, "tiny_cache_$e->{am}", "hybrid_index.cache_size = 1\n");
	my $dir = PostgreSQL::Test::Utils::tempdir();
	my @files;
	my %all = map { %{ scripts($_, $e) } } @tables;
	for my $name (sort keys %all)
	{
		my ($base, $weight) = split /\@/, $name;
		PostgreSQL::Test::Utils::append_to_file("$dir/$base", $all{$name});
		push @files, '-f', "$dir/$base\@$weight";
	}
	my ($out, $err) = ('', '');
	my $finished = eval {
		IPC::Run::run([ 'pgbench', '--no-vacuum', "--client=$CLIENTS", '--jobs=2', '--time=6', @files,
				$node->connstr('postgres') ],
			'>', \$out, '2>', \$err, IPC::Run::timeout(180));
		1;
	};
	ok($finished, "$e->{am}: pgbench on a 1 MB cache ends (no session waits forever)")
	  or diag("pgbench: $@");
	my @other = grep { !/no unpinned hybrid_index cache frame available|^\s*$|^(HINT|CONTEXT|DETAIL):|client \d+ (aborted|script \d+ aborted)|Run was aborted|^pgbench: (error|fatal): Run was aborted/ } split /\n/, $err;
	is(join("\n", @other), '', "$e->{am}: the only errors on a 1 MB cache are 'no unpinned frame'");
	my $left = $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()");
	is($left, '0', "$e->{am}: no session is left after pgbench");
	if (!$finished || $left ne '0')
	{
		# the checks would wait forever too
		$node->stop('immediate');
		return;
	}
	check_all($node, $e, 'after pgbench on a 1 MB cache', @tables);
	$node->stop;
	return;
}

sub run
{
	my ($e) = @_;
	my $seconds = $ENV{HI_PGBENCH_SECONDS} // 10;
	my ($node, @tables) = setup_node($e, "pgbench_$e->{am}");

	my %all = map { %{ scripts($_, $e) } } @tables;
	$node->pgbench(
		"--no-vacuum --client=$CLIENTS --jobs=2 --time=$seconds",
		0,
		[qr{processed: [1-9]}],
		[qr{^$}],
		"$e->{am}: pgbench, $CLIENTS clients: inserts, deletes, updates, vacuums, checkpoints and self-checking readers",
		\%all);

	check_all($node, $e, 'after pgbench', @tables);
	is($node->safe_psql('postgres', sprintf($e->{activity}, "$tables[0]_idx")), 't',
		"$tables[0]_idx: the $e->{am} machinery ran during the run")
	  if $e->{activity};
	HiTest::entries_match_heap($node, 'postgres', $_, "${_}_idx", $e->{am}) for @tables;

	# readers only, after a restart: concurrent first uses of the indexes
	$node->safe_psql('postgres',
		join('', map { "INSERT INTO $_ (geom) SELECT ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 2000);\n" } @tables));
	$node->restart;
	my %readers = map { ("r_$_" => $all{$_}) } grep { /_(snapshot|knn|nodup|group)\@/ } keys %all;
	$node->pgbench(
		"--no-vacuum --client=$CLIENTS --jobs=2 --time=" . int($seconds / 2 + 1),
		0,
		[qr{processed: [1-9]}],
		[qr{^$}],
		"$e->{am}: pgbench, $CLIENTS clients: self-checking readers on restarted indexes",
		\%readers);
	check_all($node, $e, 'after the readers', @tables);
	$node->stop;
	return;
}

1;
