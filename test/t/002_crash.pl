# 002_crash.pl — crash torture of every access method of HiAM.pm (those in
# HI_AMS, default all; an AM not in pg_am is skipped): HI_CRASHES (default
# 20) kill -9 crashes of a backend or of the postmaster at random moments of
# a mixed insert/delete/update/VACUUM/checkpoint workload of concurrent
# sessions, each followed by a restart and differential checks. What is
# killed and checked: HiCrash.pm.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use HiCrash;
use HiTest;
use Test::More;

HiTest::for_each_am(sub { HiCrash::torture($_[0]) });

done_testing();
