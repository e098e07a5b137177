# 011_efind_crash.pl — efind indexes survive crashes in the middle of
# flushes and of checkpoints (eFIND's log compaction). Background psql
# sessions insert (and delete, and roll back) into two efind tables: t has
# a 16 kB buffer, so flushes run all the time, and a session checkpoints
# it every 50 ms; t2 has a 1 MB buffer and compacts its log every 128 kB,
# each compaction writing hundreds of buffered pages. Writes of the flash
# tier are slowed down (device emulation: 2 ms per round of 2 pages) so
# that a write batch is in progress most of the time:
#   round 1: kill -9 of one inserting backend (the postmaster restarts all),
#   round 2: kill -9 of the postmaster and of all its children,
#   round 3: kill -9 while t2's index is being compacted (one t2 inserter
#			 has waited 100 ms for its tree_lock): both backends inserting
#			 into t2 are killed,
#   round 4: immediate shutdown.
# After each restart: every row whose commit was acknowledged is found
# through the index, no rolled back or uncommitted row is returned, index
# scans return no duplicates, filters and kNN equal a sequential scan, and
# hybrid_index_check passes.
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
	'efind_crash',
	fsync => 1,
	conf  => "restart_after_crash = on\n"
	  . "hybrid_index.emulate_devices = on\n"
	  . "hybrid_index.flash_write_latency = 2000\n"
	  . "hybrid_index.flash_parallelism = 2\n"
	  . "max_wal_size = 256MB\n");

$node->safe_psql(
	'postgres', q{
	SELECT setseed(0.35);
	CREATE TABLE t (id bigint PRIMARY KEY, geom geometry, note text);
	INSERT INTO t SELECT i, ST_MakePoint(random() * 1000, random() * 1000), 'base'
	  FROM generate_series(1, 8000) i;
	CREATE INDEX t_idx ON t USING efind (geom) WITH (page_size = 2048, buffer_size = 16);
	CREATE TABLE t2 (id bigint PRIMARY KEY, geom geometry, note text);
	INSERT INTO t2 SELECT id, geom, note FROM t;
	CREATE INDEX t2_idx ON t2 USING efind (geom)
	  WITH (page_size = 2048, buffer_size = 1024, log_size = 128, flush_policy = 'mha',
	        read_buffer_policy = '2q');
});

my $basedir = $node->basedir;
my %acked;    # table => { id => 1 } for acknowledged committed inserts

# One inserting session. Ids: round * 10^8 + session * 10^7 + batch * 100 + i.
sub write_script
{
	my ($round, $session, $table) = @_;
	my $file = "$basedir/ins_${round}_${session}.sql";
	open my $fh, '>', $file or die "cannot write $file: $!";
	for my $b (1 .. 3000)
	{
		my $lo = $round * 100_000_000 + $session * 10_000_000 + $b * 100 + 1;
		my $hi = $lo + 9;
		my $kind = $b % 10;
		if ($kind == 3)
		{
			print $fh "BEGIN;\n"
			  . "INSERT INTO $table SELECT -g, ST_MakePoint(random() * 1000, random() * 1000), 'aborted'"
			  . " FROM generate_series($lo, $hi) g;\n"
			  . "ROLLBACK;\n";
		}
		elsif ($kind == 7)
		{
			my $d = ($b * 37 + $session * 101) % 8000;
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
	}
	close $fh;
	return $file;
}

# One transaction holding uncommitted rows at crash time
sub write_uncommitted_script
{
	my ($round, $table) = @_;
	my $file = "$basedir/unc_${round}_$table.sql";
	open my $fh, '>', $file or die;
	print $fh "BEGIN;\n";
	for my $b (1 .. 20)
	{
		my $lo = $round * 100_000_000 + 90_000_000 + $b * 100;
		print $fh "INSERT INTO $table SELECT -g, ST_MakePoint(random() * 1000, random() * 1000), 'uncommitted'"
		  . " FROM generate_series($lo, $lo + 49) g;\n";
	}
	print $fh "SELECT pg_sleep(600);\nCOMMIT;\n";
	close $fh;
	return $file;
}

# A session that checkpoints t_idx every 50 ms
sub write_checkpoint_script
{
	my ($round) = @_;
	my $file = "$basedir/ckpt_${round}.sql";
	open my $fh, '>', $file or die;
	print $fh "SELECT hybrid_index_checkpoint('t_idx'), pg_sleep(0.05);\n" for 1 .. 5000;
	close $fh;
	return $file;
}

sub spawn_psql
{
	my ($appname, $file, $out, $err) = @_;
	my $pid = fork();
	die "fork failed: $!" unless defined $pid;
	if ($pid == 0)
	{
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
		my $out = "$basedir/out_${round}_${s}.txt";
		push @w,
		  {
			table => $table,
			out   => $out,
			pid   => spawn_psql("ef_ins_$s", write_script($round, $s, $table), $out,
				"$basedir/err_${round}_${s}.txt")
		  };
	}
	for my $table ('t', 't2')
	{
		push @w,
		  {
			table => undef,
			pid   => spawn_psql('ef_unc', write_uncommitted_script($round, $table), '/dev/null',
				"$basedir/unc_err_${round}_$table.txt")
		  };
	}
	push @w,
	  {
		table => undef,
		pid   => spawn_psql('ef_ckpt', write_checkpoint_script($round), '/dev/null',
			"$basedir/ckpt_err_${round}.txt")
	  };
	return \@w;
}

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
	for (1 .. 300)
	{
		return 1 if $node->psql('postgres', 'SELECT 1', timeout => 10) == 0;
		usleep(200_000);
	}
	return 0;
}

sub backend_pid
{
	my ($appname) = @_;
	return $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE application_name = '$appname' LIMIT 1");
}

sub verify
{
	my ($label) = @_;
	for my $ti (['t', 't_idx'], ['t2', 't2_idx'])
	{
		my ($tbl, $idx) = @$ti;
		is(HiTest::try_psql($node, 'postgres', "SELECT hybrid_index_check('$idx')"), 't',
			"$label: $idx passes hybrid_index_check");

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

		my ($rows, $distinct_ids, $distinct_ctids) = HiTest::index_scan_counts($node, 'postgres', $tbl);
		is($distinct_ids, $rows, "$label: no duplicate ids from $idx");
		is($distinct_ctids, $rows, "$label: no duplicate TIDs from $idx");
		is(HiTest::try_psql($node, 'postgres', qq{
			SET enable_seqscan = off; SET enable_bitmapscan = off;
			SELECT count(*) FROM $tbl WHERE geom && ST_MakeEnvelope(-1e6, -1e6, 1e6, 1e6)
			  AND (id < 0 OR note IN ('aborted', 'uncommitted'))}),
			'0', "$label: no aborted or uncommitted row returned by $idx");
		is($rows, $node->safe_psql('postgres', "SELECT count(*) FROM $tbl WHERE geom IS NOT NULL"),
			"$label: $idx finds every heap row");
		is(HiTest::filters_differential($node, 'postgres', $tbl, $idx, 10, 1000, 11), 'ok',
			"$label: $idx filters equal seq scan");
		is(HiTest::knn_differential($node, 'postgres', $tbl, $idx, 4, 1000, 25, 12), 'ok',
			"$label: $idx kNN equals sorted seq scan");
	}
	return;
}

# What the workload did to the indexes before a crash
sub note_activity
{
	my ($label) = @_;
	my $r = HiTest::try_psql($node, 'postgres', q{
		SELECT (hybrid_index_inspect('t_idx')->'efind'->'flushes'->>'count')::int > 0,
		       (hybrid_index_inspect('t_idx')->'efind'->'flushes'->>'checkpoint_flushes')::int > 1});
	is($r, "t|t", "$label: flushes and checkpoints of t_idx were running");
	return;
}

# Wait until one t2 inserter has waited for an LWLock (t2_idx's tree_lock)
# for 100 ms: the other holds it for a compaction (an insertion with a
# 1 MB buffer takes about a millisecond, a compaction hundreds)
sub wait_for_compaction
{
	my %seen;
	for (1 .. 1500)
	{
		my $r = $node->safe_psql('postgres', q{
			SELECT pid FROM pg_stat_activity
			WHERE application_name IN ('ef_ins_2', 'ef_ins_4') AND wait_event_type = 'LWLock'});
		my %now = map { $_ => 1 } grep { /^\d+$/ } split /\n/, $r;
		$seen{$_}++ for keys %now;
		delete $seen{$_} for grep { !$now{$_} } keys %seen;
		return 1 if grep { $seen{$_} >= 5 } keys %seen;
		usleep(20_000);
	}
	return 0;
}

verify('before crashes');

# ---- round 1: kill -9 of an inserting backend ----
{
	my $w = start_workload(1);
	sleep 3;
	note_activity('round 1');
	my $pid = backend_pid('ef_ins_1');
	ok($pid =~ /^\d+$/, 'round 1: found an inserting backend');
	kill 'KILL', $pid if $pid =~ /^\d+$/;
	finish_workload($w);
	ok(wait_ready(), 'round 1: server restarted after the backend crash');
	verify('round 1 (backend kill -9)');
}

# ---- round 2: kill -9 of the postmaster and every child ----
{
	my $w = start_workload(2);
	sleep 3;
	note_activity('round 2');
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
	verify('round 2 (postmaster kill -9)');
}

# ---- round 3: kill -9 during a compaction of t2_idx ----
{
	my $w = start_workload(3);
	sleep 2;
	ok(wait_for_compaction(), 'round 3: caught t2_idx in a compaction');
	my @pids = grep { /^\d+$/ } map { backend_pid($_) } ('ef_ins_2', 'ef_ins_4');
	kill 'KILL', @pids if @pids;
	my $log_offset = -s $node->logfile;
	finish_workload($w);
	ok(wait_ready(), 'round 3: server restarted after the crash');
	verify('round 3 (kill -9 during a compaction)');
	like(slurp_file($node->logfile, $log_offset),
		qr/hybrid_index: replayed \d+ log records of index "t2_idx"/,
		'round 3: t2_idx replayed the log its compaction had not emptied');
}

# ---- round 4: immediate shutdown ----
{
	my $w = start_workload(4);
	sleep 3;
	$node->stop('immediate');
	finish_workload($w);
	$node->start;
	verify('round 4 (immediate stop)');
}

# after VACUUM and a clean restart, still consistent
$node->safe_psql('postgres', 'VACUUM t; VACUUM t2;');
$node->restart;
verify('after vacuum and clean restart');

my $total = 0;
$total += scalar(keys %{ $acked{$_} || {} }) for ('t', 't2');
cmp_ok($total, '>', 500, "the workload committed $total acknowledged rows");

$node->stop;
done_testing();
