#!/bin/bash
# make arm64-test: boots Debian's arm64 kernel under qemu-system-aarch64 (TCG, -cpu max with
# the IMPDEF pointer-authentication algorithm: architected PAC emulation is ~4x slower) with
# an initramfs built here: busybox-static:arm64, the static build/arm64/cfiprof, the arm64
# test programs and the arm64 libc they load.  Inside, cfiprof records each program and
# judges its folded output against the program's known chain; the host reports and fails
# on any miss.  Everything arm64 runs in the guest: nothing is assumed of the host.
#
#   chain      main -> a -> b -> c -> d -> leaf (-O2 -fomit-frame-pointer)
#   chain_pac  the same with -mbranch-protection=standard: signed return addresses
#   signal     main -> s_a -> s_work, SIGALRM -> handler -> h_a -> h_leaf
#
# A sample in the leaf is "exact" when its stack ends with the whole chain (an extended
# regular expression): the oracle is the program's source.
set -eu
cd "$(dirname "$0")/../.."
OUT=${OUT:-build}
SECONDS_EACH=${ARM64_SECONDS:-3}
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
vmlinuz=$(ls "$work"/kernel/boot/vmlinuz-* | head -1)
kver=$(basename "$vmlinuz" | sed 's/^vmlinuz-//')

# --- the initramfs
root=$work/initramfs
rm -rf "$root"
mkdir -p "$root"/{bin,proc,sys,dev,tmp,progs,lib/aarch64-linux-gnu}
cp "$work/busybox/bin/busybox" "$root/bin/busybox"
for app in sh mount mkdir cat grep sed awk head tail wc poweroff sleep echo ls tr sort uniq; do
	ln -sf busybox "$root/bin/$app"
done
cp "$OUT/arm64/cfiprof" "$root/bin/cfiprof"
cp "$OUT"/progs/arm64/chain "$OUT"/progs/arm64/chain_pac "$OUT"/progs/arm64/signal "$root/progs/"
cross=/usr/aarch64-linux-gnu/lib
cp -L "$cross/ld-linux-aarch64.so.1" "$root/lib/"
cp -L "$cross/libc.so.6" "$root/lib/aarch64-linux-gnu/"
cat > "$root/init" << INIT
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
echo "A64 kernel \$(cat /proc/sys/kernel/osrelease) pac=\$(grep -c paca /proc/cpuinfo)"
# judge NAME CHAIN: samples, complete ones, and those whose stack is the chain (or its prefix)
judge() {
	name=\$1 chain=\$2
	total=\$(grep "^\$name;" /tmp/\$name.folded | awk '{n += \$NF} END {print n + 0}')
	incomplete=\$(grep "^\$name;" /tmp/\$name.folded | grep '\[incomplete' | awk '{n += \$NF} END {print n + 0}')
	leaf=\$(grep "^\$name;" /tmp/\$name.folded | grep -F ";\${chain##*;} " | awk '{n += \$NF} END {print n + 0}')
	exact=\$(grep "^\$name;" /tmp/\$name.folded | grep -E ";\$chain [0-9]+\\\$" | grep -v '\[incomplete' | awk '{n += \$NF} END {print n + 0}')
	echo "A64 \$name samples=\$total incomplete=\$incomplete in_leaf=\$leaf exact=\$exact"
	grep "^\$name;" /tmp/\$name.folded | sort -t' ' -k2 -rn | head -3 | sed "s/^/A64-STACK /"
}
run() {
	name=\$1 chain=\$2
	shift 2
	if cfiprof record -v -F 499 -o /tmp/\$name.folded "\$@" 2> /tmp/\$name.err; then
		echo "A64 \$name loaded=yes"
	else
		echo "A64 \$name loaded=no"
	fi
	sed 's/^/A64-LOG /' /tmp/\$name.err | tail -12
	judge \$name "\$chain"
}
run chain 'main;a;b;c;d;leaf' -- /progs/chain ${SECONDS_EACH}c
run chain_pac 'main;a;b;c;d;leaf' -- /progs/chain_pac ${SECONDS_EACH}c
# the sigreturn trampoline between the interrupted s_work and the handler: any one frame
run signal 'main;s_a;s_work;[^;]+;handler;h_a;h_leaf' -- /progs/signal ${SECONDS_EACH}c
echo "A64 done"
poweroff -f
INIT
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc 2> /dev/null | gzip -1) > "$work/initramfs.cpio.gz"

log=$work/console.log
echo "arm64-test: booting $kver (qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on, TCG)"
timeout 900 qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -m 1536 -smp 2 \
	-kernel "$vmlinuz" -initrd "$work/initramfs.cpio.gz" \
	-append "console=ttyAMA0 panic=-1 quiet" -nographic -no-reboot > "$log" 2>&1 || true
tr -d '\r' < "$log" | grep '^A64' || true
grep -q "A64 done" "$log" || { echo "arm64-test: the guest did not finish; see $log" >&2; exit 1; }
fail=0
for name in chain chain_pac signal; do
	line=$(tr -d '\r' < "$log" | grep "^A64 $name samples=" || true)
	read -r s inc leaf exact < <(echo "$line" |
		sed -n 's/.*samples=\([0-9]*\) incomplete=\([0-9]*\) in_leaf=\([0-9]*\) exact=\([0-9]*\).*/\1 \2 \3 \4/p')
	# every sample in the leaf has the whole chain: the known chain 100% exact
	if [ -z "${s:-}" ] || [ "$s" -eq 0 ] || [ "$leaf" -eq 0 ] || [ "$exact" -ne "$leaf" ]; then
		echo "arm64-test: $name: ${s:-0} samples, ${leaf:-0} in the leaf, ${exact:-0} with the chain" >&2
		fail=1
	fi
done
grep -q "loaded=no" "$log" && { echo "arm64-test: cfiprof failed in the guest; see $log" >&2; fail=1; }
exit $fail
