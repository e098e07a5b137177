# 080_citus.pl — distributed tables (Citus) indexed by our access methods
# (issue 44), on a real cluster on this machine: a coordinator and two
# workers, each with shared_preload_libraries = 'citus,hybrid_index'.
#
# For every AM:
#  - a points table and a co-located polygons table distributed by `cell`,
#    a reference table of regions; CREATE INDEX (and CREATE INDEX
#    CONCURRENTLY) on the distributed tables: every shard gets our index;
#  - &&, ST_Intersects, ST_DWithin, ST_Contains and kNN through the
#    coordinator answer exactly as the same queries on a local copy of the
#    data (a plain table on the coordinator), and the shard plans use our
#    index; a spatial join of the co-located pair and one with the
#    reference table, pushed down;
#  - every shard's index checked on its worker with the differential
#    helpers (index = bitmap = seq scan, kNN order) and hybrid_index_check
#    with heapallindexed;
#  - inserts, deletes and VACUUM through the coordinator, then the checks
#    again; shards moved to the other worker (block_writes and
#    force_logical) and a rebalance: the moved shards' indexes exact on
#    their new worker;
#  - a worker killed (-9) during inserts and restarted: no committed row
#    missing.
# Skipped when the server has no Citus (tools/build-pg.sh --citus 16|18).
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
use Time::HiRes qw(time usleep);

my $pkglib = `pg_config --pkglibdir`;
chomp $pkglib;
plan skip_all => "this server has no Citus ($pkglib/citus.so); tools/build-pg.sh --citus 16|18 builds it"
  unless -f "$pkglib/citus.so";

my $NPTS   = $ENV{HI_CITUS_POINTS} // 20000;
my $NCELLS = 16;
my $T0     = time;
my %timing;

# Citus first (it says so itself), wal_level logical for shard moves that
# use logical replication, prepared transactions for its two-phase commits
my $conf = "shared_preload_libraries = 'citus,hybrid_index'\n"
  . "max_connections = 80\n"
  . "wal_level = logical\n"
  . "max_prepared_transactions = 40\n"
  . "max_replication_slots = 16\n"
  . "max_wal_senders = 16\n"
  . "max_worker_processes = 24\n"
  . "citus.shard_count = 4\n"
  . "citus.log_distributed_deadlock_detection = off\n"
  . "citus.recover_2pc_interval = 1000\n"
  . "hybrid_index.checkpoint_log_size = 256\n";
my $coord = HiTest::new_node('coord', conf => $conf, start => 0);
my @workers = map { HiTest::new_node("worker$_", conf => $conf, start => 0) } 1 .. 2;
my @nodes = ($coord, @workers);
# a node connects to itself (shard moves) by the socket directory, as to the others
$_->append_conf('postgresql.conf', "citus.local_hostname = '" . $_->host . "'\n") for @nodes;
$_->start for @nodes;

# Every node: citus first, then PostGIS and ours; the differential helpers
# (schema hit) on the workers only, where they run against shard tables
for my $n (@nodes)
{
	$n->safe_psql('postgres', 'CREATE EXTENSION citus');
	$n->safe_psql('postgres',
		'CREATE EXTENSION IF NOT EXISTS postgis; CREATE EXTENSION IF NOT EXISTS hybrid_index');
}
HiTest::setup_db($_, 'postgres') for @workers;
$coord->safe_psql('postgres',
	"SELECT citus_set_coordinator_host('" . $coord->host . "', " . $coord->port . ")");
for my $w (@workers)
{
	$coord->safe_psql('postgres',
		"SELECT citus_add_node('" . $w->host . "', " . $w->port . ")");
}
is($coord->safe_psql('postgres', 'SELECT count(*) FROM citus_get_active_worker_nodes()'),
	'2', 'two active workers');
$timing{setup} = time - $T0;

# on a worker: the shards are hidden from catalog queries unless asked
sub wq
{
	my ($w, $sql) = @_;
	return $w->safe_psql('postgres', "SET citus.override_table_visibility = off; $sql");
}

# A table's shards and the worker (node object) each is placed on
sub placements
{
	my ($tbl) = @_;
	my $rows = $coord->safe_psql('postgres', qq{
		SELECT s.shardid, p.nodeport FROM pg_dist_shard s JOIN pg_dist_placement pl USING (shardid)
		  JOIN pg_dist_node p USING (groupid)
		 WHERE s.logicalrelid = '$tbl'::regclass ORDER BY 1});
	my @r;
	for my $l (split /\n/, $rows)
	{
		my ($sid, $port) = split /\|/, $l;
		my ($w) = grep { $_->port == $port } @workers;
		push @r, [ $sid, $w ];
	}
	return @r;
}

# The local copies on the coordinator: plain tables, answered by seq scans
$coord->safe_psql('postgres', qq{
	CREATE TABLE regions (rid int PRIMARY KEY, name text, geom geometry);
	INSERT INTO regions SELECT i, 'region ' || i,
	  ST_MakeEnvelope((i % 4) * 250, (i / 4) * 250, (i % 4) * 250 + 260, (i / 4) * 250 + 260)
	  FROM generate_series(0, 15) i;
	SELECT create_reference_table('regions');
});

sub am_tables
{
	my ($am) = @_;
	return ("pts_$am", "polys_$am");
}

# Data: points in [0, 1000]^2 with a few NULL and EMPTY ones, cells by
# position; polygons (small squares and triangles) in the same space
sub load
{
	my ($am, $seed) = @_;
	my ($pts, $polys) = am_tables($am);
	$coord->safe_psql('postgres', qq{
		SELECT setseed($seed);
		CREATE TABLE ${pts}_local (id bigint, cell int, note text, geom geometry);
		INSERT INTO ${pts}_local
		  SELECT i, i % $NCELLS, 'p' || i,
		    CASE WHEN i % 997 = 0 THEN NULL WHEN i % 991 = 0 THEN 'POINT EMPTY'::geometry
		         ELSE ST_MakePoint(random() * 1000, random() * 1000) END
		  FROM generate_series(1, $NPTS) i;
		CREATE TABLE ${polys}_local (id bigint, cell int, geom geometry);
		INSERT INTO ${polys}_local
		  SELECT i, i % $NCELLS,
		    CASE WHEN i % 2 = 0 THEN ST_Expand(ST_MakePoint(x, y), 3 + random() * 10)
		         ELSE ST_MakePolygon(ST_MakeLine(ARRAY[ST_MakePoint(x, y), ST_MakePoint(x + 15, y),
		              ST_MakePoint(x, y + 15), ST_MakePoint(x, y)])) END
		  FROM (SELECT i, random() * 1000 AS x, random() * 1000 AS y
		          FROM generate_series(1, $NPTS / 10) i) s;
		CREATE TABLE $pts (id bigint, cell int, note text, geom geometry, PRIMARY KEY (cell, id));
		SELECT create_distributed_table('$pts', 'cell');
		CREATE TABLE $polys (id bigint, cell int, geom geometry, PRIMARY KEY (cell, id));
		SELECT create_distributed_table('$polys', 'cell', colocate_with => '$pts');
		INSERT INTO $pts SELECT * FROM ${pts}_local;
		INSERT INTO $polys SELECT * FROM ${polys}_local;
	});
	return;
}

# The same answer through the coordinator and from the local copy: the
# sorted rows (md5 and count) of $sql with {P}, {Q}, {R} naming the points,
# polygons and regions tables, distributed or local
sub same_answer
{
	my ($am, $label, $sql) = @_;
	my ($pts, $polys) = am_tables($am);
	my %d = (P => $pts, Q => $polys, R => 'regions');
	my %l = (P => "${pts}_local", Q => "${polys}_local", R => 'regions_local');
	(my $dsql = $sql) =~ s/\{(\w)\}/$d{$1}/g;
	(my $lsql = $sql) =~ s/\{(\w)\}/$l{$1}/g;
	my $wrap = sub { "SELECT count(*) || ' ' || md5(coalesce(string_agg(r::text, ',' ORDER BY r::text), '')) FROM ($_[0]) r" };
	my $dist = HiTest::try_psql($coord, 'postgres', $wrap->($dsql));
	my $loc = HiTest::try_psql($coord, 'postgres', $wrap->($lsql));
	is($dist, $loc, "$am: $label through the coordinator equals the local copy");
	return $dist;
}

# kNN: the k nearest in order (ids and distances), equal to the local copy
sub same_knn
{
	my ($am, $label, $x, $y, $k) = @_;
	my ($pts) = am_tables($am);
	my $q = sub {
		"SELECT string_agg(id || ':' || round(d::numeric, 6), ',' ORDER BY n) FROM "
		  . "(SELECT id, d, row_number() OVER () AS n FROM (SELECT id, geom <-> ST_MakePoint($x, $y) AS d "
		  . "FROM $_[0] ORDER BY geom <-> ST_MakePoint($x, $y) LIMIT $k) s) t" };
	my $dist = HiTest::try_psql($coord, 'postgres', $q->($pts));
	my $loc = HiTest::try_psql($coord, 'postgres', $q->("${pts}_local"));
	is($dist, $loc, "$am: $label: the $k nearest through the coordinator, in order");
	return;
}

# Does EXPLAIN of $sql through the coordinator show every task (shard)
# using one of our indexes whose name starts with $prefix?
sub shard_plans_use
{
	my ($am, $label, $sql, $prefix) = @_;
	my $plan = HiTest::try_psql($coord, 'postgres',
		"SET citus.explain_all_tasks = on; EXPLAIN (COSTS OFF) $sql");
	my ($tasks) = $plan =~ /Task Count: (\d+)/;
	my $uses = () = $plan =~ /(?:Index Scan using|Index Only Scan using|Bitmap Index Scan on) ${prefix}_\d+\b/g;
	ok(defined $tasks && $tasks == 4 && $uses == $tasks, "$am: $label: each of the 4 shard plans uses our index")
	  or diag($plan);
	return $plan;
}

my $ENV1 = 'ST_MakeEnvelope(100, 100, 190, 160)';
my $POLY = "'POLYGON((300 300, 420 310, 380 420, 300 300))'::geometry";

sub coordinator_checks
{
	my ($am, $when) = @_;
	my ($pts, $polys) = am_tables($am);
	same_answer($am, "$when: points &&", "SELECT id FROM {P} WHERE geom && $ENV1");
	same_answer($am, "$when: points ST_Intersects", "SELECT id FROM {P} WHERE ST_Intersects(geom, $POLY)");
	same_answer($am, "$when: points ST_DWithin",
		"SELECT id FROM {P} WHERE ST_DWithin(geom, ST_MakePoint(600, 650), 25)");
	same_answer($am, "$when: ST_Contains(polygon, points)",
		"SELECT id FROM {P} WHERE ST_Contains($POLY, geom)");
	same_answer($am, "$when: polygons ST_Intersects",
		"SELECT id FROM {Q} WHERE ST_Intersects(geom, $ENV1)");
	same_answer($am, "$when: co-located spatial join",
		"SELECT p.id AS pid, q.id AS qid FROM {P} p JOIN {Q} q ON p.cell = q.cell AND ST_Intersects(p.geom, q.geom)");
	same_answer($am, "$when: join with the reference table",
		"SELECT p.id, r.rid FROM {P} p JOIN {R} r ON ST_Contains(r.geom, p.geom) WHERE r.rid IN (5, 6)");
	same_knn($am, "$when: kNN", 512.5, 487.25, 10);
	same_knn($am, "$when: kNN 50", 3, 997, 50);
	return;
}

# Every shard's index on its worker: the differential checks of HiTest
# (index = bitmap = seq scan, kNN order, hybrid_index_check with
# heapallindexed) run against the shard tables
sub shard_checks
{
	my ($e, $when) = @_;
	my $am = $e->{am};
	my ($pts, $polys) = am_tables($am);
	for my $p (placements($pts))
	{
		my ($sid, $w) = @$p;
		HiTest::full_check($w, 'postgres', "$am $when, shard $sid on " . $w->name,
			"${pts}_$sid", "${pts}_geom_$sid", windows => 5, knn_points => 2, k => 15,
			group => $e->{group_query} ? 1 : 0);
	}
	for my $p (placements($polys))
	{
		my ($sid, $w) = @$p;
		is(HiTest::try_psql($w, 'postgres',
				"SELECT hybrid_index_check('${polys}_geom_$sid', heapallindexed => true)"), 't',
			"$am $when: polygons shard $sid on " . $w->name . " passes hybrid_index_check");
		is(HiTest::filters_differential($w, 'postgres', "${polys}_$sid", "${polys}_geom_$sid", 5, 1000, 3),
			'ok', "$am $when: polygons shard $sid index and bitmap scans equal seq scan");
	}
	return;
}

$coord->safe_psql('postgres', q{
	CREATE TABLE regions_local AS SELECT * FROM regions;
});

# A reloption naming a tablespace the workers lack (Citus creates no
# tablespaces on them): the distributed CREATE INDEX fails, naming it
{
	my $dir = PostgreSQL::Test::Utils::tempdir();
	$coord->safe_psql('postgres', qq{
		CREATE TABLESPACE coord_only LOCATION '$dir';
		CREATE TABLE ts_test (id bigint, geom geometry);
		SELECT create_distributed_table('ts_test', 'id');
	});
	my $r = HiTest::try_psql($coord, 'postgres',
		"CREATE INDEX ts_test_geom ON ts_test USING hyrtree (geom) WITH (placement = 'upper', optane_tablespace = 'coord_only')");
	like($r, qr/ERROR.*coord_only/, 'a tablespace only the coordinator has: CREATE INDEX fails naming it');
	is($coord->safe_psql('postgres', "SELECT count(*) FROM pg_class WHERE relname = 'ts_test_geom'"), '0',
		'and leaves no index behind');
	$coord->safe_psql('postgres', 'DROP TABLE ts_test; DROP TABLESPACE coord_only');
}

my @ams = HiAM::selected();
for my $e (@ams)
{
	my $am = $e->{am};
	my ($pts, $polys) = am_tables($am);
	my $t = time;
	load($am, 0.25);
	$timing{"$am load"} = time - $t;
	$t = time;
	my $col = $e->{opclass} ? "geom $e->{opclass}" : 'geom';
	my $with = $e->{indexes}[0];
	$coord->safe_psql('postgres',
		"CREATE INDEX ${pts}_geom ON $pts USING $am ($col) INCLUDE (id) WITH ($with)");
	$coord->safe_psql('postgres',
		"CREATE INDEX CONCURRENTLY ${polys}_geom ON $polys USING $am ($col) WITH ($with)");
	$timing{"$am create index"} = time - $t;

	# every shard has its index, of our access method
	for my $tbl ($pts, $polys)
	{
		my @pl = placements($tbl);
		is(scalar(@pl), 4, "$am: $tbl has 4 shards");
		my $ok = 0;
		for my $p (@pl)
		{
			my ($sid, $w) = @$p;
			$ok++ if wq($w, qq{
				SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
				  JOIN pg_am a ON a.oid = c.relam
				 WHERE i.indrelid = '${tbl}_$sid'::regclass AND a.amname = '$am'
				   AND c.relname = '${tbl}_geom_$sid' AND i.indisvalid}) eq '1';
		}
		is($ok, 4, "$am: every shard of $tbl has a valid $am index");
	}
	$coord->safe_psql('postgres', "VACUUM ANALYZE $pts; VACUUM ANALYZE $polys");

	$t = time;
	shard_plans_use($am, 'window', "SELECT id FROM $pts WHERE geom && $ENV1", "${pts}_geom");
	shard_plans_use($am, 'ST_DWithin',
		"SELECT id FROM $pts WHERE ST_DWithin(geom, ST_MakePoint(600, 650), 25)", "${pts}_geom");
	shard_plans_use($am, 'kNN',
		"SELECT id FROM $pts ORDER BY geom <-> ST_MakePoint(5, 5) LIMIT 10", "${pts}_geom");
	my $jplan = HiTest::try_psql($coord, 'postgres',
		"EXPLAIN (COSTS OFF) SELECT count(*) FROM $pts p JOIN $polys q ON p.cell = q.cell AND ST_Intersects(p.geom, q.geom)");
	ok($jplan =~ /Task Count: 4/ && $jplan !~ /repartition|Subplan/i,
		"$am: the co-located spatial join is pushed down to the shards") or diag($jplan);
	coordinator_checks($am, 'after the build');
	shard_checks($e, 'after the build');

	# changes through the coordinator, the local copy alike
	for my $tbl ($pts, "${pts}_local")
	{
		$coord->safe_psql('postgres', qq{
			INSERT INTO $tbl SELECT i, i % $NCELLS, 'n' || i,
			  ST_MakePoint((i::bigint * 7919 % 99991) / 99.991, (i::bigint * 104729 % 99989) / 99.989)
			  FROM generate_series($NPTS + 1, $NPTS + 3000) i;
			DELETE FROM $tbl WHERE id % 7 = 3;
			UPDATE $tbl SET geom = ST_Translate(geom, 1, -1) WHERE id % 11 = 5;
		});
	}
	$coord->safe_psql('postgres', "VACUUM $pts");
	coordinator_checks($am, 'after inserts, deletes, updates and VACUUM');
	shard_checks($e, 'after changes');
	$timing{"$am checks"} = time - $t;
}

# --- shards moved between the workers, then a rebalance -----------------
# All the tables share one co-location group (same shard count and
# distribution column type): a move takes a shard of every table along.
sub other { return $_[0] == $workers[0] ? $workers[1] : $workers[0]; }

sub move_shard
{
	my ($sid, $from, $mode) = @_;
	my $to = other($from);
	my $t = time;
	my $r = HiTest::try_psql($coord, 'postgres', sprintf(
			"SELECT citus_move_shard_placement(%d, '%s', %d, '%s', %d, shard_transfer_mode => '%s')",
			$sid, $from->host, $from->port, $to->host, $to->port, $mode));
	unlike($r, qr/ERROR/, "shard $sid moved from " . $from->name . " to " . $to->name . " ($mode)");
	$timing{"move $mode"} = time - $t;
	return;
}

# our files on a worker against our indexes there: every set belongs to an index
sub files_match_indexes
{
	my ($w, $label) = @_;
	my $r = wq($w, q{
		SELECT (SELECT count(*) FROM pg_ls_dir('base/' || (SELECT oid FROM pg_database
		          WHERE datname = current_database())) f WHERE f LIKE 'hyb\_%.map')
		     = (SELECT count(*) FROM pg_class c JOIN pg_am a ON a.oid = c.relam
		         WHERE a.amname IN ('hyrtree', 'efind', 'lbgrid', 'hgrid'))});
	is($r, 't', "$label: " . $w->name . " keeps the files of its indexes and no others");
	return;
}

my $first = "pts_$ams[0]{am}";
my @pl = placements($first);
my ($on1) = grep { $_->[1] == $workers[0] } @pl;
move_shard($on1->[0], $workers[0], 'block_writes');
@pl = placements($first);
my ($on2) = grep { $_->[1] == $workers[1] && $_->[0] != $on1->[0] } @pl;
move_shard($on2->[0], $workers[1], 'force_logical');
@pl = placements($first);
my ($again) = grep { $_->[1] == $workers[0] } @pl;
move_shard($again->[0], $workers[0], 'block_writes');
my $t = time;
my $rb = HiTest::try_psql($coord, 'postgres', "SELECT rebalance_table_shards('$first')");
unlike($rb, qr/ERROR/, 'rebalance_table_shards');
$timing{rebalance} = time - $t;
my %count;
$count{ $_->[1]->name }++ for placements($first);
is(join(' ', map { $count{$_} // 0 } qw(worker1 worker2)), '2 2', 'after the rebalance each worker holds 2 shards');
$coord->safe_psql('postgres', 'CALL citus_cleanup_orphaned_resources()');
for my $e (@ams)
{
	coordinator_checks($e->{am}, 'after moves and a rebalance');
	shard_checks($e, 'after moves');
}
files_match_indexes($_, 'after moves and cleanup') for @workers;

# --- a worker killed (-9) during inserts and restarted ---------------------
# One psql session inserts rows one statement each (autocommit) into every
# AM's points table, printing the ids the coordinator confirmed.
my $sqlfile = PostgreSQL::Test::Utils::tempdir() . '/inserts.sql';
open my $fh, '>', $sqlfile or die $!;
my $NINS = $ENV{HI_CITUS_INSERTS} // 600;
for my $i (1 .. $NINS)
{
	# ids of AM k from (k + 1) million on: what comes back says which table
	for my $k (0 .. $#ams)
	{
		my $id = ($k + 1) * 1_000_000 + $i;
		printf $fh "INSERT INTO pts_%s VALUES (%d, %d, 'k', ST_MakePoint(%.4f, %.4f)) RETURNING id;\n",
		  $ams[$k]{am}, $id, $id % $NCELLS, ($i * 37.77) % 1000, ($i * 91.13) % 1000;
	}
	print $fh "SELECT pg_sleep(0.005);\n" if $i % 10 == 0;
}
close $fh;
my ($out, $err) = ('', '');
my $h = IPC::Run::start([ 'psql', '-X', '-At', '-v', 'ON_ERROR_STOP=0', '-f', $sqlfile,
		'-d', $coord->connstr('postgres') ], '>', \$out, '2>', \$err);
# let a fifth of them through, then kill worker1 and all its processes
my $deadline = time + 60;
while (time < $deadline && (() = $out =~ /\n/g) < $NINS * @ams / 5)
{
	last unless $h->pumpable;
	$h->pump_nb;
	usleep(20_000);
}
ok($h->pumpable, 'the inserts run when worker1 is killed') or diag("psql: $err");
my $victim = $workers[0];
HiCrash::crash_node($victim);
$victim->start;
$h->finish;
my %confirmed;
for my $l (split /\n/, $out)
{
	push @{ $confirmed{ $ams[ int($l / 1_000_000) - 1 ]{am} } }, $l if $l =~ /^\d+$/;
}
my $failed = () = $err =~ /ERROR/g;
diag(sprintf("inserts: %s confirmed, %d failed while worker1 was down",
		join(', ', map { "$_->{am} " . scalar(@{ $confirmed{ $_->{am} } || [] }) } @ams), $failed));
ok($failed > 0, 'some inserts failed while worker1 was down');
# Citus finishes (or rolls back) the distributed transactions it had
# prepared on worker1 in the background; wait for it
$coord->poll_query_until('postgres', q{SELECT count(*) = 0 FROM pg_dist_transaction})
  or diag('pg_dist_transaction still holds transactions');
for my $e (@ams)
{
	my $am = $e->{am};
	my @ids = @{ $confirmed{$am} || [] };
	ok(@ids > 0, "$am: inserts were confirmed");
	is($coord->safe_psql('postgres',
			"SELECT count(*) FROM pts_$am WHERE id = ANY ('{" . join(',', @ids) . "}'::bigint[])"),
		scalar(@ids), "$am: every confirmed insert is there after worker1's crash");
	shard_checks($e, 'after the crash of worker1');
}
files_match_indexes($_, 'after the crash') for @workers;

$coord->stop;
$_->stop for @workers;
diag(sprintf("%s: %.1f s", $_, $timing{$_})) for sort keys %timing;
done_testing();
