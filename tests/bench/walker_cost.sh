#!/bin/bash
# BPF cost per sample and per frame (kernel.bpf_stats_enabled: run time / samples, as
# printed by cfiprof's summary) recording the recursion test program at several depths,
# with both walkers.  Idle / filtered runs are included in the run time: they are cheap
# early exits, so the per-sample figure is a slight overestimate.
set -eu
cd "$(dirname "$0")/../.."
CFIPROF=${CFIPROF:-build/cfiprof}
RUNS=${RUNS:-3}
out=build/bench
mkdir -p "$out"
report=$out/walker.md
old=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
trap 'sysctl -qw kernel.bpf_stats_enabled=$old' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

{
	echo "# Walker cost, $(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs, cpu-clock at 499 Hz"
	echo
	echo "Medians of $RUNS runs of \`cfiprof record -F 499 --max-frames 1024 -- build/progs/recurse 3 DEPTH\`."
	echo
	echo "| walker | depth | user frames/sample | ns/sample (runs) | ns/frame | rule cache hit rate | complete |"
	echo "|---|---|---|---|---|---|---|"
} > "$report"
for mode in loop tailcall; do
	for depth in 8 32 128 300 512; do
		flag=""
		[ "$mode" = tailcall ] && flag="--tail-calls"
		ns=() ; pf=()
		for i in $(seq "$RUNS"); do
			log=$out/walker-$mode-$depth-$i.log
			"$CFIPROF" record -F 499 --max-frames 1024 $flag -o /dev/null -- \
				build/progs/recurse 3 "$depth" 2> "$log" || true
			ns+=("$(sed -n 's/.*BPF run time \([0-9]*\) ns per sample.*/\1/p' "$log")")
			pf+=("$(sed -n 's/.*per sample, \([0-9.]*\) ns per user frame.*/\1/p' "$log")")
		done
		frames=$(sed -n 's/.*, \([0-9.]*\) user frames per sample.*/\1/p' "$log")
		hit=$(sed -n 's/.*rule cache hit rate \([0-9.]*%\).*/\1/p' "$log")
		complete=$(sed -n 's/.*complete [0-9]* (\([0-9.]*%\)).*/\1/p' "$log")
		echo "| $mode | $depth | $frames | $(printf '%s\n' "${ns[@]}" | median) (${ns[*]}) | $(printf '%s\n' "${pf[@]}" | median) | $hit | $complete |" >> "$report"
	done
done
cat "$report"
