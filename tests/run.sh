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
# A binary under asan/ or tsan/ is the same source as its plain twin: it is
# reported as NAME[asan] / NAME[tsan] and adds its failures to the total; an
# ASan build adds its passes too when its plain twin is not in the run (make
# test runs the unit suites under ASan + UBSan only), a TSan build never.
#
# Suites run in three groups.  Two at once first: the pool, POOL_JOBS suites at
# a time (default: the number of CPUs): the unit suites (tests/unit, and every
# asan/ and tsan/ build, which are of unit suites), which take no samples and
# measure no time of each other's, and the end-to-end suites whose source says
# "run.sh: samples apart" (they sample only the commands they start, and judge
# nothing by how fast the machine is, so other suites beside them are no worse
# than make test-stress's CPU hogs); beside it, LANE_JOBS at a time (default 2),
# the lane: the end-to-end suites whose source says "run.sh: beside others"
# (global probes, an agent on the whole host whose checks look only at their own
# processes: the pool's and the other lane's are other processes of the host to
# them, as a production host has) and the unit suites that run make in this
# tree (never two of those at once); once the lane's own are all started, its
# free slots take the pool's next suites.  Then the other end-to-end suites,
# which judge what an agent on the whole host did (its memory, its CPU, every
# process named like theirs), each with the host to itself.  Each suite writes
# only into its own mkdtemp() directories and files named by its pid; each
# one's output is shown whole when it ends.
set -u
OUT=${OUT:-build}
POOL_JOBS=${POOL_JOBS:-$(nproc)}
LANE_JOBS=${LANE_JOBS:-2}
total_pass=0
total_fail=0
failed_tests=()
# the first failed checks of each suite that failed, repeated last: a log's tail
# (all CI shows of it) then says why, not only which
fail_lines=()
logs=$(mktemp -d /tmp/cfiprof-run.XXXXXX)
trap 'rm -rf "$logs"' EXIT

# arg -> "bin only" (made first when given by name), or nothing when it cannot be made
resolve() {
	local arg=$1 bin=$1 only= name
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
		make --no-print-directory -s OUT="$OUT" "$bin" >&2 || return 1
	fi
	printf '%s\n%s\n' "$bin" "$only"
}

is_unit() {
	case "$1" in
	*/asan/* | */tsan/*) return 0 ;;
	esac
	[ -f "tests/unit/$(basename "$1").c" ]
}

# an end-to-end suite that samples only its own commands: it runs in the pool
samples_apart() {
	grep -q 'run.sh: samples apart' "tests/e2e/$(basename "$1").c" 2>/dev/null
}

# an end-to-end suite whose checks hold with other processes on the host: the lane
beside_others() {
	grep -q 'run.sh: beside others' "tests/e2e/$(basename "$1").c" 2>/dev/null
}

# unit suites that run make in this tree (the man pages, make install): two makes of
# the same target at once would write the same files, so these run in the lane
SERIAL_UNITS=" test_docs test_packaging "
is_serial() {
	case "$1" in
	*/asan/* | */tsan/*) return 1 ;;
	esac
	[ "${SERIAL_UNITS#* $(basename "$1") }" != "$SERIAL_UNITS" ]
}

display_name() {
	case "$1" in
	*/asan/*) echo "$(basename "$1")[asan]" ;;
	*/tsan/*) echo "$(basename "$1")[tsan]" ;;
	*) basename "$1" ;;
	esac
}

# "XmY.ZZZs" (as bash's times prints it) in ms
times_ms() {
	local m=${1%%m*} s=${1#*m}
	s=${s%s}
	echo $((m * 60000 + 10#${s%.*} * 1000 + 10#${s#*.}))
}

# runs bin (only its tests "only") into log; its exit code, wall time and CPU time
# (user + system of the suite and what it waited for) into log.rc, log.cpu, log.ms
run_one() {
	local bin=$1 only=$2 log=$3 start rc user sys _
	start=$(date +%s%N)
	CFIPROF_TESTS=$only "$bin" >"$log" 2>&1
	rc=$?
	echo "$rc" >"$log.rc"
	# the second line of times: this subshell's children, the suite alone
	times >"$log.cpu"
	{ read -r _; read -r user sys; } <"$log.cpu"
	echo $(($(times_ms "$user") + $(times_ms "$sys"))) >"$log.cpu"
	echo $((($(date +%s%N) - start) / 1000000)) >"$log.ms"
}

# adds a finished run (its log) to the totals and prints its result line
tally() {
	local bin=$1 only=$2 log=$3 name by_twin=0 line rc ms p f nr_named t
	name=$(display_name "$bin")
	case "$bin" in
	*/asan/*) [ -n "${plain_run[$(basename "$bin")]:-}" ] && by_twin=1 ;;
	*/tsan/*) by_twin=1 ;;
	esac
	rc=$(cat "$log.rc")
	ms="$(cat "$log.ms") ms, $(cat "$log.cpu") ms CPU"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
	# the named tests that failed, to run again one by one ("main": the binary's own checks)
	nr_named=${#failed_tests[@]}
	while read -r t; do
		[ "$t" = main ] && t= || t=:$t
		failed_tests+=("$name$t")
	done < <(sed -n 's/^\[FAIL\] \([^:]*\): .*/\1/p' "$log")
	while read -r t; do
		fail_lines+=("$name: ${t:0:400}")
	done < <(grep -m3 '^FAIL ' "$log")
	if [ -z "$line" ]; then
		echo "--- $name: exited $rc without a result line: counted as 1 failure"
		total_fail=$((total_fail + 1))
		failed_tests+=("$name")
		return
	fi
	p=${line%% passed*}
	f=${line#*, }
	f=${f%% failed}
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "--- $name: exit code $rc: counted as 1 failure"
		f=1
	fi
	[ "$f" -gt 0 ] && [ ${#failed_tests[@]} -eq "$nr_named" ] && failed_tests+=("$name")
	if [ "$by_twin" = 1 ]; then
		printf -- '--- %s: %s passed (not added: counted in its twin), %s failed (%s)\n' \
			"$name" "$p" "$f" "$ms"
		p=0
	else
		printf -- '--- %s: %s passed, %s failed (%s)\n' "$name" "$p" "$f" "$ms"
	fi
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
}

declare -A plain_run=() # basename -> 1 for each plain binary in the run
for arg in "$@"; do
	case "$arg" in
	*/asan/* | */tsan/* | *\[asan\]* | *\[tsan\]*) ;;
	*) b=${arg%%:*}; plain_run[$(basename "$b")]=1 ;;
	esac
done
pool=()
units=()
lane=()
alone=()
n=0
for arg in "$@"; do
	if ! spec=$(resolve "$arg"); then
		echo "--- $arg: cannot make it: counted as 1 failure"
		total_fail=$((total_fail + 1))
		failed_tests+=("$arg")
		continue
	fi
	n=$((n + 1))
	bin=${spec%%$'\n'*}
	if samples_apart "$bin"; then
		pool+=("$n")
	elif is_unit "$bin" && ! is_serial "$bin"; then
		units+=("$n")
	elif is_unit "$bin" || beside_others "$bin"; then
		lane+=("$n")
	else
		alone+=("$n")
	fi
	printf '%s\n' "$spec" >"$logs/$n.spec"
done
# the end-to-end suites of the pool start first (they take longest): it ends sooner
pool+=(${units[@]+"${units[@]}"})

declare -A started=() # index -> pool, lane or alone, while it runs
declare -A lane_done=() # index -> 1 once the lane started it
next_pool=0
next_lane=0
next_alone=0
pool_running=0
lane_running=0
serial_running=
start_suite() {
	local bin only
	{ read -r bin; read -r only; } <"$logs/$1.spec"
	run_one "$bin" "$only" "$logs/$1.log" &
	started[$1]=$2
}
# the lane's next suite that may start now: its suites in order, but a unit suite that runs
# make never beside another (they would write the same files); "" when none may
next_lane_suite() {
	local i idx bin
	for ((i = next_lane; i < ${#lane[@]}; i++)); do
		idx=${lane[$i]}
		[ -n "${lane_done[$idx]:-}" ] && continue
		read -r bin <"$logs/$idx.spec"
		if is_serial "$bin"; then
			[ -n "$serial_running" ] && continue
		fi
		echo "$idx"
		return
	done
}
# the pool and the lane until both are done, then the suites alone, one by one
start_more() {
	local idx
	while [ "$lane_running" -lt "$LANE_JOBS" ]; do
		idx=$(next_lane_suite)
		[ -n "$idx" ] || break
		read -r bin <"$logs/$idx.spec"
		is_serial "$bin" && serial_running=$idx
		lane_done[$idx]=1
		while [ -n "${lane_done[${lane[$next_lane]:-x}]:-}" ]; do
			next_lane=$((next_lane + 1))
		done
		start_suite "$idx" lane
		lane_running=$((lane_running + 1))
	done
	while [ "$pool_running" -lt "$POOL_JOBS" ] && [ "$next_pool" -lt ${#pool[@]} ]; do
		start_suite "${pool[$next_pool]}" pool
		next_pool=$((next_pool + 1))
		pool_running=$((pool_running + 1))
	done
	# the lane's own suites all started, its free slots take the pool's next: as many
	# suites at once as while the lane had its own (a pool suite runs beside anything)
	while [ "$lane_running" -lt "$LANE_JOBS" ] && [ "$next_lane" -ge ${#lane[@]} ] &&
		[ "$next_pool" -lt ${#pool[@]} ]; do
		start_suite "${pool[$next_pool]}" lane
		next_pool=$((next_pool + 1))
		lane_running=$((lane_running + 1))
	done
	if [ ${#started[@]} -eq 0 ] && [ "$next_alone" -lt ${#alone[@]} ]; then
		start_suite "${alone[$next_alone]}" alone
		next_alone=$((next_alone + 1))
	fi
}
start_more
while [ ${#started[@]} -gt 0 ]; do
	wait -n
	for i in "${!started[@]}"; do
		[ -f "$logs/$i.log.ms" ] || continue # still running
		case ${started[$i]} in
		lane)
			lane_running=$((lane_running - 1))
			[ "$serial_running" = "$i" ] && serial_running=
			;;
		pool) pool_running=$((pool_running - 1)) ;;
		esac
		unset "started[$i]"
		{ read -r bin; read -r only; } <"$logs/$i.spec"
		echo "=== $(display_name "$bin")${only:+ ($only)}"
		cat "$logs/$i.log"
		tally "$bin" "$only" "$logs/$i.log"
	done
	start_more
done

if [ ${#fail_lines[@]} -gt 0 ]; then
	echo "failed checks (the first 3 of each suite):"
	printf '  %s\n' "${fail_lines[@]}"
fi
if [ ${#failed_tests[@]} -gt 0 ]; then
	echo "failed (run one again with tests/run.sh NAME:TEST):"
	printf '  %s\n' "${failed_tests[@]}"
fi
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
