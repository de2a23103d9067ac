# Test programs with known call chains, for the replay and end-to-end tests.
# All built -O2 -fomit-frame-pointer -g: frame pointers must not be needed.
# Included before the main Makefile's first target: keep its default goal.
PROGS_SAVED_GOAL := $(.DEFAULT_GOAL)
PROGS_OUT    := $(OUT)/progs
PROGS_CFLAGS := -O2 -fomit-frame-pointer -g -Wall -Wno-unused-function -D_GNU_SOURCE
PROGS_DEPS   := tests/progs/spin.h tests/progs/progs.mk

TEST_PROGS := $(addprefix $(PROGS_OUT)/,chain recurse threads signal plt libpltlib.so \
	dlopen libdl_target.so drap cxx_throw demo cxx_names)

$(PROGS_OUT)/%: tests/progs/%.c $(PROGS_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(PROGS_CFLAGS) $< -o $@ -lpthread -ldl

$(PROGS_OUT)/lib%.so: tests/progs/%.c $(PROGS_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(PROGS_CFLAGS) -fPIC -shared $< -o $@

$(PROGS_OUT)/plt: tests/progs/plt.c $(PROGS_OUT)/libpltlib.so $(PROGS_DEPS)
	$(CC) $(PROGS_CFLAGS) $< -o $@ -L$(PROGS_OUT) -lpltlib -Wl,-rpath,'$$ORIGIN'

$(PROGS_OUT)/cxx_throw: tests/progs/cxx_throw.cc $(PROGS_DEPS)
	@mkdir -p $(dir $@)
	$(CXX) $(PROGS_CFLAGS) $< -o $@

$(PROGS_OUT)/cxx_names: tests/progs/cxx_names.cc $(PROGS_DEPS)
	@mkdir -p $(dir $@)
	$(CXX) $(PROGS_CFLAGS) $< -o $@

.DEFAULT_GOAL := $(PROGS_SAVED_GOAL)
