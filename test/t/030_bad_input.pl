# 030_bad_input.pl — what users can throw at an index, table-driven: every
# value through each access method (hyrtree, efind, lbgrid, hgrid).
#
# Every row of the tables below names an input and its expected behaviour:
#   indexed  the values are stored (inserted into an existing index, and
#            again by a fresh CREATE INDEX) and every filter (&&, ~=, ~, @)
#            against a set of awkward query values gives the same rows by
#            sequential, index and bitmap scan (hit.diff); kNN answers equal
#            a sorted sequential scan (hit.knn_diff) where kNN is defined;
#   error    the statement fails with the given SQLSTATE (and message).
# After every row the server must still be up and its log must show no
# backend killed by a signal (no crash), and hybrid_index_check must pass.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# max_page_size 8192 (the later line wins) so "above max_page_size" can be tried
my $node = HiTest::new_node('bad_input', conf => "hybrid_index.max_page_size = 8192\n");
my $ts_dir = PostgreSQL::Test::Utils::tempdir();
my $ts2_dir = PostgreSQL::Test::Utils::tempdir();

sub S { return $node->safe_psql('postgres', $_[0]); }

my $log_offset = 0;

# the server is up and no backend died since the previous check
sub server_ok
{
	my ($what) = @_;
	is(HiTest::try_psql($node, 'postgres', 'SELECT 1'), '1', "$what: server up");
	my $log = slurp_file($node->logfile, $log_offset);
	my @bad = grep { /terminated by signal|PANIC|server process .* exited with exit code [^0]/ } split /\n/, $log;
	is(scalar(@bad), 0, "$what: no backend crash") or diag(join("\n", @bad));
	$log_offset = -s $node->logfile;
	return;
}

# run sql, expect an ERROR with this SQLSTATE (and message pattern)
sub expect_error
{
	my ($what, $sql, $state, $re) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql", on_error_stop => 1);
	isnt($ret, 0, "$what: fails");
	like($err, qr/ERROR:\s+$state:/, "$what: SQLSTATE $state") or diag($err);
	like($err, $re, "$what: message") if $re;
	server_ok($what);
	return;
}

S(q{
	SELECT setseed(0.5);
	CREATE TABLE bad (id bigserial, tag text, geom geometry);
	INSERT INTO bad (tag, geom)
	  SELECT 'background', ST_MakePoint(random() * 20 - 10, random() * 20 - 10) FROM generate_series(1, 600);
	CREATE INDEX bad_idx ON bad USING hyrtree (geom) WITH (page_size = 2048);
	-- a query value big enough to be TOASTed when read from a table
	CREATE TABLE bigq (g geometry);
	INSERT INTO bigq VALUES (ST_Buffer(ST_MakePoint(1, 1), 4, 'quad_segs=3000'));
	-- the awkward query values
	CREATE TABLE hi_q (qn text, expr text);
	INSERT INTO hi_q VALUES
	  ('point', $$'POINT(1 2)'::geometry$$),
	  ('window', $$ST_MakeEnvelope(-10, -10, 10, 10)$$),
	  ('plane', $$ST_MakeEnvelope(-1e308, -1e308, 1e308, 1e308)$$),
	  ('empty', $$'POINT EMPTY'::geometry$$),
	  ('nan', $$ST_MakePoint('NaN', 'NaN')$$),
	  ('half_nan', $$ST_MakeLine(ST_MakePoint(0, 0), ST_MakePoint('NaN', 5))$$),
	  ('infinite', $$ST_MakeEnvelope(0, 0, 'Infinity', 'Infinity')$$),
	  ('tiny', $$ST_MakeEnvelope(-1e-300, -1e-300, 1e-300, 1e-300)$$),
	  ('axis_segment', $$'LINESTRING(0 0, 0 5e-324)'::geometry$$),
	  ('subnormal_box', $$ST_MakeEnvelope(0, 0, 1e-320, 1e-320)$$),
	  ('huge', $$ST_MakePoint(3.4028234663852886e38, 1)$$),
	  ('bowtie', $$'POLYGON((0 0, 4 4, 4 0, 0 4, 0 0))'::geometry$$),
	  ('toasted', $$(SELECT g FROM bigq)$$);
});
is(S("SELECT pg_relation_size(reltoastrelid) > 0 FROM pg_class WHERE relname = 'bigq'"), 't',
	'the big query value is TOASTed');

# ---------------------------------------------------------------------------
# Values: [case, knn (kNN defined for these rows), SQL expressions]
# ---------------------------------------------------------------------------
my @values = (
	[ 'null', 1, ['NULL::geometry'] ],
	[
		'empty_of_every_type', 1,
		[
			map { "'$_ EMPTY'::geometry" }
			  qw(POINT LINESTRING POLYGON MULTIPOINT MULTILINESTRING MULTIPOLYGON GEOMETRYCOLLECTION
			  CIRCULARSTRING COMPOUNDCURVE CURVEPOLYGON MULTICURVE MULTISURFACE POLYHEDRALSURFACE TIN TRIANGLE)
		]
	],
	[
		'point_empty_in_collections', 1,
		[
			q{'MULTIPOINT(EMPTY, (1 1))'},
			q{'GEOMETRYCOLLECTION(POINT EMPTY)'},
			q{'GEOMETRYCOLLECTION(POINT EMPTY, POINT(2 2))'},
			q{'GEOMETRYCOLLECTION(GEOMETRYCOLLECTION(POINT EMPTY), LINESTRING(0 0, 3 3))'},
			q{'GEOMETRYCOLLECTION(MULTIPOINT(EMPTY), POLYGON EMPTY)'},
			q{ST_Collect('POINT EMPTY'::geometry, 'POINT(-1 -1)'::geometry)},
		]
	],
	[
		'nan_coordinates', 1,
		[
			q{ST_MakePoint('NaN', 1)}, q{ST_MakePoint(1, 'NaN')}, q{ST_MakePoint('NaN', 'NaN')},
			q{ST_MakeLine(ST_MakePoint(0, 0), ST_MakePoint('NaN', 5))},
			q{ST_MakeLine(ST_MakePoint('NaN', 'NaN'), ST_MakePoint(2, 2))},
			q{ST_Collect(ST_MakePoint('NaN', 0), ST_MakePoint(3, 3))},
		]
	],
	[
		'infinite_coordinates', 1,
		[
			q{ST_MakePoint('Infinity', 1)}, q{ST_MakePoint('-Infinity', '-Infinity')},
			q{ST_MakeLine(ST_MakePoint(0, 0), ST_MakePoint('Infinity', 5))},
		]
	],
	# PostGIS cannot measure distances to it ("unclosed ring"): no kNN
	[ 'infinite_envelope', 0, [q{ST_MakeEnvelope('-Infinity', '-Infinity', 'Infinity', 'Infinity')}] ],
	[
		'huge_coordinates', 1,
		[
			q{ST_MakePoint(1e308, -1e308)}, q{ST_MakeEnvelope(-1e308, -1e308, 1e308, 1e308)},
			q{ST_MakeLine(ST_MakePoint(3.4e38, 0), ST_MakePoint(3.5e38, 1))},
			q{ST_MakePoint(-1e300, 5)}, q{ST_MakePoint(3.4028234663852886e38, -3.4028234663852886e38)},
		]
	],
	[
		'tiny_coordinates', 1,
		[
			q{ST_MakePoint(1e-308, -1e-308)}, q{ST_MakePoint(5e-324, 0)},
			q{ST_MakeEnvelope(-1e-300, -1e-300, 1e-300, 1e-300)}, q{ST_MakePoint(1e-40, 1e-45)},
		]
	],
	[
		'near_axes', 1,
		[
			q{ST_MakePoint(0, 0.3)}, q{ST_MakePoint(0.3, 0.3)}, q{ST_MakePoint(-0.4, 0)},
			q{'LINESTRING(0.5 0, 0.5 1e-320)'}, q{'LINESTRING(-1e-320 0.2, 0 0.2)'},
			q{ST_MakeEnvelope(0.2, -1e-310, 0.6, 1e-310)},
		]
	],
	[
		'3d_4d_measured', 1,
		[
			q{'POINT Z (1 2 3)'}, q{'POINT M (1 2 3)'}, q{'POINT ZM (1 2 3 4)'},
			q{'LINESTRING Z (0 0 1, 5 5 2)'}, q{'LINESTRING M (0 0 1, -5 5 2)'},
			q{'POLYGON ZM ((0 0 1 1, 4 0 1 1, 4 4 1 1, 0 0 1 1))'},
			q{'MULTIPOINT Z ((1 1 1), (2 2 2))'}, q{'GEOMETRYCOLLECTION M (POINT M (3 3 3))'},
			q{'POINT Z EMPTY'}, q{'POLYHEDRALSURFACE Z (((0 0 0, 0 1 0, 1 1 0, 0 0 0)))'},
			q{'TIN Z (((0 0 0, 0 1 0, 1 1 0, 0 0 0)))'},
		]
	],
	[
		'curved', 1,
		[
			q{'CIRCULARSTRING(0 0, 1 1, 2 0)'},
			q{'CIRCULARSTRING(0 0, 2 0, 0 0)'},
			q{'CIRCULARSTRING(0 0, 1 1, 2 2)'},
			q{'CURVEPOLYGON(CIRCULARSTRING(0 0, 4 0, 4 4, 0 4, 0 0))'},
			q{'COMPOUNDCURVE(CIRCULARSTRING(0 0, 1 1, 1 0), (1 0, 0 1))'},
			q{'MULTICURVE((0 0, 5 5), CIRCULARSTRING(4 0, 4 4, 8 4))'},
			q{'MULTISURFACE(CURVEPOLYGON(CIRCULARSTRING(-2 0, -1 -1, -2 0)), ((7 8, 10 10, 6 14, 4 11, 7 8)))'},
			q{'CIRCULARSTRING Z (0 0 1, 1 1 1, 2 0 1)'},
		]
	],
	[
		'geography_cast_to_geometry', 0,
		[
			q{'SRID=4326;POINT(1 2)'::geography::geometry},
			q{ST_Buffer('SRID=4326;POINT(3 3)'::geography, 1000)::geometry},
		]
	],
	[
		'mixed_srids', 0,
		[
			q{'SRID=3857;POINT(1 1)'}, q{'SRID=4326;POINT(1 1)'}, q{'SRID=0;POINT(1 1)'},
			q{'SRID=32632;POLYGON((0 0, 2 0, 2 2, 0 0))'}, q{'SRID=4326;POINT EMPTY'},
		]
	],
	[
		'invalid_polygons', 1,
		[
			q{'POLYGON((0 0, 4 4, 4 0, 0 4, 0 0))'},
			q{'POLYGON((0 0, 2 0, 2 2, 0 0), (5 5, 6 5, 6 6, 5 5))'},
			q{'POLYGON((0 0, 1 1, 1 1, 0 0))'},
			q{'POLYGON((0 0, 3 0, 3 3, 0 3, 0 0), (1 1, 2 1, 2 2, 1 2, 1 1), (1 1, 2 1, 2 2, 1 2, 1 1))'},
			q{'MULTIPOLYGON(((0 0, 2 0, 2 2, 0 2, 0 0)), ((1 1, 3 1, 3 3, 1 3, 1 1)))'},
			q{'POLYGON((0 0, 10 0, 5 0, 0 0))'},
		]
	],
	[
		'toasted_large', 1,
		[
			q{ST_Buffer(ST_MakePoint(2, 2), 1.5, 'quad_segs=2000')},
			q{postgis_dropbbox(ST_Buffer(ST_MakePoint(-2, 3), 1, 'quad_segs=1500'))},
			q{(SELECT ST_Collect(ST_MakePoint(x * 0.001, x * 0.002)) FROM generate_series(1, 3000) x)},
			q{(SELECT postgis_dropbbox(ST_MakeLine(ST_MakePoint(x * 0.001, -x * 0.001))) FROM generate_series(1, 3000) x)},
		]
	],
);

# per-case differential of all filters against all query values
sub case_diff
{
	my ($case, $idx, $table) = @_;
	$table //= 'bad';
	my $filter = defined $case ? "tag = ''$case'' AND" : '';
	return HiTest::try_psql($node,
		'postgres', qq{
		SELECT coalesce(string_agg(format('%s %s: n=%s seq_plan=%s index=%s/%s bitmap=%s/%s',
		         o.op, q.qn, d.n, d.seq_plan, d.index_same, d.index_plan, d.bitmap_same, d.bitmap_plan), '; '), 'ok')
		FROM (VALUES ('&&'), ('~='), ('~'), ('\@')) o(op), hi_q q,
		     LATERAL hit.diff(format('SELECT id FROM $table WHERE $filter geom %s %s', o.op, q.expr), '$idx') d
		WHERE NOT (d.seq_plan AND d.index_same AND d.index_plan AND d.bitmap_same AND d.bitmap_plan)});
}

sub knn_diff
{
	my ($table, $idx, $filter, $qns) = @_;
	$filter //= 'true';
	$qns //= q{'point', 'empty', 'nan', 'half_nan', 'bowtie', 'toasted'};
	return HiTest::try_psql($node,
		'postgres', qq{
		SELECT coalesce(string_agg(format('%s k=%s: n=%s dist=%s ids=%s plan=%s', q.qn, k, d.n, d.dist_same, d.ids_same, d.index_plan), '; '), 'ok')
		FROM (SELECT qn, expr FROM hi_q WHERE qn IN ($qns)) q,
		     (VALUES (7), (NULL::int)) kk(k),
		     LATERAL hit.knn_diff('$table', '$idx', hi_eval(q.expr), k, \$f\$$filter\$f\$) d
		WHERE NOT (d.dist_same AND d.ids_same AND d.index_plan)});
}

# evaluate a query expression of hi_q to a geometry (kNN needs a value)
S(q{CREATE FUNCTION hi_eval(expr text) RETURNS geometry LANGUAGE plpgsql AS
	$$ DECLARE g geometry; BEGIN EXECUTE 'SELECT ' || expr INTO g; RETURN g; END $$});

# kNN rows: every case where kNN is defined (one SRID)
S("CREATE TABLE bad_knn (id bigserial, tag text, geom geometry)");
S("INSERT INTO bad_knn (tag, geom) SELECT tag, geom FROM bad");
S("CREATE INDEX bad_knn_idx ON bad_knn USING hyrtree (geom) WITH (page_size = 2048)");

my $total = S("SELECT count(*) FROM bad");
for my $v (@values)
{
	my ($case, $knn, $exprs) = @$v;
	my $n = scalar(@$exprs);
	my $sql = join(";\n", map { "INSERT INTO bad (tag, geom) VALUES ('$case', $_)" } @$exprs);
	is(HiTest::try_psql($node, 'postgres', $sql), '', "$case: $n values inserted into the indexed table");
	if ($knn)
	{
		HiTest::try_psql($node, 'postgres',
			"INSERT INTO bad_knn (tag, geom) SELECT tag, geom FROM bad WHERE tag = '$case'");
	}
	server_ok($case);
	is(S("SELECT count(*) FROM bad WHERE tag = '$case'"), $n, "$case: rows stored");
	is(HiTest::try_psql($node, 'postgres', "SELECT hybrid_index_check('bad_idx')"), 't',
		"$case: hybrid_index_check passes");
	is(case_diff($case, 'bad_idx'), 'ok', "$case: &&, ~=, ~, @ against every query value: seq = index = bitmap");
	server_ok("$case (queries)");
}

# the rows that went through aminsert, now through ambuild
S("DROP INDEX bad_idx");
S("CREATE INDEX bad_idx_built ON bad USING hyrtree (geom) WITH (page_size = 2048)");
is(S("SELECT hybrid_index_check('bad_idx_built')"), 't', 'built over every bad value: check passes');
is(S("SELECT (hybrid_index_inspect('bad_idx_built')->>'entries')::int + (hybrid_index_inspect('bad_idx_built')->>'null_entries')::int = count(*) FROM bad"),
	't', 'built over every bad value: every row has an entry');
is(case_diff(undef, 'bad_idx_built'), 'ok', 'built index: every filter equals seq scan');
server_ok('build');

# The same values through the other access methods: each gets its own copy
# of the background rows, every value through aminsert (checked case by
# case), then all of them again through ambuild.
for my $am (qw(efind lbgrid hgrid))
{
	my ($tbl, $idx) = ("bad_$am", "bad_${am}_idx");
	S(qq{CREATE TABLE $tbl (id bigserial, tag text, geom geometry);
		INSERT INTO $tbl (tag, geom) SELECT tag, geom FROM bad WHERE tag = 'background' ORDER BY id;
		CREATE INDEX $idx ON $tbl USING $am (geom) WITH (page_size = 2048)});
	for my $v (@values)
	{
		my ($case, $knn, $exprs) = @$v;
		my $n = scalar(@$exprs);
		my $sql = join(";\n", map { "INSERT INTO $tbl (tag, geom) VALUES ('$case', $_)" } @$exprs);
		is(HiTest::try_psql($node, 'postgres', $sql), '', "$am: $case: $n values inserted into the indexed table");
		server_ok("$am: $case");
		is(S("SELECT count(*) FROM $tbl WHERE tag = '$case'"), $n, "$am: $case: rows stored");
		is(HiTest::try_psql($node, 'postgres', "SELECT hybrid_index_check('$idx')"), 't',
			"$am: $case: hybrid_index_check passes");
		is(case_diff($case, $idx, $tbl), 'ok', "$am: $case: &&, ~=, ~, @ against every query value: seq = index = bitmap");
		server_ok("$am: $case (queries)");
	}
	S("DROP INDEX $idx");
	S("CREATE INDEX ${idx}_built ON $tbl USING $am (geom) WITH (page_size = 2048)");
	is(S("SELECT hybrid_index_check('${idx}_built')"), 't', "$am: built over every bad value: check passes");
	is(S("SELECT (hybrid_index_inspect('${idx}_built')->>'entries')::int + (hybrid_index_inspect('${idx}_built')->>'null_entries')::int = count(*) FROM $tbl"),
		't', "$am: built over every bad value: every row has an entry");
	is(case_diff(undef, "${idx}_built", $tbl), 'ok', "$am: built index: every filter equals seq scan");
	server_ok("$am: build");
}

# kNN over every value with one SRID (NULL, EMPTY, NaN, Infinity, ... rows included)
for my $case (map { $_->[0] } grep { $_->[1] } @values)
{
	is(knn_diff('bad_knn', 'bad_knn_idx', "tag IN ('background', '$case')"), 'ok',
		"$case: kNN from point/EMPTY/NaN/bowtie/TOASTed query values equals sorted seq scan");
}
is(knn_diff('bad_knn', 'bad_knn_idx'), 'ok', 'kNN over all rows equals sorted seq scan');
# kNN edge cases on every AM that does kNN (same rows, true distance
# order as a sorted seq scan).  PostGIS's <-> says 0 below the box
# distance for tiny distances (its products underflow: POINT(1e-40 1e-45)
# to a 1e-300 envelope, a point within 0.5 of a 5e-324-long segment) and
# for unbounded values; the index's order value must not exceed it.
my $edge_qns = q{'point', 'window', 'plane', 'empty', 'nan', 'half_nan', 'tiny', 'axis_segment', 'subnormal_box', 'huge', 'bowtie', 'toasted'};
for my $am (qw(hyrtree efind lbgrid hgrid))
{
	my ($tbl, $idx) = ('bad_knn', 'bad_knn_idx');
	if ($am ne 'hyrtree')
	{
		($tbl, $idx) = ("bad_knn_$am", "bad_knn_${am}_idx");
		S("CREATE TABLE $tbl (LIKE bad_knn INCLUDING DEFAULTS); INSERT INTO $tbl SELECT * FROM bad_knn");
		S("CREATE INDEX $idx ON $tbl USING $am (geom)");
	}
	is(knn_diff($tbl, $idx, 'true', $edge_qns), 'ok',
		"$am: kNN from tiny, subnormal, axis-hugging, huge and unbounded query values over every row equals sorted seq scan");
	is(knn_diff($tbl, $idx, "tag IN ('background', 'near_axes', 'tiny_coordinates', 'huge_coordinates')", q{'infinite'}), 'ok',
		"$am: kNN from a query value with infinite coordinates equals sorted seq scan");
	# and again after one-by-one inserts of the same rows
	S("INSERT INTO $tbl (tag, geom) SELECT tag, geom FROM $tbl WHERE tag <> 'background'");
	is(knn_diff($tbl, $idx, 'true', $edge_qns), 'ok', "$am: the same after inserting every edge row again");
	is(HiTest::try_psql($node, 'postgres', "SELECT hybrid_index_check('$idx')"), 't', "$am: hybrid_index_check passes");
}
server_ok('knn');

# kNN across SRIDs: PostGIS refuses to measure, by either path
for my $path (qw(seq index))
{
	expect_error("kNN over mixed SRIDs ($path scan)",
		"SELECT hit.use_path('$path'); SELECT id FROM bad ORDER BY geom <-> 'SRID=4326;POINT(0 0)'::geometry LIMIT 3",
		'XX000', qr/mixed SRID/);
}

# kNN over a row PostGIS cannot measure: the same error by either path
S(q{CREATE TABLE bad_inf AS SELECT * FROM bad WHERE tag IN ('background', 'infinite_envelope');
	CREATE INDEX bad_inf_idx ON bad_inf USING hyrtree (geom) WITH (page_size = 2048)});
# (PostGIS 3.3 cannot measure it, "unclosed ring"; 3.6 can: then both paths
# give the same rows in the same order)
my ($inf_ret, $inf_out) = $node->psql('postgres',
	"SELECT hit.use_path('seq'); SELECT id FROM bad_inf ORDER BY geom <-> 'POINT(1 2)'::geometry, id");
if ($inf_ret != 0)
{
	for my $path (qw(seq index))
	{
		expect_error("kNN over an infinite envelope ($path scan)",
			"SELECT hit.use_path('$path'); SELECT id FROM bad_inf ORDER BY geom <-> 'POINT(1 2)'::geometry",
			'XX000', qr/unclosed ring/);
	}
}
else
{
	is(HiTest::knn_all_differential($node, 'postgres', 'bad_inf', 'bad_inf_idx', 1, 2), 'ok',
		'kNN over an infinite envelope PostGIS can measure: index order = sorted seq scan');
	server_ok('kNN over an infinite envelope');
}

# ---------------------------------------------------------------------------
# NULL and EMPTY as query values (constants and parameters of generic plans)
# ---------------------------------------------------------------------------
for my $path (qw(index bitmap))
{
	my $r = HiTest::try_psql($node, 'postgres', qq{
		SET plan_cache_mode = force_generic_plan;
		SELECT hit.use_path('$path');
		PREPARE f(geometry) AS SELECT count(*) FROM bad_knn WHERE geom && \$1;
		PREPARE fs(geometry) AS SELECT count(*) FROM bad_knn WHERE geom ~= \$1;
		EXECUTE f(NULL);
		EXECUTE f('POINT EMPTY');
		EXECUTE fs(NULL);
		SELECT count(*) FROM bad_knn WHERE geom && NULL;});
	is($r, "\n0\n0\n0\n0", "&& / ~= against NULL and && EMPTY return no row ($path scan, generic plan)");
	my $plan = HiTest::try_psql($node, 'postgres', qq{
		SET plan_cache_mode = force_generic_plan;
		SELECT hit.use_path('$path');
		PREPARE f(geometry) AS SELECT count(*) FROM bad_knn WHERE geom && \$1;
		EXPLAIN (COSTS OFF) EXECUTE f(NULL);});
	like($plan, qr/bad_knn_idx/, "the generic plan with a NULL parameter uses the index ($path)");
	server_ok("NULL query ($path)");
}
# what PostGIS says (3.6 also counts rows whose box is NaN as ~= EMPTY)
my $empties = HiTest::try_psql($node, 'postgres',
	"SELECT hit.use_path('seq'); SELECT count(*) FROM bad_knn WHERE geom ~= 'POINT EMPTY'::geometry");
$empties =~ s/^\n//;
is(HiTest::try_psql($node, 'postgres', qq{
	SET plan_cache_mode = force_generic_plan; SELECT hit.use_path('index');
	PREPARE fs(geometry) AS SELECT count(*) FROM bad_knn WHERE geom ~= \$1;
	EXECUTE fs('POINT EMPTY');}), "\n$empties", 'EMPTY ~= EMPTY finds every EMPTY row (index, generic plan)');

# kNN with a NULL query point: a parameter of a generic plan reaches the index
is(HiTest::try_psql($node, 'postgres', q{
	SET plan_cache_mode = force_generic_plan; SELECT hit.use_path('index');
	PREPARE k(geometry) AS SELECT count(*), count(DISTINCT id), count(d) FROM
	  (SELECT id, geom <-> $1 AS d FROM bad_knn ORDER BY geom <-> $1 LIMIT 50) s;
	PREPARE kall(geometry) AS SELECT count(*), count(DISTINCT id) FROM
	  (SELECT id FROM bad_knn ORDER BY geom <-> $1) s;
	EXECUTE k(NULL); EXECUTE kall(NULL); EXECUTE k('POINT EMPTY');}),
	"\n50|50|0\n" . S("SELECT count(*) || '|' || count(*) FROM bad_knn") . "\n50|50|0",
	'kNN by a NULL or EMPTY parameter: every row once, distances NULL (generic plan, index scan)');
like(HiTest::try_psql($node, 'postgres', q{
	SET plan_cache_mode = force_generic_plan; SELECT hit.use_path('index');
	PREPARE k(geometry) AS SELECT id FROM bad_knn ORDER BY geom <-> $1 LIMIT 5;
	EXPLAIN (COSTS OFF) EXECUTE k(NULL);}), qr/Index Scan using bad_knn_idx.*\n.*Order By/,
	'kNN with a NULL parameter is an ordered index scan');
is(HiTest::try_psql($node, 'postgres', q{
	SELECT n = (SELECT count(*) FROM bad_knn) AND ids_same AND dist_same FROM hit.knn_diff('bad_knn', 'bad_knn_idx', NULL, NULL)}),
	't', 'kNN by a NULL constant: same rows as a seq scan');
server_ok('NULL/EMPTY kNN');

# ---------------------------------------------------------------------------
# Geography
# ---------------------------------------------------------------------------
expect_error('geography literal into a geometry column',
	q{INSERT INTO bad (tag, geom) VALUES ('geog', 'POINT(1 2)'::geography)}, '42804', qr/geography/);
expect_error('hyrtree index on a geography column',
	q{CREATE TABLE gg (g geography); CREATE INDEX gg_idx ON gg USING hyrtree (g)}, '42704',
	qr/no default operator class/);
expect_error('hyrtree_geometry_ops on a geography column',
	q{CREATE TABLE IF NOT EXISTS gg (g geography); CREATE INDEX gg_idx ON gg USING hyrtree (g hyrtree_geometry_ops)}, '42804',
	qr/does not accept data type geography/);

# ---------------------------------------------------------------------------
# Reloptions
# ---------------------------------------------------------------------------
S("CREATE TABLESPACE hi_ts LOCATION '$ts_dir'");
S("CREATE TABLESPACE hi_ts2 LOCATION '$ts2_dir'");
my @reloptions = (
	# [what, WITH (...) [, TABLESPACE], SQLSTATE, message]
	[ 'page_size not a power of two', 'page_size = 3000', '22023', qr/invalid value for page_size: 3000/ ],
	[ 'page_size 2049', 'page_size = 2049', '22023', qr/power of two/ ],
	[ 'page_size below range', 'page_size = 1024', '22023', qr/out of bounds for option "page_size"/ ],
	[ 'page_size above range', 'page_size = 65536', '22023', qr/out of bounds for option "page_size"/ ],
	[ 'page_size zero', 'page_size = 0', '22023', qr/out of bounds/ ],
	[ 'page_size negative', 'page_size = -8192', '22023', qr/out of bounds/ ],
	[ 'page_size not a number', q{page_size = 'abc'}, '22023', qr/invalid value for integer option "page_size"/ ],
	[ 'page_size above max_page_size', 'page_size = 16384', '22023', qr/exceeds hybrid_index.max_page_size/ ],
	[ 'page_size max above max_page_size', 'page_size = 32768', '22023', qr/max_page_size/ ],
	[ 'unknown placement', q{placement = 'lower'}, '22023', qr/invalid value for enum option "placement"/ ],
	[ 'empty placement', q{placement = ''}, '22023', qr/placement/ ],
	[ 'optane_tablespace does not exist', q{optane_tablespace = 'no_such_ts'}, '42704', qr/no_such_ts" does not exist/ ],
	[ 'optane_tablespace = own tablespace (pg_default)', q{optane_tablespace = 'pg_default'}, '22023', qr/its own tablespace/ ],
	[ 'optane_tablespace = own tablespace (TABLESPACE clause)', q{optane_tablespace = 'hi_ts') TABLESPACE hi_ts --}, '22023', qr/its own tablespace/ ],
	[ 'wma_threshold above 100', 'wma_threshold = 101', '22023', qr/out of bounds for option "wma_threshold"/ ],
	[ 'wma_threshold below 1', 'wma_threshold = 0.5', '22023', qr/invalid value for wma_threshold: 0\.5/ ],
	[ 'wma_threshold between -1 and 0', 'wma_threshold = -0.5', '22023', qr/invalid value for wma_threshold: -0\.5/ ],
	[ 'wma_threshold negative', 'wma_threshold = -5', '22023', qr/out of bounds/ ],
	[ 'wma_epochs zero', 'wma_epochs = 0', '22023', qr/invalid value for wma_epochs: 0/ ],
	[ 'wma_epochs above 10', 'wma_epochs = 11', '22023', qr/out of bounds/ ],
	[ 'epoch_size zero', 'epoch_size = 0', '22023', qr/invalid value for epoch_size: 0/ ],
	[ 'epoch_size negative', 'epoch_size = -2', '22023', qr/out of bounds/ ],
	[ 'negative buffer_size', 'buffer_size = -1', '22023', qr/out of bounds for option "buffer_size"/ ],
	[ 'negative optane_capacity', 'optane_capacity = -5', '22023', qr/out of bounds for option "optane_capacity"/ ],
	[ 'unknown option', 'no_such_option = 1', '22023', qr/unrecognized parameter "no_such_option"/ ],
);
for my $r (@reloptions)
{
	my ($what, $with, $state, $re) = @$r;
	expect_error("reloption: $what", "CREATE INDEX bad_opt ON bad USING hyrtree (geom) WITH ($with)", $state, $re);
}
is(S("SELECT count(*) FROM pg_class WHERE relname = 'bad_opt'"), '0', 'no index left behind by a refused reloption');
is(scalar(grep { /hyb_\d+_\d+\./ } HiTest::hyb_files($ts_dir)), 0, 'no files left behind in the tablespace');

# reloptions changed on an existing index are validated too
S("CREATE INDEX bad_alter ON bad USING hyrtree (geom) WITH (placement = 'upper', optane_tablespace = 'hi_ts')");
expect_error('ALTER INDEX SET page_size not a power of two', 'ALTER INDEX bad_alter SET (page_size = 3000)', '22023', qr/power of two/);
expect_error('ALTER INDEX SET unknown optane_tablespace', q{ALTER INDEX bad_alter SET (optane_tablespace = 'no_such_ts')}, '42704', qr/does not exist/);
expect_error('ALTER INDEX SET wma_threshold out of range', 'ALTER INDEX bad_alter SET (wma_threshold = 200)', '22023', qr/out of bounds/);
is(S("SELECT hybrid_index_check('bad_alter')"), 't', 'index intact after refused ALTERs');

# moving the fast tier by ALTER INDEX SET / RESET (optane_tablespace):
# the index is rebuilt in the same transaction, its files follow
sub optane_file_dir
{
	my ($idx) = @_;
	return S(qq{SELECT coalesce((SELECT spcname FROM pg_tablespace WHERE f.path LIKE '%/pg_tblspc/' || oid || '/%'),
		  CASE WHEN f.path LIKE '%/base/%' THEN 'default' ELSE f.path END)
		FROM hybrid_index_files('$idx') f WHERE kind = 'optane'});
}
is(optane_file_dir('bad_alter'), 'hi_ts', 'the fast tier starts in hi_ts');
is(HiTest::try_psql($node, 'postgres',
	q{BEGIN; ALTER INDEX bad_alter SET (optane_tablespace = 'hi_ts2'); ROLLBACK}), '',
	'ALTER INDEX SET (optane_tablespace) rolled back');
is(optane_file_dir('bad_alter'), 'hi_ts', 'a rolled back ALTER keeps the fast tier in hi_ts');
is(HiTest::try_psql($node, 'postgres', q{ALTER INDEX bad_alter SET (optane_tablespace = 'hi_ts2')}), '',
	'ALTER INDEX SET (optane_tablespace = other) is accepted');
is(optane_file_dir('bad_alter'), 'hi_ts2', 'the fast tier moved to hi_ts2');
is(scalar(grep { /hyb_\d+_\d+\./ } HiTest::hyb_files($ts_dir)), 0, 'no files left behind in hi_ts');
is(S(q{SELECT sum((l->>'optane')::int) > 0 FROM jsonb_array_elements(hybrid_index_inspect('bad_alter')->'levels') l}),
	't', 'placement upper still puts inner nodes on the fast tier');
$node->restart;
$log_offset = -s $node->logfile;
is(HiTest::try_psql($node, 'postgres', "SELECT hybrid_index_check('bad_alter')"), 't',
	'ALTER INDEX SET (optane_tablespace): the index works after a restart');
is(case_diff(undef, 'bad_alter'), 'ok', 'ALTER INDEX SET (optane_tablespace): every filter equals seq scan');
is(HiTest::try_psql($node, 'postgres', q{ALTER INDEX bad_alter RESET (optane_tablespace)}), '',
	'ALTER INDEX RESET (optane_tablespace) is accepted');
is(optane_file_dir('bad_alter'), 'default', 'the fast tier moved back beside the flash tier');
is(scalar(grep { /hyb_\d+_\d+\./ } HiTest::hyb_files($ts2_dir)), 0, 'no files left behind in hi_ts2');
is(HiTest::try_psql($node, 'postgres', "SELECT hybrid_index_check('bad_alter')"), 't',
	'ALTER INDEX RESET (optane_tablespace): check passes');
expect_error('ALTER INDEX SET optane_tablespace to its own tablespace',
	q{ALTER INDEX bad_alter SET (optane_tablespace = 'pg_default')}, '22023', qr/its own tablespace/);

# ALTER INDEX ALL IN TABLESPACE rebuilds each of our indexes it moves, so
# the tier files follow (as ALTER INDEX ... SET TABLESPACE does)
S("CREATE ROLE hi_nobody; CREATE INDEX bad_in_ts ON bad USING hyrtree (geom) TABLESPACE hi_ts");
is(HiTest::try_psql($node, 'postgres', "ALTER INDEX ALL IN TABLESPACE hi_ts OWNED BY hi_nobody SET TABLESPACE hi_ts2"), '',
	'ALTER INDEX ALL IN TABLESPACE ... OWNED BY another role leaves our index alone');
ok(scalar(grep { /hyb_\d+_\d+\./ } HiTest::hyb_files($ts_dir)) > 0, 'its files are still in hi_ts');
is(HiTest::try_psql($node, 'postgres', "ALTER INDEX ALL IN TABLESPACE hi_ts SET TABLESPACE hi_ts2; SELECT hybrid_index_check('bad_in_ts')"), 't',
	'ALTER INDEX ALL IN TABLESPACE over one of our indexes moves it, and it passes check');
is(scalar(grep { /hyb_\d+_\d+\./ } HiTest::hyb_files($ts_dir)), 0, 'no files left behind in hi_ts');
ok(scalar(grep { /hyb_\d+_\d+\./ } HiTest::hyb_files($ts2_dir)) > 0, 'its files are in hi_ts2');
is(HiTest::try_psql($node, 'postgres', "REINDEX (TABLESPACE hi_ts) INDEX bad_in_ts; SELECT hybrid_index_check('bad_in_ts')"), 't',
	'REINDEX (TABLESPACE) moves it back');
is(scalar(grep { /hyb_\d+_\d+\./ } HiTest::hyb_files($ts2_dir)), 0, 'no files left behind in hi_ts2 after REINDEX (TABLESPACE)');
S('DROP INDEX bad_in_ts');
S('DROP INDEX bad_alter');
server_ok('ALTER INDEX');

# ---------------------------------------------------------------------------
# GUCs out of range
# ---------------------------------------------------------------------------
S("CREATE ROLE hi_plain LOGIN");
my @gucs = (
	[ 'io_depth 0', 'SET hybrid_index.io_depth = 0', '22023', qr/outside the valid range/ ],
	[ 'io_depth 1025', 'SET hybrid_index.io_depth = 1025', '22023', qr/outside the valid range/ ],
	[ 'io_depth negative', 'SET hybrid_index.io_depth = -1', '22023', qr/outside the valid range/ ],
	[ 'io_method unknown', q{SET hybrid_index.io_method = 'posix'}, '22023', qr/invalid value for parameter "hybrid_index.io_method"/ ],
	[ 'wma_threshold 0', 'SET hybrid_index.wma_threshold = 0', '22023', qr/outside the valid range/ ],
	[ 'wma_threshold 100.5', 'SET hybrid_index.wma_threshold = 100.5', '22023', qr/outside the valid range/ ],
	[ 'wma_epochs 11', 'SET hybrid_index.wma_epochs = 11', '22023', qr/outside the valid range/ ],
	[ 'epoch_size 0', 'SET hybrid_index.epoch_size = 0', '22023', qr/outside the valid range/ ],
	[ 'flash_parallelism 0', 'SET hybrid_index.flash_parallelism = 0', '22023', qr/outside the valid range/ ],
	[ 'optane_read_latency negative', 'SET hybrid_index.optane_read_latency = -1', '22023', qr/outside the valid range/ ],
	[ 'cache_size at run time', 'SET hybrid_index.cache_size = 10', '55P02', qr/without restarting/ ],
	[ 'max_page_size at run time', 'SET hybrid_index.max_page_size = 4096', '55P02', qr/without restarting/ ],
	[ 'checkpoint_log_size by SET', 'SET hybrid_index.checkpoint_log_size = 64', '55P02', qr/cannot be changed now/ ],
	[ 'checkpoint_log_size below range', 'ALTER SYSTEM SET hybrid_index.checkpoint_log_size = 1', '22023', qr/outside the valid range/ ],
	[ 'max_page_size not a power of two', 'ALTER SYSTEM SET hybrid_index.max_page_size = 3000', '22023', qr/power of two/ ],
	[ 'max_page_size above range', 'ALTER SYSTEM SET hybrid_index.max_page_size = 65536', '22023', qr/outside the valid range/ ],
	[ 'max_indexes 0', 'ALTER SYSTEM SET hybrid_index.max_indexes = 0', '22023', qr/invalid value for parameter/ ],
	[ 'lbgrid_bucket_capacity 1', 'SET hybrid_index.lbgrid_bucket_capacity = 1', '22023', qr/invalid value for parameter "hybrid_index.lbgrid_bucket_capacity": 1/ ],
	[ 'unknown hybrid_index GUC', 'SET hybrid_index.no_such = 1', '42602', qr/invalid configuration parameter name/ ],
	[ 'emulate_devices as a plain user', 'SET ROLE hi_plain; SET hybrid_index.emulate_devices = on', '42501', qr/permission denied/ ],
);
for my $g (@gucs)
{
	my ($what, $sql, $state, $re) = @$g;
	expect_error("GUC: $what", $sql, $state, $re);
}
# the extremes that are allowed work
is(HiTest::try_psql($node, 'postgres', q{
	SET hybrid_index.io_depth = 1; SET hybrid_index.io_method = sync;
	SELECT hybrid_index_check('bad_idx_built');}), 't', 'io_depth = 1 with sync I/O: check passes');
is(HiTest::try_psql($node, 'postgres', q{SET hybrid_index.io_depth = 1024;
	SELECT count(*) FROM (SELECT * FROM hi_q LIMIT 0) z;}), '0', 'io_depth = 1024 accepted');
is(case_diff(undef, 'bad_idx_built'), 'ok', 'filters still equal seq scan after the GUC errors');
server_ok('GUCs');

$node->stop;
done_testing();
