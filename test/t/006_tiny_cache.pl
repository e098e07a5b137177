# 006_tiny_cache.pl — the pgbench mix of 005 on a 1 MB page cache, for
# every access method of HiAM.pm: statements may run out of unpinned
# frames (a clear 53200 error), but no error may leave a frame marked as
# in I/O — every later reader of that page, and everyone waiting for the
# lock it holds, would wait forever. pgbench must end on time and the
# indexes must still answer like a sequential scan. See HiPgbench.pm.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiPgbench;
use HiTest;
use Test::More;

HiTest::for_each_am(sub { HiPgbench::run_tiny_cache($_[0]) });

done_testing();
