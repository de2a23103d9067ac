#!/bin/bash
# Usage: tests/fuzz/run.sh SECONDS
# Seeds build/fuzz/corpus from small system binaries (whole files under
# 200 KB and the bare .eh_frame of ~20 of them), runs the libFuzzer target
# for SECONDS and reports executions and crashes.  Exits non-zero on a crash.
set -u
secs=${1:-60}
cd "$(dirname "$0")/../.."
out=${OUT:-build}/fuzz
bin=$out/fuzz_tables
corpus=$out/corpus
artifacts=$out/artifacts
log=$out/fuzz_tables.log

if [ ! -x "$bin" ]; then
	echo "fuzz: $bin not built (make $bin)" >&2
	exit 1
fi
mkdir -p "$corpus" "$artifacts"

# Seed once; later runs keep what the fuzzer found.
if [ -z "$(ls -A "$corpus")" ]; then
	whole=0
	eh=0
	for f in /usr/bin/*; do
		[ -f "$f" ] && [ ! -L "$f" ] || continue
		[ "$(head -c 4 "$f" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ] || continue
		size=$(stat -c %s "$f")
		name=$(basename "$f")
		if [ "$size" -lt 204800 ] && [ $whole -lt 40 ]; then
			cp "$f" "$corpus/elf-$name"
			whole=$((whole + 1))
		fi
		if [ "$size" -lt 102400 ] && [ $eh -lt 20 ] &&
			objcopy -O binary --only-section=.eh_frame "$f" "$corpus/eh-$name" 2>/dev/null &&
			[ -s "$corpus/eh-$name" ]; then
			eh=$((eh + 1))
		else
			rm -f "$corpus/eh-$name"
		fi
		[ $whole -ge 40 ] && [ $eh -ge 20 ] && break
	done
	echo "fuzz: seeded $corpus with $whole ELF files and $eh .eh_frame sections"
fi

before=$(ls "$artifacts" | wc -l)
echo "fuzz: running $bin for ${secs}s on $(ls "$corpus" | wc -l) inputs"
"$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=25 -print_final_stats=1 \
	-artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1
rc=$?
after=$(ls "$artifacts" | wc -l)
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$log" | head -5
crashes=$((after - before))
echo "fuzz: fuzz_tables: ${execs:-?} executions in ${secs}s, $crashes new crash/timeout/oom" \
	"artifacts (exit $rc; log $log)"
ls -1 "$artifacts" | tail -n "$crashes" 2>/dev/null | sed 's/^/fuzz:   /'
[ "$rc" -eq 0 ] && [ "$crashes" -eq 0 ]
