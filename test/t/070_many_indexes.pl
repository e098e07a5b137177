# 070_many_indexes.pl — thousands of indexes, as partitioned tables make
# them (issue 41).  A slot of shared state is held by an index while a
# transaction uses it and given back when the room is needed (written out
# first if its log holds records), so the number of indexes opened since
# the start does not matter.
#
#  - database 1: a table of 1,000 partitions, each with its own index, the
#    access methods in turn (hyrtree, efind, lbgrid, hgrid); database 2: a
#    table of 300 partitions indexed on the parent (CREATE INDEX on a
#    partitioned table).  Points, NULL and EMPTY rows.
#  - a window query and a 10-NN over all partitions at once use every
#    partition's index and answer as a sequential scan does; the same after
#    inserts, after a clean restart, after a crash (kill -9), on a streaming
#    standby and after its promotion.
#  - with hybrid_index.max_indexes = 400, fewer than the indexes: a query
#    over 300 partitions works, one that needs 1,000 indexes at once fails
#    with an error that names the limit; queries and inserts 100 partitions
#    at a time in their own transactions cycle through all 1,300 indexes,
#    giving idle slots back (with log records written out first) and
#    loading them again, with exact answers; then a restart and a crash.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $NPART1 = $ENV{NP1} // 1000;
my $NPART2 = $ENV{NP2} // 300;
my $ROWS = 60;    # per partition

my $node = HiTest::new_node('many', streaming => 1,
	conf => "max_locks_per_transaction = 128\nhybrid_index.cache_size = 32MB\n");
$node->safe_psql('postgres', 'CREATE DATABASE db2');
HiTest::setup_db($node, 'db2');

# A table of n range partitions (ids k * 1000 ... k * 1000 + 999 in the k-th),
# $ROWS random points in each
sub partitioned_table
{
	my ($db, $tbl, $n, $seed) = @_;
	$node->safe_psql($db, qq{
		SELECT setseed($seed);
		CREATE TABLE $tbl (id bigint, geom geometry) PARTITION BY RANGE (id);
		DO \$\$
		BEGIN
			FOR k IN 0 .. $n - 1 LOOP
				EXECUTE format('CREATE TABLE ${tbl}_%s PARTITION OF $tbl FOR VALUES FROM (%s) TO (%s)',
							   k, k * 1000, (k + 1) * 1000);
			END LOOP;
		END \$\$;
		INSERT INTO $tbl SELECT k * 1000 + j, ST_MakePoint(random() * 1000, random() * 1000)
		  FROM generate_series(0, $n - 1) k, generate_series(0, $ROWS - 1) j;
	});
	return;
}

# database 1: an index per partition, the access methods in turn
partitioned_table('postgres', 'p', $NPART1, 0.41);
$node->safe_psql('postgres', qq{
	INSERT INTO p SELECT k * 1000 + 999, CASE WHEN k % 2 = 0 THEN NULL ELSE 'POINT EMPTY'::geometry END
	  FROM generate_series(0, $NPART1 - 1, 7) k;
});
my $t0 = time;
$node->safe_psql('postgres', q{
	DO $$
	DECLARE
		ams text[] := ARRAY['hyrtree', 'efind', 'lbgrid', 'hgrid'];
	BEGIN
		FOR k IN 0 .. (SELECT count(*) - 1 FROM pg_inherits WHERE inhparent = 'p'::regclass) LOOP
			EXECUTE format('CREATE INDEX p_%s_idx ON p_%s USING %s (geom)', k, k, ams[k % 4 + 1]);
		END LOOP;
	END $$;
});
note(sprintf('%d indexes built in %d s', $NPART1, time - $t0));
is($node->safe_psql('postgres', q{
	SELECT string_agg(amname || '=' || n, ',' ORDER BY amname) FROM (
	  SELECT a.amname, count(*) AS n FROM pg_class c JOIN pg_am a ON a.oid = c.relam
	  WHERE c.relkind = 'i' AND c.relname LIKE 'p\_%\_idx' GROUP BY a.amname) s}),
	'efind=250,hgrid=250,hyrtree=250,lbgrid=250', 'db1: 1,000 partition indexes, every access method');

# database 2: CREATE INDEX on the partitioned parent
partitioned_table('db2', 'q', $NPART2, 0.42);
$node->safe_psql('db2', qq{
	INSERT INTO q VALUES (999, NULL), (1999, 'POINT EMPTY');
	CREATE INDEX q_geom_idx ON q USING hyrtree (geom);
});
is($node->safe_psql('db2', q{SELECT count(*) FROM pg_inherits WHERE inhparent = 'q_geom_idx'::regclass}),
	$NPART2, 'db2: CREATE INDEX on the parent made 300 partition indexes');

# The answers of a window query and a 10-NN over all partitions, under a
# plan: seq (no index), index (index scans only) or bitmap.  Returns the
# answer and how many index scans the plan has.
my %plan = (
	seq => 'SET enable_indexscan = off; SET enable_bitmapscan = off;',
	index => 'SET enable_seqscan = off; SET enable_bitmapscan = off;',
	bitmap => 'SET enable_seqscan = off; SET enable_indexscan = off;');

sub answers
{
	my ($n, $db, $tbl, $how, $where) = @_;
	$where //= 'true';
	# a 10-NN cannot be a bitmap scan (and planning one over 1,000
	# partitions with index scans off takes GiST half a minute too)
	my $knn_how = $how eq 'bitmap' ? 'seq' : $how;
	my $sql = qq{
		SET max_parallel_workers_per_gather = 0;
		$plan{$how}
		SELECT
		  (SELECT count(*) || ':' || coalesce(sum(id), 0) FROM $tbl
		   WHERE geom && ST_MakeEnvelope(100, 200, 400, 330) AND $where) || '|' ||
		  (SELECT count(*) || ':' || coalesce(sum(id), 0) FROM $tbl
		   WHERE geom && ST_MakeEnvelope(-1e9, -1e9, 1e9, 1e9) AND $where);
		RESET enable_seqscan; RESET enable_indexscan; RESET enable_bitmapscan;
		$plan{$knn_how}
		SELECT string_agg(id::text, ',') FROM (SELECT id FROM $tbl WHERE geom IS NOT NULL AND $where
		  ORDER BY geom <-> ST_MakePoint(500, 500) LIMIT 10) s};
	my $res = HiTest::try_psql($n, $db, $sql);
	$res =~ s/\n/|/g;
	return $res;
}

sub scans_in_plan
{
	my ($n, $db, $tbl, $how, $knn) = @_;
	my $q = $knn
	  ? "SELECT id FROM $tbl ORDER BY geom <-> ST_MakePoint(500, 500) LIMIT 10"
	  : "SELECT id FROM $tbl WHERE geom && ST_MakeEnvelope(100, 200, 400, 330)";
	my $plan = $n->safe_psql($db, "$plan{$how} EXPLAIN (COSTS OFF) $q");
	my @scans = ($plan =~ /(?:Index Scan using|Bitmap Index Scan on)/g);
	return scalar @scans;
}

sub differential
{
	my ($n, $label) = @_;
	for my $t (['postgres', 'p', $NPART1], ['db2', 'q', $NPART2])
	{
		my ($db, $tbl, $np) = @$t;
		my $seq = answers($n, $db, $tbl, 'seq');
		like($seq, qr/^\d+:\d+\|\d+:\d+\|[\d,]+$/, "$label: $tbl seq scan answers");
		is(answers($n, $db, $tbl, 'index'), $seq, "$label: $tbl over $np partitions: index scans = seq scan");
		is(answers($n, $db, $tbl, 'bitmap'), $seq, "$label: $tbl over $np partitions: bitmap scans = seq scan");
	}
	return;
}

is(scans_in_plan($node, 'postgres', 'p', 'index', 0), $NPART1, 'db1: the window query scans 1,000 indexes');
is(scans_in_plan($node, 'postgres', 'p', 'index', 1), $NPART1, 'db1: the 10-NN scans 1,000 indexes in distance order');
is(scans_in_plan($node, 'db2', 'q', 'bitmap', 0), $NPART2, 'db2: the window query scans 300 indexes');
differential($node, 'built');

# What counts or lists per index, on a parent index of 1,000 partitions,
# every access method; then DROP TABLE leaves no file behind
for my $am ('hyrtree', 'efind', 'lbgrid', 'hgrid')
{
	my $files_before = scalar(HiTest::hyb_files($node->data_dir));
	partitioned_table('postgres', 'r', $NPART1, 0.44);
	$node->safe_psql('postgres', "INSERT INTO r VALUES (999, NULL), (1999, 'POINT EMPTY'); CREATE INDEX r_geom_idx ON r USING $am (geom)");
	my $entries = $node->safe_psql('postgres', 'SELECT count(*) FROM r WHERE geom IS NOT NULL AND NOT ST_IsEmpty(geom)');
	is($node->safe_psql('postgres', q{
		SELECT count(*) || ':' || sum((v->>'entries')::bigint) || ':' || count(*) FILTER (WHERE v->>'am' = '} . $am . q{')
		FROM jsonb_each(hybrid_index_inspect('r_geom_idx')->'partitions') e(k, v)}),
		"$NPART1:$entries:$NPART1", "$am on $NPART1 partitions: hybrid_index_inspect lists every partition and its entries");
	is($node->safe_psql('postgres', q{
		SELECT string_agg(kind || '=' || n || '/' || d || '/' || ok, ',' ORDER BY kind) FROM (
		  SELECT kind, count(*) AS n, count(DISTINCT path) AS d,
		         bool_and(CASE WHEN kind IN ('log', 'optane') THEN bytes IS NULL ELSE bytes IS NOT NULL END) AS ok
		  FROM hybrid_index_files('r_geom_idx') GROUP BY kind) s}),
		"flash=$NPART1/$NPART1/true,log=$NPART1/$NPART1/true,map=$NPART1/$NPART1/true,optane=$NPART1/$NPART1/true",
		"$am on $NPART1 partitions: hybrid_index_files lists the files of every partition (no log file before a change, no fast tier file before a page goes there)");
	is($node->safe_psql('postgres', q{
		SELECT (SELECT sum(pages) FROM hybrid_index_stats('r_geom_idx')) =
		       (SELECT sum(s.pages) FROM pg_inherits i, LATERAL hybrid_index_stats(i.inhrelid::regclass) s
		        WHERE i.inhparent = 'r_geom_idx'::regclass)}),
		't', "$am on $NPART1 partitions: hybrid_index_stats sums every partition's pages");
	is($node->safe_psql('postgres', q{
		SELECT bool_and(pg_relation_size(i.inhrelid) > 0) FROM pg_inherits i WHERE i.inhparent = 'r_geom_idx'::regclass}),
		't', "$am on $NPART1 partitions: every partition index reports its size");
	is(HiTest::try_psql($node, 'postgres', "SELECT hybrid_index_check('r_geom_idx', heapallindexed => true)"), 't',
		"$am on $NPART1 partitions: hybrid_index_check with heapallindexed passes");
	my $t = time;
	$node->safe_psql('postgres', 'DROP TABLE r');
	note(sprintf('DROP TABLE of %d partitions with their %s indexes: %d s', $NPART1, $am, time - $t));
	is(scalar(HiTest::hyb_files($node->data_dir)), $files_before,
		"$am on $NPART1 partitions: DROP TABLE removed every file of their indexes");
}

# a standby from a base backup, following
$node->backup('bk');
my $standby = PostgreSQL::Test::Cluster->new('many_standby');
$standby->init_from_backup($node, 'bk', has_streaming => 1);
$standby->start;

$node->safe_psql('postgres', qq{
	SELECT setseed(0.43);
	INSERT INTO p SELECT k * 1000 + $ROWS + j, ST_MakePoint(random() * 1000, random() * 1000)
	  FROM generate_series(0, $NPART1 - 1) k, generate_series(0, 9) j;
	DELETE FROM p WHERE id % 1000 = 3;
});
$node->safe_psql('db2', qq{
	INSERT INTO q SELECT k * 1000 + $ROWS + j, ST_MakePoint(random() * 1000, random() * 1000)
	  FROM generate_series(0, $NPART2 - 1) k, generate_series(0, 9) j;
});
$node->safe_psql('postgres', 'VACUUM p');
differential($node, 'after inserts, deletes and VACUUM');

$node->wait_for_catchup($standby, 'replay');
for my $t (['postgres', 'p'], ['db2', 'q'])
{
	my ($db, $tbl) = @$t;
	is(answers($standby, $db, $tbl, 'index'), answers($node, $db, $tbl, 'seq'),
		"standby: $tbl index scans = the primary's seq scan");
}
differential($standby, 'standby');
if ($ENV{HI_DIAG})
{
	for my $k (0 .. $NPART1 - 1)
	{
		my $w = "id >= " . ($k * 1000) . " AND id < " . (($k + 1) * 1000);
		my $a = answers($standby, 'postgres', 'p', 'seq', $w);
		my $b = answers($standby, 'postgres', 'p', 'index', $w);
		diag("partition $k (" . $standby->safe_psql('postgres', "SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE relname = 'p_${k}_idx'") . "): seq $a index $b") if $a ne $b;
	}
}

$node->restart;
differential($node, 'after a clean restart');

$node->safe_psql('postgres', qq{
	INSERT INTO p SELECT k * 1000 + 200 + j, ST_MakePoint(900 + j, 100 - j)
	  FROM generate_series(0, $NPART1 - 1, 3) k, generate_series(0, 2) j;
});
$node->stop('immediate');
$node->start;
differential($node, 'after a crash');

# promotion: the standby has queried every index; it takes over
$node->wait_for_catchup($standby, 'replay');
my $before = answers($standby, 'postgres', 'p', 'seq');
$node->stop;
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()');
is(answers($standby, 'postgres', 'p', 'index'), $before, 'promoted: index scans answer as before the promotion');
differential($standby, 'promoted');
$standby->safe_psql('postgres', qq{
	INSERT INTO p SELECT k * 1000 + 300, ST_MakePoint(1, 1) FROM generate_series(0, $NPART1 - 1) k;
});
differential($standby, 'promoted, after inserts');
$standby->stop;

# fewer slots than indexes: idle ones are given back and loaded again
$node->append_conf('postgresql.conf', "hybrid_index.max_indexes = 400\n");
$node->start;
is($node->safe_psql('postgres', 'SHOW hybrid_index.max_indexes'), '400', 'max_indexes = 400');
is(answers($node, 'db2', 'q', 'index'), answers($node, 'db2', 'q', 'seq'),
	'400 slots: a query over 300 partitions works');
my $err = answers($node, 'postgres', 'p', 'index');
like($err, qr/all 400 hybrid_index slots are used by running transactions/,
	'400 slots: a query needing 1,000 indexes at once fails, naming the limit');
like($err, qr/max_locks_per_transaction/, '... and the hint says what sizes it');

# 100 partitions per transaction: the 1,300 indexes go through 400 slots
sub chunks_differential
{
	my ($label) = @_;
	my @bad;
	for (my $k = 0; $k < $NPART1; $k += 100)
	{
		my $where = sprintf('id >= %d AND id < %d', $k * 1000, ($k + 100) * 1000);
		my $seq = answers($node, 'postgres', 'p', 'seq', $where);
		my $idx = answers($node, 'postgres', 'p', 'index', $where);
		my $bmp = answers($node, 'postgres', 'p', 'bitmap', $where);
		push @bad, "partitions $k+: seq $seq index $idx bitmap $bmp" if $idx ne $seq || $bmp ne $seq;
		# and db2's, so that both databases compete for the slots
		my $q = answers($node, 'db2', 'q', 'index');
		push @bad, "db2 after $k: $q" unless $q eq answers($node, 'db2', 'q', 'seq');
	}
	is(join("\n", @bad), '', "$label: every partition answers as a seq scan");
	return;
}
chunks_differential('400 slots');
for (my $k = 0; $k < $NPART1; $k += 100)
{
	$node->safe_psql('postgres', sprintf(q{
		INSERT INTO p SELECT k * 1000 + 400 + j, ST_MakePoint(10 * j, 1000 - 10 * j)
		  FROM generate_series(%d, %d) k, generate_series(0, 4) j}, $k, $k + 99));
}
chunks_differential('400 slots, after inserts into every partition');
$node->restart;
chunks_differential('400 slots, after a clean restart');
for (my $k = 0; $k < $NPART1; $k += 100)
{
	$node->safe_psql('postgres', sprintf(q{
		INSERT INTO p SELECT k * 1000 + 500, ST_MakePoint(3, 3) FROM generate_series(%d, %d) k},
		$k, $k + 99));
}
$node->stop('immediate');
$node->start;
chunks_differential('400 slots, after a crash');
is($node->safe_psql('postgres', q{SELECT count(*) FROM p WHERE id % 1000 = 500}), $NPART1,
	'the rows inserted before the crash are there');
my $log = slurp_file($node->logfile);
unlike($log, qr/TRAP:|terminated by signal/, 'no backend crashed');
$node->stop;

done_testing();
