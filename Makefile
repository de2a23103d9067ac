# cfiprof: in-kernel DWARF CFI unwinding profiler.
#   make deps    install the Debian packages the build needs
#   make         build build/cfiprof
#   make test    deps + test deps + build + every test (ends with "N passed, N failed")
#   make test-stress  the end-to-end suites beside CPU hogs, each test's pass rate over 10 runs
#   make bench   benchmarks (figures for the notes; not part of make test)
#   make fuzz    libFuzzer campaigns (FUZZ_SECONDS per target)
#   make go-versions-test  the Go tests on Go 1.21-1.23 from bookworm-backports
#   make python-versions-test  the Python tests on the pyenv CPythons this machine kind has
#   make ARCH=arm64  cross-build a static build/arm64/cfiprof; make arm64-test  run it in qemu
#   tests/run.sh NAME...   one test binary (or one test inside it: NAME:TEST), see README

OUT      := build
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
ARCH_FLAGS := -D__TARGET_ARCH_x86

WARN     := -Wall -Wextra -Werror
CFLAGS   ?= -O2 -g
BASE_FLAGS := $(WARN) -std=gnu11 -I. -I$(OUT) -D_GNU_SOURCE
# libdebuginfod and libcurl are dlopen()ed on first use (common/dynlib.h)
LDLIBS   := -lbpf -ldw -lelf -lz -llzma -ldl -liberty -lpthread

# The one version string (common/version.h): a release tag vX.Y... if HEAD has one, else the
# base version and the commit; outside git just the base version.
BASE_VERSION := 0.1
ifeq ($(origin VERSION),undefined)
VERSION := $(shell v=$$(git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null) && echo $${v\#v} || \
	{ h=$$(git rev-parse --short HEAD 2>/dev/null) && echo $(BASE_VERSION)+g$$h || echo $(BASE_VERSION); })
endif

# what building cfiprof needs
BUILD_PKGS := gcc make clang llvm libbpf-dev libelf-dev zlib1g-dev bpftool libdw-dev \
              libiberty-dev libcurl4-openssl-dev help2man \
              liblzma-dev libdebuginfod-dev
# what only the tests need: oracles, peers, viewers, test workloads
TEST_PKGS  := binutils elfutils libcap2-bin linux-perf bpftrace strace libclang-rt-14-dev golang-go libxml2-utils python3 \
              protobuf-compiler \
              python3.11 python3.11-dev php8.2-cli php8.2-dev php8.2-fpm libfcgi-bin perl libperl5.36 \
              ruby3.1 ruby3.1-dev \
              nodejs default-jdk-headless \
              chromium xz-utils sqlite3 clang-14 libc6-dbg prometheus man-db groff-base bash-completion \
              debuginfod systemtap-sdt-dev systemd \
              gcc-aarch64-linux-gnu libc6-dev-arm64-cross libstdc++6-arm64-cross qemu-user \
              qemu-system-arm cpio

# the plain C libraries: helpers, ELF access, the CFI compiler (no BPF, no user/)
LIB_SRC    := $(sort $(wildcard common/*.c elf/*.c tables/*.c))
# user space but the CLI (main + subcommands): what tests and fuzz targets link
USERLIB_SRC := $(sort $(wildcard user/*/*.c user/runtimes/*/*.c))
USERLIB_SRC := $(filter-out user/cli/%,$(USERLIB_SRC))
CLI_SRC    := user/main.c $(sort $(wildcard user/cli/*.c))
BPF_SRC    := $(sort $(wildcard bpf/*.bpf.c))
BPF_OBJ    := $(BPF_SRC:bpf/%.bpf.c=$(OUT)/%.bpf.o)
BPF_SKEL   := $(BPF_SRC:bpf/%.bpf.c=$(OUT)/%.skel.h)

# tests/unit: no kernel needed; tests/e2e: BPF, perf events, real programs
TEST_SRC   := $(sort $(wildcard tests/unit/test_*.c tests/e2e/test_*.c))
TEST_BIN   := $(addprefix $(OUT)/tests/,$(notdir $(TEST_SRC:.c=)))
# make test runs every unit suite once, under ASan + UBSan (tests/run.sh reports them as
# NAME[asan]; the same checks as the plain build, which the end-to-end suites run as
# cfiprof itself), but these, plain, for the reason given: test_tables_oracle compares every row
# of libLLVM and libc with readelf (minutes under ASan; its parser runs under ASan in
# test_tables_rules, test_tables_malformed and test_fuzz_regressions); test_packaging,
# test_docs, test_history and test_layers run make, git and text checks, and
# test_harness the test harness, none of cfiprof's code.
ASAN_SKIP  := test_tables_oracle test_packaging test_docs test_history test_layers test_harness
UNIT_TESTS := $(notdir $(basename $(wildcard tests/unit/test_*.c)))
ASAN_TESTS := $(filter-out $(ASAN_SKIP),$(UNIT_TESTS))
ASAN_BIN   := $(ASAN_TESTS:%=$(OUT)/asan/%)
E2E_TESTS  := $(notdir $(basename $(wildcard tests/e2e/test_*.c)))
# what make test runs of the plain build: the end-to-end suites and the unit suites ASan skips
PLAIN_RUN_BIN := $(addprefix $(OUT)/tests/,$(E2E_TESTS) $(ASAN_SKIP))
# the tracker's tests run once more under ThreadSanitizer: the load thread, the symbolizer
# and the consumer share its state
TSAN_TESTS := test_recording test_table_store test_frame_names test_tracker_reload \
              test_tracker_forget test_tracker_races test_tracker_builds test_tracker_snapshot \
              test_debuginfo test_src_lines test_runtime_detect
TSAN_BIN   := $(TSAN_TESTS:%=$(OUT)/tsan/%)
# libFuzzer targets: one per parser of outside data, tests/fuzz/fuzz_*.c
FUZZ_SRC   := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN   := $(FUZZ_SRC:tests/fuzz/%.c=$(OUT)/fuzz/%)

# -g1: functions and lines, all a sanitizer's report names; the full -g of ~400
# sanitized objects and their test binaries is compile time spent on nothing read
SAN_FLAGS  := -O1 -g1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
TSAN_FLAGS := -O1 -g1 -fsanitize=thread -fno-omit-frame-pointer
# A test's own source compiles unoptimised; the code it tests keeps its flags in the
# libraries: the suites' time goes to that code, waiting on the processes they start
# and sanitizer checks, not to test code, and the ~100 test binaries are most of make
# test's build.
TEST_OPT     := -O0
TEST_SAN_OPT := -O0
include tests/progs/progs.mk

.PHONY: all deps test-deps npm-dep test test-stress test-cpu test-oracle bench fuzz clean format run demo kernel-matrix FORCE man install \
	arm64-vmlinux arm64-test arm64-bench \
	go-versions-test python-versions-test \
	uninstall
.SECONDARY:
.DELETE_ON_ERROR:
.SECONDEXPANSION:
all: $(OUT)/cfiprof

# $(call apt_install,PACKAGES): installs what is missing, quietly; nothing when all are there
define apt_install
	@missing=""; for p in $(1); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "deps: installing$$missing"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq >/dev/null && apt-get install -y -qq $$missing >/dev/null || \
			{ echo "deps: apt-get install failed for:$$missing" >&2; exit 1; }; \
	fi
endef

deps:
	$(call apt_install,$(BUILD_PKGS))

# readers for test_conventions (npm; nodejs brings npm on some systems): an independent pprof
# decoder, and speedscope's own app, whose importer headless Chromium runs
NPM_PKGS := pprof-format@2.3.2 speedscope@1.25.0
test-deps:
	$(call apt_install,$(BUILD_PKGS) $(TEST_PKGS))
	@command -v npm > /dev/null || $(MAKE) --no-print-directory npm-dep
	@[ -f $(OUT)/npm/node_modules/pprof-format/package.json ] && \
	 [ -f $(OUT)/npm/node_modules/speedscope/dist/release/index.html ] || { \
		echo "deps: npm install $(NPM_PKGS)"; \
		npm install --prefix $(OUT)/npm --no-audit --no-fund --silent $(NPM_PKGS) > /dev/null || \
			{ echo "deps: npm install $(NPM_PKGS) failed" >&2; exit 1; }; }

npm-dep:
	$(call apt_install,npm)

# rewritten only when the version changes, so an unchanged tree rebuilds nothing
$(OUT)/cfiprof_version.h: FORCE
	@mkdir -p $(OUT)
	@echo '#define CFIPROF_VERSION "$(VERSION)"' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv -f $@.tmp $@

# BPF: compile with clang -target bpf, then generate the skeleton.  libbpf's usdt.bpf.h
# includes <linux/errno.h>, whose <asm/errno.h> is in the multiarch directory.
BPF_MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
$(OUT)/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) vmlinux.h
	@mkdir -p $(OUT)
	$(CLANG) -g -O2 -target bpf $(ARCH_FLAGS) -I. $(if $(BPF_MULTIARCH),-idirafter /usr/include/$(BPF_MULTIARCH)) \
		-Wall -Werror -c $< -o $@
	llvm-strip -g $@ 2>/dev/null || true

$(OUT)/%.skel.h: $(OUT)/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@

# The same BPF programs for arm64 (issue 30), against bpf/arm64/vmlinux.h: built by make
# test, so that nothing x86-only creeps into bpf/ outside bpf/arch.bpf.h and the walker.
$(OUT)/arm64/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(wildcard bpf/arm64/*.h)
	@mkdir -p $(dir $@)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_arm64 -Ibpf/arm64 -I. \
		-idirafter /usr/aarch64-linux-gnu/include -Wall -Werror -c $< -o $@
	llvm-strip -g $@ 2>/dev/null || true

$(OUT)/arm64/%.skel.h: $(OUT)/arm64/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@

# bpf/arm64/vmlinux_btf.h: the BTF of Debian's arm64 cloud kernel, cut from its Image
# (no ELF vmlinux is shipped) and dumped as C.  Run again to move to another kernel.
ARM64_KERNEL_PKG ?= linux-image-6.1.0-47-cloud-arm64
arm64-vmlinux:
	@mkdir -p $(OUT)/arm64-kernel
	cd $(OUT)/arm64-kernel && apt-get download -o APT::Sandbox::User=root $(ARM64_KERNEL_PKG):arm64 && \
		dpkg-deb -x $(ARM64_KERNEL_PKG)_*_arm64.deb pkg
	python3 tests/arm64/btf_from_image.py $(OUT)/arm64-kernel/pkg/boot/vmlinuz-* $(OUT)/arm64-kernel/vmlinux.btf
	$(BPFTOOL) btf dump file $(OUT)/arm64-kernel/vmlinux.btf format c > bpf/arm64/vmlinux_btf.h

# One template for every build of the C code: $(call c_build,DIR,COMPILER,FLAGS)
# compiles LIB_SRC, USERLIB_SRC and CLI_SRC to DIR/obj/ and archives
# DIR/libcfitables.a and DIR/libcfiuser.a.  -MMD: each object depends on exactly
# the headers it includes; the skeleton is built first for whoever includes it.
define c_build
$(1)/obj/%.o: %.c | $$(BPF_SKEL) $(OUT)/cfiprof_version.h
	@mkdir -p $$(dir $$@)
	$(2) $(3) $$(BASE_FLAGS) -MMD -MP -c $$< -o $$@
-include $$(patsubst %.c,$(1)/obj/%.d,$$(LIB_SRC) $$(USERLIB_SRC) $$(CLI_SRC))
$(1)/libcfitables.a: $$(LIB_SRC:%.c=$(1)/obj/%.o)
	@rm -f $$@
	$$(AR) rcs $$@ $$^
$(1)/libcfiuser.a: $$(USERLIB_SRC:%.c=$(1)/obj/%.o)
	@rm -f $$@
	$$(AR) rcs $$@ $$^
endef
$(eval $(call c_build,$(OUT),$(CC),$(CFLAGS)))
$(eval $(call c_build,$(OUT)/asan,$(CC),$(SAN_FLAGS)))
$(eval $(call c_build,$(OUT)/tsan,$(CC),$(TSAN_FLAGS)))
$(eval $(call c_build,$(OUT)/fuzz,$(CLANG),$(SAN_FLAGS) -fsanitize=fuzzer-no-link))

# the skeleton embeds the BPF object: whatever includes it must rebuild with it
$(OUT)/obj/user/session/bpf_program.o $(OUT)/obj/user/session/walk_loads.o \
	$(OUT)/obj/user/session/exit_maps_load.o: $(BPF_SKEL)

# ---- arm64 (issue 30): make ARCH=arm64 cross-builds a static build/arm64/cfiprof ----
# against the static libraries of Debian's arm64 packages, unpacked into a private sysroot
# (nothing of the host's is installed or replaced: only arm64's package lists are added).
ARM64_CC      := aarch64-linux-gnu-gcc
ARM64_SYSROOT := $(OUT)/arm64-sysroot
ARM64_DEBS    := libbpf-dev libelf-dev libdw-dev zlib1g-dev liblzma-dev libzstd-dev libbz2-dev \
                 libiberty-dev libcurl4-openssl-dev
# -g1 (functions and lines, what a crash's backtrace needs): the cross tree is built by every
# make test, and full -g is a sixth of its compile time for types nobody reads there
ARM64_FLAGS   := -O2 -g1 -I$(OUT)/arm64 -isystem $(ARM64_SYSROOT)/usr/include \
                 -isystem $(ARM64_SYSROOT)/usr/include/aarch64-linux-gnu
ARM64_LDLIBS  := -L$(ARM64_SYSROOT)/usr/lib/aarch64-linux-gnu -lbpf -ldw -lelf -lz -llzma -lzstd \
                 -lbz2 -ldl -liberty -lpthread
$(ARM64_SYSROOT)/.done:
	@mkdir -p $(ARM64_SYSROOT)/debs
	@dpkg --print-foreign-architectures | grep -qx arm64 || { dpkg --add-architecture arm64 && \
		apt-get update -qq -o APT::Sandbox::User=root > /dev/null; }
	cd $(ARM64_SYSROOT)/debs && rm -f *.deb && \
		apt-get download -qq -o APT::Sandbox::User=root $(ARM64_DEBS:%=%:arm64)
	for d in $(ARM64_SYSROOT)/debs/*.deb; do dpkg-deb -x $$d $(ARM64_SYSROOT) || exit 1; done
	@touch $@
$(eval $(call c_build,$(OUT)/arm64,$(ARM64_CC),$(ARM64_FLAGS)))
$(patsubst %.c,$(OUT)/arm64/obj/%.o,$(LIB_SRC) $(USERLIB_SRC) $(CLI_SRC)): | $(ARM64_SYSROOT)/.done \
	$(OUT)/arm64/cfiprof.skel.h $(OUT)/arm64/exit_maps.skel.h
$(OUT)/arm64/obj/user/session/bpf_program.o $(OUT)/arm64/obj/user/session/walk_loads.o \
	$(OUT)/arm64/obj/user/session/exit_maps_load.o: $(OUT)/arm64/cfiprof.skel.h \
	$(OUT)/arm64/exit_maps.skel.h
$(OUT)/arm64/cfiprof: $(CLI_SRC:%.c=$(OUT)/arm64/obj/%.o) $(OUT)/arm64/libcfiuser.a \
		$(OUT)/arm64/libcfitables.a
	$(ARM64_CC) -static $(filter %.o,$^) -o $@ $(OUT)/arm64/libcfiuser.a \
		$(OUT)/arm64/libcfitables.a $(ARM64_LDLIBS)
ifeq ($(ARCH),arm64)
all: $(OUT)/arm64/cfiprof
endif

# Debian's own arm64 programs, unpacked (never installed) under $(OUT)/arm64-guest/SET, each
# set's stamp named after its list so that a changed list unpacks again: debs, what the
# guest runs in make test (xz, python3.11); rt, ruby and perl with their headers (the
# layout checks of make test, and the guest's runtimes); php and jdk, what only make
# arm64-test's guest runs.
ARM64_GUEST_DEBS := xz-utils liblzma5 python3.11-minimal libpython3.11-minimal libexpat1 zlib1g
ARM64_RT_DEBS := ruby3.1 libruby3.1 libgmp10 libcrypt1 zlib1g perl-base libperl5.36 ruby3.1-dev
ARM64_PHP_DEBS := php8.2-cli libxml2 libicu72 libssl3 libpcre2-8-0 libsodium23 libargon2-1 \
	libstdc++6 libgcc-s1
# HotSpot (make arm64-test): the JRE Debian runs Java with, and what its libjvm.so loads
ARM64_JDK_DEBS := openjdk-17-jre-headless libstdc++6 libgcc-s1 zlib1g
arm64_debs_done = $(OUT)/arm64-guest/$(1)/.done-$(shell echo $(2) | cksum | cut -d' ' -f1)
define arm64_debs
$(call arm64_debs_done,$(1),$(2)): | $(ARM64_SYSROOT)/.done
	@rm -rf $(OUT)/arm64-guest/$(1) $(OUT)/arm64-guest/$(1)-dl
	@mkdir -p $(OUT)/arm64-guest/$(1)-dl $(OUT)/arm64-guest/$(1)
	cd $(OUT)/arm64-guest/$(1)-dl && \
		apt-get download -qq -o APT::Sandbox::User=root $(2:%=%:arm64)
	for d in $(OUT)/arm64-guest/$(1)-dl/*.deb; do dpkg-deb -x $$$$d $(OUT)/arm64-guest/$(1) || exit 1; done
	@touch $(OUT)/arm64-guest/$(1)/.done $$@
endef
$(eval $(call arm64_debs,debs,$(ARM64_GUEST_DEBS)))
$(eval $(call arm64_debs,rt,$(ARM64_RT_DEBS)))
$(eval $(call arm64_debs,php,$(ARM64_PHP_DEBS)))
$(eval $(call arm64_debs,jdk,$(ARM64_JDK_DEBS)))
ARM64_DEBS_DONE := $(call arm64_debs_done,debs,$(ARM64_GUEST_DEBS)) \
	$(call arm64_debs_done,rt,$(ARM64_RT_DEBS))
ARM64_FULL_DEBS_DONE := $(ARM64_DEBS_DONE) $(call arm64_debs_done,php,$(ARM64_PHP_DEBS)) \
	$(call arm64_debs_done,jdk,$(ARM64_JDK_DEBS))

# The arm64 guest on its own, all of it (make test runs its known chains, probes and whole
# programs, 2 s a program): tests/e2e/test_arm64_guest with ARM64_FULL=1 (Ruby, Perl, PHP,
# top and the agent too) and ARM64_SECONDS of CPU per program, 3 by default.
ARM64_SECONDS ?= 3
arm64-test: test-deps
	@$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$$(nproc)) \
		$(OUT)/arm64/cfiprof $(ARM64_FULL_DEBS_DONE) $(TEST_PROGS) $(OUT)/tests/test_arm64_guest
	ARM64_FULL=1 ARM64_SECONDS=$(ARM64_SECONDS) OUT=$(OUT) tests/run.sh $(OUT)/tests/test_arm64_guest

LIBS = $(1)/libcfiuser.a $(1)/libcfitables.a $(LDLIBS)

$(OUT)/cfiprof: $(CLI_SRC:%.c=$(OUT)/obj/%.o) $(OUT)/libcfiuser.a $(OUT)/libcfitables.a
	$(CC) $(CFLAGS) $(filter %.o,$^) -o $@ $(call LIBS,$(OUT))

# cfiprof under ASan + UBSan: the hostile-process tests run the agent with it too
$(OUT)/asan/cfiprof: $(CLI_SRC:%.c=$(OUT)/asan/obj/%.o) $(OUT)/asan/libcfiuser.a \
		$(OUT)/asan/libcfitables.a
	$(CC) $(SAN_FLAGS) $(filter %.o,$^) -o $@ $(call LIBS,$(OUT)/asan)

# ---- tests ----
# test_python checks the offsets table against CPython's own (internal) headers
$(OUT)/tests/obj/test_python.o $(OUT)/asan/test_python: private BASE_FLAGS += -isystem /usr/include/python3.11
# test_php checks the PHP offsets table against PHP's own headers (php8.2-dev)
PHP_INC := /usr/include/php/20220829
$(OUT)/tests/obj/test_php.o $(OUT)/asan/test_php: private BASE_FLAGS += $(foreach d,. main TSRM Zend ext,-isystem $(PHP_INC)/$(d))
# the source of test NAME, wherever it lives under tests/
test_src = $(filter %/$(1).c,$(TEST_SRC))
TEST_HDRS := $(wildcard tests/lib/*.h tests/fuzz/*.h) $(wildcard tests/fuzz/*.c)
TEST_OBJ := $(patsubst %,$(OUT)/tests/obj/%.o,$(notdir $(TEST_SRC:.c=)))
$(TEST_OBJ): $(OUT)/tests/obj/%.o: $$(call test_src,$$*) $(BPF_SKEL) $(TEST_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(TEST_OPT) $(BASE_FLAGS) -MMD -MP -c $< -o $@
-include $(TEST_OBJ:.o=.d)

$(OUT)/tests/test_%: $(OUT)/tests/obj/test_%.o $(OUT)/libcfiuser.a $(OUT)/libcfitables.a
	$(CC) $(CFLAGS) $< -o $@ $(call LIBS,$(OUT))

# The sanitizers are there for cfiprof's code, in the ASan tree: a test's own object is its
# plain one, linked to that tree (compiling each test again under ASan + UBSan was a third of
# make test's build of test binaries). A test that compiles cfiprof's code itself, the
# walker built as plain C (bpf/walker.h, in its dependency file), is compiled under them.
SAN_COMPILED_HDRS := bpf/walker.h
$(OUT)/asan/test_%: $$(call test_src,test_$$*) $(OUT)/tests/obj/test_%.o \
		$(OUT)/asan/libcfiuser.a $(OUT)/asan/libcfitables.a $(TEST_HDRS)
	@mkdir -p $(dir $@)
	@set -x; $(CC) $(SAN_FLAGS) $$(grep -qF '$(SAN_COMPILED_HDRS)' $(OUT)/tests/obj/test_$*.d && \
		echo $(TEST_SAN_OPT) $(BASE_FLAGS) $< || echo $(OUT)/tests/obj/test_$*.o) \
		-o $@ $(call LIBS,$(OUT)/asan)

$(OUT)/tsan/test_%: $$(call test_src,test_$$*) $(OUT)/tsan/libcfiuser.a \
		$(OUT)/tsan/libcfitables.a $(TEST_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(TSAN_FLAGS) $(TEST_SAN_OPT) $(BASE_FLAGS) $< -o $@ $(call LIBS,$(OUT)/tsan)

# The three builds (plain, ASan, TSan) side by side on every CPU even when make test runs
# without -j, as CI does: 2 m 36 s one at a time here, 1 m 29 s on 2 CPUs.
test: test-deps
	@$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$$(nproc)) \
		all $(TEST_PROGS) $(OUT)/asan/cfiprof $(OUT)/arm64/cfiprof \
		$(ARM64_DEBS_DONE) $(PLAIN_RUN_BIN) $(ASAN_BIN) $(TSAN_BIN)
	@CFIPROF=$(OUT)/cfiprof OUT=$(OUT) tests/run.sh $(PLAIN_RUN_BIN) $(ASAN_BIN) $(TSAN_BIN)

# The end-to-end suites beside two CPU hogs per CPU, STRESS_RUNS times (default 10),
# with each test's pass rate; STRESS_SUITES="test_x test_y" runs only those.
STRESS_RUNS ?= 10
test-stress: test-deps
	@$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$$(nproc)) \
		all $(TEST_PROGS) $(OUT)/asan/cfiprof $(OUT)/arm64/cfiprof \
		$(ARM64_DEBS_DONE) $(addprefix $(OUT)/tests/,$(E2E_TESTS))
	@OUT=$(OUT) tests/stress.sh $(STRESS_RUNS) $(or $(STRESS_SUITES),$(E2E_TESTS))

# Where make test's CPU goes (it is CPU-bound here): by suite and by command, from process
# accounting; TEST_CPU_CMD runs something else (tests/bench/suite_cpu.py).
test-cpu:
	@OUT=$(OUT) tests/bench/suite_cpu.py $(or $(TEST_CPU_CMD),$(MAKE) --no-print-directory test)

# The table compiler against readelf over all of /usr/bin (make test compares an eighth).
test-oracle: test-deps
	@$(MAKE) --no-print-directory $(OUT)/tests/test_tables_oracle $(ARM64_DEBS_DONE)
	@CFIPROF_ORACLE_ALL=1 OUT=$(OUT) tests/run.sh $(OUT)/tests/test_tables_oracle

# The README's run command: profile the bundled demo (built without frame
# pointers) and write demo.svg (flame graph) and demo.txt (report).
demo: deps
	@$(MAKE) --no-print-directory all $(OUT)/progs/demo
	$(OUT)/cfiprof record -F 999 --save demo.rec -o demo.svg -- $(OUT)/progs/demo 5
	$(OUT)/cfiprof report demo.rec -o demo.txt
	@echo "demo: wrote demo.svg (open it in a browser), demo.txt and demo.rec"
	@head -30 demo.txt

run: demo

$(OUT)/bench/bench_%: tests/bench/bench_%.c $(OUT)/libcfiuser.a $(OUT)/libcfitables.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(BASE_FLAGS) $< -o $@ $(call LIBS,$(OUT))

# tests/bench/fpwalk: the kernel's own frame-pointer walk (bpf_get_stack), the baseline of
# the walker's per-frame cost; built like the main program (clang -target bpf + skeleton).
$(OUT)/bench/fpwalk.bpf.o: tests/bench/fpwalk.bpf.c vmlinux.h
	@mkdir -p $(dir $@)
	$(CLANG) -g -O2 -target bpf $(ARCH_FLAGS) -I. -Wall -Werror -c $< -o $@
	llvm-strip -g $@ 2>/dev/null || true

$(OUT)/bench/fpwalk.skel.h: $(OUT)/bench/fpwalk.bpf.o
	$(BPFTOOL) gen skeleton $< > $@

$(OUT)/bench/fpwalk: tests/bench/fpwalk.c $(OUT)/bench/fpwalk.skel.h
	$(CC) $(CFLAGS) $(BASE_FLAGS) -I$(OUT)/bench $< -o $@ -lbpf -lelf -lz

# the same for the arm64 guest (make arm64-bench): static, against the arm64 sysroot
$(OUT)/arm64/bench/fpwalk.bpf.o: tests/bench/fpwalk.bpf.c $(wildcard bpf/arm64/*.h)
	@mkdir -p $(dir $@)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_arm64 -Ibpf/arm64 -I. -Wall -Werror -c $< -o $@
	llvm-strip -g $@ 2>/dev/null || true
$(OUT)/arm64/bench/fpwalk: tests/bench/fpwalk.c $(OUT)/arm64/bench/fpwalk.skel.h \
		$(ARM64_SYSROOT)/.done
	$(ARM64_CC) -static $(ARM64_FLAGS) $(BASE_FLAGS) -I$(OUT)/arm64/bench $< -o $@ \
		-L$(ARM64_SYSROOT)/usr/lib/aarch64-linux-gnu -lbpf -lelf -lz -lzstd

# The walker's cost per frame inside the arm64 guest against the kernel's frame-pointer walk
# there (a ratio: TCG's time is not real time): tests/arm64/run.sh with ARM64_BENCH=1.
arm64-bench: test-deps
	@$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$$(nproc)) \
		$(OUT)/arm64/cfiprof $(ARM64_DEBS_DONE) $(OUT)/arm64/bench/fpwalk $(TEST_PROGS)
	OUT=$(OUT) ARM64_BENCH=1 tests/arm64/run.sh
	@# bytes per row: Debian's libLLVM-15 of both machines, unpacked, compiled side by side
	@mkdir -p $(OUT)/arm64-bench/llvm && cd $(OUT)/arm64-bench/llvm && \
		{ ls *.deb > /dev/null 2>&1 || apt-get download -qq -o APT::Sandbox::User=root \
			libllvm15:arm64 libllvm15:amd64; } && \
		for d in *.deb; do dpkg-deb -x $$d root; done
	@for lib in $(OUT)/arm64-bench/llvm/root/usr/lib/*/libLLVM-15.so.1; do \
		$(OUT)/cfiprof tables $$lib | grep -E '^(architecture|raw rows|bytes|bytes/raw|distinct|build)'; \
	done | tee $(OUT)/arm64-bench/llvm.txt

# make bench: over an hour; tests/bench/peers.py writes tests/bench/RESULTS.md (with
# walker_cost.sh's per-frame table, so that runs first).  The steps of the current
# targets run first (targets.py: about 50 minutes in), the earlier rounds' studies after;
# the targets are printed again at the end.
bench: test-deps all $(OUT)/bench/bench_aggregate $(OUT)/bench/bench_symbols \
		$(OUT)/bench/bench_gopclntab $(OUT)/bench/fpwalk $(TEST_PROGS) $(BENCH_PROGS)
	@tests/bench/walker_cost.sh
	@tests/bench/peers.py
	@tests/bench/run.sh
	@tests/bench/runtimes.sh
	@taskset -c 0 $(OUT)/bench/bench_aggregate | tee $(OUT)/bench/aggregate.md
	@$(OUT)/bench/bench_symbols | tee $(OUT)/bench/symbols.md
	@tests/bench/outputs.sh
	@tests/bench/agent_overhead.sh
	@tests/bench/agent_fleet.sh
	@tests/bench/startup.sh
	@tests/bench/build_under_a.sh
	@tests/bench/targets.py $(OUT)/bench
	@tests/bench/jvm_agent.sh
	@tests/bench/agent_send.sh
	@tests/bench/process_start.sh
	@WORKLOADS=clang WAYS="copy8k copy16k copy32k copy64k" OUTDIR=$(OUT)/bench/stack_copy \
		tests/bench/process_start.sh
	@tests/bench/parallel_builds.sh
	@tests/bench/agent_churn.sh
	@tests/bench/source_lines.sh
	@tests/bench/events.sh
	@tests/bench/go.sh
	@tests/bench/runtime_cost.sh 5 | tee $(OUT)/bench/runtime_cost.md
	@cat $(OUT)/bench/targets.md

# Every tests/fuzz/fuzz_NAME.c is a libFuzzer target build/fuzz/fuzz_NAME,
# linked with the libraries of the fuzz build (coverage + ASan + UBSan).  make
# fuzz runs each for FUZZ_SECONDS; make fuzz FUZZ_TARGETS="fuzz_perfmap
# fuzz_kallsyms" runs only those.
FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?= $(FUZZ_BIN:$(OUT)/fuzz/%=%)

$(OUT)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(OUT)/fuzz/libcfiuser.a $(OUT)/fuzz/libcfitables.a \
		$(TEST_HDRS)
	@mkdir -p $(dir $@)
	$(CLANG) $(SAN_FLAGS) -fsanitize=fuzzer $(BASE_FLAGS) $< -o $@ $(call LIBS,$(OUT)/fuzz)

fuzz: test-deps all $(FUZZ_BIN) $(OUT)/progs/chain
	@OUT=$(OUT) tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# The Go tests on binaries of newer Go toolchains from bookworm-backports (not in make test).
GO_VERSIONS ?= 1.21 1.22 1.23
go-versions-test: test-deps all $(OUT)/tests/test_gopclntab $(OUT)/tests/test_go_names \
	$(OUT)/tests/test_go_labels
	@OUT=$(OUT) GO_VERSIONS="$(GO_VERSIONS)" tests/go_versions.sh

# The Python frames of every pyenv CPython this machine kind has but Debian's 3.11 (not in
# make test: a version matrix, ~30 s; the offsets of each are checked in make test by
# test_python against its headers).
python-versions-test: test-deps all $(OUT)/tests/test_python_frames $(TEST_PROGS)
	@CFIPROF_PYTHON_VERSIONS=1 OUT=$(OUT) tests/run.sh test_python_frames:other_versions

# Boots Debian's packaged kernel under qemu and runs cfiprof inside (not in make test).
KMATRIX_PKGS := qemu-system-x86 busybox-static cpio
kernel-matrix: test-deps
	@$(MAKE) --no-print-directory all $(TEST_PROGS)
	$(call apt_install,$(KMATRIX_PKGS))
	@tests/kernel_matrix/run.sh

# ---- install: make install [PREFIX=/usr/local] [DESTDIR=...] [bindir=... mandir=...] ----
PREFIX        ?= /usr/local
prefix        ?= $(PREFIX)
bindir        ?= $(prefix)/bin
datarootdir   ?= $(prefix)/share
mandir        ?= $(datarootdir)/man
docdir        ?= $(datarootdir)/doc/cfiprof
sysconfdir    ?= /etc
bashcompdir   ?= $(datarootdir)/bash-completion/completions
systemdunitdir ?= $(prefix)/lib/systemd/system
MAN_PAGES := cfiprof cfiprof-record cfiprof-report cfiprof-top cfiprof-tables cfiprof-agent cfiprof-list

# generated from the binary's --help, so they list exactly its options, and from
# the pages of docs/ (contrib/man/pages), so they say what the docs say
$(OUT)/man/cfiprof.1: $(OUT)/cfiprof contrib/man/gen-man.sh contrib/man/md2roff.awk \
		contrib/man/pages $(wildcard contrib/man/*.h2m docs/*.md)
	contrib/man/gen-man.sh $(OUT)/cfiprof $(OUT)/man $(VERSION)
$(addprefix $(OUT)/man/,$(addsuffix .1,$(filter-out cfiprof,$(MAN_PAGES)))): $(OUT)/man/cfiprof.1

man: $(OUT)/man/cfiprof.1

install: all man
	install -d -m 0755 $(DESTDIR)$(bindir) $(DESTDIR)$(mandir)/man1 $(DESTDIR)$(docdir)/docs \
		$(DESTDIR)$(bashcompdir) $(DESTDIR)$(systemdunitdir) $(DESTDIR)$(sysconfdir)/cfiprof
	install -m 0755 $(OUT)/cfiprof $(DESTDIR)$(bindir)/cfiprof
	install -m 0644 $(addprefix $(OUT)/man/,$(addsuffix .1,$(MAN_PAGES))) $(DESTDIR)$(mandir)/man1/
	install -m 0644 contrib/bash-completion/cfiprof $(DESTDIR)$(bashcompdir)/cfiprof
	sed -e 's|/usr/local/bin/cfiprof|$(bindir)/cfiprof|' \
		-e 's|/etc/cfiprof/agent.conf|$(sysconfdir)/cfiprof/agent.conf|' \
		contrib/cfiprof-agent.service > $(DESTDIR)$(systemdunitdir)/cfiprof-agent.service
	chmod 0644 $(DESTDIR)$(systemdunitdir)/cfiprof-agent.service
	install -m 0644 README.md contrib/agent.conf $(DESTDIR)$(docdir)/
	install -m 0644 $(wildcard docs/*.md) $(DESTDIR)$(docdir)/docs/
	@# the example config, unless one is there already: make install never overwrites settings
	@[ -e $(DESTDIR)$(sysconfdir)/cfiprof/agent.conf ] || \
		install -m 0644 contrib/agent.conf $(DESTDIR)$(sysconfdir)/cfiprof/agent.conf

uninstall:
	rm -f $(DESTDIR)$(bindir)/cfiprof $(DESTDIR)$(bashcompdir)/cfiprof \
		$(DESTDIR)$(systemdunitdir)/cfiprof-agent.service \
		$(addprefix $(DESTDIR)$(mandir)/man1/,$(addsuffix .1,$(MAN_PAGES)))
	rm -rf $(DESTDIR)$(docdir)

format:
	clang-format -i $(wildcard bpf/*.[ch] common/*.[ch] elf/*.[ch] tables/*.[ch] user/*.c \
		user/*/*.[ch] user/runtimes/*/*.[ch] tests/*/*.[ch])

clean:
	rm -rf $(OUT) demo.svg demo.txt demo.rec
