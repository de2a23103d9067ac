#!/bin/bash
# make bench: what source lines and inline frames cost the agent (issue 16).
# The agent profiles the whole host at 19 Hz with 5 s intervals while a small
# mix of programs runs (python3, xz, sqlite3, progs/inlines: libc's DWARF from
# libc6-dbg, the test program's own), with source lines on (the default) and
# off (--no-source-lines), interleaved, RUNS rounds of SECS seconds each.
# Per interval, from the agent's log line: build_ms (symbolizing + encoding),
# lines_ms (DWARF lookups alone), lines_lookups / lines_hits (the per-object
# cache); at its stop, rss_bytes.  The first interval (cold: every object's
# DWARF opened) and the others (steady) are given apart; medians over runs.
set -eu
cd "$(dirname "$0")/../.."
CFIPROF=$(realpath "${CFIPROF:-build/cfiprof}")
INLINES=$(realpath "${OUT:-build}/progs/inlines")
RUNS=${RUNS:-3}
SECS=${SECS:-30}
out=$(realpath -m build/bench/source_lines)
mkdir -p "$out"
head -c 4000000 /dev/urandom | base64 > "$out/data.txt"

median() { sort -n | awk '{a[NR]=$1} END {if (!NR) print "-"; else print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }

workload() {
	while :; do
		python3 -c 'import json, re; d = [{"k": i, "v": str(i) * 5} for i in range(200000)]; json.loads(json.dumps(d)); [re.match(r"(\d+)\1", x["v"]) for x in d]'
		xz -6 -c "$out/data.txt" > /dev/null
		sqlite3 :memory: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000) SELECT sum(x * x % 7), count(DISTINCT x % 1000) FROM c;' > /dev/null
		"$INLINES" 100000000 2 > /dev/null
	done
}

declare -A cold steady lms hit rss
for r in $(seq "$RUNS"); do
	for way in on off; do
		opts=()
		[ $way = off ] && opts=(--no-source-lines)
		rm -rf "$out/intervals"
		log="$out/agent-$way-$r.log"
		workload &
		loop=$!
		"$CFIPROF" agent -F 19 --interval 5 --duration "$SECS" --table-cache off \
			--output-dir "$out/intervals" --metrics-addr off "${opts[@]}" 2> "$log" || true
		kill $loop 2> /dev/null || true
		wait $loop 2> /dev/null || true
		grep 'msg=interval' "$log" | head -1 | field build_ms > "$out/cold"
		grep 'msg=interval' "$log" | tail -n +2 | field build_ms | median > "$out/steady"
		cold[$way]+="$(cat "$out/cold") "
		steady[$way]+="$(cat "$out/steady") "
		if [ $way = on ]; then
			lms[$way]+="$(grep 'msg=interval' "$log" | tail -n +2 | field lines_ms | median) "
			l=$(grep 'msg=interval' "$log" | tail -n +2 | field lines_lookups | awk '{s += $1} END {print s + 0}')
			h=$(grep 'msg=interval' "$log" | tail -n +2 | field lines_hits | awk '{s += $1} END {print s + 0}')
			hit[$way]+="$(awk -v l="${l:-0}" -v h="${h:-0}" 'BEGIN {printf "%.1f", l ? 100 * h / l : 0}') "
		fi
		rss[$way]+="$(grep 'agent stopped' "$log" | field rss_bytes | awk '{printf "%.1f", $1 / 1048576}') "
	done
done
report=$out/source_lines.md
{
	echo "## Source lines and inline frames: the agent's cost per 5 s interval"
	echo
	echo "\`tests/bench/source_lines.sh\` (RUNS=$RUNS, SECS=$SECS): \`cfiprof agent -F 19 --interval 5\`,"
	echo "whole host, python3 / xz / sqlite3 / progs/inlines in a loop; lines on vs \`--no-source-lines\`,"
	echo "interleaved; medians over runs (each run's steady value: the median of its intervals after the first)."
	echo
	echo "| | lines on | lines off |"
	echo "| --- | --- | --- |"
	echo "| first interval: build_ms (DWARF opened) | $(echo ${cold[on]} | tr ' ' '\n' | median) | $(echo ${cold[off]} | tr ' ' '\n' | median) |"
	echo "| later intervals: build_ms | $(echo ${steady[on]} | tr ' ' '\n' | median) | $(echo ${steady[off]} | tr ' ' '\n' | median) |"
	echo "| later intervals: lines_ms | $(echo ${lms[on]} | tr ' ' '\n' | median) | - |"
	echo "| later intervals: line cache hit rate % | $(echo ${hit[on]} | tr ' ' '\n' | median) | - |"
	echo "| RSS at stop, MiB | $(echo ${rss[on]} | tr ' ' '\n' | median) | $(echo ${rss[off]} | tr ' ' '\n' | median) |"
	echo
	echo "Per run: cold on ${cold[on]}/ off ${cold[off]}; steady on ${steady[on]}/ off ${steady[off]}; RSS on ${rss[on]}/ off ${rss[off]}"
} | tee "$report"
