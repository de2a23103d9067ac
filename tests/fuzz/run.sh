#!/bin/bash
# Usage: tests/fuzz/run.sh SECONDS [TARGET...]
# Runs each libFuzzer target (default: every build/fuzz/fuzz_* binary) for
# SECONDS, one after the other, on a corpus in build/fuzz/corpus/TARGET that
# is seeded once from files of this system (nothing large is committed) and
# kept between runs.  Crashes, timeouts and OOMs land in
# build/fuzz/artifacts/TARGET/.  Prints executions and findings per target;
# exits non-zero if any target found something.
set -u
secs=${1:-60}
shift
cd "$(dirname "$0")/../.."
OUT=${OUT:-build}
out=$OUT/fuzz
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	for b in "$out"/fuzz_*; do
		[ -f "$b" ] && [ -x "$b" ] && targets+=("$(basename "$b")")
	done
fi
seedtmp=$(mktemp -d)
trap 'rm -rf "$seedtmp"' EXIT

is_elf() {
	[ "$(head -c 4 "$1" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ]
}

# ---- seeds, one function per target: seed_TARGET DIR ----

seed_fuzz_tables() {
	local d=$1 whole=0 eh=0 f size name
	for f in /usr/bin/*; do
		[ -f "$f" ] && [ ! -L "$f" ] && is_elf "$f" || continue
		size=$(stat -c %s "$f")
		name=$(basename "$f")
		if [ "$size" -lt 204800 ] && [ $whole -lt 40 ]; then
			cp "$f" "$d/elf-$name"
			whole=$((whole + 1))
		fi
		if [ "$size" -lt 102400 ] && [ $eh -lt 20 ] &&
			objcopy -O binary --only-section=.eh_frame "$f" "$d/eh-$name" 2>/dev/null &&
			[ -s "$d/eh-$name" ]; then
			eh=$((eh + 1))
		else
			rm -f "$d/eh-$name"
		fi
		[ $whole -ge 40 ] && [ $eh -ge 20 ] && break
	done
}

seed_fuzz_proc_maps() {
	local d=$1 n=0 p
	# whole maps files of a few processes (ours, init, a kernel thread: empty)
	for p in self 1 2 $$ $(ls /proc | grep -E '^[0-9]+$' | head -40); do
		[ -r /proc/$p/maps ] || continue
		head -60 /proc/$p/maps >"$d/maps-$p" 2>/dev/null
		[ -s "$d/maps-$p" ] || rm -f "$d/maps-$p"
		n=$((n + 1))
		[ $n -ge 12 ] && break
	done
	# single lines of each kind: file, anon, [heap]/[vdso], deleted, path with spaces
	grep -h -m1 -E ' /.*\.so' /proc/self/maps >"$d/line-lib"
	grep -h -m1 -E '\[(vdso|heap|stack)\]' /proc/self/maps >"$d/line-special"
	printf '7f0000000000-7f0000001000 r-xp 00001000 fd:01 123456 /tmp/a b (deleted)\n' >"$d/line-deleted"
	printf '00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon\n' >"$d/line-exe"
	printf 'ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n' >"$d/line-vsyscall"
}

seed_fuzz_perfmap() {
	local d=$1
	printf '7f0000001000 40 jit_fn_a\n7f0000001040 80 LazyCompile:*foo /app/x.js:1\n7f0000001100 10 [stub]\n' >"$d/basic"
	# later lines win where they overlap (JIT code reuse), CRLF, blank lines, junk
	printf '1000 100 old\r\n1000 100 new\r\n\n1080 8 inner\nzz 10 bad\n1200 0 zero\nffffffffffffff00 100 wrap\n' >"$d/overlap"
	awk 'BEGIN { for (i = 0; i < 200; i++) printf "%x %x java.lang.Object::m%d(int, long)\n", 0x7f1000000000 + i * 0x100, 0x80 + i, i }' >"$d/many"
}

seed_fuzz_kallsyms() {
	local d=$1
	head -300 /proc/kallsyms >"$d/head"
	grep -m 100 '\[' /proc/kallsyms >"$d/modules"
	tail -50 /proc/kallsyms >"$d/tail"
	# hidden addresses (kptr_restrict), and a synthetic file with every type
	sed 's/^[0-9a-f]*/0000000000000000/' "$d/head" | head -50 >"$d/zeros"
	printf 'ffffffff81000000 T _stext\nffffffff81000000 t alias\nffffffff81000100 W weakfn\nffffffff81000200 D data\nffffffff81000300 t modfn\t[mod]\nffffffff81000400 T last\n' >"$d/types"
}

seed_fuzz_elf_symbols() {
	local d=$1 n=0 f size sep
	sep=$(printf '\n==CFIPROF-DEBUG-FILE==\n')
	for f in /usr/bin/* /usr/lib/x86_64-linux-gnu/*.so*; do
		[ -f "$f" ] && [ ! -L "$f" ] && is_elf "$f" || continue
		size=$(stat -c %s "$f")
		[ "$size" -lt 65536 ] || continue
		cp "$f" "$d/elf-$(basename "$f")"
		n=$((n + 1))
		[ $n -ge 25 ] && break
	done
	# objects with .symtab, and a stripped object + its separate debug file
	for f in "$OUT"/progs/chain "$OUT"/progs/libpltlib.so "$OUT"/progs/cxx_names; do
		[ -f "$f" ] || continue
		cp "$f" "$d/prog-$(basename "$f")"
		objcopy --only-keep-debug --strip-debug "$f" "$seedtmp/obj.debug" 2>/dev/null ||
			objcopy --only-keep-debug "$f" "$seedtmp/obj.debug" || continue
		objcopy --strip-all --add-gnu-debuglink="$seedtmp/obj.debug" "$f" "$seedtmp/obj" ||
			continue
		{ cat "$seedtmp/obj"; printf '%s' "$sep"; cat "$seedtmp/obj.debug"; } \
			>"$d/split-$(basename "$f")"
	done
}

seed_fuzz_recording() {
	local d=$1 rec=$seedtmp/chain.rec
	# a real recording if BPF is available, else the demo's, else synthetic
	if [ -x "$OUT/cfiprof" ] && [ -x "$OUT/progs/chain" ] &&
		timeout 60 "$OUT/cfiprof" record -F 99 --save "$rec" -o /dev/null -- \
			"$OUT/progs/chain" 1 >/dev/null 2>&1 && [ -s "$rec" ]; then
		head -c 16384 "$rec" >"$d/recorded"
	fi
	[ -s demo.rec ] && head -c 16384 demo.rec >"$d/demo"
	cat >"$d/synthetic" <<'REC'
# cfiprof recording v1
meta 99 cpu-clock 1700000000000000000 1000000000
proc 4242 7
map 4242 400000 401000 0 0 1 - /nonexistent/a.out
map 4242 7f0000000000 7f0000010000 1000 7f0000000000 9 - [vdso]
cgroup 1a2b /system.slice/docker-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope
stack 3 4242 4243 0 0 a_b k ffffffff81000000,ffffffff81000100 u 400100,400200,7f0000000100 c 1a2b
stack 1 4242 4242 3 1 - k - u 400100
stack 2 99 99 1 0 other k - u -
overflow 5
REC
}

seed_fuzz_agent_config() {
	local d=$1
	cat >"$d/full" <<'CONF'
# cfiprof-agent configuration
freq = 49
user-only = yes
max-frames = 256
max-stacks = 100000
table-rows = 1048576
metrics-addr = 127.0.0.1:9491
log-file = /var/log/cfiprof-agent.log
log-level = debug
interval = 1.5m
duration = 7d
output-dir = /var/lib/cfiprof
retain-age = 24h
retain-bytes = 512MiB
push = https://pyroscope.example:4040
app-name = "my app "
labels = env=prod,region=eu
tenant = team-a
token-file = /etc/cfiprof/token
spool-dir = /var/spool/cfiprof
spool-max-bytes = 1G
push-timeout = 500ms
push-backoff-max = 5m
hostname = host1
CONF
	printf 'output-dir = /tmp/x\n; comment\n\n  interval=90s  \n' >"$d/small"
	printf 'freq = 1e9\n' >"$d/bad-range"
	printf 'no equals sign\n' >"$d/bad-line"
	printf 'labels = 1bad={x}\npush = ftp://x\noutput-dir=\n' >"$d/bad-check"
}

seed_fuzz_gopclntab() {
	local d=$1 f
	# stripped Go programs: the test program and Debian's smallest Go binary
	for f in "$OUT"/progs/gofib_stripped /usr/lib/go-1.19/bin/gofmt; do
		[ -f "$f" ] && cp "$f" "$d/go-$(basename "$f")"
	done
}

seed_fuzz_http() {
	local d=$1
	printf '\x05{"code":"invalid_argument","message":"profile too large"}' >"$d/json"
	printf '\x40<html><body><h1>502 Bad Gateway</h1></body></html>\n' >"$d/html"
	head -c 1200 /dev/zero | tr '\0' 'x' | sed 's/^/\xff/' >"$d/long"
	printf '\x01token-abc\r\n' >"$d/token"
}

# ---- run ----

# corpora and artifacts of the single-target runner (before the per-target layout)
for d in corpus artifacts; do
	if [ -d "$out/$d" ] && [ -n "$(find "$out/$d" -maxdepth 1 -type f | head -1)" ]; then
		mkdir -p "$out/$d/fuzz_tables"
		find "$out/$d" -maxdepth 1 -type f -exec mv -t "$out/$d/fuzz_tables/" {} +
	fi
done

rc_all=0
summary=()
for t in "${targets[@]}"; do
	bin=$out/$t
	corpus=$out/corpus/$t
	artifacts=$out/artifacts/$t
	log=$out/$t.log
	if [ ! -x "$bin" ]; then
		echo "fuzz: $bin not built (make $bin)" >&2
		rc_all=1
		continue
	fi
	mkdir -p "$corpus" "$artifacts"
	# Seed once; later runs keep what the fuzzer found.
	if [ -z "$(ls -A "$corpus")" ]; then
		if declare -f "seed_$t" >/dev/null; then
			"seed_$t" "$corpus"
			find "$corpus" -type f -empty -delete
		fi
		echo "fuzz: $t: seeded $corpus with $(ls "$corpus" | wc -l) inputs" \
			"($(du -sh "$corpus" | cut -f1))"
	fi
	before=$(ls "$artifacts" | wc -l)
	echo "fuzz: $t: running for ${secs}s on $(ls "$corpus" | wc -l) inputs"
	"$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=25 -print_final_stats=1 \
		-artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1
	rc=$?
	after=$(ls "$artifacts" | wc -l)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
	grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$log" | head -5
	found=$((after - before))
	line="$t: ${execs:-?} executions in ${secs}s, ${cov:-cov ?}, $found new crash/timeout/oom artifacts (exit $rc; log $log)"
	echo "fuzz: $line"
	ls -1t "$artifacts" | head -n "$found" | sed "s|^|fuzz:   $artifacts/|"
	summary+=("$line")
	if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
		rc_all=1
	fi
done
echo "fuzz: summary"
for l in "${summary[@]}"; do
	echo "fuzz:   $l"
done
exit $rc_all
