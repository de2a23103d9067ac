#!/bin/bash
# make bench: samples taken before a process's tables exist (issue 13).
# Each workload is started by a shell that stops itself right before its exec;
# `cfiprof record -p` attaches to that shell, which is then continued: every
# library the workload maps is new to the profiler, as under -a, --cgroup or
# the agent.  Three ways: deferred unwinding off (--defer-stack 0, the
# behaviour before it), on with an empty table cache, on with a warm one.
# Figures: the share of samples complete (reaching the root), the share left
# tables-pending, stack bytes copied, exec -> first complete stack; medians of
# RUNS runs, the three ways interleaved, and perf --call-graph dwarf on the
# same start (its share reaching the root, 8 KiB copied per sample).
# WORKLOADS and WAYS choose (default all); the ways copy8k, copy16k, copy32k,
# copy64k, ... are "cold" with --defer-stack of that size: the stack-copy-short
# column says how often a copy that size missed the root (make bench runs them
# for clang into OUTDIR=build/bench/stack_copy).
set -eu
cd "$(dirname "$0")/../.."
CFIPROF=${CFIPROF:-build/cfiprof}
RUNS=${RUNS:-3}
WORKLOADS=${WORKLOADS:-clang xz sqlite3 python3}
WAYS=${WAYS:-perf off cold warm}
out=${OUTDIR:-build/bench/process_start}
mkdir -p "$out"
cache=$out/cache

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# the workloads' inputs
python3 - "$out" <<'PY'
import sys, random
d = sys.argv[1]
with open(d + "/big.c", "w") as f:
    for i in range(1500):
        f.write("int f%d(int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i] * %d ^ (s >> 3); return s; }\n" % (i, i))
random.seed(1)
with open(d + "/xz.in", "wb") as f:
    f.write(bytes(random.getrandbits(8) if i % 7 else 65 for i in range(6 << 20)))
with open(d + "/q.sql", "w") as f:
    f.write("create table t(a, b);\n")
    f.write("with recursive c(x) as (select 1 union all select x + 1 from c where x < 300000) insert into t select x, x * 7 % 1000 from c;\n")
    f.write("select b, count(*), sum(a) from t group by b order by 3 desc limit 3;\n")
with open(d + "/w.py", "w") as f:
    f.write("import json\nx = 0\nfor i in range(200000):\n    x += len(json.dumps({'a': [i, str(i)]}))\nprint(x)\n")
PY

workload() {
	case $1 in
	clang) echo "/usr/bin/clang-14 -O2 -c $out/big.c -o $out/big.o" ;;
	xz) echo "/usr/bin/xz -6 -T1 -c $out/xz.in" ;;
	sqlite3) echo "/usr/bin/sqlite3 :memory: -init $out/q.sql .quit" ;;
	python3) echo "/usr/bin/python3.11 $out/w.py" ;;
	esac
}

# run_one WAY NAME RUN: one profiled start, its figures appended to $out/raw.txt
run_one() {
	local way=$1 name=$2 run=$3 opts pid rec base
	base=$out/$name.$way.$run
	case $way in
	perf) opts="" ;;
	off) opts="--defer-stack 0" ;;
	cold) rm -rf "$cache"; opts="--table-cache $cache" ;;
	warm) opts="--table-cache $cache" ;;
	copy*) opts="--defer-stack ${way#copy}" ;;
	esac
	# shellcheck disable=SC2046
	sh -c 'kill -STOP $$; exec "$@"' sh $(workload "$name") > /dev/null 2>&1 &
	pid=$!
	while [ "$(ps -o stat= -p $pid | cut -c1)" != T ]; do sleep 0.01; done
	if [ "$way" = perf ]; then
		# the peer: 8 KiB of stack copied with every sample, unwound afterwards
		perf record -q --call-graph dwarf -F 999 -p $pid -o "$base.perf.data" 2> "$base.err" &
	else
		# shellcheck disable=SC2086
		"$CFIPROF" record -v -F 999 -p $pid $opts -o "$base.folded" 2> "$base.err" &
	fi
	rec=$!
	# attached once the summary's progress would start: the BPF programs are in
	sleep 1.5
	kill -CONT $pid
	wait $pid || true
	kill -INT $rec
	wait $rec || true
	if [ "$way" = perf ]; then
		# a sample reaches the root when its unwound stack ends in _start or a thread's clone
		perf script -i "$base.perf.data" -F ip,sym 2> /dev/null | awk -v name="$name" '
			/^[ \t]*$/ { if (n) { total++; if (root) comp++ } n = 0; root = 0; next }
			{ n++; if ($0 ~ /(_start|__libc_start_call_main|start_thread|clone3)/) root = 1 }
			END { if (n) { total++; if (root) comp++ }
				printf "%s perf %d %.3f - - - %d - -\n", name, total, 100 * comp / total, total * 8 }' >> "$out/raw.txt"
		rm -f "$base.perf.data"
		return
	fi
	awk -v way="$way" -v name="$name" -v err="$base.err" '
		{ n = $NF; total += n; if ($0 ~ /\[incomplete: stack-copy-short\]/) short += n;
		  if ($0 ~ /\[incomplete: tables-pending\]/) pend += n;
		  else if ($0 ~ /\[incomplete: (exiting|in-execve)\]/) none += n;
		  else if ($0 !~ /\[incomplete:/) comp += n }
		END {
			first = "-"; bytes = 0; deferred = 0;
			while ((getline l < err) > 0) {
				if (l ~ /exec -> first complete stack/) { split(l, a, "median "); split(a[2], b, " "); first = b[1] }
				if (l ~ /deferred: [0-9]+ samples waited/) { split(l, a, "deferred: "); split(a[2], b, " "); deferred = b[1];
					split(l, c, "stack copy \\("); split(c[2], d, " "); bytes = d[1] * deferred }
			}
			printf "%s %s %d %.3f %.3f %s %d %.0f %.3f %d\n", name, way, total, 100 * comp / total, 100 * pend / total, first, deferred, bytes, 100 * comp / (total - none), short
		}' "$base.folded" >> "$out/raw.txt"
}

: > "$out/raw.txt"
for run in $(seq "$RUNS"); do
	for name in $WORKLOADS; do
		for way in $WAYS; do
			run_one "$way" "$name" "$run"
		done
	done
done

report=$out/process_start.md
{
	echo "# Samples before a process's tables exist, $(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs"
	echo
	echo "\`record -F 999 -p\` attached to a shell stopped right before it execs the workload"
	echo "(tests/bench/process_start.sh); medians of $RUNS runs, the three ways interleaved."
	echo
	echo "Samples no profiler can walk (\`exiting\`: after the kernel released the memory; \`in-execve\`) are left out of the last column."
	echo
	echo "| workload | way | samples | complete % | tables-pending % | exec -> first complete (ms) | deferred samples | KiB of stack copied | complete % of the walkable | stack-copy-short |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	for name in $WORKLOADS; do
		for way in $WAYS; do
			col() { awk -v n="$name" -v w="$way" -v c="$1" '$1 == n && $2 == w {print $c}' "$out/raw.txt" | median; }
			echo "| $name | $way | $(col 3) | $(col 4) | $(col 5) | $(col 6) | $(col 7) | $(awk -v b="$(col 8)" 'BEGIN {printf "%.0f", b}') | $(col 9) | $(col 10) |"
		done
	done
} > "$report"
cat "$report"
