# 003_lifecycle.pl — index files on disk. Each tier's data file is created in
# the database directory of that tier's tablespace (map and log files next
# to the flash data), named hyb_<flash tablespace oid>_<relfilenode>.<suffix>; DROP
# INDEX, DROP TABLE, DROP SCHEMA, TRUNCATE, REINDEX, VACUUM FULL and DROP
# DATABASE leave no orphan; ROLLBACK of a DROP (or of a TRUNCATE) keeps the
# files; ROLLBACK of a CREATE INDEX removes them; DROP TABLESPACE of a tier
# in use fails.
#
# Orphans are found without relying on the naming scheme: after every step
# the set of hyb_* files on disk must equal the union of the files that
# hybrid_index_files() lists for the hyrtree indexes that still exist.
use strict;
use warnings;

use Cwd qw(realpath);
use File::Basename qw(dirname basename);
use FindBin;
use lib $FindBin::RealBin;
use HiTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = HiTest::new_node('lifecycle');
my $pgdata = $node->data_dir;
my $flash_dir  = PostgreSQL::Test::Utils::tempdir();
my $optane_dir = PostgreSQL::Test::Utils::tempdir();
$node->safe_psql('postgres', "CREATE TABLESPACE flash LOCATION '$flash_dir'");
$node->safe_psql('postgres', "CREATE TABLESPACE optane LOCATION '$optane_dir'");
my @all_dirs = ($pgdata, $flash_dir, $optane_dir);

sub S { return $node->safe_psql($_[1] // 'postgres', $_[0]); }

my $dboid = S("SELECT oid FROM pg_database WHERE datname = 'postgres'");

# realpath of the database directory of a tablespace (undef: pg_default)
sub db_dir
{
	my ($location, $db) = @_;
	$db //= $dboid;
	return realpath("$pgdata/base/$db") unless defined $location;
	my @d = glob("$location/PG_*_*/$db");
	return @d ? realpath($d[0]) : "$location/(none)";
}

# files hybrid_index_files lists (and says exist) for one index: path => tier
sub listed
{
	my ($idx, $db) = @_;
	my %l;
	for my $row (split /\n/,
		S("SELECT tier, path FROM hybrid_index_files('$idx') AS f(tier, path, bytes) WHERE bytes IS NOT NULL", $db))
	{
		my ($tier, $path) = split /\|/, $row;
		$l{ realpath($path) // $path } = $tier;
	}
	return \%l;
}

# union of the listed files of every hyrtree index of a database
sub all_listed
{
	my ($db) = @_;
	my @idx = split /\n/, S(q{SELECT c.oid FROM pg_class c JOIN pg_am a ON a.oid = c.relam
		WHERE a.amname = 'hyrtree' AND c.relkind = 'i'}, $db);
	my %all;
	for my $i (@idx) { %all = (%all, %{ listed($i, $db) }); }
	return [ sort keys %all ];
}

sub on_disk { return [ sort map { realpath($_) } HiTest::hyb_files(@all_dirs) ]; }

# After a CHECKPOINT, the disk holds exactly the listed files
sub no_orphans
{
	my ($what) = @_;
	S('CHECKPOINT');
	my $disk = on_disk();
	my $list = all_listed();
	is_deeply($disk, $list, "$what: files on disk = files of existing indexes")
	  or diag("on disk: @$disk\nlisted: @$list");
	return;
}

sub gone
{
	my ($files, $what) = @_;
	S('CHECKPOINT');
	my @left = grep { -e $_ } keys %$files;
	is(scalar(@left), 0, "$what: the old files are gone") or diag("left: @left");
	return;
}

sub index_info
{
	my ($idx) = @_;
	return split /\|/, S("SELECT '$idx'::regclass::oid, pg_relation_filenode('$idx')");
}

S(q{
	SELECT setseed(0.9);
	CREATE TABLE t (id bigint, geom geometry);
	INSERT INTO t SELECT i, ST_MakePoint(random() * 100, random() * 100) FROM generate_series(1, 20000) i;
});

# ---- placement: flash in tablespace "flash", upper levels in "optane" ----
S(q{CREATE INDEX t_idx ON t USING hyrtree (geom)
	WITH (page_size = 2048, placement = 'upper', optane_tablespace = 'optane') TABLESPACE flash});
my ($oid, $filenode) = index_info('t_idx');
my $flash_spc = S(q{SELECT CASE WHEN c.reltablespace = 0 THEN d.dattablespace ELSE c.reltablespace END
	FROM pg_class c, pg_database d WHERE c.relname = 't_idx' AND d.datname = current_database()});
my $files = listed('t_idx');
my @flash  = grep { $files->{$_} eq 'flash' } keys %$files;
my @optane = grep { $files->{$_} eq 'optane' } keys %$files;
my @other  = grep { $files->{$_} !~ /^(flash|optane)$/ } keys %$files;
is(scalar(@flash),  1, 'one flash data file');
is(scalar(@optane), 1, 'one optane data file');
ok(@other >= 1, 'map/log files listed too: ' . join(',', map { $files->{$_} } @other));
is(dirname($optane[0] // ''), db_dir($optane_dir), 'optane data file in the optane tablespace database dir');
is(dirname($flash[0] // ''), db_dir($flash_dir), 'flash data file in the flash tablespace database dir');
is(scalar(grep { dirname($_) eq db_dir($flash_dir) } @other), scalar(@other),
	'map/log files in the flash tablespace database dir');
for my $p (sort keys %$files)
{
	like(basename($p), qr/^hyb_${flash_spc}_${filenode}\.[A-Za-z0-9_]+$/,
		"file name " . basename($p) . " is hyb_<flash tablespace oid>_<relfilenode>.<suffix>");
}
is_deeply(on_disk(), [ sort keys %$files ], 'files on disk = files listed by hybrid_index_files');
for my $p (sort keys %$files)
{
	my $bytes = S("SELECT bytes FROM hybrid_index_files('t_idx') AS f(tier, path, bytes) WHERE path = '$p'");
	is($bytes, -s $p, "size of " . basename($p) . " matches") if $bytes ne '';
}

# ---- DROP TABLESPACE of a tier in use fails ----
my ($ret, $out, $err) = $node->psql('postgres', 'DROP TABLESPACE optane');
isnt($ret, 0, 'DROP TABLESPACE of the optane tier in use fails');
note("DROP TABLESPACE optane: $err");
($ret, $out, $err) = $node->psql('postgres', 'DROP TABLESPACE flash');
isnt($ret, 0, 'DROP TABLESPACE of the flash tier in use fails');
is(scalar(grep { -e $_ } keys %$files), scalar(keys %$files), 'files intact after failed DROP TABLESPACE');
is(S("SELECT hybrid_index_check('t_idx')"), 't', 'index intact after failed DROP TABLESPACE');

# ---- ROLLBACK of DROP INDEX / DROP TABLE keeps the files ----
S('BEGIN; DROP INDEX t_idx; ROLLBACK;');
S('CHECKPOINT');
is(scalar(grep { -e $_ } keys %$files), scalar(keys %$files), 'ROLLBACK of DROP INDEX keeps the files');
is(S("SELECT hybrid_index_check('t_idx')"), 't', 'index works after rolled back DROP');
is(HiTest::filters_differential($node, 'postgres', 't', 't_idx', 10, 100, 3), 'ok',
	'index answers right after rolled back DROP');
S('BEGIN; DROP TABLE t; ROLLBACK;');
S('CHECKPOINT');
is(scalar(grep { -e $_ } keys %$files), scalar(keys %$files), 'ROLLBACK of DROP TABLE keeps the files');
S('BEGIN; SAVEPOINT s; DROP INDEX t_idx; ROLLBACK TO SAVEPOINT s; COMMIT;');
S('CHECKPOINT');
is(scalar(grep { -e $_ } keys %$files), scalar(keys %$files), 'DROP rolled back to a savepoint keeps the files');
no_orphans('after rolled back drops');

# ---- ROLLBACK of TRUNCATE keeps the old files and drops the new ones ----
S('BEGIN; TRUNCATE t; ROLLBACK;');
is_deeply(on_disk(), [ sort keys %$files ], 'ROLLBACK of TRUNCATE: exactly the old files remain');
is(S('SELECT count(*) FROM t'), '20000', 'rows back after rolled back TRUNCATE');
is(S("SELECT hybrid_index_check('t_idx')"), 't', 'index fine after rolled back TRUNCATE');

# ---- ROLLBACK of CREATE INDEX removes its files ----
($ret, $out, $err) = $node->psql('postgres', q{
	BEGIN;
	CREATE INDEX t_tmp ON t USING hyrtree (geom) WITH (placement = 'upper', optane_tablespace = 'optane');
	SELECT path FROM hybrid_index_files('t_tmp') AS f(tier, path, bytes) WHERE bytes IS NOT NULL;
	ROLLBACK;});
my %tmp = map { (realpath($_) // $_) => 1 } grep { m{^/} } split /\n/, $out;
ok(scalar(keys %tmp) >= 3, 'the rolled back index had files: ' . scalar(keys %tmp));
gone(\%tmp, 'ROLLBACK of CREATE INDEX');
no_orphans('ROLLBACK of CREATE INDEX');

# ---- subtransaction: CREATE INDEX rolled back to a savepoint ----
($ret, $out, $err) = $node->psql('postgres', q{
	BEGIN;
	SAVEPOINT a;
	CREATE INDEX t_tmp2 ON t USING hyrtree (geom);
	SELECT path FROM hybrid_index_files('t_tmp2') AS f(tier, path, bytes) WHERE bytes IS NOT NULL;
	ROLLBACK TO SAVEPOINT a;
	COMMIT;});
%tmp = map { (realpath($_) // $_) => 1 } grep { m{^/} } split /\n/, $out;
ok(scalar(keys %tmp) >= 2, 'the index rolled back to a savepoint had files');
gone(\%tmp, 'CREATE INDEX rolled back to a savepoint');

# ---- TRUNCATE: new relfilenode, new files; old ones go ----
S('TRUNCATE t');
my ($oid2, $filenode2) = index_info('t_idx');
is($oid2, $oid, 'TRUNCATE keeps the index oid');
isnt($filenode2, $filenode, 'TRUNCATE gives a new relfilenode');
gone($files, 'TRUNCATE');
$files = listed('t_idx');
ok(scalar(keys %$files) >= 3, 'TRUNCATE created new files');
is(scalar(grep { $files->{$_} eq 'optane' && dirname($_) eq db_dir($optane_dir) } keys %$files), 1,
	'after TRUNCATE the optane tier is still in its tablespace');
no_orphans('TRUNCATE');
S('INSERT INTO t SELECT i, ST_MakePoint(random() * 100, random() * 100) FROM generate_series(1, 10000) i');
is(S("SELECT hybrid_index_check('t_idx')"), 't', 'index after TRUNCATE + inserts passes check');
is(HiTest::filters_differential($node, 'postgres', 't', 't_idx', 10, 100, 4), 'ok',
	'index after TRUNCATE answers right');

# ---- REINDEX ----
S('REINDEX INDEX t_idx');
my ($oid3, $filenode3) = index_info('t_idx');
isnt($filenode3, $filenode2, 'REINDEX gives a new relfilenode');
gone($files, 'REINDEX');
$files = listed('t_idx');
no_orphans('REINDEX');
is(S("SELECT hybrid_index_check('t_idx')"), 't', 'reindexed index passes check');

# ---- REINDEX TABLE CONCURRENTLY: either a new index replaces the old one,
# or it is refused and nothing changes ----
($ret, $out, $err) = $node->psql('postgres', 'REINDEX TABLE CONCURRENTLY t');
if ($ret == 0)
{
	gone($files, 'REINDEX CONCURRENTLY');
	$files = listed('t_idx');
}
else
{
	pass("REINDEX CONCURRENTLY refused: $err");
	is(scalar(grep { -e $_ } keys %$files), scalar(keys %$files), 'refused REINDEX CONCURRENTLY keeps the files');
}
no_orphans('REINDEX CONCURRENTLY');
is(S("SELECT count(*) FROM pg_index WHERE NOT indisvalid"), '0', 'no invalid index left behind');
is(S("SELECT hybrid_index_check('t_idx')"), 't', 'index passes check after REINDEX CONCURRENTLY');
is(HiTest::filters_differential($node, 'postgres', 't', 't_idx', 10, 100, 5), 'ok',
	'index answers right after REINDEX CONCURRENTLY');

# ---- CREATE INDEX CONCURRENTLY: works, or is refused cleanly ----
S('CREATE TABLE t3 AS SELECT * FROM t');
($ret, $out, $err) = $node->psql('postgres', 'CREATE INDEX CONCURRENTLY t3_idx ON t3 USING hyrtree (geom)');
if ($ret == 0)
{
	is(S("SELECT hybrid_index_check('t3_idx')"), 't', 'CREATE INDEX CONCURRENTLY: index passes check');
	is(HiTest::filters_differential($node, 'postgres', 't3', 't3_idx', 10, 100, 8), 'ok',
		'CREATE INDEX CONCURRENTLY: index answers right');
	no_orphans('CREATE INDEX CONCURRENTLY');
	my $cic = listed('t3_idx');
	S('DROP TABLE t3');
	gone($cic, 'DROP TABLE of the concurrently indexed table');
}
else
{
	pass("CREATE INDEX CONCURRENTLY refused: $err");
	S('DROP TABLE t3');
}
no_orphans('after CREATE INDEX CONCURRENTLY');
is(S("SELECT count(*) FROM pg_index WHERE NOT indisvalid"), '0', 'no invalid index after CREATE INDEX CONCURRENTLY');

# ---- VACUUM FULL ----
S('DELETE FROM t WHERE id % 2 = 0');
S('VACUUM FULL t');
gone($files, 'VACUUM FULL');
$files = listed('t_idx');
ok(scalar(keys %$files) >= 3, 'VACUUM FULL made new files');
no_orphans('VACUUM FULL');
is(S("SELECT hybrid_index_check('t_idx')"), 't', 'index after VACUUM FULL passes check');
is(HiTest::filters_differential($node, 'postgres', 't', 't_idx', 10, 100, 6), 'ok',
	'index after VACUUM FULL answers right');

# ---- ALTER INDEX SET TABLESPACE: either moves the files or is refused ----
($ret, $out, $err) = $node->psql('postgres', 'ALTER INDEX t_idx SET TABLESPACE pg_default');
if ($ret == 0)
{
	gone($files, 'ALTER INDEX SET TABLESPACE');
	$files = listed('t_idx');
	is(scalar(grep { $files->{$_} eq 'flash' && dirname($_) eq db_dir(undef) } keys %$files), 1,
		'ALTER INDEX SET TABLESPACE moved the flash data to the default tablespace');
	no_orphans('ALTER INDEX SET TABLESPACE');
	is(S("SELECT hybrid_index_check('t_idx')"), 't', 'index after SET TABLESPACE passes check');
	is(HiTest::filters_differential($node, 'postgres', 't', 't_idx', 10, 100, 7), 'ok',
		'index after SET TABLESPACE answers right');
}
else
{
	pass("ALTER INDEX SET TABLESPACE refused: $err");
	is(S("SELECT hybrid_index_check('t_idx')"), 't', 'index intact after refused SET TABLESPACE');
	no_orphans('refused SET TABLESPACE');
}

# ---- DROP INDEX ----
S('DROP INDEX t_idx');
gone($files, 'DROP INDEX');
no_orphans('DROP INDEX');

# ---- DROP TABLE drops its hyrtree indexes' files ----
S(q{CREATE INDEX t_a ON t USING hyrtree (geom) WITH (placement = 'upper', optane_tablespace = 'optane');
	CREATE INDEX t_b ON t USING hyrtree (geom) WITH (page_size = 4096)});
my %ab = (%{ listed('t_a') }, %{ listed('t_b') });
ok(scalar(keys %ab) >= 5, 'two more indexes have files');
S('DROP TABLE t');
gone(\%ab, 'DROP TABLE');
no_orphans('DROP TABLE');

# ---- DROP SCHEMA ... CASCADE ----
S(q{CREATE SCHEMA s; CREATE TABLE s.t (id int, geom geometry);
	INSERT INTO s.t SELECT i, ST_MakePoint(i, i) FROM generate_series(1, 1000) i;
	CREATE INDEX s_idx ON s.t USING hyrtree (geom) TABLESPACE flash});
my $sfiles = listed('s.s_idx');
S('DROP SCHEMA s CASCADE');
gone($sfiles, 'DROP SCHEMA CASCADE');
no_orphans('DROP SCHEMA CASCADE');

# ---- a checkpoint gives the free tail of a tier file back ----
# Rewritten pages go to the lowest free slot: the first VACUUM rewrites
# every leaf past the end of the file (no slot is free after the build);
# its checkpoint then moves them down into the slots it freed and cuts the
# end off, so the file never stays longer than its live pages and 1/8 (plus
# 16 slots).  The second VACUUM removes more entries: the file keeps its
# size or shrinks.
sub flash_bytes
{
	return S("SELECT bytes FROM hybrid_index_files('$_[0]') WHERE kind = 'flash'");
}
S(q{CREATE TABLE shrink (id int, geom geometry) WITH (autovacuum_enabled = off);
	INSERT INTO shrink SELECT i, ST_MakePoint(i % 200, i / 200) FROM generate_series(1, 30000) i;
	CREATE INDEX shrink_idx ON shrink USING hyrtree (geom) WITH (page_size = 4096);
	SELECT hybrid_index_checkpoint('shrink_idx');});
my $b0 = flash_bytes('shrink_idx');
S(q{DELETE FROM shrink WHERE id % 3 = 0; VACUUM shrink; SELECT hybrid_index_checkpoint('shrink_idx');});
my $b1 = flash_bytes('shrink_idx');
S(q{DELETE FROM shrink WHERE id % 3 = 1; VACUUM shrink; SELECT hybrid_index_checkpoint('shrink_idx');});
my $b2 = flash_bytes('shrink_idx');
note("flash file: $b0 bytes built, $b1 after the first rewrite, $b2 after the second");
my $pages2 = S("SELECT pages FROM hybrid_index_stats('shrink_idx') WHERE tier = 'flash'");
cmp_ok($b1, '<=', $b0, 'rewriting every leaf after the build: the checkpoint leaves the file no longer than built');
cmp_ok($b2, '<=', $b1, 'rewriting them again: no longer either');
cmp_ok($b2 / 4096, '<=', $pages2 + int($pages2 / 8) + 16, 'the file is within 1/8 (+16 slots) of its live pages');
is(S("SELECT hybrid_index_check('shrink_idx')"), 't', 'the index is intact after its file shrank');
is(S(q{SET enable_seqscan = off; SET enable_bitmapscan = off;
	SELECT count(*) FROM shrink WHERE geom && ST_MakeEnvelope(-1, -1, 300, 300)}), '10000',
	'every row is found after the file shrank');
$node->restart;
is(S("SELECT hybrid_index_check('shrink_idx')"), 't', 'and after a restart');
S('DROP TABLE shrink');
no_orphans('file shrink');

# ---- DROP DATABASE removes the files in every tablespace ----
S('CREATE DATABASE db2');
HiTest::setup_db($node, 'db2');
S(q{CREATE TABLE t (id int, geom geometry);
	INSERT INTO t SELECT i, ST_MakePoint(i % 100, i / 100) FROM generate_series(1, 5000) i;
	CREATE INDEX t_idx ON t USING hyrtree (geom)
	  WITH (placement = 'upper', optane_tablespace = 'optane') TABLESPACE flash;}, 'db2');
my $db2files = listed('t_idx', 'db2');
ok(scalar(keys %$db2files) >= 3, 'db2 has index files');
S('DROP DATABASE db2');
gone($db2files, 'DROP DATABASE');

# ---- ALTER DATABASE SET TABLESPACE would move our files with the directory ----
S('CREATE DATABASE db3');
HiTest::setup_db($node, 'db3');
S(q{CREATE TABLE t (id int, geom geometry);
	INSERT INTO t SELECT i, ST_MakePoint(i % 100, i / 100) FROM generate_series(1, 5000) i;
	CREATE INDEX t_idx ON t USING hyrtree (geom);}, 'db3');
($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\nALTER DATABASE db3 SET TABLESPACE flash");
isnt($ret, 0, 'ALTER DATABASE SET TABLESPACE is refused while our files are in its default tablespace');
like($err, qr/0A000:.*cannot move database "db3".*\n.*DETAIL:.*hyb_\d+_\d+\./s, 'the error names a file of ours') or diag($err);
is(S("SELECT hybrid_index_check('t_idx')", 'db3'), 't', 'the index is intact');
S('DROP INDEX t_idx', 'db3');
($ret, $out, $err) = $node->psql('postgres', 'ALTER DATABASE db3 SET TABLESPACE flash');
is($ret, 0, 'ALTER DATABASE SET TABLESPACE works once no index of ours is there') or diag($err);
S('DROP DATABASE db3');

# ---- nothing left anywhere; the tablespaces can be dropped now ----
S('CHECKPOINT');
my $left = on_disk();
is(scalar(@$left), 0, 'no hyb_* file left anywhere') or diag("left: @$left");
($ret, $out, $err) = $node->psql('postgres', 'DROP TABLESPACE optane');
is($ret, 0, 'DROP TABLESPACE optane succeeds once unused') or diag($err);
($ret, $out, $err) = $node->psql('postgres', 'DROP TABLESPACE flash');
is($ret, 0, 'DROP TABLESPACE flash succeeds once unused') or diag($err);

$node->stop;
done_testing();
