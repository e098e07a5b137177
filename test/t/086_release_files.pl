# 086_release_files.pl — the files that name the release agree (issue 43):
# hybrid_index.control's default_version is the version of META.json, of
# debian/changelog's newest entry, of CHANGELOG.md's newest section and of
# the C library (hybrid_index_version()); every release in
# tools/releases.txt reaches it through the scripts in sql/updates/; and
# the Makefile installs those scripts.  No server is needed.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiTest;
use PostgreSQL::Test::Utils;
use Test::More;

my $src = $HiTest::SRCDIR;
my ($version) = slurp_file("$src/hybrid_index.control") =~ /^default_version = '([^']+)'/m;
my ($bench) = slurp_file("$src/hybrid_index_bench.control") =~ /^default_version = '([^']+)'/m;
like($version, qr/^\d+\.\d+\.\d+$/, "hybrid_index.control: default_version $version");

my $meta = slurp_file("$src/META.json");
like($meta, qr/^\s{3}"version": "\Q$version\E",$/m, "META.json: the distribution is $version");
like($meta, qr/"hybrid_index": \{[^}]*"version": "\Q$version\E"/s, "META.json: hybrid_index is $version");
like($meta, qr/"hybrid_index_bench": \{[^}]*"version": "\Q$bench\E"/s, "META.json: hybrid_index_bench is $bench");

my ($deb) = slurp_file("$src/debian/changelog") =~ /^hybrid-index \(([^)]+)\)/;
like($deb, qr/^\Q$version\E-\d+$/, "debian/changelog: newest entry $deb is $version");

my ($changelog) = slurp_file("$src/CHANGELOG.md") =~ /^## \[?(\d+\.\d+\.\d+)/m;
is($changelog, $version, 'CHANGELOG.md: the newest section is this version');

my ($cver) = slurp_file("$src/src/base/hi_base.h") =~ /#define HI_EXTENSION_VERSION\s+"([^"]+)"/;
is($cver, $version, 'the C library reports this version (HI_EXTENSION_VERSION)');

# every release reaches this version through sql/updates
my %step;
for my $f (glob("$src/sql/updates/hybrid_index--*--*.sql"))
{
	my ($from, $to) = $f =~ /hybrid_index--([^-]+)--([^-]+)\.sql$/;
	$step{$from} = $to;
}
my @releases = map { (split ' ')[0] } grep { !/^\s*(#|$)/ } split /\n/, slurp_file("$src/tools/releases.txt");
ok(@releases > 0, 'tools/releases.txt lists the released versions');
for my $r (@releases)
{
	my ($v, @path) = ($r);
	while ($v ne $version && exists $step{$v} && @path < 50)
	{
		push @path, $step{$v};
		$v = $step{$v};
	}
	is($v, $version, "release $r updates to $version (" . join(' -> ', $r, @path) . ')');
}
like(slurp_file("$src/Makefile"), qr/^DATA = \$\(wildcard sql\/updates\/\*\.sql\)$/m,
	'the Makefile installs every update script');

done_testing();
