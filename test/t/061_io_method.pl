# 061_io_method.pl — PostgreSQL 18's own asynchronous I/O beside ours
# (issue 40): with io_method = worker (18's default), io_uring (where the
# server was built with liburing) and sync, every access method builds,
# takes inserts and deletes, answers exactly (index and bitmap scans =
# sequential scan, kNN) before and after a restart, and our io_uring rings
# work beside PostgreSQL's (no backend logs the fallback to synchronous
# I/O).  Skips on servers without io_method (before 18).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiAM;
use HiTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $probe = HiTest::new_node('io_probe', preload => 0);
my $methods = $probe->safe_psql('postgres',
	"SELECT coalesce((SELECT array_to_string(enumvals, ' ') FROM pg_settings WHERE name = 'io_method'), '')");
$probe->stop;
plan skip_all => 'this server has no io_method (PostgreSQL 17 or older)' if $methods eq '';

for my $method (grep { $methods =~ /\b$_\b/ } qw(worker io_uring sync))
{
	my $node = HiTest::new_node("io_$method", conf => "io_method = $method\nlog_min_messages = log\n");
	is($node->safe_psql('postgres', 'SHOW io_method'), $method, "io_method = $method");
	my @ams = grep { HiAM::exists_in($node, 'postgres', $_->{am}) } HiAM::selected();
	for my $e (@ams)
	{
		my $am = $e->{am};
		my $using = $e->{opclass} ? "geom $e->{opclass}" : 'geom';
		$node->safe_psql('postgres', qq{
			SELECT setseed(0.6);
			CREATE TABLE t_$am (id bigint, geom geometry);
			INSERT INTO t_$am SELECT i, CASE WHEN i % 101 = 0 THEN NULL WHEN i % 103 = 0 THEN 'POINT EMPTY'::geometry
			  ELSE ST_MakePoint(random() * 1000, random() * 1000) END FROM generate_series(1, 20000) i;
			CREATE INDEX t_${am}_idx ON t_$am USING $am ($using);
			INSERT INTO t_$am SELECT 30000 + i, ST_MakePoint(random() * 1000, random() * 1000) FROM generate_series(1, 2000) i;
			DELETE FROM t_$am WHERE id % 9 = 2;
			VACUUM t_$am;});
		HiTest::full_check($node, 'postgres', "$method $am", "t_$am", "t_${am}_idx");
	}
	$node->restart;
	for my $e (@ams)
	{
		HiTest::full_check($node, 'postgres', "$method after a restart $e->{am}", "t_$e->{am}", "t_$e->{am}_idx");
	}
	my $log = slurp_file($node->logfile);
	unlike($log, qr/io_uring unavailable/, "io_method = $method: our io_uring rings work beside PostgreSQL's I/O")
	  unless $method eq 'sync';
	$node->stop;
}

done_testing();
