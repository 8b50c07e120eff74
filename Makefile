# pg_procmem: PGXS build.
#   make && make install                 build and install the extension
#   make installcheck                    pg_regress tests against a running server
#   make unit                            C unit tests of the /proc parsers (TAP)

EXTENSION = pg_procmem
EXTVERSION = $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" $(EXTENSION).control)

MODULE_big = pg_procmem
OBJS = src/pg_procmem.o src/members.o src/system.o src/contexts.o src/sample.o src/procfs.o src/pagemap.o src/sysmem.o
DATA = $(wildcard $(EXTENSION)--*.sql)

REGRESS = install columns privileges bad_input methods system

PG_CPPFLAGS = -DPROCMEM_VERSION=\"$(EXTVERSION)\"
EXTRA_CLEAN = $(UNIT_TESTS)

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# The /proc layer has no PostgreSQL headers: build its tests with plain cc.
UNIT_CFLAGS = -std=c99 -D_GNU_SOURCE -Wall -Wextra -O1 -g -Isrc
UNIT_LIB = src/procfs.c src/sample.c src/pagemap.c src/sysmem.c
UNIT_HDRS = src/procfs.h src/sample.h src/pagemap.h src/sysmem.h test/unit/tap.h
UNIT_TESTS = test/unit/test_procfs test/unit/test_pagemap test/unit/test_sysmem

test/unit/test_%: test/unit/test_%.c $(UNIT_LIB) $(UNIT_HDRS)
	$(CC) $(UNIT_CFLAGS) $(UNIT_LDFLAGS) -o $@ $< $(UNIT_LIB)

unit: $(UNIT_TESTS)
	prove -v --exec '' $(UNIT_TESTS) :: test/fixtures
	prove -v --exec bash test/unit/consistency.sh

.PHONY: unit
