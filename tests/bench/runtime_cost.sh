#!/bin/bash
# BPF cost per sample with and without each runtime's frames (kernel.bpf_stats_enabled: the
# summary's run time / samples), and the native part's completeness: the same programs run by
# the real interpreter (its frames read) and by a copy that claims an unsupported version (the
# same native work, no frame walk): python3.11 whose Py_Version says 3.12, php8.2 whose build
# id says the Zend API of 8.3, perl whose PL_version says 5.99, ruby run on a libruby whose
# ruby_version says 3.9 (LD_LIBRARY_PATH), node whose v8dbg_TaggedSize says its pointers are
# compressed (a layout cfiprof does not read), a JDK whose libjvm.so lists CodeHeap::_segmap
# under another name (java -XX:+PreserveFramePointer in both arms, so that the copy's walk
# crosses the Java frames too, by frame pointers).  Interleaved runs, medians.
#   [ONLY=RUNTIME] tests/bench/runtime_cost.sh [RUNS]
set -eu
cd "$(dirname "$0")/../.."
CFIPROF=${CFIPROF:-build/cfiprof}
RUNS=${1:-5}
out=build/bench/runtime_cost
mkdir -p "$out/off"
old=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
trap 'sysctl -qw kernel.bpf_stats_enabled=$old' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# the copies: Py_Version's bytes in .rodata; the first "API20220829,NTS"
cp /usr/bin/python3.11 "$out/off/python3.11"
cp /usr/bin/php8.2 "$out/off/php8.2"
cp /usr/bin/perl "$out/off/perl"
cp /usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1 "$out/off/libruby-3.1.so.3.1"
cp /usr/bin/node "$out/off/node"
python3 - "$out/off/python3.11" "$out/off/php8.2" "$out/off/perl" "$out/off/libruby-3.1.so.3.1" "$out/off/node" <<'PY'
import subprocess, sys, struct
py, php, pl, rb, node = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
nm = subprocess.run(["nm", "-D", py], capture_output=True, text=True).stdout
addr = int(next(l.split()[0] for l in nm.splitlines() if l.endswith(" Py_Version")), 16)
for l in subprocess.run(["readelf", "-SW", py], capture_output=True, text=True).stdout.splitlines():
    f = l.replace("[ ", "[").split()
    if len(f) > 6 and f[1].startswith("."):
        a, o, s = int(f[3], 16), int(f[4], 16), int(f[5], 16)
        if a <= addr < a + s:
            with open(py, "r+b") as fh:
                fh.seek(addr - a + o)
                fh.write(struct.pack("<I", 0x030C00F0))
            break
data = open(php, "rb").read()
i = data.index(b"API20220829,NTS")
with open(php, "r+b") as fh:
    fh.seek(i)
    fh.write(b"API20230831,NTS")
nm = subprocess.run(["nm", "-D", pl], capture_output=True, text=True).stdout
addr = int(next(l.split()[0] for l in nm.splitlines() if l.endswith(" PL_version")), 16)
for l in subprocess.run(["readelf", "-SW", pl], capture_output=True, text=True).stdout.splitlines():
    f = l.replace("[ ", "[").split()
    if len(f) > 6 and f[1] == ".rodata":
        a, o = int(f[3], 16), int(f[4], 16)
        with open(pl, "r+b") as fh:
            fh.seek(addr - a + o)
            fh.write(bytes([99]))
nm = subprocess.run(["nm", "-D", rb], capture_output=True, text=True).stdout
addr = int(next(l.split()[0] for l in nm.splitlines() if l.endswith(" ruby_version")), 16)
for l in subprocess.run(["readelf", "-SW", rb], capture_output=True, text=True).stdout.splitlines():
    f = l.replace("[ ", "[").split()
    if len(f) > 6 and f[1] == ".rodata":
        a, o = int(f[3], 16), int(f[4], 16)
        with open(rb, "r+b") as fh:
            fh.seek(addr - a + o + 2)
            fh.write(b"9")
nm = subprocess.run(["nm", "-D", node], capture_output=True, text=True).stdout
addr = int(next(l.split()[0] for l in nm.splitlines() if l.endswith(" v8dbg_TaggedSize")), 16)
for l in subprocess.run(["readelf", "-SW", node], capture_output=True, text=True).stdout.splitlines():
    f = l.replace("[ ", "[").split()
    if len(f) > 6 and f[1] == ".data":
        a, o = int(f[3], 16), int(f[4], 16)
        with open(node, "r+b") as fh:
            fh.seek(addr - a + o)
            fh.write(struct.pack("<i", 4))
PY

# the JDK: a tree of links, its launcher, libjli (whose real path gives java its home) and
# libjvm copied
jdk=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
rm -rf "$out/off/jdk" && cp -as "$jdk" "$out/off/jdk"
for f in bin/java lib/libjli.so lib/server/libjvm.so; do
	rm "$out/off/jdk/$f" && cp "$jdk/$f" "$out/off/jdk/$f"
done
python3 - "$out/off/jdk/lib/server/libjvm.so" <<'PY'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
i = d.index(b"\0_segmap\0")
d[i + 7] = ord("X")
open(sys.argv[1], "wb").write(d)
PY
mkdir -p "$out/classes"
javac -d "$out/classes" tests/progs/java/Busy.java

# RUNTIME NAME BINARY SCRIPT ARG: one line per (program, interpreter)
progs=(
	"python recurse.py /usr/bin/python3.11 tests/progs/python/recurse.py 3"
	"python threads.py /usr/bin/python3.11 tests/progs/python/threads.py 3"
	"php recurse.php /usr/bin/php8.2 tests/progs/php/recurse.php 12000"
	"perl recurse.pl /usr/bin/perl tests/progs/perl/recurse.pl 3000"
	"ruby recurse.rb /usr/bin/ruby tests/progs/ruby/recurse.rb 6000"
	"v8 loop.js /usr/bin/node tests/progs/v8/loop.js 3"
	"hotspot Busy.java $jdk/bin/java Busy 3"
)
printf "| runtime | program | interpreter | ns/sample | native user frames/sample | complete | its frames/sample |\n|---|---|---|---|---|---|---|\n"
for p in "${progs[@]}"; do
	read -r rt name bin script arg <<< "$p"
	[ -n "${ONLY:-}" ] && [ "$rt" != "$ONLY" ] && continue
	off=$out/off/$(basename "$bin")
	[ "$rt" = hotspot ] && off=$out/off/jdk/bin/java
	: > "$out/$name-on.ns"
	: > "$out/$name-off.ns"
	for i in $(seq "$RUNS"); do
		for arm in on off; do
			b=$bin
			env=()
			[ "$arm" = off ] && b=$off
			# ruby's interpreter is its libruby: the copy is found first, the program is ruby;
			# without rubygems, whose paths follow the version the copy claims
			[ "$rt" = ruby ] && env=(env RUBYOPT=--disable-gems)
			# node: its V8 flag goes before the script (loop.js pins a constructor)
			flags=()
			[ "$rt" = v8 ] && flags=(--allow-natives-syntax)
			[ "$rt" = hotspot ] && flags=(-XX:+PreserveFramePointer -cp "$out/classes")
			[ "$arm" = off ] && [ "$rt" = ruby ] && b=$bin && env+=("LD_LIBRARY_PATH=$out/off")
			log=$out/$name-$arm-$i.log
			"$CFIPROF" record -v -F 999 -o /dev/null -- "${env[@]}" "$b" "${flags[@]}" "$script" "$arg" 2> "$log" > /dev/null || true
			sed -n 's/.*BPF run time \([0-9]*\) ns per sample.*/\1/p' "$log" >> "$out/$name-$arm.ns"
		done
	done
	for arm in on off; do
		log=$out/$name-$arm-$RUNS.log
		ns=$(median < "$out/$name-$arm.ns")
		frames=$(sed -n 's/.*, \([0-9.]*\) user frames per sample.*/\1/p' "$log")
		complete=$(sed -n 's/.*complete [0-9]* (\([0-9.]*%\)).*/\1/p' "$log")
		rtf=$(awk -v rt="$rt" '$0 ~ "cfiprof: " rt ": [0-9]+ process" { for (i = 1; i <= NF; i++) { if ($i == "samples:") s = $(i-1); if ($(i+2) == "frames;") f = $i } } END { if (s) printf "%.1f", f / s; else print "-" }' "$log")
		what=$([ "$arm" = on ] && echo "$(basename "$bin") (frames)" || echo "copy of an unsupported version (none)")
		echo "| $rt | $name | $what | $ns ($(tr '\n' ' ' < "$out/$name-$arm.ns")) | $frames | $complete | $rtf |"
	done
done
