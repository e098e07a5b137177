# hybrid_index: PGXS build
EXTENSION = hybrid_index
MODULE_big = hybrid_index
# the extension script is assembled from its parts in sql/ext/
EXT_SCRIPT = $(EXTENSION)--0.1.0.sql
DATA_built = $(EXT_SCRIPT)
EXT_PARTS = sql/ext/core.sql $(sort $(filter-out sql/ext/core.sql,$(wildcard sql/ext/*.sql)))

SRCS = $(wildcard src/*.c src/*/*.c)
OBJS = $(SRCS:.c=.o)

# pg_regress: every sql/*.sql is a test
REGRESS = $(sort $(basename $(notdir $(wildcard sql/*.sql))))
REGRESS_OPTS = --inputdir=. --load-extension=postgis --load-extension=$(EXTENSION)

TAP_TESTS = 1
PROVE_TESTS = $(wildcard test/t/*.pl)

# pg_isolation_regress: every test/isolation/NAME.spec is a template made
# into NAME_<am> for each access method the extension creates (by
# test/isolation/generate.pl, into isolation/, before installcheck)
ISOLATION = $(shell perl $(srcdir)/test/isolation/generate.pl --list)
ISOLATION_OPTS = --inputdir=isolation --load-extension=postgis --load-extension=$(EXTENSION)
REGRESS_PREP = isolation-specs

PG_CONFIG ?= pg_config
PG_CPPFLAGS = -I$(srcdir)/src -std=gnu99 -Wall -Wmissing-prototypes
# each object records the headers it includes (src/**/*.d), so a header
# change rebuilds only what includes it; the JIT bitcode follows its object
PG_CFLAGS = -MMD -MP
SHLIB_LINK = -luring

EXTRA_CLEAN = results regression.diffs regression.out tmp_check log isolation output_iso \
	$(wildcard src/*.d src/*/*.d)

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

$(EXT_SCRIPT): $(EXT_PARTS)
	cat $^ > $@

-include $(wildcard src/*.d src/*/*.d)
$(OBJS:.o=.bc): %.bc: %.o

.PHONY: isolation-specs
isolation-specs:
	perl $(srcdir)/test/isolation/generate.pl isolation
