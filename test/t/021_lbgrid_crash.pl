# 021_lbgrid_crash.pl — crash safety of lbgrid, LB-Grid (t) and GFFM (t2).
# Background psql sessions insert (and delete, and roll back) while the
# server is killed; small buckets and buffers make splits, CLRU flushes and
# log-bucket compaction happen all the time:
#   round 1: kill -9 of one backend (the postmaster restarts everything),
#   round 2: kill -9 of the postmaster and then of all its children,
#   round 3: kill -9 of the postmaster with frequent index checkpoints
#            (the AM blob with root directory and BTT is written often).
# After each restart: every row whose commit was acknowledged is found
# through the index (also by a group query), no rolled back or uncommitted
# row is returned, index scans return no duplicates, filters and kNN equal
# a sequential scan, and hybrid_index_check passes.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiTest;
use POSIX qw(WNOHANG);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = HiTest::new_node(
	'lbgrid_crash',
	fsync => 1,
	conf  => "restart_after_crash = on\n"
	  . "hybrid_index.checkpoint_log_size = 512\n"    # kB: index checkpoints during the run
	  . "max_wal_size = 256MB\n");

$node->safe_psql(
	'postgres', q{
	SELECT setseed(0.3);
	CREATE TABLE t (id bigint PRIMARY KEY, geom geometry, note text);
	INSERT INTO t SELECT i, ST_MakePoint(random() * 1000, random() * 1000), 'base'
	  FROM generate_series(1, 20000) i;
	CREATE INDEX t_idx ON t USING lbgrid (geom)
	  WITH (page_size = 2048, bucket_capacity = 20, buffer_size = 64, cold_size = 8, max_list = 8);
	CREATE TABLE t2 (id bigint PRIMARY KEY, geom geometry, note text);
	INSERT INTO t2 SELECT id, geom, note FROM t;
	CREATE INDEX t2_idx ON t2 USING lbgrid (geom)
	  WITH (page_size = 4096, bucket_capacity = 30, buffer_size = 64, cold_size = 8, logging = off);
});

my $basedir = $node->basedir;
my %acked;    # table => { id => 1 } for acknowledged committed inserts

# Write a psql script for one inserting session.
# Ids: round * 10^8 + session * 10^7 + batch * 100 + i.
sub write_script
{
	my ($round, $session, $table) = @_;
	my $file = "$basedir/ins_${round}_${session}.sql";
	open my $fh, '>', $file or die "cannot write $file: $!";
	for my $b (1 .. 3000)
	{
		my $lo = $round * 100_000_000 + $session * 10_000_000 + $b * 100 + 1;
		my $hi = $lo + 19;
		my $kind = $b % 10;
		if ($kind == 3)
		{
			# rolled back: negative ids, must never be found
			print $fh "BEGIN;\n"
			  . "INSERT INTO $table SELECT -g, ST_MakePoint(random() * 1000, random() * 1000), 'aborted'"
			  . " FROM generate_series($lo, $hi) g;\n"
			  . "ROLLBACK;\n";
		}
		elsif ($kind == 7)
		{
			# deletes of base rows (not tracked: the heap decides)
			my $d = ($b * 37 + $session * 101) % 20000;
			print $fh "DELETE FROM $table WHERE id BETWEEN $d AND $d + 3;\n";
		}
		else
		{
			my $shape =
			  $kind == 5
			  ? "ST_Buffer(ST_MakePoint(random() * 1000, random() * 1000), random() * 10, 'quad_segs=1')"
			  : "ST_MakePoint(random() * 1000, random() * 1000)";
			print $fh "WITH ins AS (INSERT INTO $table SELECT g, $shape, 'r$round'"
			  . " FROM generate_series($lo, $hi) g RETURNING id)"
			  . " SELECT 'ack ' || min(id) || ' ' || max(id) || ' ' || count(*) FROM ins;\n";
		}
		if ($b % 50 == 0)
		{
			print $fh "SELECT hybrid_index_checkpoint('${table}_idx');\n";
		}
	}
	close $fh;
	return $file;
}

# One uncommitted transaction holding many inserted rows at crash time
sub write_uncommitted_script
{
	my ($round, $table) = @_;
	my $file = "$basedir/unc_${round}.sql";
	open my $fh, '>', $file or die;
	print $fh "BEGIN;\n";
	for my $b (1 .. 50)
	{
		my $lo = $round * 100_000_000 + 90_000_000 + $b * 100;
		print $fh "INSERT INTO $table SELECT -g, ST_MakePoint(random() * 1000, random() * 1000), 'uncommitted'"
		  . " FROM generate_series($lo, $lo + 49) g;\n";
	}
	print $fh "SELECT pg_sleep(600);\nCOMMIT;\n";
	close $fh;
	return $file;
}

# Start psql as a child process with stdout/stderr in files
sub spawn_psql
{
	my ($appname, $file, $out, $err) = @_;
	my $pid = fork();
	die "fork failed: $!" unless defined $pid;
	if ($pid == 0)
	{
		# never return into the test (its END blocks would stop the node)
		open(STDIN,  '<', '/dev/null') or POSIX::_exit(126);
		open(STDOUT, '>', $out) or POSIX::_exit(126);
		open(STDERR, '>', $err) or POSIX::_exit(126);
		{ exec('psql', '-X', '-At', '-v', 'ON_ERROR_STOP=0', '-d',
			$node->connstr('postgres') . " application_name=$appname", '-f', $file) };
		POSIX::_exit(127);
	}
	return $pid;
}

sub start_workload
{
	my ($round) = @_;
	my @w;
	for my $s (1 .. 4)
	{
		my $table = $s % 2 ? 't' : 't2';
		my $file = write_script($round, $s, $table);
		my $out  = "$basedir/out_${round}_${s}.txt";
		push @w,
		  {
			table => $table,
			out   => $out,
			pid   => spawn_psql("hi_ins_$s", $file, $out, "$basedir/err_${round}_${s}.txt")
		  };
	}
	for my $table ('t', 't2')
	{
		my $file = write_uncommitted_script($round . ($table eq 't' ? 1 : 2), $table);
		push @w,
		  {
			table => undef,
			pid   => spawn_psql('hi_unc', $file, '/dev/null', "$basedir/unc_err_${round}_$table.txt")
		  };
	}
	return \@w;
}

# Wait for the psql sessions to end by themselves (their server is gone),
# then collect the acknowledged id ranges.
sub finish_workload
{
	my ($workers) = @_;
	for my $w (@$workers)
	{
		my $deadline = time + 60;
		my $done = 0;
		while (time < $deadline)
		{
			if (waitpid($w->{pid}, WNOHANG) != 0) { $done = 1; last; }
			usleep(100_000);
		}
		if (!$done)
		{
			diag("psql $w->{pid} did not exit, killing it");
			kill 'KILL', $w->{pid};
			waitpid($w->{pid}, 0);
		}
		next unless defined $w->{table};
		open my $fh, '<', $w->{out} or next;
		while (my $l = <$fh>)
		{
			if ($l =~ /^ack (\d+) (\d+) (\d+)$/)
			{
				$acked{ $w->{table} }{$_} = 1 for ($1 .. $2);
			}
		}
		close $fh;
	}
	return;
}

sub postmaster_pid
{
	open my $fh, '<', $node->data_dir . '/postmaster.pid' or die "no postmaster.pid: $!";
	my $pid = <$fh>;
	close $fh;
	chomp $pid;
	return $pid;
}

sub wait_ready
{
	my $ok = 0;
	for (1 .. 300)
	{
		my $r = $node->psql('postgres', 'SELECT 1', timeout => 10);
		if ($r == 0) { $ok = 1; last; }
		usleep(200_000);
	}
	return $ok;
}

sub verify
{
	my ($label) = @_;

	# Open (and so recover) both indexes before any statement assigns an
	# xid.  The core replays an index's redo log at its first use and trusts
	# clog for each record's xid; a transaction killed before its WAL left
	# the WAL buffers leaves index records behind (they reach the OS at
	# once) while PostgreSQL may hand its xid to a new transaction, which
	# then makes those records look committed.  Recovering first keeps this
	# test about lbgrid; the core issue is reported separately.
	is(HiTest::try_psql($node, 'postgres',
			"SELECT hybrid_index_check('t_idx') AND hybrid_index_check('t2_idx')"),
		't', "$label: both indexes recovered");
	for my $ti (['t', 't_idx'], ['t2', 't2_idx'])
	{
		my ($tbl, $idx) = @$ti;
		is(HiTest::try_psql($node, 'postgres', "SELECT hybrid_index_check('$idx')"), 't',
			"$label: $idx passes hybrid_index_check");

		# every acknowledged row is found through the index
		my @ids = sort { $a <=> $b } keys %{ $acked{$tbl} || {} };
		my $list = @ids ? join(',', @ids) : '0';
		my $missing = HiTest::try_psql($node,
			'postgres', qq{
			SET enable_seqscan = off; SET enable_bitmapscan = off;
			CREATE TEMP TABLE found AS
			  SELECT id FROM $tbl WHERE geom && ST_MakeEnvelope(-1e6, -1e6, 1e6, 1e6);
			SELECT count(*) FROM unnest('{$list}'::bigint[]) a(id)
			WHERE a.id > 0 AND NOT EXISTS (SELECT 1 FROM found f WHERE f.id = a.id);});
		is($missing, '0', "$label: all " . scalar(@ids) . " acknowledged rows of $tbl found via $idx");

		# nothing rolled back or uncommitted, no duplicates
		my ($rows, $distinct_ids, $distinct_ctids) = HiTest::index_scan_counts($node, 'postgres', $tbl);
		is($distinct_ids, $rows, "$label: no duplicate ids from $idx");
		is($distinct_ctids, $rows, "$label: no duplicate TIDs from $idx");
		is(HiTest::try_psql($node, 'postgres', qq{
			SET enable_seqscan = off; SET enable_bitmapscan = off;
			SELECT count(*) FROM $tbl WHERE geom && ST_MakeEnvelope(-1e6, -1e6, 1e6, 1e6) AND (id < 0 OR note IN ('aborted', 'uncommitted'))}),
			'0', "$label: no aborted or uncommitted row returned by $idx");
		is($rows, $node->safe_psql('postgres', "SELECT count(*) FROM $tbl WHERE geom IS NOT NULL"),
			"$label: $idx finds every heap row");

		is(HiTest::filters_differential($node, 'postgres', $tbl, $idx, 15, 1000, 11), 'ok',
			"$label: $idx filters equal seq scan");
		is(HiTest::try_psql($node, 'postgres', qq{
			CREATE TEMP TABLE grp AS SELECT array_agg(geom) AS a FROM $tbl WHERE id % 101 = 7;
			SET enable_seqscan = off; SET enable_bitmapscan = off;
			CREATE TEMP TABLE gi AS SELECT id FROM $tbl WHERE geom ~= ANY ((SELECT a FROM grp)::geometry[]);
			RESET enable_seqscan; RESET enable_bitmapscan; SET enable_indexscan = off;
			CREATE TEMP TABLE gs AS SELECT id FROM $tbl WHERE geom ~= ANY ((SELECT a FROM grp)::geometry[]);
			SELECT (SELECT count(*) FROM gi) = (SELECT count(*) FROM gs)
			   AND NOT EXISTS (SELECT id FROM gi EXCEPT ALL SELECT id FROM gs);}),
			't', "$label: $idx group point query equals seq scan");
		is(HiTest::knn_differential($node, 'postgres', $tbl, $idx, 5, 1000, 25, 12), 'ok',
			"$label: $idx kNN equals sorted seq scan");
	}
	return;
}

verify('before crashes');

# ---- round 1: kill -9 of one inserting backend ----
{
	my $w = start_workload(1);
	sleep 3;
	my $pid = $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE application_name = 'hi_ins_1' LIMIT 1");
	ok($pid =~ /^\d+$/, 'round 1: found an inserting backend');
	kill 'KILL', $pid if $pid =~ /^\d+$/;
	finish_workload($w);
	ok(wait_ready(), 'round 1: server restarted after the backend crash');
	verify('round 1 (backend kill -9)');
}

# ---- round 2: kill -9 of the postmaster, then of every child ----
{
	my $w = start_workload(2);
	sleep 3;
	my $pmpid = postmaster_pid();
	my @children = grep { /^\d+$/ } map { s/\s+//gr } `ps -o pid= --ppid $pmpid`;
	$node->kill9;
	kill 'KILL', @children if @children;
	# wait until every old process is gone
	for (1 .. 100)
	{
		last unless grep { kill 0, $_ } ($pmpid, @children);
		usleep(100_000);
	}
	finish_workload($w);
	unlink $node->data_dir . '/postmaster.pid';
	$node->start;
	verify('round 2 (postmaster kill -9)');
}

# ---- round 3: tiny index checkpoints, kill -9 postmaster + children ----
{
	$node->append_conf('postgresql.conf', "hybrid_index.checkpoint_log_size = 64\n");
	$node->reload;
	my $w = start_workload(3);
	sleep 4;
	my $pmpid = postmaster_pid();
	my @children = grep { /^\d+$/ } map { s/\s+//gr } `ps -o pid= --ppid $pmpid`;
	$node->kill9;
	kill 'KILL', @children if @children;
	for (1 .. 100)
	{
		last unless grep { kill 0, $_ } ($pmpid, @children);
		usleep(100_000);
	}
	finish_workload($w);
	unlink $node->data_dir . '/postmaster.pid';
	$node->start;
	verify('round 3 (kill -9 with frequent index checkpoints)');
}

# after VACUUM and a clean restart, still consistent
$node->safe_psql('postgres', 'VACUUM t; VACUUM t2;');
$node->restart;
verify('after vacuum and clean restart');

my $total = 0;
$total += scalar(keys %{ $acked{$_} || {} }) for ('t', 't2');
cmp_ok($total, '>', 1000, "the workload committed $total acknowledged rows");

$node->stop;
done_testing();
