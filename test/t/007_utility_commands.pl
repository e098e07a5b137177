# 007_utility_commands.pl — the DBA's commands work on every access method,
# the tier files following, answers exact after each (issue 19, item 5):
# CLUSTER ... USING (the heap in the index's spatial order), REINDEX TABLE
# CONCURRENTLY, ALTER INDEX ... SET TABLESPACE (and its rollback), ALTER
# INDEX ALL IN TABLESPACE and DROP INDEX CONCURRENTLY.  After each step the
# hyb_* files on disk are exactly those hybrid_index_files() lists for the
# indexes that exist.
use strict;
use warnings;

use Cwd qw(realpath);
use FindBin;
use lib $FindBin::RealBin;
use HiAM;
use HiTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = HiTest::new_node('utility');
my $pgdata = $node->data_dir;
my $spc_dir = PostgreSQL::Test::Utils::tempdir();
$node->safe_psql('postgres', "CREATE TABLESPACE spc LOCATION '$spc_dir'");

sub S { return $node->safe_psql('postgres', $_[0]); }

# every hyb_* file on disk equals every file our existing indexes list
sub files_match
{
	my ($what) = @_;
	S('CHECKPOINT');
	my @disk = sort map { realpath($_) } HiTest::hyb_files($pgdata, $spc_dir);
	my %listed;
	for my $p (split /\n/, S(q{
		SELECT f.path FROM pg_class c JOIN pg_am a ON a.oid = c.relam,
		     hybrid_index_files(c.oid) AS f(kind, path, bytes)
		WHERE a.amname IN ('hyrtree', 'efind', 'lbgrid', 'hgrid') AND c.relkind = 'i'
		  AND f.bytes IS NOT NULL}))
	{
		$listed{ realpath($p) // $p } = 1;
	}
	is_deeply(\@disk, [ sort keys %listed ], "$what: files on disk = files of existing indexes");
	return;
}

# the directory the index's flash tier file is in
sub flash_dir
{
	my ($idx) = @_;
	my $p = S("SELECT path FROM hybrid_index_files('$idx') AS f(kind, path, bytes) WHERE kind = 'flash'");
	$p =~ s{/[^/]+$}{};
	return realpath($p);
}

HiTest::for_each_am(sub {
	my ($e) = @_;
	my $am = $e->{am};
	HiTest::skip_unless_am($node, $e);
	my $t = "u_$am";
	my $idx = "u_${am}_idx";
	my $using = $e->{opclass} ? "geom $e->{opclass}" : 'geom';
	S(qq{
		SELECT setseed(0.42);
		CREATE TABLE $t (id bigint, geom geometry);
		INSERT INTO $t SELECT i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 4000) i;
		INSERT INTO $t SELECT 5000 + i, ST_Buffer(ST_MakePoint(random() * 1000, random() * 1000), 2 + random() * 10)
			FROM generate_series(1, 300) i;
		INSERT INTO $t VALUES (9001, NULL), (9002, 'POINT EMPTY');
		CREATE INDEX $idx ON $t USING $am ($using);
		ANALYZE $t;});

	# CLUSTER: the heap in the index's order, which is spatial: the first
	# 2 % of the rows in heap order cover a small part of the extent
	S("CLUSTER $t USING $idx");
	my $frac = S(qq{
		SELECT ST_Area(ST_Extent(geom)::geometry) / 1e6 FROM
		  (SELECT geom FROM $t WHERE geom IS NOT NULL AND NOT ST_IsEmpty(geom) ORDER BY ctid LIMIT 86) s});
	cmp_ok($frac, '<', 0.25, "$am CLUSTER: the first rows in heap order are close together (extent share $frac)");
	is(S("SELECT indisclustered FROM pg_index WHERE indexrelid = '$idx'::regclass"), 't',
		"$am CLUSTER: the index is the clustering index");
	HiTest::full_check($node, 'postgres', "$am CLUSTER", $t, $idx);
	files_match("$am CLUSTER");

	# REINDEX TABLE CONCURRENTLY: a new index, the old files gone
	S("REINDEX TABLE CONCURRENTLY $t");
	HiTest::full_check($node, 'postgres', "$am REINDEX CONCURRENTLY", $t, $idx);
	files_match("$am REINDEX CONCURRENTLY");

	# ALTER INDEX SET TABLESPACE: the files follow; a rollback keeps them
	S("ALTER INDEX $idx SET TABLESPACE spc");
	like(flash_dir($idx), qr/^\Q@{[realpath($spc_dir)]}\E/, "$am SET TABLESPACE: the flash tier is in the new tablespace");
	HiTest::full_check($node, 'postgres', "$am SET TABLESPACE", $t, $idx);
	files_match("$am SET TABLESPACE");
	S("BEGIN; ALTER INDEX $idx SET TABLESPACE pg_default; ROLLBACK;");
	like(flash_dir($idx), qr/^\Q@{[realpath($spc_dir)]}\E/, "$am SET TABLESPACE rolled back: the files stay");
	is(S("SELECT hybrid_index_check('$idx')"), 't', "$am SET TABLESPACE rolled back: the index passes check");
	files_match("$am SET TABLESPACE rolled back");

	# ALTER INDEX ALL IN TABLESPACE: every index moves, ours with its files
	S("ALTER INDEX ALL IN TABLESPACE spc SET TABLESPACE pg_default");
	is(flash_dir($idx), realpath("$pgdata/base/" . S("SELECT oid FROM pg_database WHERE datname = 'postgres'")),
		"$am ALL IN TABLESPACE: the flash tier is back in the database's directory");
	HiTest::full_check($node, 'postgres', "$am ALL IN TABLESPACE", $t, $idx);
	files_match("$am ALL IN TABLESPACE");

	# DROP INDEX CONCURRENTLY: the files go
	S("DROP INDEX CONCURRENTLY $idx");
	files_match("$am DROP INDEX CONCURRENTLY");
	S("DROP TABLE $t");
});

$node->stop;
done_testing();
