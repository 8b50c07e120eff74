# pg_procmem: PGXS build.
#   make && make install                 build and install the extension
#   make installcheck                    pg_regress tests against a running server
#   make unit                            C unit tests of the /proc parsers (TAP)

EXTENSION = pg_procmem
EXTVERSION = $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" $(EXTENSION).control)

MODULE_big = pg_procmem
OBJS = src/pg_procmem.o src/members.o src/sample.o src/procfs.o
DATA = $(wildcard $(EXTENSION)--*.sql)

REGRESS = install columns privileges bad_input

PG_CPPFLAGS = -DPROCMEM_VERSION=\"$(EXTVERSION)\"
EXTRA_CLEAN = test/unit/test_procfs

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# The /proc layer has no PostgreSQL headers: build its tests with plain cc.
UNIT_CFLAGS = -std=c99 -D_GNU_SOURCE -Wall -Wextra -O1 -g -Isrc
UNIT_SRCS = test/unit/test_procfs.c src/procfs.c src/sample.c

test/unit/test_procfs: $(UNIT_SRCS) src/procfs.h src/sample.h test/unit/tap.h
	$(CC) $(UNIT_CFLAGS) $(UNIT_LDFLAGS) -o $@ $(UNIT_SRCS)

unit: test/unit/test_procfs
	prove -v --exec '' test/unit/test_procfs :: test/fixtures
	prove -v --exec bash test/unit/consistency.sh

.PHONY: unit
