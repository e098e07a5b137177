# 040_hgrid_tiers.pl — hgrid (H-Grid) across restarts and crashes while
# pages move between the tiers.
#
# Three indexes: placement hot with cooling (t), random (t2) and the
# special case (t3), small buffers so that write buffers flush (and hot
# pages migrate) all the time.
#   1. a skewed search workload moves pages to the fast tier; after an index
#      checkpoint and a clean restart every page is on the tier it was on,
#      and queries still equal a sequential scan;
#   2. rounds of kill -9 of the postmaster while sessions search (promotions,
#      cooling demotions, random moves: migration flushes and tier moves in
#      flight) and insert; after each restart every acknowledged row is found,
#      nothing rolled back is, filters and kNN equal a sequential scan, and
#      hybrid_index_check passes.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiTest;
use POSIX qw(WNOHANG);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $rounds = $ENV{HI_HGRID_CRASHES} // 4;

my $node = HiTest::new_node(
	'hgrid_tiers',
	fsync => 1,
	conf  => "restart_after_crash = on\n"
	  . "hybrid_index.checkpoint_log_size = 1024\n"
	  . "max_wal_size = 256MB\n");

my @idx = (
	[ 't',  'WITH (page_size = 2048, bucket_capacity = 24, buffer_size = 128, cold_size = 8, selectivity = 1.1, cooling_period = 4000)' ],
	[ 't2', 'WITH (page_size = 2048, bucket_capacity = 24, buffer_size = 128, cold_size = 8, selectivity = 1.1, placement = random, cooling_period = 0)' ],
	[ 't3', 'WITH (page_size = 4096, bucket_capacity = 40, buffer_size = 128, cold_size = 8, selectivity = 1.2, directories_on_optane = on, average = sma, window = 500)' ],
);

$node->safe_psql('postgres', q{
	SELECT setseed(0.77);
	CREATE TABLE base AS
	  SELECT i::bigint AS id, ST_MakePoint(random() * 1000, random() * 1000) AS geom, 'base'::text AS note
	  FROM generate_series(1, 12000) i
	  UNION ALL
	  SELECT 20000 + i, ST_MakePoint(200 + (random() - 0.5) * 60, 700 + (random() - 0.5) * 60), 'base'
	  FROM generate_series(1, 6000) i;
	INSERT INTO base VALUES (-100, NULL, 'base'), (-101, 'POINT EMPTY', 'base');
	CREATE TABLE hot AS SELECT geom FROM base WHERE id > 20000 OR id % 20 = 0;
});
for my $i (@idx)
{
	my ($t, $with) = @$i;
	$node->safe_psql('postgres', qq{
		CREATE TABLE $t (id bigint PRIMARY KEY, geom geometry, note text);
		INSERT INTO $t SELECT * FROM base;
		CREATE INDEX ${t}_idx ON $t USING hgrid (geom) $with;
		ANALYZE $t;});
}

# A psql script searching the hot points of every table, n times over
sub search_sql
{
	my ($n) = @_;
	return qq{
	SET enable_seqscan = off; SET enable_bitmapscan = off;
	DO \$\$
	DECLARE r record; c bigint;
	BEGIN
	  FOR i IN 1 .. $n LOOP
	    FOR r IN SELECT geom FROM hot ORDER BY random() LOOP
	      SELECT count(*) INTO c FROM t WHERE geom ~= r.geom;
	      SELECT count(*) INTO c FROM t2 WHERE geom ~= r.geom;
	      SELECT count(*) INTO c FROM t3 WHERE geom ~= r.geom;
	    END LOOP;
	  END LOOP;
	END \$\$;};
}

sub tiers
{
	my ($t) = @_;
	return $node->safe_psql('postgres',
		"SELECT string_agg(pageno || ':' || coalesce(tier, '-'), ',' ORDER BY pageno) FROM hybrid_index_pages('${t}_idx')");
}

sub optane_pages
{
	my ($t) = @_;
	return $node->safe_psql('postgres',
		"SELECT count(*) FROM hybrid_index_pages('${t}_idx') WHERE tier = 'optane'");
}

sub check_all
{
	my ($label) = @_;
	for my $i (@idx)
	{
		my $t = $i->[0];
		is(HiTest::try_psql($node, 'postgres', "SELECT hybrid_index_check('${t}_idx')"), 't',
			"$label: ${t}_idx passes hybrid_index_check");
		is(HiTest::filters_differential($node, 'postgres', $t, "${t}_idx", 12, 1000, 5), 'ok',
			"$label: ${t}_idx filters equal seq scan");
		is(HiTest::knn_differential($node, 'postgres', $t, "${t}_idx", 4, 1000, 50, 9), 'ok',
			"$label: ${t}_idx kNN equals sorted seq scan");
		my ($rows, $ids, $ctids) = HiTest::index_scan_counts($node, 'postgres', $t);
		is($ids, $rows, "$label: no duplicate ids from ${t}_idx");
		is($rows, $node->safe_psql('postgres', "SELECT count(*) FROM $t WHERE geom IS NOT NULL AND NOT ST_IsEmpty(geom)"),
			"$label: ${t}_idx finds every heap row");
	}
	return;
}

# --- 1. migrations survive a clean restart ---------------------------------
$node->safe_psql('postgres', search_sql(1));
my %before;
for my $i (@idx)
{
	my $t = $i->[0];
	$node->safe_psql('postgres', "SELECT hybrid_index_checkpoint('${t}_idx')");
	cmp_ok(optane_pages($t), '>', 0, "$t: the workload moved pages to the fast tier");
	$before{$t} = tiers($t);
}
cmp_ok($node->safe_psql('postgres',
		"SELECT count(*) FROM hybrid_index_pages('t3_idx') WHERE level > 0 AND tier IS DISTINCT FROM 'optane'"),
	'==', 0, 't3: special case keeps every sub-directory on the fast tier');
$node->restart;
for my $i (@idx)
{
	my $t = $i->[0];
	is(tiers($t), $before{$t}, "$t: every page on the same tier after a restart");
}
check_all('after restart');

# --- 2. kill -9 while pages migrate ----------------------------------------
my $basedir = $node->basedir;
my %acked;

sub spawn_psql
{
	my ($file, $out) = @_;
	my $pid = fork();
	die "fork failed: $!" unless defined $pid;
	if ($pid == 0)
	{
		open(STDIN,  '<', '/dev/null') or POSIX::_exit(126);
		open(STDOUT, '>', $out)        or POSIX::_exit(126);
		open(STDERR, '>', "$out.err")  or POSIX::_exit(126);
		{ exec('psql', '-X', '-At', '-v', 'ON_ERROR_STOP=0', '-d', $node->connstr('postgres'), '-f', $file) };
		POSIX::_exit(127);
	}
	return $pid;
}

sub insert_script
{
	my ($round) = @_;
	my $file = "$basedir/ins_$round.sql";
	open my $fh, '>', $file or die;
	for my $b (1 .. 2000)
	{
		my $lo = $round * 1_000_000 + $b * 100;
		my $t = ('t', 't2', 't3')[ $b % 3 ];
		if ($b % 7 == 3)
		{
			print $fh "BEGIN; INSERT INTO $t SELECT -g, ST_MakePoint(200 + random() * 30, 700 + random() * 30), 'aborted'"
			  . " FROM generate_series($lo, $lo + 9) g; ROLLBACK;\n";
		}
		else
		{
			print $fh "WITH ins AS (INSERT INTO $t SELECT g, ST_MakePoint(200 + random() * 30, 700 + random() * 30), 'r$round'"
			  . " FROM generate_series($lo, $lo + 9) g RETURNING id)"
			  . " SELECT '$t ' || min(id) || ' ' || max(id) FROM ins;\n";
		}
		print $fh "DELETE FROM $t WHERE id = " . ($b * 7 % 12000 + 1) . ";\n" if $b % 5 == 0;
	}
	close $fh;
	return $file;
}

for my $round (1 .. $rounds)
{
	my $sfile = "$basedir/search_$round.sql";
	open my $fh, '>', $sfile or die;
	print $fh search_sql(50);
	close $fh;
	my @pids = (
		spawn_psql($sfile, "$basedir/search_${round}_a.out"),
		spawn_psql($sfile, "$basedir/search_${round}_b.out"),
		spawn_psql(insert_script($round), "$basedir/ins_$round.out"));
	usleep(1_500_000 + int(rand(3_000_000)));

	open my $pf, '<', $node->data_dir . '/postmaster.pid' or die;
	my $pm = <$pf>;
	close $pf;
	chomp $pm;
	# the postmaster and every child, so nothing finishes a write afterwards
	my @children = grep { /^\d+$/ } map { s/\s+//gr } `ps -o pid= --ppid $pm`;
	$node->kill9;
	kill 'KILL', @children if @children;
	for (1 .. 100)
	{
		last unless grep { kill 0, $_ } ($pm, @children);
		usleep(100_000);
	}
	for my $p (@pids)
	{
		my $deadline = time + 60;
		while (time < $deadline && waitpid($p, WNOHANG) == 0) { usleep(100_000); }
		if (waitpid($p, WNOHANG) == 0) { kill 'KILL', $p; waitpid($p, 0); }
	}
	open my $of, '<', "$basedir/ins_$round.out" or die;
	while (my $l = <$of>)
	{
		$acked{$1}{$_} = 1 for ($l =~ /^(t\d?) (\d+) (\d+)$/ ? ($2 .. $3) : ());
	}
	close $of;
	unlink $node->data_dir . '/postmaster.pid';
	$node->start;
	# recover every index before a statement takes an xid (see 021)
	is(HiTest::try_psql($node, 'postgres',
			"SELECT hybrid_index_check('t_idx') AND hybrid_index_check('t2_idx') AND hybrid_index_check('t3_idx')"),
		't', "round $round: indexes recovered");

	for my $i (@idx)
	{
		my $t = $i->[0];
		my @ids = sort { $a <=> $b } keys %{ $acked{$t} || {} };
		my $list = @ids ? join(',', @ids) : '0';
		is(HiTest::try_psql($node, 'postgres', qq{
			SET enable_seqscan = off; SET enable_bitmapscan = off;
			CREATE TEMP TABLE found AS SELECT id FROM $t WHERE geom && ST_MakeEnvelope(-1e6, -1e6, 1e6, 1e6);
			SELECT count(*) FROM unnest('{$list}'::bigint[]) a(id)
			WHERE a.id > 0 AND NOT EXISTS (SELECT 1 FROM found f WHERE f.id = a.id);}),
			'0', "round $round: all " . scalar(@ids) . " acknowledged rows of $t found");
		is(HiTest::try_psql($node, 'postgres', qq{
			SET enable_seqscan = off; SET enable_bitmapscan = off;
			SELECT count(*) FROM $t WHERE geom && ST_MakeEnvelope(-1e6, -1e6, 1e6, 1e6) AND (id < 0 OR note = 'aborted')}),
			'0', "round $round: nothing rolled back found in $t");
	}
	check_all("round $round");
}

# pages really moved during the crash rounds (promotions, random moves, cooling)
my $j = $node->safe_psql('postgres', q{
	SELECT (hybrid_index_inspect('t2_idx')->'hot_region'->'buckets'->>'random_moves')::int > 0});
note("random moves after the last restart: $j");
cmp_ok(optane_pages('t'), '>', 0, 't: pages on the fast tier at the end');

$node->stop;
done_testing();
