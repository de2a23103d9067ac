# Test programs with known call chains, for the replay and end-to-end tests.
# All built -O2 -fomit-frame-pointer -g: frame pointers must not be needed.
# Included before the main Makefile's first target: keep its default goal.
PROGS_SAVED_GOAL := $(.DEFAULT_GOAL)
PROGS_OUT    := $(OUT)/progs
PROGS_CFLAGS := -O2 -fomit-frame-pointer -g -Wall -Wno-unused-function -D_GNU_SOURCE
PROGS_DEPS   := tests/progs/spin.h tests/progs/progs.mk

TEST_PROGS := $(addprefix $(PROGS_OUT)/,chain recurse threads signal plt libpltlib.so \
	dlopen libdl_target.so drap cxx_throw demo cxx_names vdso_spin)

# tests/e2e/test_faults.c: lifecycle, churn, corrupted stacks, corrupted CFI
FAULTS_PROGS := $(addprefix $(PROGS_OUT)/,faults_life faults_churn faults_badstack faults_badcfi \
	libfaults_badcfi.so)
TEST_PROGS += $(FAULTS_PROGS)

# tests/e2e/test_hostile.c: processes that attack the agent
HOSTILE_PROGS := $(addprefix $(PROGS_OUT)/,hostile_fifo jit_spin hostile_storm)
TEST_PROGS += $(HOSTILE_PROGS)

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


# Benchmark-only programs (make bench, not make test): a 2-thread variant of
# threads, and recurse's frame-pointer twin for the frame-pointer peers and the
# kernel's own frame-pointer walk (tests/bench/fpwalk).
BENCH_PROGS := $(addprefix $(PROGS_OUT)/,recurse_fp threads2)

$(PROGS_OUT)/threads2: tests/progs/threads.c $(PROGS_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(PROGS_CFLAGS) -DNR_THREADS=2 $< -o $@ -lpthread -ldl

$(PROGS_OUT)/recurse_fp: tests/progs/recurse.c $(PROGS_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(PROGS_CFLAGS) -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer $< -o $@ -lpthread -ldl

# the library test_faults corrupts; built without -g so .eh_frame is its only CFI
$(PROGS_OUT)/libfaults_badcfi.so: tests/progs/faults_badcfi_lib.c $(PROGS_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -g,$(PROGS_CFLAGS)) -fPIC -shared $< -o $@

# `make build/tests/test_faults` alone builds what it runs (it also uses chain,
# recurse, demo, threads and the two dlopen libraries)
$(OUT)/tests/test_faults: $(FAULTS_PROGS) $(addprefix $(PROGS_OUT)/,chain recurse demo \
	libdl_target.so libpltlib.so threads)

.DEFAULT_GOAL := $(PROGS_SAVED_GOAL)
