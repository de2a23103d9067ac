# cfiprof: in-kernel DWARF CFI unwinding profiler.
#   make deps    install the Debian packages the build and tests need
#   make         build build/cfiprof
#   make test    deps + build + every test (ends with "N passed, N failed")
#   make bench   benchmarks (figures for the notes; not part of make test)
#   make fuzz    libFuzzer campaigns (FUZZ_SECONDS per target)

OUT      := build
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
ARCH_FLAGS := -D__TARGET_ARCH_x86

WARN     := -Wall -Wextra -Werror
CFLAGS   ?= -O2 -g
CFLAGS   += $(WARN) -std=gnu11 -I. -I$(OUT) -D_GNU_SOURCE
LDLIBS   := -lelf -lz -ldl -liberty

DEPS_PKGS := gcc make clang llvm libbpf-dev libelf-dev zlib1g-dev bpftool binutils \
             libdw-dev libiberty-dev linux-perf bpftrace libclang-rt-14-dev golang-go \
             libxml2-utils python3 chromium

TABLES_SRC := $(sort $(wildcard tables/*.c))
TABLES_OBJ := $(TABLES_SRC:%.c=$(OUT)/%.o)
USER_SRC   := $(sort $(wildcard user/*.c))
USER_OBJ   := $(USER_SRC:%.c=$(OUT)/%.o)
# everything in user/ but main.c, so tests can link the user-space code
USERLIB_OBJ := $(filter-out $(OUT)/user/main.o,$(USER_OBJ))
BPF_SRC    := $(sort $(wildcard bpf/*.bpf.c))
BPF_OBJ    := $(BPF_SRC:bpf/%.bpf.c=$(OUT)/%.bpf.o)
BPF_SKEL   := $(BPF_SRC:bpf/%.bpf.c=$(OUT)/%.skel.h)
ifneq ($(BPF_SRC),)
USER_LIBS  := -lbpf
endif

TEST_SRC   := $(sort $(wildcard tests/test_*.c))
TEST_BIN   := $(TEST_SRC:tests/%.c=$(OUT)/tests/%)
ASAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
ASAN_TESTS := test_tables_malformed test_tables_rules test_fuzz_regressions
ASAN_BIN   := $(ASAN_TESTS:%=$(OUT)/asan/%)
include tests/progs/progs.mk

.PHONY: all deps test bench fuzz clean format run demo
.SECONDARY:
all: $(OUT)/cfiprof

deps:
	@missing=""; for p in $(DEPS_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "deps: installing$$missing"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq >/dev/null && apt-get install -y -qq $$missing >/dev/null || \
			{ echo "deps: apt-get install failed for:$$missing" >&2; exit 1; }; \
	fi

# -MMD: each object depends on exactly the headers it includes
$(OUT)/%.o: %.c | $(BPF_SKEL)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

-include $(TABLES_OBJ:.o=.d) $(USER_OBJ:.o=.d)

# the skeleton embeds the BPF object: whatever includes it must rebuild with it
$(OUT)/user/loader.o: $(BPF_SKEL)

$(OUT)/libcfitables.a: $(TABLES_OBJ)
	$(AR) rcs $@ $^

# BPF: compile with clang -target bpf, then generate the skeleton.
$(OUT)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) vmlinux.h
	@mkdir -p $(OUT)
	$(CLANG) -g -O2 -target bpf $(ARCH_FLAGS) -I. -Wall -Werror -c $< -o $@
	llvm-strip -g $@ 2>/dev/null || true

$(OUT)/%.skel.h: $(OUT)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@

$(OUT)/libcfiuser.a: $(USERLIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(OUT)/cfiprof: $(OUT)/user/main.o $(OUT)/libcfiuser.a $(OUT)/libcfitables.a
	$(CC) $(CFLAGS) $^ -o $@ $(USER_LIBS) $(LDLIBS) -lpthread

# ---- tests ----
$(OUT)/tests/%: tests/%.c $(OUT)/libcfiuser.a $(OUT)/libcfitables.a $(BPF_SKEL) tests/harness.h $(wildcard tests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests $< -o $@ $(OUT)/libcfiuser.a $(OUT)/libcfitables.a $(USER_LIBS) $(LDLIBS) -lpthread

$(OUT)/asan/%: tests/%.c $(TABLES_SRC) tests/harness.h tests/mini_elf.h tests/fuzz/fuzz_tables.c
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_FLAGS) $(WARN) -std=gnu11 -I. -Itests -D_GNU_SOURCE $< $(TABLES_SRC) -o $@ $(LDLIBS)

test: deps $(TEST_PROGS)
	@$(MAKE) --no-print-directory all $(TEST_BIN) $(ASAN_BIN)
	@CFIPROF=$(OUT)/cfiprof OUT=$(OUT) tests/run.sh $(TEST_BIN) $(ASAN_BIN)

# The README's run command: profile the bundled demo (built without frame
# pointers) and write demo.svg (flame graph) and demo.txt (report).
demo: deps
	@$(MAKE) --no-print-directory all $(OUT)/progs/demo
	$(OUT)/cfiprof record -F 999 --save demo.rec -o demo.svg -- $(OUT)/progs/demo 5
	$(OUT)/cfiprof report demo.rec -o demo.txt
	@echo "demo: wrote demo.svg (open it in a browser), demo.txt and demo.rec"
	@head -30 demo.txt

run: demo

$(OUT)/bench/bench_aggregate: tests/bench/bench_aggregate.c $(OUT)/libcfiuser.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< -o $@ $(OUT)/libcfiuser.a $(OUT)/libcfitables.a $(USER_LIBS) $(LDLIBS) -lpthread

bench: deps all $(OUT)/bench/bench_aggregate
	@tests/bench/run.sh
	@tests/bench/walker_cost.sh
	@taskset -c 0 $(OUT)/bench/bench_aggregate | tee $(OUT)/bench/aggregate.md
	@tests/bench/outputs.sh

FUZZ_SECONDS ?= 600
$(OUT)/fuzz/fuzz_tables: tests/fuzz/fuzz_tables.c $(TABLES_SRC)
	@mkdir -p $(dir $@)
	$(CLANG) -O1 -g -fsanitize=fuzzer,address,undefined -I. -D_GNU_SOURCE $^ -o $@ $(LDLIBS)

fuzz: deps $(OUT)/fuzz/fuzz_tables
	@tests/fuzz/run.sh $(FUZZ_SECONDS)

format:
	clang-format -i $(wildcard bpf/*.[ch] user/*.[ch] tables/*.[ch] tests/*.[ch])

clean:
	rm -rf $(OUT) demo.svg demo.txt demo.rec
