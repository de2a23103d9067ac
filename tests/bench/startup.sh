#!/bin/bash
# make bench: the profiler's own start and stop (issue 13, part 5).
# Wall time of `record -- /bin/true` and of `record -- xz` (~5 s of work) beside the bare
# command and `perf record -g`, interleaved, medians of RUNS; per round also the difference
# to that round's bare run (paired: xz's own run-to-run spread here is +-5%, larger than
# what is measured), and record -v's `start:` line (BPF load and verification until the
# command is released).
set -eu
cd "$(dirname "$0")/../.."
CFIPROF=${CFIPROF:-build/cfiprof}
RUNS=${RUNS:-7}
XZ_MB=${XZ_MB:-9}
out=build/bench/startup
mkdir -p "$out"

median() { sort -n | awk '{a[NR]=$1} END {if (!NR) print "n/a"; else print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
ms() { local t=$(date +%s%N); "$@" > /dev/null 2>&1 || true; echo $(( ($(date +%s%N) - t) / 1000000 )); }

head -c $((XZ_MB * 1000000)) /dev/urandom | base64 > "$out/xz.in"
xz_cmd=(xz -6 -T1 -c "$out/xz.in")
: > "$out/raw.txt"
for i in $(seq "$RUNS"); do
	for w in true xz; do
		if [ $w = true ]; then cmd=(/bin/true); else cmd=("${xz_cmd[@]}"); fi
		b=$(ms "${cmd[@]}")
		p=$(ms perf record -q -g -F 999 -o "$out/perf.data" -- "${cmd[@]}")
		t=$(date +%s%N)
		"$CFIPROF" record -v -F 999 -o "$out/out.folded" -- "${cmd[@]}" > /dev/null 2> "$out/err.txt" || true
		c=$(( ($(date +%s%N) - t) / 1000000 ))
		s=$(grep -o 'start: [0-9.]* ms' "$out/err.txt" | awk '{print $2}')
		echo "$w bare $b" >> "$out/raw.txt"
		echo "$w perf $p" >> "$out/raw.txt"
		echo "$w cfiprof $c" >> "$out/raw.txt"
		echo "$w cfiprof-start ${s:-0}" >> "$out/raw.txt"
		echo "$w diff-cfiprof $((c - b))" >> "$out/raw.txt"
		echo "$w diff-perf $((p - b))" >> "$out/raw.txt"
	done
done
get() { awk -v w="$1" -v k="$2" '$1 == w && $2 == k {print $3}' "$out/raw.txt" | median; }
report=$out/startup.md
{
	echo "# The profiler's own start and stop, $(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs"
	echo
	echo "Wall ms, medians of $RUNS interleaved runs (tests/bench/startup.sh); -F 999;"
	echo "\"paired\": the median of each round's difference to its bare run."
	echo
	echo "| command | bare | perf record -g | cfiprof record | cfiprof over bare (paired) | perf over bare (paired) | cfiprof's start (-v) |"
	echo "|---|---|---|---|---|---|---|"
	for w in true xz; do
		b=$(get $w bare)
		echo "| $w | $b | $(get $w perf) | $(get $w cfiprof) | $(get $w diff-cfiprof) ms ($(awk -v b="$b" -v d="$(get $w diff-cfiprof)" 'BEGIN {printf "%+.1f%%", 100 * d / b}')) | $(get $w diff-perf) ms | $(get $w cfiprof-start) ms |"
	done
	echo
	ft=$(get true diff-cfiprof)
	fx=$(get xz diff-cfiprof)
	echo "Fixed cost (record -- /bin/true over bare): $ft ms; the rest of xz's difference"
	echo "(sampling, table builds and naming during and after its run): $(awk -v a="$fx" -v b="$ft" 'BEGIN {print a - b}') ms."
} > "$report"
cat "$report"
