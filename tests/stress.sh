#!/bin/bash
# make test-stress: the end-to-end suites with every CPU oversubscribed, RUNS
# times, and each test's pass rate.  A check that fails here and not on an idle
# machine depends on how fast the machine is: a defect of the check.
#
#   tests/stress.sh [RUNS] [SUITE...]   default 10 runs of every tests/e2e suite
#
# HOGS busy loops (default: two per CPU) run at the suites' own priority for
# the whole time.  Each run is one tests/run.sh of every suite, grouped as make
# test groups them (suites that sample apart in a pool, the lane beside it, the
# suites that need the host alone last, alone but for the hogs): the hogs come
# on top of what make test runs at once.  Prints "STRESS name: P/N" per test
# and exits non-zero when any test passed fewer than N times.
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

# splits run.sh's output of one run into SUITE.RUN.log files (each suite's output
# follows its "=== SUITE" line) and counts each "[ ok ] name" / "[FAIL] name" line;
# a suite with no test line (crashed, not built) counts as its "main" failing
declare -A pass total
tally_run() {
	local run=$1 line suite= state name key
	while IFS= read -r line; do
		case $line in
		"--- "*": cannot make it"*)
			key=${line#--- }
			key=${key%%:*}:main
			total[$key]=$((${total[$key]:-0} + 1))
			echo "stress: run $run/$runs ${line#--- }"
			continue
			;;
		"=== "*)
			suite=${line#=== }
			suite=${suite%% *}
			: >"$log_dir/$suite.$run.log"
			continue
			;;
		esac
		[ -n "$suite" ] || continue
		printf '%s\n' "$line" >>"$log_dir/$suite.$run.log"
		case $line in
		"[ ok ] "* | "[FAIL] "*)
			state=${line:1:4}
			name=${line#\[????\] }
			name=${name%%:*}
			key=$suite:$name
			total[$key]=$((${total[$key]:-0} + 1))
			[ "$state" = " ok " ] && pass[$key]=$((${pass[$key]:-0} + 1))
			;;
		"--- $suite: "*)
			if ! grep -q '^\[' "$log_dir/$suite.$run.log"; then
				key=$suite:main
				total[$key]=$((${total[$key]:-0} + 1))
			fi
			echo "stress: run $run/$runs ${line#--- }"
			;;
		esac
	done <"$log_dir/run.$run.log"
}

for ((run = 1; run <= runs; run++)); do
	CFIPROF=$OUT/cfiprof OUT=$OUT tests/run.sh "${suites[@]}" >"$log_dir/run.$run.log" 2>&1
	tally_run "$run"
	echo "stress: run $run/$runs: $(tail -1 "$log_dir/run.$run.log")"
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
