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
LDLIBS   := -lelf -lz -ldl -liberty -lcurl

DEPS_PKGS := gcc make clang llvm libbpf-dev libelf-dev zlib1g-dev bpftool binutils \
             libdw-dev libiberty-dev linux-perf bpftrace libclang-rt-14-dev golang-go \
             libxml2-utils python3 chromium libcurl4-openssl-dev \
             xz-utils sqlite3 clang-14 libc6-dbg

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
# tables-only tests, and tests that link the user-space code (built with ASan too)
ASAN_TESTS := test_tables_malformed test_tables_rules
ASAN_USER_TESTS := test_user_units test_symbolize test_fuzz_regressions
ASAN_BIN   := $(ASAN_TESTS:%=$(OUT)/asan/%) $(ASAN_USER_TESTS:%=$(OUT)/asan/%)
# libFuzzer targets: one per parser of outside data, tests/fuzz/fuzz_*.c
FUZZ_SRC   := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN   := $(FUZZ_SRC:tests/fuzz/%.c=$(OUT)/fuzz/%)
FUZZ_FLAGS := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
              -fno-omit-frame-pointer
# everything in user/ but the commands and main (argp, BPF loading)
FUZZ_USER_SRC := $(filter-out user/main.c user/cmd_%.c,$(USER_SRC))
FUZZ_LIBS  := $(USER_LIBS) $(filter-out -lcurl,$(LDLIBS)) -lcurl -lpthread
include tests/progs/progs.mk

.PHONY: all deps test bench fuzz clean format run demo kernel-matrix
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

$(OUT)/asan/%: tests/%.c $(TABLES_SRC) tests/harness.h tests/mini_elf.h
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_FLAGS) $(WARN) -std=gnu11 -I. -Itests -D_GNU_SOURCE $< $(TABLES_SRC) -o $@ $(LDLIBS)

# The user-space code and the tables compiled with ASan + UBSan, for the
# ASAN_USER_TESTS (the same tests as above, once more under the sanitizers).
$(OUT)/asan/obj/%.o: %.c | $(BPF_SKEL)
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_FLAGS) $(WARN) -std=gnu11 -I. -I$(OUT) -D_GNU_SOURCE -MMD -MP -c $< -o $@

ASAN_USER_OBJ   := $(USERLIB_OBJ:$(OUT)/%=$(OUT)/asan/obj/%)
ASAN_TABLES_OBJ := $(TABLES_OBJ:$(OUT)/%=$(OUT)/asan/obj/%)
-include $(ASAN_USER_OBJ:.o=.d) $(ASAN_TABLES_OBJ:.o=.d)

$(OUT)/asan/libcfiuser.a: $(ASAN_USER_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(OUT)/asan/libcfitables.a: $(ASAN_TABLES_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(ASAN_USER_TESTS:%=$(OUT)/asan/%): $(OUT)/asan/%: tests/%.c $(OUT)/asan/libcfiuser.a \
		$(OUT)/asan/libcfitables.a $(wildcard tests/*.h tests/fuzz/*.[ch])
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_FLAGS) $(WARN) -std=gnu11 -I. -I$(OUT) -Itests -D_GNU_SOURCE $< -o $@ \
		$(OUT)/asan/libcfiuser.a $(OUT)/asan/libcfitables.a $(FUZZ_LIBS)

$(OUT)/tests/test_fuzz_regressions: $(wildcard tests/fuzz/*.[ch])

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

# tests/bench/fpwalk: the kernel's own frame-pointer walk (bpf_get_stack), the baseline of
# the walker's per-frame cost; built like the main program (clang -target bpf + skeleton).
$(OUT)/bench/fpwalk.bpf.o: tests/bench/fpwalk.bpf.c vmlinux.h
	@mkdir -p $(dir $@)
	$(CLANG) -g -O2 -target bpf $(ARCH_FLAGS) -I. -Wall -Werror -c $< -o $@
	llvm-strip -g $@ 2>/dev/null || true

$(OUT)/bench/fpwalk.skel.h: $(OUT)/bench/fpwalk.bpf.o
	$(BPFTOOL) gen skeleton $< > $@

$(OUT)/bench/fpwalk: tests/bench/fpwalk.c $(OUT)/bench/fpwalk.skel.h
	$(CC) $(CFLAGS) -I$(OUT)/bench $< -o $@ -lbpf -lelf -lz

# make bench: about 20 minutes; tests/bench/peers.py writes tests/bench/RESULTS.md
bench: deps all $(OUT)/bench/bench_aggregate $(OUT)/bench/fpwalk $(TEST_PROGS) $(BENCH_PROGS)
	@tests/bench/peers.py
	@tests/bench/run.sh
	@tests/bench/walker_cost.sh
	@taskset -c 0 $(OUT)/bench/bench_aggregate | tee $(OUT)/bench/aggregate.md
	@tests/bench/outputs.sh
	@tests/bench/agent_overhead.sh

# Every tests/fuzz/fuzz_NAME.c is a libFuzzer target build/fuzz/fuzz_NAME,
# linked with the tables and user/ (commands and main excluded) compiled
# with coverage + ASan + UBSan.  make fuzz runs each for FUZZ_SECONDS;
# make fuzz FUZZ_TARGETS="fuzz_perfmap fuzz_kallsyms" runs only those.
FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?= $(FUZZ_BIN:$(OUT)/fuzz/%=%)
FUZZ_USER_OBJ   := $(FUZZ_USER_SRC:%.c=$(OUT)/fuzz/obj/%.o)
FUZZ_TABLES_OBJ := $(TABLES_SRC:%.c=$(OUT)/fuzz/obj/%.o)
-include $(FUZZ_USER_OBJ:.o=.d) $(FUZZ_TABLES_OBJ:.o=.d)

$(OUT)/fuzz/obj/%.o: %.c | $(BPF_SKEL)
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link $(WARN) -std=gnu11 -I. -I$(OUT) \
		-D_GNU_SOURCE -MMD -MP -c $< -o $@

$(OUT)/fuzz/libcfiuser.a: $(FUZZ_USER_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(OUT)/fuzz/libcfitables.a: $(FUZZ_TABLES_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(OUT)/fuzz/%: tests/fuzz/%.c $(OUT)/fuzz/libcfiuser.a $(OUT)/fuzz/libcfitables.a \
		$(wildcard tests/fuzz/*.h) tests/mini_elf.h
	@mkdir -p $(dir $@)
	$(CLANG) $(FUZZ_FLAGS) -fsanitize=fuzzer $(WARN) -std=gnu11 -I. -I$(OUT) -D_GNU_SOURCE \
		$< -o $@ $(OUT)/fuzz/libcfiuser.a $(OUT)/fuzz/libcfitables.a $(FUZZ_LIBS)

fuzz: deps all $(FUZZ_BIN) $(OUT)/progs/chain
	@OUT=$(OUT) tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Boots Debian's packaged kernel under qemu and runs cfiprof inside (not in make test).
KMATRIX_PKGS := qemu-system-x86 busybox-static cpio
kernel-matrix: deps
	@$(MAKE) --no-print-directory all $(TEST_PROGS)
	@missing=""; for p in $(KMATRIX_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	[ -z "$$missing" ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null
	@tests/kernel_matrix/run.sh

format:
	clang-format -i $(wildcard bpf/*.[ch] user/*.[ch] tables/*.[ch] tests/*.[ch] tests/fuzz/*.[ch])

clean:
	rm -rf $(OUT) demo.svg demo.txt demo.rec
