#!/bin/bash
# Runs test binaries and sums their "N passed, M failed" lines; prints the total
# last and fails if any test failed or crashed.
#
#   tests/run.sh build/tests/test_x ...   binaries, as make test runs them
#   tests/run.sh test_x                   by name: made first, then run ($OUT/tests/test_x)
#   tests/run.sh test_x:foo test_x:'b*'   only the named tests (globs) inside test_x
#   tests/run.sh 'test_x[asan]:foo'       the ASan + UBSan build ($OUT/asan/test_x)
#   tests/run.sh 'test_x[tsan]'           the ThreadSanitizer build ($OUT/tsan/test_x)
#
# A binary under asan/ or tsan/ is the same source as its twin: it is reported
# as NAME[asan] / NAME[tsan] and adds its failures to the total but not its passes.
set -u
OUT=${OUT:-build}
total_pass=0
total_fail=0
failed_tests=()
for arg in "$@"; do
	bin=$arg
	only=
	if [ ! -x "$arg" ]; then
		# NAME[:TEST], NAME[asan][:TEST], NAME[tsan][:TEST]
		name=${arg%%:*}
		[ "$name" != "$arg" ] && only=${arg#*:}
		if [ "${name%\[asan\]}" != "$name" ]; then
			bin=$OUT/asan/${name%\[asan\]}
		elif [ "${name%\[tsan\]}" != "$name" ]; then
			bin=$OUT/tsan/${name%\[tsan\]}
		else
			bin=$OUT/tests/$name
		fi
		make --no-print-directory -s OUT="$OUT" "$bin" || {
			echo "--- $arg: cannot make $bin: counted as 1 failure"
			total_fail=$((total_fail + 1))
			failed_tests+=("$arg")
			continue
		}
	fi
	name=$(basename "$bin")
	asan=0
	case "$bin" in
	*/asan/*) asan=1 name="$name[asan]" ;;
	*/tsan/*) asan=1 name="$name[tsan]" ;;
	esac
	echo "=== $name${only:+ ($only)}"
	out=$(mktemp)
	start=$(date +%s%N)
	CFIPROF_TESTS=$only "$bin" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	ms=$((($(date +%s%N) - start) / 1000000))
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" | tail -1)
	# the named tests that failed, to run again one by one ("main": the binary's own checks)
	nr_named=${#failed_tests[@]}
	while read -r t; do
		[ "$t" = main ] && t= || t=:$t
		failed_tests+=("$name$t")
	done < <(sed -n 's/^\[FAIL\] \([^:]*\): .*/\1/p' "$out")
	rm -f "$out"
	if [ -z "$line" ]; then
		echo "--- $name: exited $rc without a result line: counted as 1 failure"
		total_fail=$((total_fail + 1))
		failed_tests+=("$name")
		continue
	fi
	p=${line%% passed*}
	f=${line#*, }
	f=${f%% failed}
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "--- $name: exit code $rc: counted as 1 failure"
		f=1
	fi
	[ "$f" -gt 0 ] && [ ${#failed_tests[@]} -eq "$nr_named" ] && failed_tests+=("$name")
	if [ "$asan" = 1 ]; then
		printf -- '--- %s: %s passed (not added: counted in its twin), %s failed (%d ms)\n' \
			"$name" "$p" "$f" "$ms"
		p=0
	else
		printf -- '--- %s: %s passed, %s failed (%d ms)\n' "$name" "$p" "$f" "$ms"
	fi
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
done
if [ ${#failed_tests[@]} -gt 0 ]; then
	echo "failed (run one again with tests/run.sh NAME:TEST):"
	printf '  %s\n' "${failed_tests[@]}"
fi
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
