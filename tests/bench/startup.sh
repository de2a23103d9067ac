#!/bin/bash
# make bench: the profiler's own start and stop (issue 13, part 5).
# Wall time of `record -- /bin/true`, of `record -- xz` (~5 s of work) and of a fixed CPU
# loop (~5 s, tests/bench/fixed_work.c: it spreads ~3% here, xz ~20%) beside the bare
# command and `perf record -g`, interleaved, medians of RUNS; per round also the difference
# to that round's bare run (paired: xz's own run-to-run spread here is +-5%, larger than
# what is measured), and record -v's `start:` line (BPF load and verification until the
# command is released).
set -eu
cd "$(dirname "$0")/../.."
CFIPROF=${CFIPROF:-build/cfiprof}
RUNS=${RUNS:-7}
XZ_MB=${XZ_MB:-9}
WORK_STEPS=${WORK_STEPS:-3600000000}
out=build/bench/startup
mkdir -p "$out"

median() { sort -n | awk '{a[NR]=$1} END {if (!NR) print "n/a"; else print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
# each run starts on a settled machine: perf's perf.data (MBs after a 5 s -g run) is
# written back meanwhile, not during the next run
settle() { sync; sleep 1; }
ms() { settle; local t=$(date +%s%N); "$@" > /dev/null 2>&1 || true; echo $(( ($(date +%s%N) - t) / 1000000 )); }

head -c $((XZ_MB * 1000000)) /dev/urandom | base64 > "$out/xz.in"
xz_cmd=(xz -6 -T1 -c "$out/xz.in")
${CC:-cc} -O2 -o "$out/fixed_work" tests/bench/fixed_work.c
: > "$out/raw.txt"
for i in $(seq "$RUNS"); do
	for w in true xz work; do
		case $w in
		true) cmd=(/bin/true) ;;
		xz) cmd=("${xz_cmd[@]}") ;;
		work) cmd=("$out/fixed_work" "$WORK_STEPS") ;;
		esac
		b=$(ms "${cmd[@]}")
		p=$(ms perf record -q -g -F 999 -o "$out/perf.data" -- "${cmd[@]}")
		settle
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
	for w in true xz work; do
		b=$(get $w bare)
		echo "| $w | $b | $(get $w perf) | $(get $w cfiprof) | $(get $w diff-cfiprof) ms ($(awk -v b="$b" -v d="$(get $w diff-cfiprof)" 'BEGIN {printf "%+.1f%%", 100 * d / b}')) | $(get $w diff-perf) ms | $(get $w cfiprof-start) ms |"
	done
	echo
	ft=$(get true diff-cfiprof)
	fw=$(get work diff-cfiprof)
	echo "Fixed cost (record -- /bin/true over bare): $ft ms; the rest of the fixed loop's"
	echo "difference (sampling, table builds and naming during and after its run): $(awk -v a="$fw" -v b="$ft" 'BEGIN {print a - b}') ms."
	echo
	echo "Each round's difference, xz: $(awk '$1 == "xz" && $2 == "diff-cfiprof" {printf "%s ", $3}' "$out/raw.txt")"
	echo "Each round's difference, loop: $(awk '$1 == "work" && $2 == "diff-cfiprof" {printf "%s ", $3}' "$out/raw.txt")"
} > "$report"
cat "$report"
