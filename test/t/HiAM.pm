# HiAM.pm — the access methods the shared TAP tests run against, and how.
#
# One entry per access method. The crash, concurrency and restart routines
# (HiCrash.pm, HiTest.pm) take an entry and build one table per index
# configuration in `indexes`; an AM whose name is not in pg_am (one still
# being written) is skipped, saying so. Adding an access method to every
# shared test is adding its entry here.
#
# Keys of an entry:
#   am           access method name (USING ...)
#   opclass      operator class, when the AM has more than its default
#   indexes      reloptions (WITH ...) of the indexes, one table each; the
#                first is tuned for constant structure changes (small pages,
#                buckets or buffers), the others for the AM's other modes
#   tablespaces  tablespaces the reloptions name (created in a temp dir)
#   conf         extra postgresql.conf lines for the AM's nodes (the crash
#                node has flash write latency emulation on)
#   crash_modes  extra crash points (HiCrash.pm) besides the generic ones
#   group_query  1: the AM answers `geom ~= ANY (array)` from the index,
#                checked against a sequential scan
#   activity     SQL (%s: the first index) returning true when the AM's own
#                machinery (flushes, splits, ...) ran during a pgbench run
package HiAM;

use strict;
use warnings;

our @AMS = (
	{
		am          => 'hyrtree',
		indexes     => [
			"page_size = 2048",
			"page_size = 4096, placement = 'upper', optane_tablespace = 'optane'"
		],
		tablespaces => ['optane'],
		conf        => "hybrid_index.checkpoint_log_size = 256\n",
	},
	{
		am      => 'efind',
		indexes => [
			"page_size = 2048, buffer_size = 16",
			"page_size = 2048, buffer_size = 1024, log_size = 128, flush_policy = 'mha', "
			  . "read_buffer_policy = '2q'"
		],
		# t2's compactions write hundreds of buffered pages at once; slower
		# writes make them last long enough to be caught
		crash_modes => ['compaction'],
		conf        => "hybrid_index.flash_write_latency = 2000\nhybrid_index.flash_parallelism = 2\n",
		activity    => "SELECT (e->'flushes'->>'count')::int > 0 AND (e->>'merged_reads')::int > 0 "
		  . "AND (e->'read_buffer'->>'hits')::int > 0 FROM (SELECT hybrid_index_inspect('%s')->'efind' AS e) s",
	},
	{
		am      => 'lbgrid',
		indexes => [
			"page_size = 2048, bucket_capacity = 20, buffer_size = 64, cold_size = 8, max_list = 8",
			"page_size = 4096, bucket_capacity = 30, buffer_size = 64, cold_size = 8, logging = off"
		],
		conf        => "hybrid_index.checkpoint_log_size = 256\n",
		group_query => 1,
		activity    => "SELECT (j->>'splits')::int > 0 FROM hybrid_index_inspect('%s') j",
	},
	{
		am          => 'hgrid',
		opclass     => 'hgrid_geometry_ops',
		indexes     => [
			"page_size = 2048, bucket_capacity = 24, buffer_size = 128, cold_size = 8, "
			  . "selectivity = 1.1, cooling_period = 4000",
			"page_size = 4096, bucket_capacity = 40, buffer_size = 128, cold_size = 8, "
			  . "selectivity = 1.2, directories_on_optane = on, placement = random"
		],
		conf        => "hybrid_index.checkpoint_log_size = 256\n",
		group_query => 1,
	},
);

# The entries to run: all, or those named in $ENV{HI_AMS} (space or comma
# separated), in table order.
sub selected
{
	my @want = split /[\s,]+/, ($ENV{HI_AMS} // '');
	return @AMS unless @want;
	my %w = map { $_ => 1 } @want;
	return grep { $w{ $_->{am} } } @AMS;
}

sub entry
{
	my ($am) = @_;
	my ($e) = grep { $_->{am} eq $am } @AMS;
	die "no HiAM entry for $am" unless $e;
	return $e;
}

# Is the access method installed (in pg_am of database $db)?
sub exists_in
{
	my ($node, $db, $am) = @_;
	return $node->safe_psql($db, "SELECT count(*) FROM pg_am WHERE amname = '$am'") eq '1';
}

# "USING am (geom opclass) [INCLUDE (...)] WITH (...)" for index
# configuration $i of entry $e; the second configuration of every AM gets
# the INCLUDE columns $include, if given
sub index_clause
{
	my ($e, $i, $include) = @_;
	my $with = $e->{indexes}[$i];
	my $col  = $e->{opclass} ? "geom $e->{opclass}" : 'geom';
	my $inc  = ($include && $i == 1) ? " INCLUDE ($include)" : '';
	return "USING $e->{am} ($col)$inc" . ($with ne '' ? " WITH ($with)" : '');
}

# Table names of an entry: t1, t2, ... (indexes t1_idx, t2_idx, ...)
sub tables
{
	my ($e) = @_;
	return map { 't' . ($_ + 1) } 0 .. $#{ $e->{indexes} };
}

# Create the tablespaces the entry's reloptions name, in temp dirs
sub create_tablespaces
{
	my ($node, $e) = @_;
	for my $spc (@{ $e->{tablespaces} || [] })
	{
		my $dir = PostgreSQL::Test::Utils::tempdir();
		$node->safe_psql('postgres', "CREATE TABLESPACE $spc LOCATION '$dir'");
	}
	return;
}

1;
