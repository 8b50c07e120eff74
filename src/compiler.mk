# src/compiler.mk - included by the Makefiles after PGXS.
#
# PGXS compiles with the flags the server was built with (pg_config
# --cflags), which name that build's compiler's warnings. PostgreSQL 19 as
# Debian packages it was built with gcc 16 and asks for
# -Wmissing-variable-declarations, which gcc before 14 refuses outright
# ("unrecognized command-line option"), failing the build. Each -W and -f
# flag is tried alone on an empty file with the compiler at hand, and those
# it does not know (an error, or clang's "unknown warning option") are left
# out, with a line on stderr saying which; the others stay as they are.
PROCMEM_CC_REFUSES := $(strip $(shell for f in $(sort $(filter -W% -f%,$(CFLAGS))); do \
	LC_ALL=C $(CC) $$f -fsyntax-only -x c /dev/null 2>&1 | grep -qiE "unknown|unrecogni" && echo $$f; done))
ifneq ($(PROCMEM_CC_REFUSES),)
PROCMEM_SAID := $(shell echo "$(CC) does not know $(PROCMEM_CC_REFUSES) (pg_config --cflags): left out" >&2)
override CFLAGS := $(filter-out $(PROCMEM_CC_REFUSES),$(CFLAGS))
endif
