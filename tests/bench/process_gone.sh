#!/bin/bash
# Issue 13, "process gone": deferred samples of processes that exit before the
# load thread reaches them, before and after the consumer's snapshots.
# tests/bench/process_gone.sh OLD_CFIPROF NEW_CFIPROF [ROUNDS]: ROUNDS
# interleaved pairs of `record -a -F 199` while `make -j2 all` builds a clean
# copy of the tree (as tests/bench/build_under_a.sh does, deferral on), each
# run under the e2e lock; one line per run, then the medians.
set -eu
cd "$(dirname "$0")/../.."
old=$(realpath "$1")
new=$(realpath "$2")
rounds=${3:-3}
out=$(realpath -m build/bench/process_gone)
mkdir -p "$out"
src=$out/src
rm -rf "$src"
mkdir -p "$src"
git ls-files | tar -cf - -T - | tar -xf - -C "$src"
runs=$out/runs.txt
: > "$runs"
for r in $(seq "$rounds"); do
	for way in old new; do
		bin=$old
		[ $way = new ] && bin=$new
		(cd "$src" && make clean > /dev/null 2>&1 || true)
		flock /tmp/cfiprof-e2e.lock bash -c '
			"$1" record -v -a -F 199 -o "$2.folded" 2> "$2.err" &
			rec=$!
			sleep 2
			(cd "$3" && make -j2 all > /dev/null 2>&1)
			kill -INT $rec
			wait $rec || true' _ "$bin" "$out/$way.$r" "$src"
		awk -v way="$way" -v r="$r" -v err="$out/$way.$r.err" '
			{ n = $NF; total += n; if ($0 ~ /\[incomplete: tables-pending\]/) pend += n
			  else if ($0 ~ /\[incomplete: (exiting|in-execve)\]/) none += n
			  else if ($0 !~ /\[incomplete:/) comp += n }
			END {
				gone = 0; late = 0; atexit = 0
				while ((getline l < err) > 0) {
					if (l ~ /kept tables-pending: /) { split(l, a, "kept tables-pending: "); split(a[2], b, " "); gone = b[1] }
					if (l ~ /too late/) { split(l, a, " refused, "); split(a[2], b, " "); late = b[1] }
					if (l ~ /from the kernel at exit/) { split(l, a, "too late \\(gone before its first deferred sample was read\\), "); split(a[2], b, " "); atexit = b[1] }
				}
				printf "%s %d %d %d %.3f %d %.2f %d %d\n", way, r, total, pend, 100 * pend / total, gone, 100 * comp / (total - none), late, atexit
			}' "$out/$way.$r.folded" | tee -a "$runs"
	done
done
echo "# way round samples tables-pending pending% process-gone complete%-of-walkable too-late exit-lists"
cat "$runs"
for way in old new; do
	n=$(awk -v w="$way" '$1 == w' "$runs" | wc -l)
	m=$(( (n + 1) / 2 ))
	p=$(awk -v w="$way" '$1 == w { print $5 }' "$runs" | sort -g | sed -n "${m}p")
	g=$(awk -v w="$way" '$1 == w { print $6 }' "$runs" | sort -g | sed -n "${m}p")
	c=$(awk -v w="$way" '$1 == w { print $7 }' "$runs" | sort -g | sed -n "${m}p")
	echo "$way: median over $n runs: tables-pending $p%, process gone $g, complete $c% of the walkable"
done
