# 005_concurrency.pl — pgbench with 8 clients of mixed read/write scripts
# on every access method of HiAM.pm (those in HI_AMS, default all; an AM not
# in pg_am is skipped), followed by differential checks. The scripts and
# checks: HiPgbench.pm. HI_PGBENCH_SECONDS sets the run's length (10).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiPgbench;
use HiTest;
use Test::More;

HiTest::for_each_am(sub { HiPgbench::run($_[0]) });

done_testing();
