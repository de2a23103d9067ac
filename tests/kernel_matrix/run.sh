#!/bin/bash
# make kernel-matrix: boots Debian's packaged kernel (linux-image-amd64, 6.1) under
# qemu-system-x86_64 with an initramfs built here (busybox-static + cfiprof + test
# programs and their libraries), runs cfiprof inside with both walkers, and reports
# verifier acceptance and completeness.  Then the events this host's kernel cannot show
# (it has no kprobes and refuses fentry): kprobe: and kretprobe: on the openat path and a
# raw tracepoint, each on progs/events_wait opening /dev/null 200 times from
# main -> open_leaf, checked inside the guest: the hits through that chain are exact and
# every such stack ends, below its user frames, in the kernel function probed; and
# --off-cpu (the blocks' time in block_long / block_short).  Not part of make test.
set -eu
cd "$(dirname "$0")/../.."
OUT=${OUT:-build}
work=$OUT/kmatrix
mkdir -p "$work"
work=$(cd "$work" && pwd)

# --- the kernel: extracted from its .deb, never installed on this machine
pkg=$(apt-cache depends linux-image-amd64 | sed -n 's/.*Depends: \(linux-image-[^ ]*\)/\1/p' | head -1)
if [ -z "$pkg" ]; then
	echo "kernel-matrix: cannot find the package behind linux-image-amd64" >&2
	exit 1
fi
if ! ls "$work"/kernel/boot/vmlinuz-* > /dev/null 2>&1; then
	(cd "$work" && apt-get download "$pkg" > /dev/null)
	dpkg-deb -x "$work"/"$pkg"_*.deb "$work/kernel"
fi
vmlinuz=$(ls "$work"/kernel/boot/vmlinuz-* | head -1)
kver=$(basename "$vmlinuz" | sed 's/^vmlinuz-//')

# --- the initramfs: busybox, cfiprof, two test programs, and every library they load
root=$work/initramfs
rm -rf "$root"
mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,progs,etc}
cp /bin/busybox "$root/bin/busybox"
for app in sh mount mkdir cat grep sed awk head tail wc poweroff sleep echo ls tr sort uniq; do
	ln -sf busybox "$root/bin/$app"
done
cp "$OUT/cfiprof" "$root/bin/cfiprof"
cp "$OUT/progs/chain" "$OUT/progs/recurse" "$OUT/progs/events_wait" "$root/progs/"
for bin in "$OUT/cfiprof" "$OUT/progs/chain" "$OUT/progs/recurse" "$OUT/progs/events_wait"; do
	ldd "$bin" | grep -o '/[^ ]*' | while read -r lib; do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
done
cat > "$root/init" <<'INIT'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
echo "KMATRIX kernel $(cat /proc/sys/kernel/osrelease)"
run() {
	name=$1
	shift
	if cfiprof record -v -F 499 -o /tmp/$name.folded "$@" 2> /tmp/$name.err; then
		echo "KMATRIX $name loaded=yes"
	else
		echo "KMATRIX $name loaded=no"
	fi
	sed 's/^/KMATRIX-LOG /' /tmp/$name.err | tail -25
	total=$(awk '{n += $NF} END {print n + 0}' /tmp/$name.folded)
	incomplete=$(grep '\[incomplete' /tmp/$name.folded | awk '{n += $NF} END {print n + 0}')
	echo "KMATRIX $name samples=$total incomplete=$incomplete"
}
run chain-loop -- /progs/chain 3
run chain-tailcalls --tail-calls -- /progs/chain 3
run recurse-loop --max-frames 512 -- /progs/recurse 3 300
run recurse-tailcalls --tail-calls --max-frames 512 -- /progs/recurse 3 300
# An event on N opens from main -> open_leaf: hits through that chain (want exactly WANT),
# and how many of those stacks end (below the user frames) in the kernel frame KFRAME: the
# probed code, the probe's own frames (BPF program, trampoline, tracepoint glue) dropped.
event() {
	name=$1 want=$2 kframe=$3
	shift 3
	if cfiprof record -v -o /tmp/$name.folded "$@" 2> /tmp/$name.err; then
		loaded=yes
	else
		loaded=no
	fi
	sed 's/^/KMATRIX-LOG /' /tmp/$name.err | tail -25
	chain=';main;open_leaf;'
	hits=$(grep -F "$chain" /tmp/$name.folded | awk '{n += $NF} END {print n + 0}')
	stacks=$(grep -cF "$chain" /tmp/$name.folded)
	kstacks=$(grep -F "$chain" /tmp/$name.folded | grep -c ";$kframe[^;]*_\[k\] [0-9]*\$")
	ok=no
	[ "$loaded" = yes ] && [ "$hits" = "$want" ] && [ "$stacks" -gt 0 ] &&
		[ "$kstacks" = "$stacks" ] && ok=yes
	echo "KMATRIX $name loaded=$loaded hits=$hits want=$want stacks=$stacks kernel=$kstacks ok=$ok"
	grep -F "$chain" /tmp/$name.folded | head -1 | sed 's/^/KMATRIX-STACK '"$name"' /'
}
event kprobe 200 'do_sys_openat2' -e kprobe:do_sys_openat2 --event-budget 100000 -- \
	/progs/events_wait open 200
event kretprobe 200 'do_sys_openat2' -e kretprobe:do_sys_openat2 --event-budget 100000 -- \
	/progs/events_wait open 200
event tracepoint 400 'syscall_trace_enter' -e tracepoint:raw_syscalls:sys_enter --event-budget 100000 \
	-- /progs/events_wait open 200
# off-CPU: 300 + 150 + 300 ms blocked in block_long / block_short (microseconds in folded)
if cfiprof record -v --off-cpu -o /tmp/offcpu.folded -- /progs/events_wait sleep 2> /tmp/offcpu.err; then
	loaded=yes
else
	loaded=no
fi
sed 's/^/KMATRIX-LOG /' /tmp/offcpu.err | tail -25
long=$(grep -F ';main;block_long;block_for;' /tmp/offcpu.folded | awk '{n += $NF} END {print n + 0}')
short=$(grep -F ';main;block_short;block_for;' /tmp/offcpu.folded | awk '{n += $NF} END {print n + 0}')
ok=no
[ "$loaded" = yes ] && [ "$long" -ge 540000 ] && [ "$long" -le 660000 ] &&
	[ "$short" -ge 135000 ] && [ "$short" -le 165000 ] && ok=yes
echo "KMATRIX offcpu loaded=$loaded long_us=$long short_us=$short ok=$ok"
echo "KMATRIX done"
poweroff -f
INIT
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc 2> /dev/null | gzip -1) > "$work/initramfs.cpio.gz"

# Nested KVM here hangs in the firmware or rejects MSRs: software emulation is the
# portable default (about a minute); KMATRIX_ACCEL=kvm tries hardware acceleration.
if [ "${KMATRIX_ACCEL:-tcg}" = kvm ]; then
	accel="-accel kvm"
else
	accel="-accel tcg -cpu max"
fi
log=$work/console.log
echo "kernel-matrix: booting $kver ($accel)"
timeout 600 qemu-system-x86_64 $accel -m 1536 -smp 2 -kernel "$vmlinuz" \
	-initrd "$work/initramfs.cpio.gz" -append "console=ttyS0 panic=-1 quiet" \
	-nographic -no-reboot > "$log" 2>&1 || true

report=$work/report.md
{
	echo "# Kernel matrix, $(date -u +%Y-%m-%d)"
	echo
	echo "Guest kernel: $(sed -n 's/.*KMATRIX kernel \(.*\)/\1/p' "$log" | tr -d '\r'); host: $(uname -r); $accel"
	echo
	echo "| run | BPF loaded (verifier) | samples | complete |"
	echo "|---|---|---|---|"
	for name in chain-loop chain-tailcalls recurse-loop recurse-tailcalls; do
		loaded=$(sed -n "s/.*KMATRIX $name loaded=\([a-z]*\).*/\1/p" "$log" | tr -d '\r')
		read -r s inc < <(sed -n "s/.*KMATRIX $name samples=\([0-9]*\) incomplete=\([0-9]*\).*/\1 \2/p" "$log" | tr -d '\r')
		pct=$(awk -v s="${s:-0}" -v i="${inc:-0}" 'BEGIN {printf s ? "%.2f%%" : "-", 100 * (s - i) / s}')
		echo "| $name | ${loaded:-no output} | ${s:-0} | $pct |"
	done
	echo
	echo "Events on \`events_wait open 200\` (200 opens from main -> open_leaf), checked in the guest:"
	echo
	echo "| event | loaded | hits through main;open_leaf (want) | stacks | ending in the probed kernel code | ok |"
	echo "|---|---|---|---|---|---|"
	for name in kprobe kretprobe tracepoint; do
		sed -n "s/.*KMATRIX $name loaded=\([a-z]*\) hits=\([0-9]*\) want=\([0-9]*\) stacks=\([0-9]*\) kernel=\([0-9]*\) ok=\([a-z]*\).*/| $name | \1 | \2 (\3) | \4 | \5 | \6 |/p" "$log" | tr -d '\r'
	done
	echo
	sed -n 's/.*KMATRIX offcpu loaded=\([a-z]*\) long_us=\([0-9]*\) short_us=\([0-9]*\) ok=\([a-z]*\).*/Off-CPU (`--off-cpu`, events_wait sleep): loaded \1, block_long \2 us (600,000 blocked), block_short \3 us (150,000), ok \4/p' "$log" | tr -d '\r'
	echo
	echo "One stack of each event (root first):"
	echo
	sed -n 's/.*KMATRIX-STACK \(.*\)/    \1/p' "$log" | tr -d '\r'
} > "$report"
cat "$report"
grep -q "KMATRIX done" "$log" || { echo "kernel-matrix: the guest did not finish; see $log" >&2; exit 1; }
! grep -q "loaded=no\|ok=no" "$log"
