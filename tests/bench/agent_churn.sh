#!/bin/bash
# make bench: the agent's CPU at 19 Hz while this tree is rebuilt in a loop
# (make clean; make -j2 all: hundreds of short compiler processes a second,
# each loaded, its early samples deferred, then forgotten), deferred
# unwinding off and on, interleaved, RUNS rounds of SECS seconds each (issue
# 13). CPU is the agent's own process_cpu_seconds_total over the run;
# stack bytes copied from cfiprof_deferred_stack_bytes_total.
set -eu
cd "$(dirname "$0")/../.."
. tests/bench/agent_lib.sh
CFIPROF=$(realpath "${CFIPROF:-build/cfiprof}")
RUNS=${RUNS:-3}
SECS=${SECS:-30}
port=19468
out=$(realpath -m build/bench/agent_churn)
mkdir -p "$out"
src=$out/src
rm -rf "$src"
mkdir -p "$src"
git ls-files | tar -cf - -T - | tar -xf - -C "$src"

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

churn() {
	while :; do
		(cd "$src" && make clean > /dev/null 2>&1 && make -j2 all > /dev/null 2>&1) || true
	done
}

declare -A cpu mib
for r in $(seq "$RUNS"); do
	for way in off on; do
		opts=()
		[ $way = off ] && opts=(--defer-stack 0)
		rm -rf "$out/intervals"
		"$CFIPROF" agent -F 19 --interval 5 --duration $((SECS + 10)) --table-cache off \
			--output-dir "$out/intervals" --metrics-addr 127.0.0.1:$port "${opts[@]}" \
			2> "$out/agent-$way-$r.log" &
		agent=$!
		sleep 3
		churn &
		loop=$!
		c0=$(value process_cpu_seconds_total)
		b0=$(value cfiprof_deferred_stack_bytes_total)
		t0=$(date +%s.%N)
		sleep "$SECS"
		c1=$(value process_cpu_seconds_total)
		b1=$(value cfiprof_deferred_stack_bytes_total)
		t1=$(date +%s.%N)
		kill $loop 2> /dev/null || true
		wait $loop 2> /dev/null || true
		pkill -P $$ make 2> /dev/null || true
		kill -INT $agent 2> /dev/null || true
		wait $agent || true
		cpu[$way]+="$(awk -v a="$c0" -v b="$c1" -v s="$t0" -v e="$t1" 'BEGIN {printf "%.2f", 100 * (b - a) / (e - s)}') "
		mib[$way]+="$(awk -v a="${b0:-0}" -v b="${b1:-0}" -v s="$t0" -v e="$t1" 'BEGIN {printf "%.3f", (b - a) / 1048576 / (e - s)}') "
	done
done
report=$out/agent_churn.md
{
	echo "# The agent at 19 Hz under process churn, $(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs"
	echo
	echo "\`cfiprof agent -F 19 --interval 5 --table-cache off\` while \`make clean; make -j2 all\` rebuilds this tree in a loop;"
	echo "$SECS s per run, deferred unwinding off and on interleaved, medians of $RUNS runs (tests/bench/agent_churn.sh)."
	echo
	echo "| deferred unwinding | agent CPU, % of one core (median) | runs | stack copied, MiB/s (median) |"
	echo "|---|---|---|---|"
	for way in off on; do
		# shellcheck disable=SC2086
		echo "| $way | $(printf '%s\n' ${cpu[$way]} | median) | ${cpu[$way]}| $(printf '%s\n' ${mib[$way]} | median) |"
	done
} > "$report"
cat "$report"
