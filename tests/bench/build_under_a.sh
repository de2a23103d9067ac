#!/bin/bash
# make bench: a parallel build of this project (make -j2, hundreds of short
# compiler processes) under `record -a -F 199`, deferred unwinding off and on:
# the share of samples complete and left tables-pending, and the stack bytes
# the deferred samples copied (issue 13).
set -eu
cd "$(dirname "$0")/../.."
CFIPROF=$(realpath "${CFIPROF:-build/cfiprof}")
out=$(realpath -m build/bench/build_under_a)
mkdir -p "$out"
src=$out/src
rm -rf "$src"
mkdir -p "$src"
git ls-files | tar -cf - -T - | tar -xf - -C "$src"

report=$out/build_under_a.md
{
	echo "# make -j2 of this project under record -a, $(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs"
	echo
	echo "\`cfiprof record -a -F 199\` while \`make -j2 all\` builds a clean copy of the tree (tests/bench/build_under_a.sh)."
	echo
	echo "Samples no profiler can walk (\`exiting\`: after the kernel released the memory; \`in-execve\`) are left out of the second share."
	echo
	echo "| deferred unwinding | samples | complete % | exiting + in-execve | complete % of the rest | tables-pending % | deferred samples | MiB of stack copied | copied per second |"
	echo "|---|---|---|---|---|---|---|---|---|"
} > "$report"
for way in off on; do
	opts=""
	[ $way = off ] && opts="--defer-stack 0"
	(cd "$src" && make clean > /dev/null 2>&1 || true)
	# shellcheck disable=SC2086
	"$CFIPROF" record -v -a -F 199 $opts -o "$out/$way.folded" 2> "$out/$way.err" &
	rec=$!
	sleep 2
	t0=$(date +%s%N)
	(cd "$src" && make -j2 all > /dev/null 2>&1)
	secs=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN {printf "%.1f", (b - a) / 1e9}')
	kill -INT $rec
	wait $rec || true
	awk -v way="$way" -v err="$out/$way.err" -v secs="$secs" '
		{ n = $NF; total += n; if ($0 ~ /\[incomplete: tables-pending\]/) pend += n;
		  else if ($0 ~ /\[incomplete: (exiting|in-execve)\]/) none += n;
		  else if ($0 !~ /\[incomplete:/) comp += n }
		END {
			deferred = 0; kib = 0;
			while ((getline l < err) > 0)
				if (l ~ /deferred: [0-9]+ samples waited/) { split(l, a, "deferred: "); split(a[2], b, " "); deferred = b[1];
					split(l, c, "stack copy \\("); split(c[2], d, " "); kib = d[1] * deferred }
			printf "| %s | %d | %.2f | %d | %.2f | %.3f | %d | %.1f | %.2f MiB/s over the %s s build |\n", way, total, 100 * comp / total, none, 100 * comp / (total - none), 100 * pend / total, deferred, kib / 1024, kib / 1024 / secs, secs
		}' "$out/$way.folded" >> "$report"
done
cat "$report"
