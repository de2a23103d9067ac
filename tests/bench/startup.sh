#!/bin/bash
# make bench: the profiler's own start and stop (issue 13, part 5).
# Wall time of `record -- /bin/true` and of `record -- xz` (a few seconds of work)
# beside the bare command and `perf record -g`, interleaved, medians of RUNS.
set -eu
cd "$(dirname "$0")/../.."
CFIPROF=${CFIPROF:-build/cfiprof}
RUNS=${RUNS:-7}
out=build/bench/startup
mkdir -p "$out"

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
ms() { local t=$(date +%s%N); "$@" > /dev/null 2>&1 || true; echo $(( ($(date +%s%N) - t) / 1000000 )); }

head -c 5000000 /dev/urandom | base64 > "$out/xz.in"
xz_cmd=(xz -6 -T1 -c "$out/xz.in")
: > "$out/raw.txt"
for i in $(seq "$RUNS"); do
	for w in true xz; do
		if [ $w = true ]; then cmd=(/bin/true); else cmd=("${xz_cmd[@]}"); fi
		echo "$w bare $(ms "${cmd[@]}")" >> "$out/raw.txt"
		echo "$w perf $(ms perf record -q -g -F 999 -o "$out/perf.data" -- "${cmd[@]}")" >> "$out/raw.txt"
		echo "$w cfiprof $(ms "$CFIPROF" record -F 999 -o "$out/out.folded" -- "${cmd[@]}")" >> "$out/raw.txt"
	done
done
report=$out/startup.md
{
	echo "# The profiler's own start and stop, $(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs"
	echo
	echo "Wall ms, medians of $RUNS interleaved runs (tests/bench/startup.sh); -F 999."
	echo
	echo "| command | bare | perf record -g | cfiprof record | cfiprof over bare |"
	echo "|---|---|---|---|---|"
	for w in true xz; do
		b=$(awk -v w=$w '$1 == w && $2 == "bare" {print $3}' "$out/raw.txt" | median)
		p=$(awk -v w=$w '$1 == w && $2 == "perf" {print $3}' "$out/raw.txt" | median)
		c=$(awk -v w=$w '$1 == w && $2 == "cfiprof" {print $3}' "$out/raw.txt" | median)
		echo "| $w | $b | $p | $c | $(awk -v b="$b" -v c="$c" 'BEGIN {printf "%+.0f ms (%+.1f%%)", c - b, 100 * (c - b) / b}') |"
	done
} > "$report"
cat "$report"
