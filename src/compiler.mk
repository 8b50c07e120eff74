# src/compiler.mk - included by the Makefiles after PGXS.
#
# PGXS compiles with the flags the server was built with (pg_config
# --cflags), which name that build's compiler's warnings. PostgreSQL 19 as
# Debian packages it was built with gcc 16 and asks for
# -Wmissing-variable-declarations, which gcc before 14 refuses outright
# ("unrecognized command-line option"), failing the build. Each -W and -f
# flag is tried alone, with -Werror (clang only warns of a flag it does not
# support) and -Wformat (which -Wformat-security needs), on a program
# that gives no warning (all of them at once first: the usual answer is
# yes); those the compiler at hand refuses are left out, with a line on
# stderr saying which (in 80 columns), and the others stay as they are.
PROCMEM_CC_FLAGS := $(sort $(filter -W% -f%,$(CFLAGS)))
PROCMEM_CC_PROBE = echo 'int main(void) { return 0; }' | LC_ALL=C $(CC) -Werror -Wformat $(1) -fsyntax-only -x c - \
	>/dev/null 2>&1
PROCMEM_CC_REFUSES := $(strip $(shell $(call PROCMEM_CC_PROBE,$(PROCMEM_CC_FLAGS)) || \
	for f in $(PROCMEM_CC_FLAGS); do $(call PROCMEM_CC_PROBE,$$f) || echo $$f; done))
ifneq ($(PROCMEM_CC_REFUSES),)
# said where something is built (make, make all), not for install or clean
ifeq ($(filter-out all,$(MAKECMDGOALS)),)
PROCMEM_SAID := $(shell echo "$(CC) does not know $(PROCMEM_CC_REFUSES) (pg_config --cflags): left out" | fold -s -w 80 >&2)
endif
override CFLAGS := $(filter-out $(PROCMEM_CC_REFUSES),$(CFLAGS))
endif
