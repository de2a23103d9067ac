#!/bin/bash
# make bench: stacks on other events (issue 17).
#  1. BPF run time per hit of each kind of event (kernel.bpf_stats_enabled; the record
#     summary's "BPF run time ... (R runs, S sampled)"): ns per sampled hit, medians of RUNS.
#  2. The slowdown of a context-switch-heavy program (perf bench sched pipe: two processes
#     passing a byte back and forth) under `cfiprof record --off-cpu` (with the default
#     event budget and without a per-process cap) beside `perf record -e sched:sched_switch
#     -g` (tracefs mounted in a private mount namespace), interleaved, medians of RUNS.
set -eu
cd "$(dirname "$0")/../.."
CFIPROF=${CFIPROF:-build/cfiprof}
RUNS=${RUNS:-5}
LOOPS=${LOOPS:-50000}
W=build/progs/events_wait
out=build/bench/events
mkdir -p "$out"
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
# run-time statistics for the run, the setting as it was afterwards
stats_was=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
trap 'sysctl -qw kernel.bpf_stats_enabled=$stats_was' EXIT

# kind | cfiprof options | the workload (a few thousand hits, within the event budgets)
kinds=(
	"cpu-clock|-F 999|$W sleep"
	"page-faults|-e page-faults --period 1|python3 -c 'b = bytearray(4_000_000)'"
	"uprobe|-e uprobe:libc:malloc|sh -c 'for i in 1 2 3 4 5; do $W malloc 900; sleep 0.2; done'"
	"uretprobe|-e uretprobe:libc:malloc|sh -c 'for i in 1 2 3 4 5; do $W malloc 900; sleep 0.2; done'"
	"usdt|-e usdt:$W:cfiprof_test:tick|sh -c 'for i in 1 2 3 4 5; do $W usdt 900; sleep 0.2; done'"
	"tracepoint|-e tracepoint:raw_syscalls:sys_enter|sh -c 'for i in 1 2 3 4 5; do $W open 400; sleep 0.2; done'"
	"off-cpu|--off-cpu|sh -c 'for i in \$(seq 300); do sleep 0.001; done'"
)
: > "$out/hits.txt"
for i in $(seq "$RUNS"); do
	for k in "${kinds[@]}"; do
		IFS='|' read -r name opts cmd <<< "$k"
		# shellcheck disable=SC2086
		eval "$CFIPROF record -v $opts --event-budget 100000 -o $out/hits.folded -- $cmd" > /dev/null 2> "$out/hits.err" || true
		line=$(grep 'BPF run time' "$out/hits.err" || true)
		[ -n "$line" ] || { echo "events.sh: $name: no run time line" >&2; cat "$out/hits.err" >&2; continue; }
		echo "$name $(echo "$line" | sed -E 's/.*BPF run time ([0-9]+) ns per sample.*\(([0-9]+) runs, ([0-9]+) sampled.*/\1 \2 \3/')" >> "$out/hits.txt"
	done
done

# both processes of the benchmark on CPU 1: each round trip is two switches there, far less
# noisy than wherever the scheduler puts them on a machine shared with other work
pipe() { "$@" taskset -c 1 perf bench sched pipe -l "$LOOPS" 2>/dev/null | awk '/usecs\/op/ {print $1}'; }
: > "$out/pipe.txt"
for i in $(seq "$RUNS"); do
	echo "bare $(pipe)" >> "$out/pipe.txt"
	echo "cfiprof $(pipe "$CFIPROF" record -v --off-cpu -o "$out/pipe.folded" --)" >> "$out/pipe.txt" 2>/dev/null
	echo "cfiprof-nocap $(pipe "$CFIPROF" record -v --off-cpu --event-budget 10000000 -o "$out/pipe.folded" --)" >> "$out/pipe.txt"
	echo "perf $(unshare -m sh -c "mount -t tracefs nodev /sys/kernel/tracing && perf bench sched pipe -l 1 >/dev/null 2>&1; perf record -q -e sched:sched_switch -g -o $out/perf.data -- taskset -c 1 perf bench sched pipe -l $LOOPS 2>/dev/null" | awk '/usecs\/op/ {print $1}')" >> "$out/pipe.txt"
done
"$CFIPROF" record -v --off-cpu -o "$out/pipe.folded" -- taskset -c 1 perf bench sched pipe -l "$LOOPS" > /dev/null 2> "$out/pipe.err" || true

report=$out/events.md
{
	echo "# Stacks on other events, $(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs"
	echo
	echo "BPF run time per sampled hit (tests/bench/events.sh, kernel.bpf_stats_enabled), medians of $RUNS runs:"
	echo
	echo "| event | ns per sampled hit | program runs | sampled |"
	echo "|---|---|---|---|"
	for k in "${kinds[@]}"; do
		name=${k%%|*}
		echo "| $name | $(awk -v n="$name" '$1 == n {print $2}' "$out/hits.txt" | median) | $(awk -v n="$name" '$1 == n {print $3}' "$out/hits.txt" | median) | $(awk -v n="$name" '$1 == n {print $4}' "$out/hits.txt" | median) |"
	done
	echo
	echo "Workloads stay within the event budgets (--event-budget 100000; 900 hits a process, 0.2 s apart), so runs beyond the sampled hits are other processes' hits the filter let pass (tracepoint: every syscall on the host). off-cpu's program runs on every context switch of the host (sched_switch; not counted as runs): its time per sample includes every switch it let pass."
	echo
	echo "taskset -c 1 perf bench sched pipe -l $LOOPS (usecs per round trip, medians of $RUNS interleaved runs):"
	echo
	echo "| run | usecs/op | over bare |"
	echo "|---|---|---|"
	b=$(awk '$1 == "bare" {print $2}' "$out/pipe.txt" | median)
	for r in bare cfiprof cfiprof-nocap perf; do
		m=$(awk -v r=$r '$1 == r {print $2}' "$out/pipe.txt" | median)
		case $r in
		bare) label="bare" ;;
		cfiprof) label="cfiprof record --off-cpu (default event budget)" ;;
		cfiprof-nocap) label="cfiprof record --off-cpu --event-budget 10000000" ;;
		perf) label="perf record -e sched:sched_switch -g" ;;
		esac
		echo "| $label | $m | $(awk -v b="$b" -v m="$m" 'BEGIN {printf "%+.1f%%", 100 * (m - b) / b}') |"
	done
	echo
	echo "cfiprof's summary of one such run:"
	echo '```'
	grep -E 'samples|event hits' "$out/pipe.err" || true
	echo '```'
} > "$report"
cat "$report"
