#!/bin/bash
# make bench: a cold clang-14's tables built one after the other or side by side
# (issue 13, item 3).  As in process_start.sh, clang is started by a shell that
# stops itself right before its exec, `cfiprof record -F 999 -v -p` attaches
# and the shell is continued: every object clang maps is new, no table cache.
# Figures, from the -v summary line of clang's pid: exec -> its tables loaded
# (the last load after its mappings changed) and exec -> first complete stack;
# medians of RUNS runs, the ways interleaved.  Ways: --build-workers 1 (one
# after the other) and the default (the CPUs, at most 4); BASE=path/to/cfiprof
# adds another build (e.g. the code before the workers) as "base".
set -eu
cd "$(dirname "$0")/../.."
CFIPROF=${CFIPROF:-build/cfiprof}
RUNS=${RUNS:-5}
BASE=${BASE:-}
out=build/bench/parallel_builds
mkdir -p "$out"

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

python3 - "$out" <<'PY'
import sys
with open(sys.argv[1] + "/big.c", "w") as f:
    for i in range(1500):
        f.write("int f%d(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i] * %d ^ (s >> 3); return s; }\n" % (i, i))
PY

# run_one WAY RUN: one profiled clang start; "WAY tables_ms first_ms" appended to raw.txt
run_one() {
	local way=$1 run=$2 bin=$CFIPROF opts="" pid rec base=$out/$1.$2
	case $way in
	serial) opts="--build-workers 1" ;;
	base) bin=$BASE ;;
	esac
	sh -c 'kill -STOP $$; exec "$@"' sh /usr/bin/clang-14 -O2 -c "$out/big.c" -o "$out/big.o" &
	pid=$!
	while [ "$(ps -o stat= -p $pid | cut -c1)" != T ]; do sleep 0.01; done
	# shellcheck disable=SC2086
	"$bin" record -F 999 -v -p $pid $opts -o "$base.folded" 2> "$base.err" &
	rec=$!
	sleep 1.5 # attached: the BPF programs are in
	kill -CONT $pid
	wait $pid || true
	kill -INT $rec
	wait $rec || true
	awk -v way="$way" -v pid="$pid" '
		$0 ~ "pid " pid ": first complete stack" {
			split($0, a, "stack "); split(a[2], b, " "); first = b[1]
			split($0, c, "tables loaded "); split(c[2], d, " "); tables = d[1]
		}
		END { printf "%s %s %s\n", way, tables == "" ? "-" : tables, first == "" ? "-" : first }' \
		"$base.err" >> "$out/raw.txt"
}

ways="serial parallel"
[ -n "$BASE" ] && ways="base $ways"
: > "$out/raw.txt"
for run in $(seq "$RUNS"); do
	for way in $ways; do
		run_one "$way" "$run"
	done
done

report=$out/parallel_builds.md
{
	echo "# A cold clang-14's tables, $(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs"
	echo
	echo "\`record -F 999 -v -p\` attached to a shell stopped right before it execs clang-14 -O2 -c"
	echo "(1500 functions; tests/bench/parallel_builds.sh); medians of $RUNS runs, interleaved."
	echo
	echo "| way | exec -> tables loaded (ms) | exec -> first complete stack (ms) | runs (tables ms) |"
	echo "|---|---|---|---|"
	for way in $ways; do
		col() { awk -v w="$way" -v c="$1" '$1 == w && $c != "-" {print $c}' "$out/raw.txt"; }
		echo "| $way | $(col 2 | median) | $(col 3 | median) | $(col 2 | tr '\n' ' ')|"
	done
} > "$report"
cat "$report"
