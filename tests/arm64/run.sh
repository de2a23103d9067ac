#!/bin/bash
# Boots Debian's arm64 kernel under qemu-system-aarch64 (TCG, -cpu max with
# the IMPDEF pointer-authentication algorithm: architected PAC emulation is ~4x slower) with
# an initramfs built here: busybox-static:arm64, the static build/arm64/cfiprof, the arm64
# test programs and the arm64 libc they load.  Inside, cfiprof records each program and
# prints what it wrote; tests/e2e/test_arm64_guest.c (make test, make arm64-test) runs this
# and judges it against each program's known chain.  Everything arm64 runs in the guest:
# nothing is assumed of the host.
#
#   chain      main -> a -> b -> c -> d -> leaf (-O2 -fomit-frame-pointer)
#   chain_pac  the same with -mbranch-protection=standard: signed return addresses
#   signal     main -> s_a -> s_work, SIGALRM -> handler -> h_a -> h_leaf
#   lazybind   main -> lz_round -> lz_all, whose 512 calls bind lazily each round: through
#              PLT0 and glibc's _dl_runtime_resolve, whose CFI leaves PLT0's push out
#   chain_tc   chain walked with --tail-calls (the walk for kernels without bpf_loop)
#   chain_ns   chain as pid 1 of its own PID namespace, from a tmpfs of its own mount namespace
#   gofib_stripped  Go (GOARCH=arm64, -s -w: no symbols, no DWARF): unwound from .gopclntab,
#              main.fib's recursion under main.work or a goroutine's main.spin
#   offcpu     --off-cpu on events_wait sleep: 600 and 150 ms blocked in block_long/short
#   xz         Debian's arm64 xz compressing, and python3.11 running a recursive function:
#   python3.11 every sample's stack must reach _start, bar the unwalkable (a process exiting)
#
# ARM64_BENCH=1 (make arm64-bench) runs instead the walker's cost per frame against the
# kernel's frame-pointer walk in the same guest: recurse (no frame pointers) under cfiprof and
# recurse_fp under tests/bench/fpwalk (bpf_get_stack), at depths 8 and 120, ARM64_ROUNDS
# rounds interleaved; per frame = (ns/sample deep - shallow) / (frames deep - shallow) from
# kernel.bpf_stats_enabled, the ratio within a round, then the median: TCG time is not real
# time, a ratio in one guest is.
#
# A sample in the leaf is "exact" when its stack ends with the whole chain (an extended
# regular expression): the oracle is the program's source.
set -eu
cd "$(dirname "$0")/../.."
OUT=${OUT:-build}
SECONDS_EACH=${ARM64_SECONDS:-3}
# lazybind's lazy bindings (a few percent of its samples), gofib's ~15 samples at start
# (the incomplete ones, "cfa-register-lost" while the stacks grow: 2% at
# most) and python3.11's 500 samples at least want 2 s whatever the chains get; of the
# program's own CPU (NNc), so that the start's fixed samples are a fixed share of them
# however slowly a loaded host runs the guest (in 2 s of the wall beside make
# test-stress's hogs gofib got 291 samples, 8 of them its start's)
LONG_EACH=$((SECONDS_EACH > 2 ? SECONDS_EACH : 2))
work=$OUT/arm64-guest
mkdir -p "$work"
work=$(cd "$work" && pwd)
kpkg=${ARM64_KERNEL_PKG:-linux-image-6.1.0-47-cloud-arm64}

# --- the kernel and busybox: extracted from their .debs, never installed here
if ! ls "$work"/kernel/boot/vmlinuz-* > /dev/null 2>&1; then
	(cd "$work" && apt-get download -qq -o APT::Sandbox::User=root "$kpkg:arm64")
	dpkg-deb -x "$work"/"$kpkg"_*_arm64.deb "$work/kernel"
fi
if [ ! -x "$work/busybox/bin/busybox" ]; then
	(cd "$work" && apt-get download -qq -o APT::Sandbox::User=root busybox-static:arm64)
	dpkg-deb -x "$work"/busybox-static_*_arm64.deb "$work/busybox"
fi
# Debian's own arm64 programs, as a fleet runs them: the Makefile's sets (debs; with
# ARM64_FULL=1 rt and php too), unpacked (never installed) by make test / make arm64-test
sets="debs"
[ "${ARM64_FULL:-0}" = 1 ] && sets="debs rt php jdk"
for set in $sets; do
	if [ ! -e "$work/$set/.done" ]; then
		echo "arm64-test: no $work/$set: run make arm64-test (it unpacks Debian's arm64 programs)" >&2
		exit 1
	fi
done
# how cfiprof names a program's entry, the root of its complete stacks: _start, or in a
# stripped program the FDE holding e_entry ("xz+0x3880")
entry_token() {
	if { aarch64-linux-gnu-nm "$1"; aarch64-linux-gnu-nm -D "$1"; } 2> /dev/null |
		grep -q ' T _start$'; then
		echo _start
	else
		printf '%s+0x%x\n' "$(basename "$1")" \
			"$(aarch64-linux-gnu-readelf -h "$1" | sed -n 's/.*Entry point address: *//p')"
	fi
}
xz_root=$(entry_token "$work/debs/usr/bin/xz")
py_root=$(entry_token "$work/debs/usr/bin/python3.11")
# samples taken while the dynamic loader starts the program reach its own entry
ld_root=$(entry_token /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1)
vmlinuz=$(ls "$work"/kernel/boot/vmlinuz-* | head -1)
kver=$(basename "$vmlinuz" | sed 's/^vmlinuz-//')

# --- the initramfs
root=$work/initramfs
rm -rf "$root"
mkdir -p "$root"/{bin,proc,sys,dev,tmp,progs,lib/aarch64-linux-gnu}
cp "$work/busybox/bin/busybox" "$root/bin/busybox"
for app in sh mount mkdir cat grep sed awk head tail wc poweroff sleep echo ls tr sort uniq env \
	base64 kill basename unshare cp; do
	ln -sf busybox "$root/bin/$app"
done
cp "$OUT/arm64/cfiprof" "$root/bin/cfiprof"
BENCH=${ARM64_BENCH:-0}
FULL=${ARM64_FULL:-0}
# ARM64_SMOKE=1 (make test): chain_pac, gofib_stripped and xz alone; make arm64-test all
SMOKE=${ARM64_SMOKE:-0}
[ "$FULL" = 1 ] && SMOKE=0
ROUNDS=${ARM64_ROUNDS:-3}
if [ "$BENCH" = 1 ]; then
	cp "$OUT/arm64/bench/fpwalk" "$root/bin/fpwalk"
	cp "$OUT/progs/arm64/recurse" "$OUT/progs/arm64/recurse_fp" "$root/progs/"
fi
cp "$OUT"/progs/arm64/chain "$OUT"/progs/arm64/chain_pac "$OUT"/progs/arm64/signal \
	"$OUT"/progs/arm64/lazybind "$OUT"/progs/arm64/liblazy.so "$OUT"/progs/arm64/liblazyext.so \
	"$OUT"/progs/arm64/events_wait "$OUT"/progs/arm64/gofib_stripped "$OUT"/progs/arm64/vdso_dump \
	"$root/progs/"
cross=/usr/aarch64-linux-gnu/lib
cp -L "$cross/ld-linux-aarch64.so.1" "$root/lib/"
cp -L "$cross/libc.so.6" "$cross/libm.so.6" "$root/lib/aarch64-linux-gnu/"
# the packages' files but their docs, headers, libperl's modules and Ruby's gems (the
# scripts run without them)
for set in $sets; do
	(cd "$work/$set" && find . -path ./usr/share -prune -o -path ./usr/lib/ruby -prune -o \
		-path ./usr/include -prune -o -path ./usr/lib/aarch64-linux-gnu/perl -prune -o \
		-print | cpio -pdm --quiet "$root")
done
ln -sf ruby3.1 "$root/usr/bin/ruby"
# Java's Busy (tests/e2e/test_hotspot_frames.c's program), compiled here: class files are
# the same on every machine
if [ "$FULL" = 1 ]; then
	javac --release 17 -d "$root/progs" tests/progs/java/Busy.java
fi
cp tests/progs/ruby/recurse.rb tests/progs/perl/recurse.pl tests/progs/php/recurse.php "$root/progs/"
# the oracles' leaf lines: the scripts' LEAF marks
rb_leaf=$(grep -n '# LEAF' tests/progs/ruby/recurse.rb | head -1 | cut -d: -f1)
pl_leaf=$(grep -n '# LEAF' tests/progs/perl/recurse.pl | head -1 | cut -d: -f1)
php_leaf=$(grep -n '// LEAF' tests/progs/php/recurse.php | head -1 | cut -d: -f1)
cat > "$root/init" << INIT
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
echo "A64 kernel \$(cat /proc/sys/kernel/osrelease) pac=\$(grep -c paca /proc/cpuinfo)"
echo "A64-T boot \$(cut -d" " -f1 /proc/uptime)"
# the vDSO, whose signal trampoline the host's call-site check reads
echo "A64-VDSO \$(/progs/vdso_dump | base64 -w 0)"
if [ $BENCH = 1 ]; then
	echo 1 > /proc/sys/kernel/bpf_stats_enabled
	echo "A64 bpf_jit_enable \$(cat /proc/sys/net/core/bpf_jit_enable 2>/dev/null)"
	for r in \$(seq $ROUNDS); do
		for depth in 8 120; do
			fpwalk -m kstack -F 999 -- /progs/recurse_fp 2 \$depth > /tmp/fp.out 2>&1
			ns=\$(sed -n 's/.*ns_per_sample \([0-9.]*\).*/\1/p' /tmp/fp.out)
			fr=\$(sed -n 's/.*frames_per_sample \([0-9.]*\).*/\1/p' /tmp/fp.out)
			echo "A64-BENCH \$r fpwalk \$depth \$ns \$fr"
			cfiprof record -v -F 999 --user-only --max-frames 1024 -o /dev/null -- \
				/progs/recurse 2 \$depth 2> /tmp/cf.out
			ns=\$(sed -n 's/.*BPF run time \([0-9]*\) ns per sample.*/\1/p' /tmp/cf.out)
			fr=\$(sed -n 's/.*, \([0-9.]*\) user frames per sample.*/\1/p' /tmp/cf.out)
			echo "A64-BENCH \$r cfiprof \$depth \$ns \$fr"
		done
	done
	echo "A64 done"
	poweroff -f
fi
# judge NAME NEEDLE CHAIN: samples, incomplete ones, those holding NEEDLE (the leaf), and of
# those the ones whose stack has the whole CHAIN (an extended regular expression); the
# program's comm is NAME up to an underscore-suffix of the run ("chain_tc": chain)
judge() {
	name=\$1 needle=\$2 chain=\$3 skip=\${4:-^\$} comm=\${1%_tc}
	comm=\${comm%_ns}
	total=\$(grep "^\$comm;" /tmp/\$name.folded | awk '{n += \$NF} END {print n + 0}')
	# a sample with no stack to walk (the process exiting) is no walk's failure: a fixed
	# handful a run, whatever the guest's timer gave the rest
	incomplete=\$(grep "^\$comm;" /tmp/\$name.folded | grep '\[incomplete' | grep -v -E '\[incomplete: (exiting|in-execve|kernel-thread)' | grep -v -E "\$skip" | awk '{n += \$NF} END {print n + 0}')
	leaf=\$(grep "^\$comm;" /tmp/\$name.folded | grep -F "\$needle" | grep -v -E "\$skip" | awk '{n += \$NF} END {print n + 0}')
	exact=\$(grep "^\$comm;" /tmp/\$name.folded | grep -F "\$needle" | grep -v -E "\$skip" | grep -E "\$chain" | grep -v '\[incomplete' | awk '{n += \$NF} END {print n + 0}')
	skipped=\$(grep "^\$comm;" /tmp/\$name.folded | grep -E "\$skip" | awk '{n += \$NF} END {print n + 0}')
	echo "A64 \$name samples=\$total incomplete=\$incomplete in_leaf=\$leaf exact=\$exact skipped=\$skipped"
	grep "^\$comm;" /tmp/\$name.folded | sort -t' ' -k2 -rn | head -3 | sed "s/^/A64-STACK /"
	# the leaf's samples without the whole chain, so a failed judgement shows what they were
	grep "^\$comm;" /tmp/\$name.folded | grep -F "\$needle" | grep -v -E "\$skip" | grep -v -E "\$chain" | head -4 | sed "s/^/A64-MISS \$name /"
	grep "^\$comm;" /tmp/\$name.folded | grep -F "\$needle" | grep -v -E "\$skip" | grep -E "\$chain" | grep '\[incomplete' | head -4 | sed "s/^/A64-MISS \$name /"
	grep "^\$comm;" /tmp/\$name.folded | grep -F "\$needle" | grep -E -v "\$chain" | head -4 | sed "s/^/A64-MISS /"
	grep "^\$comm;" /tmp/\$name.folded | grep -F "\$needle" | grep '\[incomplete' | head -4 | sed "s/^/A64-MISS /"
}
run() {
	name=\$1 needle=\$2 chain=\$3 skip=^\$
	echo "A64-T \$name \$(cut -d" " -f1 /proc/uptime)"
	shift 3
	# SKIP REGEX before -- : samples not judged, in the leaf or incomplete (counted apart)
	if [ "\$1" = SKIP ]; then
		skip=\$2
		shift 2
	fi
	if cfiprof record -v -F 499 --save /tmp/\$name.rec -o /tmp/\$name.folded "\$@" 2> /tmp/\$name.err; then
		echo "A64 \$name loaded=yes"
	else
		echo "A64 \$name loaded=no"
	fi
	sed "s/^/A64-LOG \$name /" /tmp/\$name.err
	judge \$name "\$needle" "\$chain" "\$skip"
	# the recording's mappings and stacks, for the host's call-site check
	grep -E '^(map|stack) ' /tmp/\$name.rec | sed "s/^/A64-REC \$name /"
}
run chain_pac ';leaf ' ';main;a;b;c;d;leaf [0-9]+\$' -- /progs/chain_pac ${SECONDS_EACH}c
if [ $SMOKE = 0 ]; then
run chain ';leaf ' ';main;a;b;c;d;leaf [0-9]+\$' -- /progs/chain ${SECONDS_EACH}c
# the vDSO's sigreturn trampoline between the interrupted s_work and the handler
run signal ';h_leaf ' ';main;s_a;s_work;__kernel_rt_sigreturn;handler;h_a;h_leaf [0-9]+\$' -- \
	/progs/signal ${SECONDS_EACH}c
if [ $FULL = 1 ]; then
run chain_tc ';leaf ' ';main;a;b;c;d;leaf [0-9]+\$' --tail-calls -- /progs/chain ${SECONDS_EACH}c
fi
# a container's shape: pid 1 of its own PID namespace, run from a tmpfs only its own mount
# namespace has (its file reached through /proc/PID/root)
mkdir -p /tmp/ct
run chain_ns ';leaf ' ';main;a;b;c;d;leaf [0-9]+\$' -- unshare -p -m -f sh -c \
	"mount -t tmpfs none /tmp/ct && cp /progs/chain /tmp/ct/chain && exec /tmp/ct/chain ${SECONDS_EACH}c"
fi
# a sample inside Go's asynchronous preemption (runtime.asyncPreempt, entered as if main.fib
# had called it) ends unsupported past main.fib: not judged, as Go's preemptions per second
# of CPU grow with the host's load (sysmon preempts by wall time)
run gofib_stripped ';main.fib' \
	';runtime\.goexit[^;]*;(runtime\.main;main\.main;main\.work|main\.main\.func1;main\.spin)(;main\.fib)+[ ;]' \
	SKIP ';runtime\.asyncPreempt' -- /progs/gofib_stripped ${LONG_EACH}c 1
if [ $SMOKE = 0 ]; then
# every sample under lz_all, in lazy binding or not, has the whole chain from _start
run lazybind ';lz_all' ';_start;__libc_start_main;[^;]+;main;lz_round;lz_all(;| )' -- \
	/progs/lazybind ${LONG_EACH}c
fi
# whole-program runs: the share of samples whose stack reaches _start (or is unwalkable)
whole() {
	name=\$1 root=\$2
	echo "A64-T \$name \$(cut -d" " -f1 /proc/uptime)"
	shift 2
	if cfiprof record -v -F 499 --save /tmp/\$name.rec -o /tmp/\$name.folded "\$@" 2> /tmp/\$name.err; then
		echo "A64 \$name loaded=yes"
	else
		echo "A64 \$name loaded=no"
	fi
	sed 's/^/A64-LOG /' /tmp/\$name.err | grep -E 'stop reasons|user stacks|complete' | tail -4
	grep -E '^(map|stack) ' /tmp/\$name.rec | sed "s/^/A64-REC \$name /"
	total=\$(awk '{n += \$NF} END {print n + 0}' /tmp/\$name.folded)
	unwalkable=\$(grep -E '\\[incomplete: (exiting|in-execve|kernel-thread)' /tmp/\$name.folded | awk '{n += \$NF} END {print n + 0}')
	# the entry itself may be the sample's only frame (the process's first instruction)
	grep -v -e "^\$name;\$root[; ]" -e "^\$name;$ld_root[; ]" /tmp/\$name.folded > /tmp/\$name.other
	rooted=\$(grep -e "^\$name;\$root[; ]" -e "^\$name;$ld_root[; ]" /tmp/\$name.folded | grep -v '\\[incomplete' | awk '{n += \$NF} END {print n + 0}')
	echo "A64 \$name whole samples=\$total unwalkable=\$unwalkable rooted=\$rooted"
	grep -v -E '\\[incomplete: (exiting|in-execve|kernel-thread)' /tmp/\$name.other | sort -t" " -k2 -rn | head -8 | sed "s/^/A64-INCOMPLETE /"
}
if [ $SMOKE = 0 ]; then
# off-CPU: 300 + 150 + 300 ms blocked in block_long / block_short (microseconds in folded)
echo "A64-T offcpu \$(cut -d" " -f1 /proc/uptime)"
if cfiprof record -v --off-cpu -o /tmp/offcpu.folded -- /progs/events_wait sleep 2> /tmp/offcpu.err; then
	echo "A64 offcpu loaded=yes"
else
	echo "A64 offcpu loaded=no"
	# the verifier's verdict is the last lines of its log, before libbpf's own
	sed 's/^/A64-LOG /' /tmp/offcpu.err | tail -40
fi
sed 's/^/A64-LOG /' /tmp/offcpu.err | tail -6
long=\$(grep -F ';main;block_long;block_for;' /tmp/offcpu.folded | awk '{n += \$NF} END {print n + 0}')
short=\$(grep -F ';main;block_short;block_for;' /tmp/offcpu.folded | awk '{n += \$NF} END {print n + 0}')
# what the program measured itself off the CPU: a loaded host's guest oversleeps
ml=\$(sed -n 's/.*block_long \([0-9]*\) ns off-CPU.*/\1/p' /tmp/offcpu.err | head -1)
ms=\$(sed -n 's/.*block_short \([0-9]*\) ns off-CPU.*/\1/p' /tmp/offcpu.err | head -1)
echo "A64 offcpu long_us=\$long short_us=\$short measured_long_ns=\${ml:-0} measured_short_ns=\${ms:-0}"
# probes (-e): every hit a sample, the stacks printed whole for the host to count
probe() {
	name=\$1 spec=\$2
	echo "A64-T \$name \$(cut -d" " -f1 /proc/uptime)"
	shift 2
	if cfiprof record -v -e "\$spec" -o /tmp/\$name.folded -- "\$@" 2> /tmp/\$name.err; then
		echo "A64 \$name loaded=yes"
	else
		echo "A64 \$name loaded=no"
	fi
	sed "s/^/A64-ERR \$name /" /tmp/\$name.err | tail -4
	grep '^events_wait;' /tmp/\$name.folded | sed "s/^/A64-FOLDED \$name /"
}
probe uprobe uprobe:libc:malloc /progs/events_wait malloc 2000
probe usdt usdt:/progs/events_wait:cfiprof_test:tick /progs/events_wait usdt 300
probe tracepoint tracepoint:raw_syscalls:sys_enter /progs/events_wait open 1000
fi
# xz -9e: its work, and so its samples, grow with SECONDS_EACH (the check wants >= 100)
seq 1 $((SECONDS_EACH * 80000)) > /tmp/data
whole xz $xz_root -- /usr/bin/xz -z -k -f -9e -T1 /tmp/data
if [ $SMOKE = 0 ]; then
whole python3.11 $py_root -- /usr/bin/python3.11 -c '
import time
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
end = time.process_time() + ${LONG_EACH}
while time.process_time() < end:
    fib(18)
'
fi
# make arm64-test only (ARM64_FULL=1): the runtimes, top and the agent
if [ $FULL = 1 ]; then
# Ruby, Perl and PHP frames: each script's own backtrace first (the oracle: two chains, as
# the runtime sees them), then its recording, both printed whole for the host to judge
# (tests/e2e/test_arm64_guest.c, with the x86 suites' checks)
interp() {
	name=\$1 var=\$2 leaf=\$3 work=\$4
	echo "A64-T \$name \$(cut -d" " -f1 /proc/uptime)"
	shift 4
	env \$var=\$leaf "\$@" 5 > /tmp/\$name.oracle 2> /tmp/\$name.oracle.err
	# the chains only: PHP warns on stdout that the guest has no tzdata
	grep -F ' (/progs/' /tmp/\$name.oracle | head -2 | sed "s/^/A64-ORACLE \$name /"
	if cfiprof record -v -F 499 -o /tmp/\$name.folded -- "\$@" \$work 2> /tmp/\$name.err; then
		echo "A64 \$name loaded=yes"
	else
		echo "A64 \$name loaded=no"
	fi
	sed "s/^/A64-ERR \$name /" /tmp/\$name.err
	sed "s/^/A64-FOLDED \$name /" /tmp/\$name.folded
}
interp ruby RUBY_BACKTRACE $rb_leaf 200 /usr/bin/ruby --disable-gems /progs/recurse.rb
interp perl PERL_BACKTRACE $pl_leaf 100 /usr/bin/perl /progs/recurse.pl
interp php PHP_BACKTRACE $php_leaf 400 /usr/bin/php8.2 /progs/recurse.php
# HotSpot with no flags (its own frames read from libjvm's VMStructs): Busy's fib and sort
# loop for LONG_EACH s of its CPU, every stack printed for the host to judge
echo "A64-T java \$(cut -d" " -f1 /proc/uptime)"
if cfiprof record -v -F 499 -o /tmp/java.folded -- \
	/usr/lib/jvm/java-17-openjdk-arm64/bin/java -cp /progs Busy ${LONG_EACH} \
	> /tmp/java.out 2> /tmp/java.err; then
	echo "A64 java loaded=yes"
else
	echo "A64 java loaded=no"
fi
sed "s/^/A64-ERR java /" /tmp/java.err | tail -30
sed "s/^/A64-FOLDED java /" /tmp/java.folded
# top and the agent, on the whole guest while chain spins
/progs/chain 60c &
spin=\$!
sleep 1
echo "A64-T top \$(cut -d" " -f1 /proc/uptime)"
cfiprof top -u -d 3 -n 12 -p \$spin > /tmp/top.out 2> /tmp/top.err && echo "A64 top loaded=yes" ||
	echo "A64 top loaded=no"
sed "s/^/A64-TOP /" /tmp/top.out
sed "s/^/A64-ERR top /" /tmp/top.err
echo "A64-T agent \$(cut -d" " -f1 /proc/uptime)"
mkdir -p /tmp/agent
cfiprof agent -d 5s -i 2s -F 199 -o /tmp/agent 2> /tmp/agent.err && echo "A64 agent loaded=yes" ||
	echo "A64 agent loaded=no"
sed "s/^/A64-ERR agent /" /tmp/agent.err | tail -6
for f in /tmp/agent/*.pb.gz; do
	[ -e "\$f" ] && echo "A64-AGENT \$(basename \$f) \$(base64 -w 0 \$f)"
done
kill \$spin
fi
echo "A64-T done \$(cut -d" " -f1 /proc/uptime)"
echo "A64 done"
poweroff -f
INIT
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc 2> /dev/null | gzip -1) > "$work/initramfs.cpio.gz"

log=$work/console.log
echo "arm64-test: booting $kver (qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on, TCG)"
# make test's smoke part on one vCPU: its host CPU is shared with two other suites
smp=1
[ "$FULL" = 1 ] || [ "$BENCH" = 1 ] && smp=2
timeout 900 qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -m 1536 -smp $smp \
	-kernel "$vmlinuz" -initrd "$work/initramfs.cpio.gz" \
	-append "console=ttyAMA0 panic=-1 quiet" -nographic -no-reboot > "$log" 2>&1 || true
tr -d '\r' < "$log" | grep '^A64' || true
grep -q "A64 done" "$log" || { echo "arm64-test: the guest did not finish; see $log" >&2; exit 1; }
if [ "$BENCH" = 1 ]; then
	tr -d '\r' < "$log" | grep '^A64-BENCH' | python3 -c '
import collections, statistics, sys
d = collections.defaultdict(dict)
for line in sys.stdin:
    _, r, who, depth, ns, fr = line.split()
    d[(r, who)][int(depth)] = (float(ns), float(fr))
def per_frame(r, who):
    x = d[(r, who)]
    return (x[120][0] - x[8][0]) / (x[120][1] - x[8][1])
rounds = sorted({r for r, _ in d})
cf = [per_frame(r, "cfiprof") for r in rounds]
fp = [per_frame(r, "fpwalk") for r in rounds]
ratio = [c / f for c, f in zip(cf, fp)]
print("arm64 guest (TCG), %d rounds: cfiprof %.0f ns/frame (recurse, CFI), bpf_get_stack %.0f "
      "ns/frame (recurse_fp): ratio %.2f (median; %.2f-%.2f)" % (len(rounds),
      statistics.median(cf), statistics.median(fp), statistics.median(ratio), min(ratio),
      max(ratio)))
' | tee "$work/bench.md"
	exit 0
fi
# the judging is tests/e2e/test_arm64_guest.c's (make arm64-test and make test run it)
grep -q "loaded=no" "$log" && { echo "arm64-test: cfiprof failed in the guest; see $log" >&2; exit 1; }
exit 0
