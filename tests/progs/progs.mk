# Test programs with known call chains, for the replay and end-to-end tests.
# All built -O2 -fomit-frame-pointer -g: frame pointers must not be needed.
# Included before the main Makefile's first target: keep its default goal.
PROGS_SAVED_GOAL := $(.DEFAULT_GOAL)
PROGS_OUT    := $(OUT)/progs
PROGS_CFLAGS := -O2 -fomit-frame-pointer -g -Wall -Wno-unused-function -D_GNU_SOURCE
PROGS_DEPS   := tests/progs/spin.h tests/progs/progs.mk

TEST_PROGS := $(addprefix $(PROGS_OUT)/,chain recurse threads signal plt libpltlib.so \
	dlopen libdl_target.so drap cxx_throw demo cxx_names vdso_spin jit_frames events_wait noptrace)

# tests/e2e/test_faults.c: lifecycle, churn, corrupted stacks, corrupted CFI
FAULTS_PROGS := $(addprefix $(PROGS_OUT)/,faults_life faults_churn faults_badstack faults_badcfi \
	libfaults_badcfi.so)
TEST_PROGS += $(FAULTS_PROGS)

# tests/e2e/test_deferred.c: a library mapped while the program runs, slow to build tables for
DEFER_PROGS := $(addprefix $(PROGS_OUT)/,defer_late libdefer_big.so chain_big)
TEST_PROGS += $(DEFER_PROGS)
# One tiny function with its own FDE per line.  The tests that use the library
# are timed around its build: 200,000 took ~65 ms on the first VMs and 273 ms on
# this kind (a PVM guest), which pushed a swarm's first load (test_deferred:
# exit_lists) past its 1.5 s in 3 of 21 runs; 100,000 take ~106 ms here (5 of 5
# passed), and 50,000 left test_deferred:budget's window too short now and then.
DEFER_FILLER_FDES := 100000

$(PROGS_OUT)/defer_filler.S: tests/progs/progs.mk
	@mkdir -p $(dir $@)
	awk 'BEGIN { print ".text"; for (i = 0; i < $(DEFER_FILLER_FDES); i++) \
		printf "filler%d:\n.cfi_startproc\npush %%rbx\n.cfi_adjust_cfa_offset 8\npop %%rbx\n.cfi_adjust_cfa_offset -8\nret\n.cfi_endproc\n", i; \
		print ".section .note.GNU-stack,\"\",@progbits" }' > $@

# assembled once for both users (11 MB of text: seconds of as each time); position
# independent as it is, no relocations
$(PROGS_OUT)/defer_filler.o: $(PROGS_OUT)/defer_filler.S
	$(CC) -c $< -o $@

$(PROGS_OUT)/libdefer_big.so: tests/progs/defer_big.c $(PROGS_OUT)/defer_filler.o $(PROGS_DEPS)
	$(CC) $(PROGS_CFLAGS) -fPIC -shared $< $(PROGS_OUT)/defer_filler.o -o $@

# test_hotspot_frames:deferred: DeferJni.java's JNI library, which spins in libdefer_big.so
JNI_INCLUDE := /usr/lib/jvm/default-java/include
$(PROGS_OUT)/libdefer_jni.so: tests/progs/java/defer_jni.c $(PROGS_OUT)/libdefer_big.so $(PROGS_DEPS)
	$(CC) $(PROGS_CFLAGS) -I$(JNI_INCLUDE) -I$(JNI_INCLUDE)/linux -fPIC -shared $< -o $@ -ldl
TEST_PROGS += $(PROGS_OUT)/libdefer_jni.so

# test_hotspot_frames' Java programs, compiled by one javac (a JVM's start and its compiler's
# warm-up each time: the suite compiled them five times)
# javac's own JVM with C1 alone and the serial collector: half its CPU (tests/lib/javac.h)
JAVAC := javac -J-XX:TieredStopAtLevel=1 -J-XX:+UseSerialGC
JAVA_SRC := tests/progs/java/Busy.java tests/progs/java/DeferJni.java
$(PROGS_OUT)/java/.done: $(JAVA_SRC)
	@mkdir -p $(dir $@)
	$(JAVAC) -d $(dir $@) $(JAVA_SRC)
	@touch $@
TEST_PROGS += $(PROGS_OUT)/java/.done

# chain with the filler's FDEs: a program whose own tables take ~100 ms to build at its exec
$(PROGS_OUT)/chain_big: tests/progs/chain.c $(PROGS_OUT)/defer_filler.o $(PROGS_DEPS)
	$(CC) $(PROGS_CFLAGS) $< $(PROGS_OUT)/defer_filler.o -o $@ -lpthread -ldl

# tests/unit/test_walker_arm64.c: arm64 programs that snapshot their own stacks under
# qemu-aarch64, built by GCC with return addresses signed (pac-ret, B key) and by clang
# (its CFA on x29); the same source differs in its functions so no two are folded.
ARM64_PROGS := $(addprefix $(PROGS_OUT)/arm64/,walk_snap_gcc walk_snap_clang)
TEST_PROGS += $(ARM64_PROGS)
ARM64_CC := aarch64-linux-gnu-gcc

$(PROGS_OUT)/arm64/walk_snap_gcc: tests/progs/arm64/walk_snap.c $(PROGS_DEPS)
	@mkdir -p $(dir $@)
	$(ARM64_CC) $(PROGS_CFLAGS) -mbranch-protection=pac-ret+b-key $< -o $@

# make arm64-test: the known chains inside the arm64 guest, built as the x86-64 ones are, and
# chain again with return addresses signed (pac-ret) and branch targets marked (bti)
ARM64_GUEST_PROGS := $(addprefix $(PROGS_OUT)/arm64/,chain chain_pac signal lazybind liblazy.so \
	liblazyext.so events_wait vdso_dump)
TEST_PROGS += $(ARM64_GUEST_PROGS)
$(PROGS_OUT)/arm64/%: tests/progs/%.c $(PROGS_DEPS)
	@mkdir -p $(dir $@)
	$(ARM64_CC) $(PROGS_CFLAGS) $< -o $@
# events_wait's USDT probes: <sys/sdt.h> (systemtap-sdt-dev) is the same for every machine
$(PROGS_OUT)/arm64/events_wait: tests/progs/events_wait.c $(PROGS_DEPS)
	@mkdir -p $(dir $@)
	$(ARM64_CC) $(PROGS_CFLAGS) -idirafter /usr/include -idirafter /usr/include/$(BPF_MULTIARCH) \
		$< -o $@
$(PROGS_OUT)/arm64/liblazyext.so: $(PROGS_OUT)/lazyext.c
	@mkdir -p $(dir $@)
	$(ARM64_CC) $(PROGS_CFLAGS) -fPIC -shared -Wl,-z,lazy $< -o $@
$(PROGS_OUT)/arm64/liblazy.so: $(PROGS_OUT)/lazycall.c $(PROGS_OUT)/arm64/liblazyext.so
	$(ARM64_CC) $(PROGS_CFLAGS) -fPIC -shared -Wl,-z,lazy $< -o $@ -L$(PROGS_OUT)/arm64 \
		-llazyext -Wl,-rpath,'$$ORIGIN'
$(PROGS_OUT)/arm64/recurse_fp: tests/progs/recurse.c $(PROGS_DEPS)
	@mkdir -p $(dir $@)
	$(ARM64_CC) $(PROGS_CFLAGS) -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer $< -o $@
$(PROGS_OUT)/arm64/vdso_dump: tests/progs/arm64/vdso_dump.c $(PROGS_DEPS)
	@mkdir -p $(dir $@)
	$(ARM64_CC) $(PROGS_CFLAGS) $< -o $@
$(PROGS_OUT)/arm64/chain_pac: tests/progs/chain.c $(PROGS_DEPS)
	@mkdir -p $(dir $@)
	$(ARM64_CC) $(PROGS_CFLAGS) -mbranch-protection=standard $< -o $@

$(PROGS_OUT)/arm64/walk_snap_clang: tests/progs/arm64/walk_snap.c $(PROGS_DEPS)
	@mkdir -p $(dir $@)
	clang --target=aarch64-linux-gnu --sysroot=/usr/aarch64-linux-gnu $(PROGS_CFLAGS) -fno-omit-frame-pointer \
		-c $< -o $@.o
	$(ARM64_CC) $@.o -o $@

# tests/e2e/test_python_frames.c: python3.11's main thread state without its ids, slowly
TEST_PROGS += $(PROGS_OUT)/libslow_gettid.so

# tests/e2e/test_process_edges.c: samples taken in do_exit and inside execve
TEST_PROGS += $(PROGS_OUT)/exit_exec $(PROGS_OUT)/libexit_lib.so

# tests/e2e/test_runtimes.c: lazy PLT binding (512 fresh bindings per dlopen) and DRAP prologues
LAZY_FUNCS := 512
RUNTIME_PROGS := $(addprefix $(PROGS_OUT)/,lazybind liblazy.so liblazyext.so drap_loop)
TEST_PROGS += $(RUNTIME_PROGS)

$(PROGS_OUT)/lazyext.c: tests/progs/progs.mk
	@mkdir -p $(dir $@)
	awk 'BEGIN { for (i = 0; i < $(LAZY_FUNCS); i++) printf "int lzx_%d(int a) { return a + %d; }\n", i, i }' > $@

$(PROGS_OUT)/lazycall.c: tests/progs/progs.mk
	@mkdir -p $(dir $@)
	awk 'BEGIN { for (i = 0; i < $(LAZY_FUNCS); i++) printf "int lzx_%d(int);\n", i; \
		print "int lz_all(int a) {\n\tint s = 0;"; \
		for (i = 0; i < $(LAZY_FUNCS); i++) printf "\ts += lzx_%d(a);\n", i; \
		print "\treturn s;\n}" }' > $@

# -z lazy: whatever the toolchain's default, calls bind on first use
$(PROGS_OUT)/liblazyext.so: $(PROGS_OUT)/lazyext.c
	$(CC) $(PROGS_CFLAGS) -fPIC -shared -Wl,-z,lazy $< -o $@

$(PROGS_OUT)/liblazy.so: $(PROGS_OUT)/lazycall.c $(PROGS_OUT)/liblazyext.so
	$(CC) $(PROGS_CFLAGS) -fPIC -shared -Wl,-z,lazy $< -o $@ -L$(PROGS_OUT) -llazyext \
		-Wl,-rpath,'$$ORIGIN'

# tests/e2e/test_hostile.c, test_hostile_record.c: processes that attack the profiler
HOSTILE_PROGS := $(addprefix $(PROGS_OUT)/,hostile_fifo jit_spin quota_hog hostile_storm \
	hostile_rename)
TEST_PROGS += $(HOSTILE_PROGS)
# tests/e2e/test_hostile_opens.c: a device bind-mounted over what the agent opens
TEST_PROGS += $(PROGS_OUT)/hostile_devices

# ... and objects crafted to fill the shared maps (tests/progs/gen_cfi_rules.sh):
# 3 with 30,000 distinct rules each (over the per-object quota, 90,000 together
# over the 65,536-rule dictionary), 8 with 8,000 (under it, 64,000 together)
QUOTA_LIBS := $(foreach i,0 1 2,$(PROGS_OUT)/librules_big$(i).so) \
	$(foreach i,0 1 2 3 4 5 6 7,$(PROGS_OUT)/librules_mid$(i).so)
TEST_PROGS += $(QUOTA_LIBS)

$(PROGS_OUT)/librules_big%.so: tests/progs/gen_cfi_rules.sh
	@mkdir -p $(dir $@)
	sh $< 30000 $$((1000000 + $* * 30000)) > $@.s
	$(CC) -shared -nostdlib $@.s -o $@
	@rm -f $@.s

$(PROGS_OUT)/librules_mid%.so: tests/progs/gen_cfi_rules.sh
	@mkdir -p $(dir $@)
	sh $< 8000 $$((2000000 + $* * 8000)) > $@.s
	$(CC) -shared -nostdlib $@.s -o $@
	@rm -f $@.s

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

# source lines and inline frames (test_src_lines, test_cli_outputs): a known
# inline chain, and the same program stripped with its DWARF in a debug file
# found by build-id under progs/debug (what distributions ship)
TEST_PROGS += $(addprefix $(PROGS_OUT)/,inlines inlines_stripped)
$(PROGS_OUT)/inlines: tests/progs/inlines.cc $(PROGS_DEPS)
	@mkdir -p $(dir $@)
	$(CXX) $(PROGS_CFLAGS) -Wl,--build-id $< -o $@

$(PROGS_OUT)/inlines_stripped: $(PROGS_OUT)/inlines
	id=$$(readelf -n $< | awk '/Build ID/ { print $$3 }'); \
	dir=$(PROGS_OUT)/debug/.build-id/$$(echo $$id | cut -c1-2); \
	mkdir -p $$dir && \
	objcopy --only-keep-debug --compress-debug-sections $< $$dir/$$(echo $$id | cut -c3-).debug && \
	objcopy --strip-all $< $@


# Go (test_gopclntab): main.main -> main.work -> main.fib with main.sumSquares inlined,
# built -s -w (only .gopclntab names it) and unstripped (DWARF: the inline oracle), and
# debug/gosym's view of any Go binary.  Offline: std only, caches under the build dir.
GO	 ?= go
GO_ENV	 := HOME=$(abspath $(PROGS_OUT))/go GOCACHE=$(abspath $(PROGS_OUT))/go/cache \
	GOPATH=$(abspath $(PROGS_OUT))/go/path GOTOOLCHAIN=local GOFLAGS= GOPROXY=off CGO_ENABLED=0
# SECONDS of wall or CPU time: a file built beside each program that reads them
GO_SECONDS := tests/progs/go/cputime.go
GO_PROGS := $(addprefix $(PROGS_OUT)/,gofib gofib_stripped gofib_pie gosym_oracle gocgo_stripped \
	golabels_stripped golabels_cgo)
TEST_PROGS += $(GO_PROGS)

$(PROGS_OUT)/gofib: tests/progs/go/gofib.go $(GO_SECONDS) tests/progs/progs.mk
	@mkdir -p $(dir $@)
	$(GO_ENV) $(GO) build -o $@ $< $(GO_SECONDS)

# arm64 (test_gopclntab's arm64 rows, the arm64 guest): Go cross-builds with GOARCH alone
GO_ARM64_PROGS := $(addprefix $(PROGS_OUT)/arm64/,gofib gofib_stripped)
TEST_PROGS += $(GO_ARM64_PROGS)
$(PROGS_OUT)/arm64/gofib: tests/progs/go/gofib.go $(GO_SECONDS) tests/progs/progs.mk
	@mkdir -p $(dir $@)
	$(GO_ENV) GOARCH=arm64 $(GO) build -o $@ $< $(GO_SECONDS)
# after the unstripped build: its arm64 std in the cache (two at once compile it twice)
$(PROGS_OUT)/arm64/gofib_stripped: tests/progs/go/gofib.go $(GO_SECONDS) tests/progs/progs.mk | \
		$(PROGS_OUT)/arm64/gofib
	@mkdir -p $(dir $@)
	$(GO_ENV) GOARCH=arm64 $(GO) build -ldflags='-s -w' -o $@ $< $(GO_SECONDS)

$(PROGS_OUT)/gofib_stripped: tests/progs/go/gofib.go $(GO_SECONDS) tests/progs/progs.mk
	@mkdir -p $(dir $@)
	$(GO_ENV) $(GO) build -ldflags='-s -w' -o $@ $< $(GO_SECONDS)

# a stripped PIE: its table in .data.rel.ro.gopclntab, its funcdata in .rodata
$(PROGS_OUT)/gofib_pie: tests/progs/go/gofib.go $(GO_SECONDS) tests/progs/progs.mk
	@mkdir -p $(dir $@)
	$(GO_ENV) $(GO) build -buildmode=pie -ldflags='-s -w' -o $@ $< $(GO_SECONDS)

# cgo: Go and C in one stripped binary (C code keeps its .eh_frame)
$(PROGS_OUT)/gocgo_stripped: tests/progs/go/gocgo.go $(GO_SECONDS) tests/progs/progs.mk
	@mkdir -p $(dir $@)
	$(GO_ENV) CGO_ENABLED=1 $(GO) build -ldflags='-s -w' -o $@ $< $(GO_SECONDS)

# goroutine labels (test_go_labels): internal linking (no PT_TLS), and cgo's external
# link (a PT_TLS of g's 8 bytes)
$(PROGS_OUT)/golabels_stripped: tests/progs/go/golabels.go $(GO_SECONDS) tests/progs/progs.mk
	@mkdir -p $(dir $@)
	$(GO_ENV) $(GO) build -ldflags='-s -w' -o $@ $< $(GO_SECONDS)

$(PROGS_OUT)/golabels_cgo: tests/progs/go/golabels.go $(GO_SECONDS) tests/progs/progs.mk
	@mkdir -p $(dir $@)
	$(GO_ENV) CGO_ENABLED=1 $(GO) build -ldflags='-s -w -linkmode=external' -o $@ $< $(GO_SECONDS)

$(PROGS_OUT)/gosym_oracle: tests/progs/go/gosym_oracle.go tests/progs/progs.mk
	@mkdir -p $(dir $@)
	$(GO_ENV) $(GO) build -o $@ $<

$(OUT)/tests/test_gopclntab $(OUT)/asan/test_gopclntab $(OUT)/tests/test_go_names: $(GO_PROGS)
$(OUT)/tests/test_go_labels: $(GO_PROGS)
$(OUT)/tests/test_walker_replay $(OUT)/asan/test_walker_replay: $(GO_PROGS)

# Benchmark-only programs (make bench, not make test): a 2-thread variant of
# threads, and recurse's frame-pointer twin for the frame-pointer peers and the
# kernel's own frame-pointer walk (tests/bench/fpwalk); fleet_member, the processes of
# tests/bench/agent_fleet.sh.
BENCH_PROGS := $(addprefix $(PROGS_OUT)/,recurse_fp threads2 fleet_member)

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
$(OUT)/tests/test_events: $(PROGS_OUT)/events_wait
$(OUT)/tests/test_faults: $(FAULTS_PROGS) $(addprefix $(PROGS_OUT)/,chain recurse demo \
	libdl_target.so libpltlib.so threads)

.DEFAULT_GOAL := $(PROGS_SAVED_GOAL)
