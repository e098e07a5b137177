# hybrid_index: PGXS build
# two extensions: hybrid_index (the access methods and their functions) and
# hybrid_index_bench (the benchmark schema, requires hybrid_index; only
# bench/run and the benchmark's tests install it)
EXTENSION = hybrid_index hybrid_index_bench
MODULE_big = hybrid_index
# each extension script is assembled from its parts: sql/ext/ and sql/bench/;
# the version is the control file's default_version (CHANGELOG.md), and
# sql/updates/ holds one ALTER EXTENSION ... UPDATE script per release step
EXT_VERSION = $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" $(srcdir)/hybrid_index.control)
BENCH_VERSION = $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" $(srcdir)/hybrid_index_bench.control)
EXT_SCRIPT = hybrid_index--$(EXT_VERSION).sql
EXT_PARTS = sql/ext/core.sql $(sort $(filter-out sql/ext/core.sql,$(wildcard sql/ext/*.sql)))
BENCH_SCRIPT = hybrid_index_bench--$(BENCH_VERSION).sql
BENCH_PARTS = sql/bench/bench.sql $(sort $(filter-out sql/bench/bench.sql,$(wildcard sql/bench/*.sql)))
DATA_built = $(EXT_SCRIPT) $(BENCH_SCRIPT)
DATA = $(wildcard sql/updates/*.sql)

SRCS = $(wildcard src/*.c src/*/*.c)
OBJS = $(SRCS:.c=.o)

# pg_regress: every sql/*.sql is a test
REGRESS = $(sort $(basename $(notdir $(wildcard sql/*.sql))))
REGRESS_OPTS = --inputdir=. --load-extension=postgis --load-extension=hybrid_index

TAP_TESTS = 1
PROVE_TESTS = $(wildcard test/t/*.pl)

# pg_isolation_regress: every test/isolation/NAME.spec is a template made
# into NAME_<am> for each access method the extension creates (by
# test/isolation/generate.pl, into isolation/, before installcheck)
ISOLATION = $(shell perl $(srcdir)/test/isolation/generate.pl --list)
ISOLATION_OPTS = --inputdir=isolation --load-extension=postgis --load-extension=hybrid_index
REGRESS_PREP = isolation-specs

PG_CONFIG ?= pg_config
PG_CPPFLAGS = -I$(srcdir)/src -std=gnu11 -Wall -Wmissing-prototypes
# each object records the headers it includes (src/**/*.d), so a header
# change rebuilds only what includes it; the JIT bitcode follows its object
PG_CFLAGS = -MMD -MP
SHLIB_LINK = -luring

EXTRA_CLEAN = results regression.diffs regression.out tmp_check log isolation output_iso $(PG_BUILD_STAMP) \
	$(wildcard src/*.d src/*/*.d)

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# the folders too: a part added or removed rebuilds the script
$(EXT_SCRIPT): $(EXT_PARTS) sql/ext
	cat $(EXT_PARTS) > $@

$(BENCH_SCRIPT): $(BENCH_PARTS) sql/bench
	cat $(BENCH_PARTS) > $@

# Objects built for another PostgreSQL (another pg_config) are built
# again: the stamp names the server the objects are for, and changes (so
# is newer than every object) when PG_CONFIG does.
PG_BUILD_STAMP = .pg-build-version
PG_BUILD_FOR := $(shell $(PG_CONFIG) --version) $(shell $(PG_CONFIG) --pkglibdir)
ifneq ($(PG_BUILD_FOR),$(shell cat $(PG_BUILD_STAMP) 2>/dev/null))
$(shell echo '$(PG_BUILD_FOR)' > $(PG_BUILD_STAMP))
endif
$(OBJS): $(PG_BUILD_STAMP)

-include $(wildcard src/*.d src/*/*.d)
$(OBJS:.o=.bc): %.bc: %.o

# the PGXN distribution (META.json): the committed tree of HEAD as a zip
.PHONY: dist
dist:
	git -C $(srcdir) archive --format zip --prefix=hybrid_index-$(EXT_VERSION)/ \
		-o $(CURDIR)/hybrid_index-$(EXT_VERSION).zip HEAD

.PHONY: isolation-specs
isolation-specs:
	perl $(srcdir)/test/isolation/generate.pl isolation
