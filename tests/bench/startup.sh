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
FPWALK=${FPWALK:-build/bench/fpwalk}
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
: > "$out/cpu-runs.txt"
for i in $(seq "$RUNS"); do
	for w in true xz work; do
		case $w in
		true) cmd=(/bin/true) ;;
		xz) cmd=("${xz_cmd[@]}") ;;
		work) cmd=("$out/fixed_work" "$WORK_STEPS") ;;
		esac
		b=$(ms "${cmd[@]}")
		# the kernel's own frame-pointer sampler over the same command, start and stop
		# included: the floor of what sampling it at 999 Hz costs here (issue 34's ratio)
		f=$(ms "$FPWALK" -F 999 -- "${cmd[@]}")
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
		echo "$w fpwalk $f" >> "$out/raw.txt"
		echo "$w over-fpwalk $((c - f))" >> "$out/raw.txt"
	done
	# record -- true's CPU time (user + sys, ms) with every runtime read and with none
	# (--runtimes none: their BPF walks are never verified), interleaved
	for rt in all none; do
		settle
		/usr/bin/time -f "%U %S" -o "$out/cpu.txt" "$CFIPROF" record -q --no-save --runtimes "$rt" \
			-o /dev/null -- /bin/true > /dev/null 2>&1 || true
		echo "cpu-$rt $(awk '{printf "%.0f", ($1 + $2) * 1000}' "$out/cpu.txt")" >> "$out/cpu-runs.txt"
	done
done
# The fixed loop's overhead by parts, each with little noise of its own (the loop's wall time
# here spreads more than the 2% to be shown): the start (the command held until BPF is
# ready: record -v), the stop (the command's exit to record's), and the sampling BPF
# program's run time (kernel.bpf_stats_enabled, its own pass: the stats cost a little).
# Not in it: the timer interrupt around each sample, which any sampling profiler pays.
stats_old=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
: > "$out/parts.txt"
# The loop's own run time (inside sh) bare, under the cheapest 999 Hz sampler there is (the
# kernel's frame-pointer walk, tests/bench/fpwalk: what sampling itself costs here) and under
# cfiprof, in the same round.
inner() {
	settle
	"$@" sh -c 'a=$(date +%s%N); "$0" "$1" > /dev/null; b=$(date +%s%N); echo $(((b - a) / 1000000)) > "$2"' \
		"$out/fixed_work" "$WORK_STEPS" "$out/inner" > /dev/null 2>&1 || true
	cat "$out/inner"
}
# The same parts of fpwalk's run: the fixed cost by parts, each round's (start + stop + the
# loop's run) under cfiprof less under fpwalk, leaves out the wall time's spread outside
# the loop, which the paired wall figure above cannot (its rounds spread by +-200 ms here).
for i in $(seq "$RUNS"); do
	b=$(inner)
	settle
	t=$(date +%s%N)
	"$FPWALK" -F 999 -- sh -c 'date +%s%N > "$0.t0"; "$1" "$2" > /dev/null; date +%s%N > "$0.t1"' \
		"$out/parts" "$out/fixed_work" "$WORK_STEPS" > /dev/null 2>&1 || true
	e=$(date +%s%N)
	t0=$(cat "$out/parts.t0")
	t1=$(cat "$out/parts.t1")
	fs=$(( (t0 - t) / 1000000 )) fe=$(( (e - t1) / 1000000 )) fr=$(( (t1 - t0) / 1000000 ))
	echo "inner-bare $b" >> "$out/parts.txt"
	echo "inner-fpwalk $((fr - b))" >> "$out/parts.txt"
	echo "fpwalk-start $fs" >> "$out/parts.txt"
	echo "fpwalk-stop $fe" >> "$out/parts.txt"
	settle
	t=$(date +%s%N)
	"$CFIPROF" record -v -F 999 -o "$out/out.folded" -- sh -c \
		'date +%s%N > "$0.t0"; "$1" "$2" > /dev/null; date +%s%N > "$0.t1"' \
		"$out/parts" "$out/fixed_work" "$WORK_STEPS" > /dev/null 2> "$out/err.txt" || true
	e=$(date +%s%N)
	t0=$(cat "$out/parts.t0")
	t1=$(cat "$out/parts.t1")
	ns=$(grep -o 'BPF run time [0-9]* ns per sample' "$out/err.txt" | awk '{print $4}')
	n=$(grep -o '[0-9]* samples (' "$out/err.txt" | head -1 | awk '{print $1}')
	echo "start $(( (t0 - t) / 1000000 ))" >> "$out/parts.txt"
	echo "stop $(( (e - t1) / 1000000 ))" >> "$out/parts.txt"
	echo "stopv $(grep -o 'stop: [0-9.]* ms' "$out/err.txt" | awk '{print $2}')" >> "$out/parts.txt"
	echo "run $(( (t1 - t0) / 1000000 ))" >> "$out/parts.txt"
	echo "inner-cfiprof $(( (t1 - t0) / 1000000 - b ))" >> "$out/parts.txt"
	echo "bpf $(awk -v n="${n:-0}" -v ns="${ns:-0}" 'BEGIN {printf "%.0f", n * ns / 1e6}')" >> "$out/parts.txt"
	echo "nsps ${ns:-0}" >> "$out/parts.txt"
	echo "over-fpwalk-parts $(( (t0 - t) / 1000000 + (e - t1) / 1000000 + (t1 - t0) / 1000000 - fs - fe - fr ))" >> "$out/parts.txt"
done
sysctl -qw kernel.bpf_stats_enabled="$stats_old"
part() { awk -v k="$1" '$1 == k {print $2}' "$out/parts.txt" | median; }
get() { awk -v w="$1" -v k="$2" '$1 == w && $2 == k {print $3}' "$out/raw.txt" | median; }
report=$out/startup.md
{
	echo "# The profiler's own start and stop, $(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs"
	echo
	echo "Wall ms, medians of $RUNS interleaved runs (tests/bench/startup.sh); -F 999;"
	echo "\"paired\": the median of each round's difference to its bare run."
	echo
	echo "| command | bare | fpwalk -F 999 | perf record -g | cfiprof record | cfiprof over bare (paired) | perf over bare (paired) | cfiprof over fpwalk (paired) | cfiprof's start (-v) |"
	echo "|---|---|---|---|---|---|---|---|---|"
	for w in true xz work; do
		b=$(get $w bare)
		echo "| $w | $b | $(get $w fpwalk) | $(get $w perf) | $(get $w cfiprof) | $(get $w diff-cfiprof) ms ($(awk -v b="$b" -v d="$(get $w diff-cfiprof)" 'BEGIN {printf "%+.1f%%", 100 * d / b}')) | $(get $w diff-perf) ms | $(get $w over-fpwalk) ms | $(get $w cfiprof-start) ms |"
	done
	echo
	fo=$(get work over-fpwalk)
	echo "Fixed cost as a ratio (issue 34): \`record -- LOOP\` over \`fpwalk -F 999 -- LOOP\` (the"
	echo "kernel's frame-pointer sampler at the same rate, its own start and stop included), paired"
	echo "per round: $fo ms; target <= 50 ms: $(awk -v d="$fo" 'BEGIN {print (d <= 50) ? "met" : "not met"}')."
	echo "Each round's: $(awk '$1 == "work" && $2 == "over-fpwalk" {printf "%s ", $3}' "$out/raw.txt")"
	echo
	echo "The same by parts (the loop's start, stop and run, below; bpf_stats on for cfiprof):"
	echo "start $(part start) ms + stop $(part stop) ms under cfiprof, $(part fpwalk-start) + $(part fpwalk-stop) ms under"
	echo "fpwalk; the loop's own run $(part inner-cfiprof) ms over bare under cfiprof, $(part inner-fpwalk) ms under fpwalk."
	echo "Fixed cost by parts, paired per round: $(part over-fpwalk-parts) ms; target <= 50 ms: $(awk -v d="$(part over-fpwalk-parts)" 'BEGIN {print (d <= 50) ? "met" : "not met"}')."
	echo "Each round's: $(awk '$1 == "over-fpwalk-parts" {printf "%s ", $2}' "$out/parts.txt")"
	echo
	ft=$(get true diff-cfiprof)
	fw=$(get work diff-cfiprof)
	cpu() { awk -v k="$1" '$1 == k {print $2}' "$out/cpu-runs.txt" | median; }
	echo "record -- /bin/true's CPU time (user + sys): $(cpu cpu-all) ms reading every runtime,"
	echo "$(cpu cpu-none) ms with --runtimes none (their walks never verified)."
	echo
	echo "Fixed cost (record -- /bin/true over bare): $ft ms; the rest of the fixed loop's"
	echo "difference (sampling, table builds and naming during and after its run): $(awk -v a="$fw" -v b="$ft" 'BEGIN {print a - b}') ms."
	echo
	echo "The fixed loop's overhead by parts (medians of $RUNS runs, bpf_stats on): start"
	echo "$(part start) ms (sh included), stop $(part stop) ms (record -v: $(part stopv) ms), the sampling program $(part bpf) ms"
	echo "($(part nsps) ns per sample) over a $(part run) ms run: $(awk -v a="$(part start)" \
		-v b="$(part stop)" -v c="$(part bpf)" -v r="$(part run)" \
		'BEGIN {printf "%d ms, %+.1f%%", a + b + c, 100 * (a + b + c) / r}') of the command's time."
	echo
	echo "The loop's own run time: $(part inner-bare) ms bare; over it (paired), $(part inner-fpwalk) ms"
	echo "under the kernel's frame-pointer walk at 999 Hz (fpwalk: sampling's own cost here),"
	echo "$(part inner-cfiprof) ms under cfiprof (bpf_stats on)."
	echo
	echo "Each round's difference, xz: $(awk '$1 == "xz" && $2 == "diff-cfiprof" {printf "%s ", $3}' "$out/raw.txt")"
	echo "Each round's difference, loop: $(awk '$1 == "work" && $2 == "diff-cfiprof" {printf "%s ", $3}' "$out/raw.txt")"
} > "$report"
cat "$report"
