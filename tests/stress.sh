#!/bin/bash
# make test-stress: the end-to-end suites with every CPU oversubscribed, RUNS
# times, and each test's pass rate.  A check that fails here and not on an idle
# machine depends on how fast the machine is: a defect of the check.
#
#   tests/stress.sh [RUNS] [SUITE...]   default 10 runs of every tests/e2e suite
#
# HOGS busy loops (default: two per CPU) run at the suites' own priority for
# the whole time.  Prints "STRESS name: P/N" per test and exits non-zero when
# any test passed fewer than N times.
set -u
OUT=${OUT:-build}
runs=${1:-10}
shift || true
suites=("$@")
if [ ${#suites[@]} -eq 0 ]; then
	for src in tests/e2e/test_*.c; do
		suites+=("$(basename "${src%.c}")")
	done
fi
hogs=${HOGS:-$((2 * $(nproc)))}
log_dir=$(mktemp -d /tmp/cfiprof-stress.XXXXXX)

hog_pids=()
stop_hogs() {
	[ ${#hog_pids[@]} -gt 0 ] && kill "${hog_pids[@]}" 2>/dev/null
	wait 2>/dev/null
}
trap stop_hogs EXIT
for ((i = 0; i < hogs; i++)); do
	(while :; do :; done) &
	hog_pids+=($!)
done
echo "stress: $runs runs of ${#suites[@]} suites beside $hogs CPU hogs; logs in $log_dir"

declare -A pass total
for ((run = 1; run <= runs; run++)); do
	for suite in "${suites[@]}"; do
		log=$log_dir/$suite.$run.log
		CFIPROF=$OUT/cfiprof OUT=$OUT tests/run.sh "$suite" >"$log" 2>&1
		# one "[ ok ] name: ..." or "[FAIL] name: ..." line per test of the suite
		while read -r state name; do
			key=$suite:${name%:}
			total[$key]=$((${total[$key]:-0} + 1))
			[ "$state" = ok ] && pass[$key]=$((${pass[$key]:-0} + 1))
		done < <(sed -n 's/^\[\(FAIL\| ok \)\] \([^ ]*\) .*/\1 \2/p' "$log")
		if ! grep -q '^\[' "$log"; then # crashed or not built: the suite as one failure
			key=$suite:main
			total[$key]=$((${total[$key]:-0} + 1))
		fi
		echo "stress: run $run/$runs $suite: $(tail -1 "$log")"
	done
done

status=0
for key in $(printf '%s\n' "${!total[@]}" | sort); do
	p=${pass[$key]:-0}
	echo "STRESS $key: $p/${total[$key]}"
	[ "$p" -lt "$runs" ] && status=1
done
[ $status -eq 0 ] && echo "stress: every test passed $runs of $runs" ||
	echo "stress: some tests passed fewer than $runs of $runs (logs in $log_dir)"
exit $status
