#!/bin/bash
# Whole-system profile: symbolization time per output format and output sizes,
# from one saved recording (cfiprof report re-symbolizes from scratch each time).
set -eu
cd "$(dirname "$0")/../.."
CFIPROF=${CFIPROF:-build/cfiprof}
out=build/bench
mkdir -p "$out"
report=$out/outputs.md
"$CFIPROF" record -v -a -F 99 -d 5 --save "$out/system.rec" -o /dev/null 2> "$out/system.log"
{
	echo "# Outputs of a whole-system profile, $(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs"
	echo
	echo "\`cfiprof record -a -F 99 -d 5\`: $(grep -c '^stack' "$out/system.rec") distinct stacks, $(grep -c '^map' "$out/system.rec") mappings; recording $(stat -c %s "$out/system.rec") bytes."
	echo
	echo "| format | report time (ms, median of 3) | bytes |"
	echo "|---|---|---|"
} > "$report"
for f in folded pprof svg text speedscope; do
	ts=()
	for i in 1 2 3; do
		t=$(date +%s%N)
		"$CFIPROF" report "$out/system.rec" -f "$f" -o "$out/system.$f" 2>/dev/null
		ts+=($(( ($(date +%s%N) - t) / 1000000 )))
	done
	med=$(printf '%s\n' "${ts[@]}" | sort -n | sed -n 2p)
	echo "| $f | $med (${ts[*]}) | $(stat -c %s "$out/system.$f") |" >> "$report"
done
cat "$report"
