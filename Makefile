# pg_procmem: PGXS build.
#   make && make install                 build and install the extension
#   make installcheck                    pg_regress tests against a running server
#   make pgtap                           pgTAP tests against a running server
#   make unit                            C unit tests of the /proc parsers (TAP)
#   make scripts                         assemble the default version's scripts from views/

ifneq ($(shell uname -s),Linux)
$(error pg_procmem reads Linux /proc: it builds on Linux only)
endif

EXTENSION = pg_procmem
EXTVERSION = $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" $(EXTENSION).control)

MODULE_big = pg_procmem
# src/ in folders by layer, bottom up (docs/architecture.md): linux/ and
# rules/ are plain C with no PostgreSQL header (unit-tested and fuzzed on
# their own); server/, guard/, history/ and sql/ are the server's side; the
# module file holds _PG_init only.
PLAIN_DIRS = src/linux src/rules
SERVER_DIRS = src/server src/guard src/history src/sql
OBJS = src/pg_procmem.o $(patsubst %.c,%.o,$(sort $(wildcard $(addsuffix /*.c,$(PLAIN_DIRS) $(SERVER_DIRS)))))
DATA = $(wildcard $(EXTENSION)--*.sql)

REGRESS = install columns size privileges bad_input methods system shapes hostile

# -iquote, not -I: "linux/kernel.h" is ours, but <linux/kernel.h>, which
# system headers include (sys/sysinfo.h), must stay the kernel's
PG_CPPFLAGS = -iquote $(srcdir)/src -DPROCMEM_VERSION=\"$(EXTVERSION)\"
EXTRA_CLEAN = $(UNIT_TESTS) test/unit/test_kernel_truth test/unit/asan

# The default version's install and upgrade scripts are assembled from the
# view sources in views/, one file a concern, with sed and cat only. They
# are committed, and a plain make never rebuilds them (the rules follow the
# PGXS include, so "all" stays the default goal): the PGXN and Debian builds
# have no generator. scripts-check (run by scripts/test) fails when
# a committed script differs from its sources, or when a CREATE VIEW or
# CREATE FUNCTION in it passes 100 lines.
SCRIPT_PARTS = clip size processes contexts backends system shared_memory accounting oom headroom top history latest guard \
	advice_facts advice_checks advice comments
# The upgrade from the last release: views/upgrade-from-$(UPGRADE_FROM).sql
# (what it drops), then the parts whose objects are new or changed since
# (the history's, for their new columns, the advice's, which call the
# history's functions, the accounting's, for the cgroup's make-up, the
# processes' for their DSM columns and every view over them, and the new
# guard's and latest's; RELEASING.md, step 7).
UPGRADE_FROM = 1.2.0
UPGRADE_PARTS = processes backends accounting oom headroom top history latest guard advice_facts advice_checks \
	advice comments
FULL_SCRIPT = $(EXTENSION)--$(EXTVERSION).sql
UPGRADE_SCRIPT = $(EXTENSION)--$(UPGRADE_FROM)--$(EXTVERSION).sql
# $(call assemble,HEAD,PARTS): the head with its version filled in, then
# each part after a blank line (no parts: the head alone)
assemble = sed 's/@VERSION@/$(EXTVERSION)/g' $(1) $(if $(strip $(2)),&& sed -s '1s/^/\n/' $(patsubst %,views/%.sql,$(2)))

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)
# Only PostgreSQL's entry points leave the library (PGDLLEXPORT, compat.h):
# PGXS hides every other symbol from 16 on (CFLAGS_SL_MODULE); before, this
# does, lest a server process that loads other libraries sees ours.
ifeq ($(CFLAGS_SL_MODULE),)
override CFLAGS += -fvisibility=hidden
endif
include src/compiler.mk

# after PGXS, whose "all" stays the default goal
scripts:
	{ $(call assemble,views/head.sql,$(SCRIPT_PARTS)); } >$(FULL_SCRIPT)
	{ $(call assemble,views/upgrade-from-$(UPGRADE_FROM).sql,$(UPGRADE_PARTS)); } >$(UPGRADE_SCRIPT)

scripts-check:
	@{ $(call assemble,views/head.sql,$(SCRIPT_PARTS)); } | cmp -s - $(FULL_SCRIPT) || \
		{ echo "$(FULL_SCRIPT) is not what views/ assembles to: run make scripts"; exit 1; }
	@{ $(call assemble,views/upgrade-from-$(UPGRADE_FROM).sql,$(UPGRADE_PARTS)); } | cmp -s - $(UPGRADE_SCRIPT) || \
		{ echo "$(UPGRADE_SCRIPT) is not what views/ assembles to: run make scripts"; exit 1; }
	@awk -f views/statement-lengths.awk $(FULL_SCRIPT)
	@! $(MAKE) -n -s | grep -q 'views/' || { echo "a plain make would assemble the scripts"; exit 1; }

.PHONY: scripts scripts-check pgtap

# pgTAP tests against the server in PGHOST/PGPORT (pg_prove, with pgTAP and
# pg_procmem installable there, and pg_procmem in shared_preload_libraries)
pgtap:
	pg_prove -v test/pgtap/*.sql

# PGXS tracks no header dependencies: any header change rebuilds every object
$(OBJS): $(wildcard src/*/*.h)

# The /proc layer has no PostgreSQL headers: build its tests with plain cc.
UNIT_CFLAGS = -std=c99 -D_GNU_SOURCE -Wall -Wextra -O1 -g -iquote src
UNIT_LIB = $(sort $(wildcard $(addsuffix /*.c,$(PLAIN_DIRS))))
UNIT_HDRS = $(wildcard $(addsuffix /*.h,$(PLAIN_DIRS))) test/unit/tap.h test/unit/procfile.h
UNIT_TESTS = test/unit/test_procfs test/unit/test_kernel test/unit/test_pagemap test/unit/test_pagetables test/unit/test_sysmem test/unit/test_history test/unit/test_pressure test/unit/test_reuse test/unit/test_guard test/unit/test_dsm

test/unit/test_%: test/unit/test_%.c $(UNIT_LIB) $(UNIT_HDRS)
	$(CC) $(UNIT_CFLAGS) $(UNIT_LDFLAGS) -o $@ $< $(UNIT_LIB)

# its threads need libpthread where glibc < 2.34 keeps it apart
test/unit/test_kernel_truth: UNIT_LDFLAGS += -pthread

unit: $(UNIT_TESTS)
	prove -v --exec '' $(UNIT_TESTS) :: test/fixtures
	prove -v --exec bash test/unit/consistency.sh
	prove -v --exec python3 test/unit/layers.py

# The same tests under AddressSanitizer + UndefinedBehaviorSanitizer, and
# under valgrind (memcheck): any report fails the run.
SAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# The library is compiled once, then linked into each test. Under ASan the
# tests leave the pagemap pread path's live reads to the plain run
# (PROCMEM_UNDER_ASAN, test/unit/tap.h): ASan's shadow made them minutes each.
unit-asan:
	rm -rf test/unit/asan && mkdir -p test/unit/asan
	for c in $(UNIT_LIB); do \
		$(CC) $(UNIT_CFLAGS) $(SAN_FLAGS) -c -o test/unit/asan/$$(echo $$c | tr / _ | sed 's/\.c$$/.o/') $$c || exit 1; done
	for t in $(notdir $(UNIT_TESTS)); do \
		$(CC) $(UNIT_CFLAGS) $(SAN_FLAGS) -o test/unit/asan/$$t test/unit/$$t.c test/unit/asan/src_*.o || exit 1; done
	PROCMEM_UNDER_ASAN=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		prove -v --exec '' $(addprefix test/unit/asan/,$(notdir $(UNIT_TESTS))) :: test/fixtures

unit-valgrind: $(UNIT_TESTS)
	PROCMEM_UNDER_VALGRIND=1 prove -v --exec 'valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --trace-children=no' \
		$(UNIT_TESTS) :: test/fixtures

.PHONY: unit unit-asan unit-valgrind
