# HiDocs.pm — the SQL examples of README.md and docs/*.md, extracted and run.
#
# Used by test/t/090_doc_examples.pl (a fresh TAP node) and by
# tools/doc-examples.pl (a running cluster). The convention, also in
# docs/README.md:
#
#   ```sql     run: every block of a file, in order, each by its own
#              `psql -X -v ON_ERROR_STOP=1 -f` in one database made for
#              the file (tables carry over from block to block, session
#              settings do not). The database gets postgis and
#              hybrid_index first, unless a block of the file creates
#              hybrid_index itself.
#   ```text    right after a ```sql block (blank lines between allowed):
#              output psql prints for it. Every line must be among psql's
#              (aligned) output lines, in this order, compared with runs of
#              blanks as one blank and without leading and trailing ones;
#              `...` inside a line stands for any text, a line `...` for
#              lines left out.
#   ```ini ```bash ```sh ```console ``` (none)   never run.
#
#   Marker lines inside a ```sql block (a line of their own):
#   -- expect error: TEXT   the block must fail, its error containing TEXT
#                           (psql stops at the first error: put the failing
#                           statement last)
#   -- skip: REASON         not run (needs another server, Citus, ...);
#                           the test lists it with its reason
#
# Tablespace paths: `LOCATION '/some/dir'` runs as LOCATION
# '<tsroot>/some/dir' (the directory is made), so examples show real paths.
package HiDocs;

use strict;
use warnings;

use File::Path qw(make_path);
use File::Temp qw(tempfile);
use IPC::Run;

# Markdown files whose examples are run, relative to the source root
sub doc_files
{
	my ($root) = @_;
	my @files = ('README.md');
	opendir(my $dh, "$root/docs") or return @files;
	push @files, map { "docs/$_" } sort grep { /\.md$/ } readdir($dh);
	closedir($dh);
	return @files;
}

# Blocks of one file: { line => first SQL line (1-based), sql, expect_error,
# skip, output => [expected lines] }
sub parse
{
	my ($path) = @_;
	open(my $fh, '<', $path) or die "cannot read $path: $!";
	my @lines = <$fh>;
	close($fh);
	my (@blocks, $fence, $lang, $start, @body);
	my $last_sql_end;    # index of the line after the last ```sql block
	for my $i (0 .. $#lines)
	{
		my $l = $lines[$i];
		if (!defined $fence)
		{
			if ($l =~ /^(\s*)(```+|~~~+)\s*([\w+-]*)/)
			{
				($fence, $lang, $start, @body) = ($2, lc($3), $i + 2);
			}
			next;
		}
		if ($l =~ /^\s*\Q$fence\E\s*$/)
		{
			if ($lang eq 'sql')
			{
				my %b = (line => $start, sql => join('', @body));
				for (@body)
				{
					$b{expect_error} = $1 if /^\s*--\s*expect error:\s*(.*?)\s*$/;
					$b{skip} = $1 if /^\s*--\s*skip:\s*(.*?)\s*$/;
				}
				push @blocks, \%b;
				$last_sql_end = $i + 1;
			}
			elsif ($lang eq 'text' && @blocks && defined $last_sql_end
				&& !grep { /\S/ } @lines[ $last_sql_end .. $start - 3 ])
			{
				$blocks[-1]{output} = [ grep { /\S/ && $_ ne '...' } map { norm($_) } @body ];
				$blocks[-1]{output_line} = $start - 1;
			}
			undef $fence;
			next;
		}
		push @body, $l;
	}
	die "$path: unterminated ``` block from line " . ($start - 1) . "\n" if defined $fence;
	return @blocks;
}

# A line as compared: blanks collapsed, trimmed
sub norm
{
	my ($l) = @_;
	$l =~ s/\s+/ /g;
	$l =~ s/^ | $//g;
	return $l;
}

# Whether a file sets up the extensions itself
sub creates_extension
{
	my (@blocks) = @_;
	return grep { !$_->{skip} && $_->{sql} =~ /CREATE\s+EXTENSION\s+(IF\s+NOT\s+EXISTS\s+)?hybrid_index\b/i } @blocks;
}

# Run one block: returns (ok, message). $connstr names the database;
# $tsroot is where tablespace directories go.
sub run_block
{
	my ($b, $file, $connstr, $tsroot) = @_;
	my $sql = $b->{sql};
	$sql =~ s{LOCATION\s+'(/[^']*)'}{
		my $dir = "$tsroot$1";
		make_path($dir);
		"LOCATION '$dir'";
	}gei;
	my ($fh, $fname) = tempfile('hi_doc_XXXXXX', SUFFIX => '.sql', TMPDIR => 1, UNLINK => 1);
	print $fh $sql;
	close($fh);
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'psql', '-X', '-v', 'ON_ERROR_STOP=1', '-d', $connstr, '-f', $fname ],
		'<', \undef, '>', \$out, '2>', \$err);
	my $rc = $? >> 8;
	my $where = "$file:$b->{line}";
	# psql:FILE:N: names the block's line N; give the markdown line
	$err =~ s{psql:\Q$fname\E:(\d+):}{"$file:" . ($b->{line} + $1 - 1) . ':'}ge;
	if (defined $b->{expect_error})
	{
		return (0, "$where: block succeeded, expected an error containing \"$b->{expect_error}\"")
		  if $rc == 0;
		return (0, "$where: expected an error containing \"$b->{expect_error}\", got: $err")
		  if index(lc($err), lc($b->{expect_error})) < 0;
		return (1, "$where: fails as documented");
	}
	return (0, "block at $where failed: $err") if $rc != 0 || $err =~ /(ERROR|FATAL|PANIC):/;
	if ($b->{output})
	{
		my @got = map { norm($_) } split /\n/, $out;
		my $i = 0;
		for my $want (@{ $b->{output} })
		{
			my $re = '^' . join('.*', map { quotemeta } split(/\.\.\./, $want, -1)) . '$';
			$i++ while $i < @got && $got[$i] !~ $re;
			return (0, "$file:$b->{output_line}: output line \"$want\" not printed (in this order) by the block at line $b->{line}; psql printed:\n$out")
			  if $i >= @got;
			$i++;
		}
		return (1, "$where: runs, output as documented");
	}
	return (1, "$where: runs");
}

1;
