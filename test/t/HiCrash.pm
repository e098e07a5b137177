# HiCrash.pm — crash torture of one access method (an entry of HiAM.pm).
#
# One node per access method, fsync on, restart_after_crash on, flash
# writes slowed down by device emulation (so that a write batch, a flush or
# an index checkpoint is in progress most of the time), a 4 MB page cache
# (HI_CRASH_CACHE_MB; 128 frames, so that evictions write pages all the
# time too). One table per index configuration of the entry gets a mixed
# workload from concurrent psql sessions:
#   - 2 writers per table: acknowledged inserts (points, polygons, NULL and
#     EMPTY geometries), rolled back inserts, savepoints rolled back inside
#     committed transactions, deletes and updates (also to NULL) of base rows;
#   - a VACUUM loop, an index checkpoint loop (hybrid_index_checkpoint and
#     CHECKPOINT), a reader of window and kNN queries through the indexes,
#     and a transaction holding uncommitted inserts.
# HI_CRASHES times (default 20, issue 8's bar), after a random delay, one
# of these is killed with SIGKILL, in rotation:
#   backend                a random workload backend (the postmaster then
#                          restarts everything)
#   postmaster             the postmaster and all its children
#   checkpoint_backend     the backend running hybrid_index_checkpoint, seen
#                          running in pg_stat_activity
#   checkpoint_postmaster  the postmaster and children, likewise
#   vacuum                 the backend running VACUUM
#   + the entry's crash_modes, e.g. compaction (efind: a t2 writer has
#     waited 100 ms for the index lock another writer holds to compact)
# Each restart is followed by transactions on another table (so that xids
# lost with the crash are handed out again before the indexes replay their
# logs) and by the checks: every acknowledged row is in the heap and found
# through the index, no aborted or uncommitted row comes back, index and
# bitmap scans equal a sequential scan over window queries, kNN equals the
# sorted sequential scan (LIMIT k, and all rows with NULL and EMPTY last),
# no duplicates, hybrid_index_check passes. At the end, after VACUUM, the
# index holds exactly one entry per heap row.
#
# HI_CRASH_SEED fixes the random delays and victims (printed at the start).
package HiCrash;

use strict;
use warnings;

use HiAM;
use HiTest;
use POSIX qw(WNOHANG);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

# base rows: 1..5000 points, 5001..5500 polygons, 5501..5504 NULL and EMPTY
my $BASE = 5500;

my @GENERIC_MODES =
  qw(backend postmaster checkpoint_backend checkpoint_postmaster vacuum);

sub crash_count { return $ENV{HI_CRASHES} // 20; }

# The whole torture of one HiAM entry; returns the crash statistics.
sub torture
{
	my ($e) = @_;
	my $node = HiTest::new_node(
		"crash_$e->{am}",
		fsync => 1,
		conf  => "restart_after_crash = on\n"
		  . "max_wal_size = 256MB\n"
		  . "hybrid_index.emulate_devices = on\n"
		  . "hybrid_index.flash_write_latency = 1000\n"
		  . "hybrid_index.flash_parallelism = 4\n"
		  . "hybrid_index.cache_size = " . ($ENV{HI_CRASH_CACHE_MB} // 4) . "\n"
		  . ($e->{conf} // ''));
	HiTest::skip_unless_am($node, $e);
	HiAM::create_tablespaces($node, $e);

	my $seed = $ENV{HI_CRASH_SEED} // int(rand(1_000_000));
	note("$e->{am}: HI_CRASH_SEED=$seed HI_CRASHES=" . crash_count());
	srand($seed);

	my $self = bless {
		node    => $node,
		e       => $e,
		tables  => [ HiAM::tables($e) ],
		basedir => $node->basedir,
		stats   => {},
	}, __PACKAGE__;
	$self->setup;
	$self->write_scripts;
	$self->verify('before crashes');

	my @modes = (@GENERIC_MODES, @{ $e->{crash_modes} || [] });
	for my $i (1 .. crash_count())
	{
		$self->crash_round($i, $modes[ ($i - 1) % @modes ]);
	}

	# after a clean restart: consistent; after VACUUM exactly one entry per
	# heap row (no entry of an aborted or lost transaction left)
	$node->restart;
	$self->verify('after a clean restart');
	HiTest::entries_match_heap($node, 'postgres', $_, "${_}_idx", $e->{am}) for @{ $self->{tables} };
	my $acked = $node->safe_psql('postgres', 'SELECT coalesce(sum(hi - lo + 1), 0) FROM acked');
	cmp_ok($acked, '>', 500, "$e->{am}: the workload committed $acked acknowledged rows");
	my $s = $self->{stats};
	note("$e->{am}: crashes by mode: "
		  . join(', ', map { "$_=$s->{$_}" } sort keys %$s));
	$node->stop;
	return $s;
}

sub setup
{
	my ($self) = @_;
	my $sql = "SELECT setseed(0.3);\n";
	my $i = 0;
	for my $t (@{ $self->{tables} })
	{
		my $clause = HiAM::index_clause($self->{e}, $i++, 'id, note');
		$sql .= qq{
		CREATE TABLE $t (id bigint PRIMARY KEY, geom geometry, note text);
		INSERT INTO $t SELECT i, ST_MakePoint(random() * 1000, random() * 1000), 'base'
		  FROM generate_series(1, 5000) i;
		INSERT INTO $t SELECT 5000 + i,
		  ST_Buffer(ST_MakePoint(random() * 1000, random() * 1000), random() * 10, 'quad_segs=1'), 'base'
		  FROM generate_series(1, 500) i;
		INSERT INTO $t VALUES (5501, NULL, 'base'), (5502, 'POINT EMPTY', 'base'),
		  (5503, 'POLYGON EMPTY', 'base'), (5504, 'GEOMETRYCOLLECTION(POINT EMPTY)', 'base');
		CREATE INDEX ${t}_idx ON $t $clause;
		};
	}
	$sql .= q{
		CREATE TABLE acked (tbl text, lo bigint, hi bigint);
		CREATE TABLE xid_burn (i int);
		-- pid of an active backend whose query matches pattern, waiting up
		-- to timeout seconds (NULL if none was seen)
		CREATE FUNCTION wait_active(pattern text, timeout float8) RETURNS int
		LANGUAGE plpgsql AS $$
		DECLARE
		  p int;
		  t0 timestamptz := clock_timestamp();
		BEGIN
		  LOOP
		    PERFORM pg_stat_clear_snapshot();
		    SELECT pid INTO p FROM pg_stat_activity
		    WHERE state = 'active' AND query LIKE pattern AND pid <> pg_backend_pid() LIMIT 1;
		    IF p IS NOT NULL OR clock_timestamp() - t0 > make_interval(secs => timeout) THEN
		      RETURN p;
		    END IF;
		    PERFORM pg_sleep(0.002);
		  END LOOP;
		END $$;
		-- pid of a backend of application apps that has waited for an
		-- LWLock in 5 polls 20 ms apart (another backend holds it long)
		CREATE FUNCTION wait_lwlock(apps text[], timeout float8) RETURNS int
		LANGUAGE plpgsql AS $$
		DECLARE
		  p int;
		  last int;
		  seen int := 0;
		  t0 timestamptz := clock_timestamp();
		BEGIN
		  WHILE clock_timestamp() - t0 < make_interval(secs => timeout) LOOP
		    PERFORM pg_stat_clear_snapshot();
		    SELECT pid INTO p FROM pg_stat_activity
		    WHERE application_name = ANY (apps) AND wait_event_type = 'LWLock' ORDER BY pid LIMIT 1;
		    seen := CASE WHEN p IS NOT NULL AND p = last THEN seen + 1 ELSE 0 END;
		    last := p;
		    IF seen >= 5 THEN RETURN p; END IF;
		    PERFORM pg_sleep(0.02);
		  END LOOP;
		  RETURN NULL;
		END $$;
	};
	$self->{node}->safe_psql('postgres', $sql);
	return;
}

# ---- workload scripts --------------------------------------------------

sub write_file
{
	my ($self, $name, $text) = @_;
	my $file = "$self->{basedir}/$name";
	open my $fh, '>', $file or die "cannot write $file: $!";
	print $fh $text;
	close $fh;
	return $file;
}

# A writer's script (psql variable :round set per round). Acknowledged
# ids: round * 10^8 + session * 10^7 + batch * 100 + 1..5; ids of
# savepoint transactions + 50..54 (not tracked); aborted rows have
# negative ids. A 10 ms pause per batch keeps the tables (and the checks)
# small and leaves CPU to the other sessions.
sub writer_script
{
	my ($self, $session, $t) = @_;
	my $pt = 'ST_MakePoint(random() * 1000, random() * 1000)';
	my $r = ':round::bigint * 100000000';	# bigint: HI_CRASHES above 21 stays in range
	my $text = '';
	for my $b (1 .. 20000)
	{
		my $lo = $session * 10_000_000 + $b * 100 + 1;
		my $hi = $lo + 4;
		my $d = "(:round * 13 + " . ($b * 37 + $session * 101) . ") % " . ($BASE - 4) . " + 1";
		my $kind = $b % 10;
		if ($kind == 3)
		{
			$text .= "BEGIN;\nINSERT INTO $t SELECT -g, $pt, 'aborted' FROM generate_series($r + $lo, $r + $hi) g;\nROLLBACK;\n";
		}
		elsif ($kind == 7)
		{
			$text .= "DELETE FROM $t WHERE id BETWEEN $d AND $d + 3;\n";
		}
		elsif ($kind == 9 && $b % 20 == 9)
		{
			$text .= "UPDATE $t SET geom = CASE WHEN random() < 0.1 THEN NULL ELSE $pt END, note = 'upd'"
			  . " WHERE id BETWEEN $d AND $d + 2;\n";
		}
		elsif ($kind == 9)
		{
			$text .= "BEGIN;\nINSERT INTO $t SELECT g, $pt, 'sp' FROM generate_series($r + $lo + 50, $r + $hi + 50) g;\n"
			  . "SAVEPOINT a;\nINSERT INTO $t SELECT -g, $pt, 'aborted' FROM generate_series($r + $lo + 60, $r + $hi + 60) g;\n"
			  . "ROLLBACK TO a;\nCOMMIT;\n";
		}
		else
		{
			my $shape =
				$kind == 5 ? "ST_Buffer($pt, random() * 10, 'quad_segs=1')"
			  : $b % 20 == 0
			  ? "CASE g % 5 WHEN 0 THEN NULL WHEN 1 THEN 'POINT EMPTY'::geometry ELSE $pt END"
			  : $pt;
			$text .= "WITH ins AS (INSERT INTO $t SELECT g, $shape, 'r' || :round"
			  . " FROM generate_series($r + $lo, $r + $hi) g"
			  . " RETURNING id) SELECT 'ack $t ' || min(id) || ' ' || max(id) FROM ins;\n";
		}
		$text .= "SELECT pg_sleep(0.01);\n";
	}
	return $self->write_file("writer_$session.sql", $text);
}

sub loop_script
{
	my ($self, $name, $body, $n) = @_;
	return $self->write_file($name, $body x $n);
}

sub spawn_psql
{
	my ($self, $appname, $file, $out, $round) = @_;
	my $err = "$self->{basedir}/$appname.err";
	my $pid = fork();
	die "fork failed: $!" unless defined $pid;
	if ($pid == 0)
	{
		# never return into the test (its END blocks would stop the node)
		open(STDIN,  '<', '/dev/null') or POSIX::_exit(126);
		open(STDOUT, '>', $out)        or POSIX::_exit(126);
		open(STDERR, '>', $err)        or POSIX::_exit(126);
		{
			exec('psql', '-X', '-At', '-v', 'ON_ERROR_STOP=0', '-v', "round=$round", '-d',
				$self->{node}->connstr('postgres') . " application_name=$appname", '-f', $file);
		}
		POSIX::_exit(127);
	}
	return { pid => $pid, app => $appname, out => $out };
}

# The sessions' scripts, written once (the round is a psql variable)
sub write_scripts
{
	my ($self) = @_;
	my @t = @{ $self->{tables} };
	my %f;
	my $s = 0;
	$f{ 'hi_w' . ++$s } = $self->writer_script($s, $_) for (@t, @t);
	my $vac = join('', map { "VACUUM $_;\nSELECT pg_sleep(0.2);\n" } @t);
	my $ckpt = join('', map { "SELECT hybrid_index_checkpoint('${_}_idx');\nSELECT pg_sleep(0.1);\n" } @t);
	my $read = join('',
		map {
			"SELECT count(*) FROM $_ WHERE geom && ST_MakeEnvelope(random() * 900, random() * 900, 100 + random() * 900, 100 + random() * 900);\n"
			  . "SELECT id FROM $_ ORDER BY geom <-> ST_MakePoint(random() * 1000, random() * 1000) LIMIT 10;\n"
		} @t);
	my $unc = "BEGIN;\n"
	  . join('',
		map { "INSERT INTO $_ SELECT -g, ST_MakePoint(random() * 1000, random() * 1000), 'uncommitted'"
			  . " FROM generate_series(:round * 1000 + 1, :round * 1000 + 500) g;\n" } @t)
	  . "SELECT pg_sleep(600);\nCOMMIT;\n";
	$f{hi_vac}  = $self->write_file('vac.sql', $vac x 500);
	my $ckpt_all = ($ckpt x 10) . "CHECKPOINT;\n";
	my $read_all = $read . "SELECT pg_sleep(0.01);\n";
	$f{hi_ckpt} = $self->write_file('ckpt.sql', $ckpt_all x 100);
	$f{hi_read} = $self->write_file('read.sql', "SET enable_seqscan = off;\n" . $read_all x 5000);
	$f{hi_unc} = $self->write_file('unc.sql', $unc);
	$self->{scripts} = \%f;
	return;
}

sub start_workload
{
	my ($self, $round) = @_;
	my @w;
	for my $app (sort keys %{ $self->{scripts} })
	{
		my $out = $app =~ /^hi_w/ ? "$self->{basedir}/${app}_$round.out" : '/dev/null';
		push @w, $self->spawn_psql($app, $self->{scripts}{$app}, $out, $round);
	}
	$self->{workers} = \@w;
	return \@w;
}

# Wait for the psql sessions to end (their server is gone) and record the
# acknowledged id ranges in table acked.
sub finish_workload
{
	my ($self, $workers) = @_;
	my @ranges;
	for my $w (@$workers)
	{
		my $deadline = time + 60;
		my $done = 0;
		while (time < $deadline)
		{
			if (waitpid($w->{pid}, WNOHANG) != 0) { $done = 1; last; }
			usleep(50_000);
		}
		if (!$done)
		{
			diag("psql $w->{app} ($w->{pid}) did not exit, killing it");
			kill 'KILL', $w->{pid};
			waitpid($w->{pid}, 0);
		}
		next if $w->{out} eq '/dev/null';
		open my $fh, '<', $w->{out} or next;
		while (my $l = <$fh>)
		{
			push @ranges, "('$1', $2, $3)" if $l =~ /^ack (\w+) (\d+) (\d+)$/;
		}
		close $fh;
	}
	return \@ranges;
}

sub postmaster_children
{
	my ($pmpid) = @_;
	return grep { /^\d+$/ } map { s/\s+//gr } `ps -o pid= --ppid $pmpid`;
}

# kill -9 a node's postmaster and all its children at once (a crash of
# the whole server) and wait until they are gone; the node is then stopped
sub crash_node
{
	my ($node) = @_;
	open my $fh, '<', $node->data_dir . '/postmaster.pid' or die "no postmaster.pid: $!";
	my $pmpid = <$fh>;
	close $fh;
	chomp $pmpid;
	my @children = postmaster_children($pmpid);
	kill 'KILL', $pmpid, @children;
	for (1 .. 200)
	{
		last unless grep { kill 0, $_ } ($pmpid, @children);
		usleep(50_000);
	}
	$node->{_pid} = undef;
	return;
}

sub kill_postmaster
{
	my ($self) = @_;
	crash_node($self->{node});
	return;
}

sub wait_ready
{
	my ($self) = @_;
	# psql -c, not $node->psql: that one writes the query to psql's stdin,
	# which dies with EPIPE when psql exits at once (still in recovery)
	my $connstr = $self->{node}->connstr('postgres');
	for (1 .. 300)
	{
		return 1
		  if system("psql -XAtq -d '$connstr' -c 'SELECT 1' >/dev/null 2>&1") == 0;
		usleep(200_000);
	}
	return 0;
}

# pid of a backend found by a wait_* function, or undef
sub find_backend
{
	my ($self, $sql) = @_;
	my ($ret, $out) = $self->{node}->psql('postgres', $sql, timeout => 30);
	return ($ret == 0 && $out =~ /^(\d+)$/) ? $1 : undef;
}

# Kill according to mode; returns (killed the postmaster?, what happened)
sub kill_for_mode
{
	my ($self, $mode) = @_;
	my @t = @{ $self->{tables} };
	if ($mode eq 'backend')
	{
		my @apps = ((map { "hi_w$_" } 1 .. 2 * @t), 'hi_vac', 'hi_ckpt', 'hi_read');
		my $app = $apps[ int(rand(@apps)) ];
		my $pid = $self->find_backend(
			"SELECT pid FROM pg_stat_activity WHERE application_name = '$app' LIMIT 1");
		return (0, "no backend of $app") unless $pid;
		kill 'KILL', $pid;
		return (0, "killed $app");
	}
	if ($mode eq 'postmaster')
	{
		$self->kill_postmaster;
		return (1, 'killed the postmaster');
	}
	if ($mode =~ /^checkpoint_(backend|postmaster)$/ || $mode eq 'vacuum')
	{
		my $pattern = $mode eq 'vacuum' ? 'VACUUM%' : 'SELECT hybrid_index_checkpoint(%';
		my $pid = $self->find_backend("SELECT wait_active('$pattern', 10)");
		diag("no $pattern seen in 10 s; sessions: "
			  . $self->{node}->safe_psql('postgres',
				q{SELECT string_agg(format('%s %s %s:%s %s', application_name, state, wait_event_type,
				  wait_event, left(query, 60)), '; ') FROM pg_stat_activity WHERE application_name LIKE 'hi\\_%'}))
		  unless $pid;
		if ($mode eq 'checkpoint_postmaster')
		{
			$self->kill_postmaster;
			return (1, $pid ? 'killed the postmaster during an index checkpoint'
				: 'killed the postmaster (no index checkpoint seen)');
		}
		if (!$pid)
		{
			$self->kill_postmaster;
			return (1, "no $pattern seen: killed the postmaster");
		}
		kill 'KILL', $pid;
		return (0, "killed the backend running $pattern");
	}
	if ($mode eq 'compaction')
	{
		# the writers of the last table (the one whose index compacts)
		my $n = @t;
		my $apps = "ARRAY['hi_w$n', 'hi_w" . (2 * $n) . "']";
		my $pid = $self->find_backend("SELECT wait_lwlock($apps, 10)");
		my @pids = grep { defined } map {
			$self->find_backend("SELECT pid FROM pg_stat_activity WHERE application_name = '$_' LIMIT 1")
		} ("hi_w$n", 'hi_w' . (2 * $n));
		kill 'KILL', @pids if @pids;
		return (0, $pid ? 'killed both writers of the compacting index' : 'killed the writers (no compaction seen)');
	}
	die "unknown crash mode $mode";
}

sub crash_round
{
	my ($self, $round, $mode) = @_;
	my $node = $self->{node};
	my $t0 = time;
	my $w = $self->start_workload($round);
	my $delay = 0.5 + rand(2.5);
	usleep(int($delay * 1_000_000));
	my ($pm_killed, $what) = $self->kill_for_mode($mode);
	$self->{stats}{$mode}++;
	my $ranges = $self->finish_workload($w);
	if ($pm_killed)
	{
		unlink $node->data_dir . '/postmaster.pid';
		$node->start;
	}
	ok($self->wait_ready, "crash $round ($mode): server up again");

	# hand out again the xids the crash may have lost, before any index is
	# used (its log replay must not take them for its own transactions')
	$node->safe_psql('postgres', "INSERT INTO xid_burn VALUES ($_)") for 1 .. 5;
	$node->safe_psql('postgres', 'INSERT INTO acked VALUES ' . join(',', @$ranges)) if @$ranges;
	note(sprintf('crash %d: %s after %.2f s, %d acknowledged batches', $round, $what, $delay,
		scalar(@$ranges)));
	$self->verify("crash $round ($mode)");
	note(sprintf('crash %d took %d s', $round, time - $t0));
	return;
}

sub verify
{
	my ($self, $label) = @_;
	my $node = $self->{node};
	my $i = 0;
	for my $t (@{ $self->{tables} })
	{
		$i++;
		my $r = HiTest::try_psql($node,
			'postgres', qq{
			SET enable_seqscan = off; SET enable_bitmapscan = off;
			CREATE TEMP TABLE found AS
			  SELECT id, note FROM $t WHERE geom && ST_MakeEnvelope(-1e6, -1e6, 1e6, 1e6);
			RESET enable_seqscan; RESET enable_bitmapscan;
			CREATE TEMP TABLE ack AS
			  SELECT g AS id FROM acked a, generate_series(a.lo, a.hi) g WHERE a.tbl = '$t';
			SELECT (SELECT count(*) FROM ack),
			  (SELECT count(*) FROM ack WHERE NOT EXISTS (SELECT 1 FROM $t h WHERE h.id = ack.id)),
			  (SELECT count(*) FROM ack JOIN $t h USING (id)
			   WHERE h.geom IS NOT NULL AND NOT ST_IsEmpty(h.geom)
			     AND NOT EXISTS (SELECT 1 FROM found f WHERE f.id = ack.id)),
			  (SELECT count(*) FROM found WHERE id < 0 OR note IN ('aborted', 'uncommitted'));});
		my ($n, $heap_missing, $idx_missing, $aborted) = split /\|/, $r;
		if ($r =~ /^ERROR/) { fail("$label: acknowledged rows of $t: $r"); next; }
		is($heap_missing, '0', "$label: all $n acknowledged rows of $t are in the heap");
		is($idx_missing, '0', "$label: all acknowledged rows of $t are found through ${t}_idx");
		is($aborted, '0', "$label: no aborted or uncommitted row returned by ${t}_idx");
		HiTest::full_check($node, 'postgres', $label, $t, "${t}_idx",
			windows    => 10,
			knn_points => 3,
			seed       => $i * 10 + length($label) % 7,
			group      => $self->{e}{group_query});
	}
	return;
}

1;
