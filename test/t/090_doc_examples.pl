# 090_doc_examples.pl — every SQL example of README.md and docs/*.md runs
# (issue 43). For each markdown file, its ```sql blocks run in order in a
# fresh database of one node (hybrid_index preloaded); a block that fails,
# fails the test naming the file and the block's line. The convention
# (```text output blocks, `-- expect error:` and `-- skip:` markers,
# tablespace paths) is in test/t/HiDocs.pm and docs/README.md.
# After each file its database, tablespaces and roles are dropped.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiDocs;
use HiTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $root = $HiTest::SRCDIR;
my $node = HiTest::new_node('docs', conf => "hybrid_index.cache_size = 32MB\n");
my $tsroot = $node->basedir . '/tablespaces';

my $n = 0;
for my $file (HiDocs::doc_files($root))
{
	my @blocks = HiDocs::parse("$root/$file");
	next unless @blocks;
	my $db = 'doc_' . ++$n;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, 'CREATE EXTENSION postgis; CREATE EXTENSION hybrid_index;')
	  unless HiDocs::creates_extension(@blocks);
	my ($run, $skipped) = (0, 0);
	for my $b (@blocks)
	{
		if (defined $b->{skip})
		{
			note("$file:$b->{line}: skipped: $b->{skip}");
			$skipped++;
			next;
		}
		my ($ok, $msg) = HiDocs::run_block($b, $file, $node->connstr($db), $tsroot);
		ok($ok, $ok ? $msg : "$file:$b->{line}") or diag($msg);
		$run++;
	}
	note("$file: $run blocks run, $skipped skipped");
	# leave nothing behind for the next file: tablespaces and roles are
	# cluster-wide
	$node->safe_psql('postgres', "DROP DATABASE $db");
	for my $ts (split /\n/, $node->safe_psql('postgres',
		"SELECT spcname FROM pg_tablespace WHERE spcname NOT IN ('pg_default', 'pg_global')"))
	{
		$node->safe_psql('postgres', qq{DROP TABLESPACE "$ts"});
	}
	for my $role (split /\n/, $node->safe_psql('postgres',
		"SELECT rolname FROM pg_roles WHERE oid >= 16384"))
	{
		$node->safe_psql('postgres', qq{DROP ROLE "$role"});
	}
}
ok($n >= 2, "examples found in README.md and docs/ ($n files)");

# the quick start shows, below an EXPLAIN, a plan that scans the index it
# created (that output was compared with psql's above)
my @readme = HiDocs::parse("$root/README.md");
my ($idx) = map { /CREATE INDEX (\w+) ON \w+ USING (?:hyrtree|efind|lbgrid|hgrid)\b/i ? $1 : () } map { $_->{sql} } @readme;
ok(defined $idx, 'README creates one of our indexes') or diag('no CREATE INDEX ... USING <our AM> in README.md');
ok(defined $idx && grep({ $_->{sql} =~ /EXPLAIN/ && grep { /Index (Only )?Scan (using|on) \Q$idx\E\b/ } @{ $_->{output} // [] } } @readme),
	"README shows an EXPLAIN whose output scans $idx");

$node->stop;
done_testing();
