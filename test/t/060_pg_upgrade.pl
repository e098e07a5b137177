# 060_pg_upgrade.pl — pg_upgrade from PostgreSQL 15 to the server under
# test (16, 18), --copy and --link, keeps every index (issue 40).
#
# The old cluster (Debian's PostgreSQL 15 with its PostGIS, and this
# extension built for it by tools/test-all.sh) holds, for every access
# method, an index in the default tablespace, one in a second tablespace,
# one with a fast tier (hyrtree, hgrid), and an index on a partitioned
# table; rows are inserted after the builds and some deleted, so the
# indexes hold more than their builds.  After pg_upgrade:
#  - an index refuses until its files are brought over, with an error that
#    names it and says how (hybrid_index_upgrade_files), never an empty
#    answer;
#  - SELECT hybrid_index_upgrade_files('<old data directory>', link) brings
#    them (a second call brings nothing); then every index answers exactly
#    (index and bitmap scans = sequential scan, kNN in true distance order,
#    hybrid_index_check with heapallindexed), takes inserts and deletes,
#    and answers exactly again after a restart;
#  - only superusers may call it.
# Runs when the server under test is newer than 15 and a PostgreSQL 15 with
# hybrid_index and PostGIS is installed; skips (saying why) otherwise.
use strict;
use warnings;

use File::Path qw(make_path);
use FindBin;
use lib $FindBin::RealBin;
use HiAM;
use HiTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $old_install = $ENV{HI_OLD_INSTALL} // '/usr/lib/postgresql/15';
my $new_bin = `pg_config --bindir`;
chomp $new_bin;
my $new_major = `pg_config --version`;
$new_major =~ s/^PostgreSQL (\d+).*\n?$/$1/s;
my $old_pkglib = -x "$old_install/bin/pg_config" ? `$old_install/bin/pg_config --pkglibdir` : '';
chomp $old_pkglib;

plan skip_all => "the server under test is PostgreSQL $new_major: nothing older to upgrade from"
  if $new_major <= 15;
plan skip_all => "no PostgreSQL 15 with hybrid_index and PostGIS in $old_install"
  unless $old_pkglib && -f "$old_pkglib/hybrid_index.so" && -f "$old_pkglib/postgis-3.so";

my @ams = HiAM::selected();

# the indexes of one AM: name => [table, index]
sub indexes_of
{
	my ($am) = @_;
	my %i = (
		"u_$am"   => ["u_$am", "u_${am}_idx"],
		"ts_$am"  => ["ts_$am", "ts_${am}_idx"],
		"pt_$am"  => ["pt_${am}_1", "pt_${am}_1_geom_idx"],
		"pt2_$am" => ["pt_${am}_2", "pt_${am}_2_geom_idx"]);
	$i{"fast_$am"} = ["fast_$am", "fast_${am}_idx"] if $am eq 'hyrtree' || $am eq 'hgrid';
	return %i;
}

# the tables rows are written to (a partitioned table through its parent)
sub write_targets
{
	my ($am) = @_;
	my @t = ("u_$am", "ts_$am", "pt_$am");
	push @t, "fast_$am" if $am eq 'hyrtree' || $am eq 'hgrid';
	return @t;
}

sub make_old
{
	my ($tag) = @_;
	my $old = HiTest::new_node("old_$tag", install_path => $old_install);
	my $tsdir = PostgreSQL::Test::Utils::tempdir();
	my $fastdir = PostgreSQL::Test::Utils::tempdir();
	$old->safe_psql('postgres', "CREATE TABLESPACE ts2 LOCATION '$tsdir'");
	$old->safe_psql('postgres', "CREATE TABLESPACE fast LOCATION '$fastdir'");
	for my $e (@ams)
	{
		my $am = $e->{am};
		next unless HiAM::exists_in($old, 'postgres', $am);
		my $using = $e->{opclass} ? "geom $e->{opclass}" : 'geom';
		my $fast = $am eq 'hyrtree' ? "WITH (placement = 'upper', optane_tablespace = 'fast')"
		  : $am eq 'hgrid' ? "WITH (optane_tablespace = 'fast')" : '';
		my $rows = q{SELECT i, CASE WHEN i % 97 = 0 THEN NULL WHEN i % 89 = 0 THEN 'POINT EMPTY'::geometry
		             WHEN i % 5 = 0 THEN ST_MakeEnvelope(random() * 990, random() * 990, random() * 990 + 10, random() * 990 + 10)
		             ELSE ST_MakePoint(random() * 1000, random() * 1000) END FROM generate_series(1, 4000) i};
		$old->safe_psql('postgres', qq{
			SELECT setseed(0.4);
			CREATE TABLE u_$am (id bigint, geom geometry);
			INSERT INTO u_$am $rows;
			CREATE INDEX u_${am}_idx ON u_$am USING $am ($using);
			CREATE TABLE ts_$am (id bigint, geom geometry);
			INSERT INTO ts_$am $rows;
			CREATE INDEX ts_${am}_idx ON ts_$am USING $am ($using) TABLESPACE ts2;
			CREATE TABLE pt_$am (id bigint, geom geometry) PARTITION BY RANGE (id);
			CREATE TABLE pt_${am}_1 PARTITION OF pt_$am FOR VALUES FROM (MINVALUE) TO (2000);
			CREATE TABLE pt_${am}_2 PARTITION OF pt_$am FOR VALUES FROM (2000) TO (100000);
			INSERT INTO pt_$am $rows;
			CREATE INDEX ON pt_$am USING $am ($using);});
		$old->safe_psql('postgres', qq{
			CREATE TABLE fast_$am (id bigint, geom geometry);
			INSERT INTO fast_$am $rows;
			CREATE INDEX fast_${am}_idx ON fast_$am USING $am ($using) $fast;}) if $fast;
		# more than the builds: inserts and deletes reach the indexes' logs
		for my $t (write_targets($am))
		{
			$old->safe_psql('postgres', qq{
				INSERT INTO $t SELECT CASE WHEN i % 2 = 0 THEN -i ELSE 5000 + i END,
				  ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 300) i;
				DELETE FROM $t WHERE id % 7 = 3;});
		}
	}
	strip_attver($old);
	$old->stop;
	return $old;
}

# Debian's 15.20 stamps every column with the attribute option pg_attver,
# which the servers under test here (16.14, 18.6, released before it) do
# not know: pg_upgrade's restore of any table into them fails ("unrecognized
# parameter"), with or without hybrid_index.  Cleared in the old cluster's
# catalog (the throw-away cluster of this test only) so that the upgrade
# itself is what is tested.
sub strip_attver
{
	my ($old) = @_;
	return unless $old->safe_psql('postgres',
		"SELECT count(*) > 0 FROM pg_attribute WHERE array_to_string(attoptions, ',') LIKE '%pg_attver=%'") eq 't';
	for my $db (split /\n/, $old->safe_psql('postgres',
		"SELECT datname FROM pg_database WHERE datallowconn"))
	{
		$old->safe_psql($db, q{
			UPDATE pg_attribute
			SET attoptions = NULLIF(ARRAY(SELECT o FROM unnest(attoptions) o WHERE o NOT LIKE 'pg_attver=%'), '{}')
			WHERE attrelid >= 16384 AND array_to_string(attoptions, ',') LIKE '%pg_attver=%'});
	}
	return;
}

sub upgrade
{
	my ($old, $tag, $mode) = @_;
	# 18's initdb turns data checksums on; pg_upgrade needs the old
	# cluster's setting (off), as the DBA's initdb of the new cluster would
	my $new = HiTest::new_node("new_$tag", start => 0,
		initdb_extra => $new_major >= 18 ? ['--no-data-checksums'] : []);
	my $cwd = PostgreSQL::Test::Utils::tempdir();
	my @cmd = (
		"$new_bin/pg_upgrade", '--no-sync',
		'-b', $old->config_data('--bindir'), '-B', $new_bin,
		'-d', $old->data_dir, '-D', $new->data_dir,
		'-p', $old->port, '-P', $new->port,
		'-s', $new->host, $mode);
	my ($stdout, $stderr);
	my $ok = IPC::Run::run(\@cmd, '>', \$stdout, '2>', \$stderr, init => sub { chdir $cwd });
	ok($ok, "pg_upgrade $mode from 15 to $new_major")
	  or diag("stdout:\n$stdout\nstderr:\n$stderr\n" . join("\n",
		map { "--- $_\n" . slurp_file($_) } glob($new->data_dir . '/pg_upgrade_output.d/*/log/*')));
	$new->start;
	return $new;
}

sub check_all
{
	my ($new, $label) = @_;
	for my $e (@ams)
	{
		my $am = $e->{am};
		next unless HiAM::exists_in($new, 'postgres', $am);
		my %i = indexes_of($am);
		for my $k (sort keys %i)
		{
			my ($tbl, $idx) = @{ $i{$k} };
			HiTest::full_check($new, 'postgres', "$label $am", $tbl, $idx);
			is(HiTest::try_psql($new, 'postgres',
					"SELECT hybrid_index_check('$idx', heapallindexed => true)"),
				't', "$label $am: $idx holds every row of its table (heapallindexed)");
		}
	}
	return;
}

for my $mode ('--copy', '--link')
{
	(my $tag = $mode) =~ s/^--//;
	my $old = make_old($tag);
	my $new = upgrade($old, $tag, $mode);

	# before the files are there: refused, by name, with the remedy
	my ($ret, $out, $err) = $new->psql('postgres',
		"SET enable_seqscan = off; SELECT count(*) FROM u_hyrtree WHERE geom && ST_MakeEnvelope(0, 0, 500, 500)");
	isnt($ret, 0, "$tag: an upgraded index refuses before its files are brought over");
	like($err, qr/index "u_hyrtree_idx".*missing/s, "$tag: the error names the index");
	like($err, qr/hybrid_index_upgrade_files\('<old data directory>'\)/,
		"$tag: the hint gives the command");

	# only superusers
	$new->safe_psql('postgres', 'CREATE ROLE plain LOGIN');
	($ret, $out, $err) = $new->psql('postgres',
		"SET ROLE plain; SELECT hybrid_index_upgrade_files('" . $old->data_dir . "')");
	isnt($ret, 0, "$tag: a plain role cannot call hybrid_index_upgrade_files");
	like($err, qr/permission denied/, "$tag: permission denied");
	($ret, $out, $err) = $new->psql('postgres', "SELECT hybrid_index_upgrade_files('" . $new->data_dir . "')");
	like($err, qr/is not the data directory of the cluster this one was upgraded from/,
		"$tag: its own data directory is refused");

	my $link = $mode eq '--link' ? 'true' : 'false';
	my $n = $new->safe_psql('postgres',
		"SELECT hybrid_index_upgrade_files('" . $old->data_dir . "', link => $link)");
	cmp_ok($n, '>', 0, "$tag: hybrid_index_upgrade_files brought $n files");
	is($new->safe_psql('postgres', "SELECT hybrid_index_upgrade_files('" . $old->data_dir . "', link => $link)"),
		'0', "$tag: a second call brings nothing");
	if ($mode eq '--link')
	{
		my ($f) = grep { /\.map$/ } HiTest::hyb_files($new->data_dir . '/base');
		my @st = stat($f);
		cmp_ok($st[3], '>=', 2, "$tag: the files are hard links of the old cluster's");
	}
	check_all($new, $tag);

	# writes on the upgraded indexes, then a restart
	for my $e (@ams)
	{
		next unless HiAM::exists_in($new, 'postgres', $e->{am});
		for my $t (write_targets($e->{am}))
		{
			$new->safe_psql('postgres', qq{
				INSERT INTO $t SELECT CASE WHEN i % 2 = 0 THEN -1000 - i ELSE 9000 + i END,
				  ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 200) i;
				DELETE FROM $t WHERE id % 11 = 4;
				VACUUM $t;});
		}
	}
	$new->restart;
	check_all($new, "$tag after writes and a restart");
	$new->stop;
}

done_testing();
