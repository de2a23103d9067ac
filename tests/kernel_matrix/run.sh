#!/bin/bash
# make kernel-matrix: boots Debian's packaged kernel (linux-image-amd64, 6.1) under
# qemu-system-x86_64 with an initramfs built here (busybox-static + cfiprof + test
# programs and their libraries), runs cfiprof inside with both walkers, and reports
# verifier acceptance and completeness.  Not part of make test.
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
cp "$OUT/progs/chain" "$OUT/progs/recurse" "$root/progs/"
for bin in "$OUT/cfiprof" "$OUT/progs/chain" "$OUT/progs/recurse"; do
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
	if cfiprof record -F 499 -o /tmp/$name.folded "$@" 2> /tmp/$name.err; then
		echo "KMATRIX $name loaded=yes"
	else
		echo "KMATRIX $name loaded=no"
	fi
	sed 's/^/KMATRIX-LOG /' /tmp/$name.err | head -20
	total=$(awk '{n += $NF} END {print n + 0}' /tmp/$name.folded)
	incomplete=$(grep '\[incomplete' /tmp/$name.folded | awk '{n += $NF} END {print n + 0}')
	echo "KMATRIX $name samples=$total incomplete=$incomplete"
}
run chain-loop -- /progs/chain 3
run chain-tailcalls --tail-calls -- /progs/chain 3
run recurse-loop --max-frames 512 -- /progs/recurse 3 300
run recurse-tailcalls --tail-calls --max-frames 512 -- /progs/recurse 3 300
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
} > "$report"
cat "$report"
grep -q "KMATRIX done" "$log" || { echo "kernel-matrix: the guest did not finish; see $log" >&2; exit 1; }
! grep -q "loaded=no" "$log"
