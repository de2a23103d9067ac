#!/bin/bash
# Runs every test given on the command line, sums their "N passed, M failed"
# lines, prints the total last and fails if any test failed or crashed.
set -u
total_pass=0
total_fail=0
for t in "$@"; do
	name=$(basename "$t")
	echo "=== $name"
	out=$(mktemp)
	start=$(date +%s%N)
	"$t" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	ms=$((($(date +%s%N) - start) / 1000000))
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" | tail -1)
	rm -f "$out"
	if [ -z "$line" ]; then
		echo "--- $name: exited $rc without a result line: counted as 1 failure"
		total_fail=$((total_fail + 1))
		continue
	fi
	p=${line%% passed*}
	f=${line#*, }
	f=${f%% failed}
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "--- $name: exit code $rc: counted as 1 failure"
		f=1
	fi
	printf -- '--- %s: %s passed, %s failed (%d ms)\n' "$name" "$p" "$f" "$ms"
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
done
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
