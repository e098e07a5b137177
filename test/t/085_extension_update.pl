# 085_extension_update.pl — from each released version to this tree's:
# the package upgrade a DBA does (issue 43).
#
# For every release in tools/releases.txt (built by tools/build-release.sh
# into a copy of the server under test; tools/test-all.sh passes the copies
# in HI_RELEASES="<version>=<install path> ..."):
#  - a cluster runs the released library: CREATE EXTENSION hybrid_index
#    (and hybrid_index_bench) at that version; for every access method two
#    indexes (one with INCLUDE (id)), rows inserted and deleted after the
#    builds, VACUUM, more rows, then the server is killed (-9): the new
#    library must replay the released one's WAL and redo logs;
#  - the same data directory starts on this tree's library (the binary
#    swap of a package upgrade); before ALTER EXTENSION the old indexes
#    answer exactly;
#  - ALTER EXTENSION hybrid_index UPDATE (and hybrid_index_bench): the
#    version is this tree's, and every object of both extensions
#    (functions with their definitions, privileges and comments, access
#    methods, operator classes with their operators and support functions,
#    tables, views) is what a fresh CREATE EXTENSION makes;
#  - every index passes the full differential check, takes inserts and
#    deletes, and does again after a clean restart;
#  - an index with INCLUDE columns keeps the release's heap-ordered INCLUDE
#    rows (before 0.3.0) until REINDEX keys them by Z-order.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiAM;
use HiTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my @releases = map { [ split /=/, $_, 2 ] } split ' ', ($ENV{HI_RELEASES} // '');
plan skip_all => 'no released version built for this server: '
  . ($ENV{HI_RELEASES_WHY} // 'HI_RELEASES is not set (tools/test-all.sh sets it from tools/build-release.sh)')
  unless @releases;

my $control = slurp_file("$HiTest::SRCDIR/hybrid_index.control");
my ($this_version) = $control =~ /^default_version = '([^']+)'/m;
my $bench_control = slurp_file("$HiTest::SRCDIR/hybrid_index_bench.control");
my ($this_bench_version) = $bench_control =~ /^default_version = '([^']+)'/m;
my @ams = HiAM::selected();

# Every object of an extension, one line each, with what defines it
my $catalog_sql = q{
WITH m AS (
	SELECT d.classid, d.objid, d.objsubid
	FROM pg_depend d JOIN pg_extension e ON d.refclassid = 'pg_extension'::regclass AND d.refobjid = e.oid
	WHERE e.extname = '__EXT__' AND d.deptype = 'e')
SELECT line FROM (
	SELECT pg_describe_object(classid, objid, objsubid) || ' | '
	       || coalesce(obj_description(objid, (SELECT relname FROM pg_class WHERE oid = classid)), '-')
	       AS line FROM m
	UNION ALL
	SELECT 'function ' || p.oid::regprocedure || ' | ' || replace(pg_get_functiondef(p.oid), E'\n', ' ')
	       || ' | acl ' || coalesce(p.proacl::text, 'default')
	FROM m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid AND p.prokind <> 'a'
	UNION ALL
	SELECT 'am ' || a.amname || ' ' || a.amtype::text || ' ' || a.amhandler::regproc
	FROM m JOIN pg_am a ON m.classid = 'pg_am'::regclass AND a.oid = m.objid
	UNION ALL
	SELECT 'opclass ' || c.opcname || ' ' || am.amname || ' ' || c.opcintype::regtype || ' default=' || c.opcdefault
	       || ' key=' || c.opckeytype::regtype || ' | '
	       || (SELECT string_agg(format('op %s %s %s %s', o.amopstrategy, o.amopopr::regoperator, o.amoppurpose,
	                                    o.amopsortfamily), ', ' ORDER BY o.amopstrategy)
	           FROM pg_amop o WHERE o.amopfamily = c.opcfamily) || ' | '
	       || coalesce((SELECT string_agg(format('proc %s %s', p.amprocnum, p.amproc::regprocedure), ', '
	                                      ORDER BY p.amprocnum)
	                    FROM pg_amproc p WHERE p.amprocfamily = c.opcfamily), '')
	FROM m JOIN pg_opclass c ON m.classid = 'pg_opclass'::regclass AND c.oid = m.objid
	JOIN pg_am am ON am.oid = c.opcmethod
	UNION ALL
	SELECT 'relation ' || c.oid::regclass || ' ' || c.relkind::text || ' | '
	       || (SELECT string_agg(format('%s %s %s %s', a.attname, format_type(a.atttypid, a.atttypmod),
	                                    a.attnotnull, pg_get_expr(ad.adbin, ad.adrelid)), ', ' ORDER BY a.attnum)
	           FROM pg_attribute a LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
	           WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped)
	       || ' | ' || coalesce(pg_get_viewdef(c.oid), '') || ' | acl ' || coalesce(c.relacl::text, 'default')
	FROM m JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
	UNION ALL
	SELECT 'type ' || t.oid::regtype || ' ' || t.typtype::text
	FROM m JOIN pg_type t ON m.classid = 'pg_type'::regclass AND t.oid = m.objid
) s ORDER BY line};

sub catalog_of
{
	my ($node, $db, $ext) = @_;
	(my $sql = $catalog_sql) =~ s/__EXT__/$ext/;
	return [ split /\n/, $node->safe_psql($db, $sql) ];
}

# lines in one list and not the other, both ways; "" when equal
sub catalog_diff
{
	my ($got, $want) = @_;
	my (%g, %w);
	$g{$_}++ for @$got;
	$w{$_}++ for @$want;
	my @d = ((map { "only after update: $_" } grep { !$w{$_} } sort keys %g),
		(map { "only in a fresh install: $_" } grep { !$g{$_} } sort keys %w));
	return join("\n", @d);
}

sub write_rows
{
	my ($node, $tbl, $from, $to) = @_;
	$node->safe_psql('postgres', qq{
		INSERT INTO $tbl SELECT i, CASE WHEN i % 97 = 0 THEN NULL WHEN i % 89 = 0 THEN 'POINT EMPTY'::geometry
		                               ELSE ST_MakePoint((i * 7919) % 1000 + 0.5, (i * 104729) % 1000 + 0.25) END,
		                        'row ' || i
		FROM generate_series($from, $to) i;});
	return;
}

# rows per table, one line each: what crash recovery must keep
sub row_counts
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		join(' UNION ALL ',
			map { my $e = $_; map { "SELECT '$e->{am}_$_', count(*) FROM $e->{am}_$_" } HiAM::tables($e) } @ams));
}

sub check_all
{
	my ($node, $label) = @_;
	for my $e (@ams)
	{
		for my $t (HiAM::tables($e))
		{
			HiTest::full_check($node, 'postgres', "$label $e->{am}", "$e->{am}_$t", "$e->{am}_${t}_idx",
				windows => 8, knn_points => 3, group => $e->{group_query});
		}
	}
	return;
}

for my $r (@releases)
{
	my ($release, $install) = @$r;
	note "updating from $release ($install) to $this_version";

	my $node = HiTest::new_node("rel_" . ($release =~ tr/./_/r), install_path => $install,
		conf => "hybrid_index.checkpoint_log_size = 256\n");
	is($node->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'hybrid_index'"),
		$release, "$release: the released library made hybrid_index $release");
	$node->safe_psql('postgres', 'CREATE EXTENSION hybrid_index_bench');
	my $bench_release = $node->safe_psql('postgres',
		"SELECT extversion FROM pg_extension WHERE extname = 'hybrid_index_bench'");

	for my $e (@ams)
	{
		HiAM::create_tablespaces($node, $e);
		my $i = 0;
		for my $t (HiAM::tables($e))
		{
			my $tbl = "$e->{am}_$t";
			$node->safe_psql('postgres', "CREATE TABLE $tbl (id int, geom geometry, note text)");
			write_rows($node, $tbl, 1, 3000);
			$node->safe_psql('postgres',
				"CREATE INDEX ${tbl}_idx ON $tbl " . HiAM::index_clause($e, $i, 'id'));
			write_rows($node, $tbl, 3001, 4500);
			$node->safe_psql('postgres', "DELETE FROM $tbl WHERE id % 11 = 0; VACUUM $tbl");
			$i++;
		}
	}
	check_all($node, "$release before the upgrade");
	# changes only in WAL and the redo logs when the server dies
	$node->safe_psql('postgres', 'CHECKPOINT');
	for my $e (@ams)
	{
		for my $t (HiAM::tables($e))
		{
			write_rows($node, "$e->{am}_$t", 4501, 5200);
			$node->safe_psql('postgres', "DELETE FROM $e->{am}_$t WHERE id % 13 = 0");
		}
	}
	my $counts = row_counts($node);
	$node->stop('immediate');

	# the package upgrade: the same data directory on this tree's library
	$node->{_install_path} = undef;
	$node->start;
	is(row_counts($node), $counts,
		"$release: every row written before the crash is there after recovery by the new library");
	is($node->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'hybrid_index'"),
		$release, "$release: before ALTER EXTENSION the database still has $release");
	for my $e (@ams)
	{
		for my $t (HiAM::tables($e))
		{
			is(HiTest::filters_differential($node, 'postgres', "$e->{am}_$t", "$e->{am}_${t}_idx", 8, 1000, 3),
				'ok', "$release: $e->{am}_${t}_idx answers exactly on the new library before ALTER EXTENSION");
		}
	}

	$node->safe_psql('postgres', 'ALTER EXTENSION hybrid_index UPDATE; ALTER EXTENSION hybrid_index_bench UPDATE');
	is($node->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'hybrid_index'"),
		$this_version, "$release: ALTER EXTENSION hybrid_index UPDATE reaches $this_version");
	is($node->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'hybrid_index_bench'"),
		$this_bench_version, "$release: hybrid_index_bench $bench_release updated to $this_bench_version");
	is($node->safe_psql('postgres',
			"SELECT hybrid_index_version() = (SELECT extversion FROM pg_extension WHERE extname = 'hybrid_index')"),
		't', "$release: hybrid_index_version() is the updated extension's");

	$node->safe_psql('postgres', 'CREATE DATABASE fresh');
	$node->safe_psql('fresh', 'CREATE EXTENSION postgis; CREATE EXTENSION hybrid_index; CREATE EXTENSION hybrid_index_bench');
	for my $ext ('hybrid_index', 'hybrid_index_bench')
	{
		my $got = catalog_of($node, 'postgres', $ext);
		my $want = catalog_of($node, 'fresh', $ext);
		cmp_ok(scalar(@$want), '>', 10, "$release: $ext has its objects in a fresh install");
		is(catalog_diff($got, $want), '', "$release: $ext after the update has exactly a fresh install's objects");
	}

	check_all($node, "$release updated");
	for my $e (@ams)
	{
		for my $t (HiAM::tables($e))
		{
			write_rows($node, "$e->{am}_$t", 5201, 6500);
			$node->safe_psql('postgres', "DELETE FROM $e->{am}_$t WHERE id % 17 = 0; VACUUM $e->{am}_$t");
		}
	}
	$node->restart;
	check_all($node, "$release updated, written and restarted");

	# INCLUDE rows written by a release before 0.3.0 stay in heap order
	# (their tree keyed by TID) through all of the above; REINDEX orders them
	for my $e (@ams)
	{
		for my $t (HiAM::tables($e))
		{
			my $idx = "$e->{am}_${t}_idx";
			my $order = $node->safe_psql('postgres', "SELECT hybrid_index_inspect('$idx')->>'include_order'");
			next if $order eq 'none';
			is($order, 'heap', "$release: $idx keeps the release's INCLUDE rows in heap order");
			$node->safe_psql('postgres', "REINDEX INDEX $idx");
			is($node->safe_psql('postgres', "SELECT hybrid_index_inspect('$idx')->>'include_order'"),
				'z-order', "$release: REINDEX keys the INCLUDE rows of $idx by Z-order");
			HiTest::full_check($node, 'postgres', "$release reindexed $e->{am}", "$e->{am}_$t", $idx,
				windows => 8, knn_points => 3, group => $e->{group_query});
		}
	}
	$node->stop;
}

done_testing();
