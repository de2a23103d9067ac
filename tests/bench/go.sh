#!/bin/bash
# make bench: Go programs as they ship (issue 29).  RUNS rounds of
#  - `record -F 999` of Debian's gofmt over Go's own command sources and of the
#    stripped test program (tests/progs/go/gofib.go built -s -w): the share of
#    walkable samples complete (the summary's stop reasons) and of their user
#    frames named (not BINARY+0x...), medians;
#  - `tables --json` of prometheus (the largest Go binary here): rows, bytes
#    per row all in, build time;
#  - bench_gopclntab: reading .gopclntab and a lookup.
set -eu
cd "$(dirname "$0")/../.."
CFIPROF=$(realpath "${CFIPROF:-build/cfiprof}")
OUTDIR=${OUT:-build}
RUNS=${RUNS:-3}
out=$(realpath -m build/bench/go)
mkdir -p "$out"
GOFMT=/usr/lib/go-1.19/bin/gofmt
PROM=/usr/bin/prometheus

median() { sort -n | awk '{a[NR]=$1} END {if (!NR) print "-"; else print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# complete% of walkable samples, from the summary's "stop reasons:" line
complete_pct() {
	sed -n 's/^cfiprof: stop reasons: //p' "$1" | awk '{
		for (i = 1; i + 1 <= NF; i += 3) { n = $(i + 1); all += n; if ($i == "complete") c = n }
	} END { printf "%.2f", all ? 100 * c / all : 0 }'
}

# named% of the user frames of comm's samples in a folded file (frames not BIN+0x...)
named_pct() {
	awk -v comm="$2" -v bin="$3" '{
		n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";"); if (f[1] != comm) next
		for (i = 2; i <= k; i++) { if (f[i] ~ /_\[k\]$/) continue; all += n; if (index(f[i], bin "+0x") != 1) ok += n }
	} END { printf "%.2f", all ? 100 * ok / all : 0 }' "$1"
}

declare -A comp named
for r in $(seq "$RUNS"); do
	for w in gofmt gofib; do
		if [ $w = gofmt ]; then
			cmd=("$GOFMT" -l /usr/lib/go-1.19/src/cmd)
			comm=gofmt bin=gofmt
		else
			cmd=("$OUTDIR/progs/gofib_stripped" 2)
			comm=gofib_stripped bin=gofib_stripped
		fi
		"$CFIPROF" record -v -F 999 -o "$out/$w.folded" -- "${cmd[@]}" > /dev/null 2> "$out/$w.log" || true
		comp[$w]+="$(complete_pct "$out/$w.log") "
		named[$w]+="$(named_pct "$out/$w.folded" "$comm" "$bin") "
	done
done
for r in $(seq "$RUNS"); do
	"$CFIPROF" tables --json "$PROM" > "$out/prom.$r.json"
done
rows=$(sed -n 's/.*"compact_rows":\([0-9]*\).*/\1/p' "$out/prom.1.json")
bytes=$(sed -n 's/.*"bytes":\([0-9]*\).*/\1/p' "$out/prom.1.json")
build=$(cat "$out"/prom.*.json | sed -n 's/.*"build_ms":\([0-9.]*\).*/\1/p' | median)

report=$out/go.md
{
	echo "## Go programs (issue 29): $RUNS runs, medians"
	echo
	echo "| program | walkable samples complete | user frames named |"
	echo "|---|---|---|"
	echo "| gofmt -l src/cmd (Debian's) | $(echo ${comp[gofmt]} | tr ' ' '\n' | median)% | $(echo ${named[gofmt]} | tr ' ' '\n' | median)% |"
	echo "| gofib built -s -w | $(echo ${comp[gofib]} | tr ' ' '\n' | median)% | $(echo ${named[gofib]} | tr ' ' '\n' | median)% |"
	echo
	echo "prometheus tables: $rows rows, $bytes bytes all in ($(awk -v b="$bytes" -v r="$rows" 'BEGIN {printf "%.2f", r ? b / r : 0}') a row), built in $build ms"
	echo
	"$OUTDIR/bench/bench_gopclntab"
} | tee "$report"
