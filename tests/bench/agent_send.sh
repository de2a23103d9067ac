#!/bin/bash
# make bench: what sending costs the agent at 19 Hz with every core busy: its CPU
# (user + sys, /proc/PID/stat) and RSS (its own metrics) writing files only, pushing
# pprof to Pyroscope's /ingest (--push) and sending OTLP profiles (--otlp), each to a
# loopback receiver (tests/lib/otlp_receiver.py answers every POST 200), one way after
# the other, SEND_RUNS (default 3) rounds of SEND_SECONDS (default 120) each, the ways
# interleaved so that drift of the machine falls on all of them; medians.
set -eu
cd "$(dirname "$0")/../.."
CFIPROF=${CFIPROF:-build/cfiprof}
secs=${SEND_SECONDS:-120}
runs=${SEND_RUNS:-3}
out=$(realpath -m build/bench/agent_send)
mkdir -p "$out"
rm -rf "${out:?}"/*
hz=$(getconf CLK_TCK)
ncpu=$(nproc)
port=19468

busy=()
for i in $(seq "$ncpu"); do
	build/progs/chain $((runs * 3 * (secs + 20) + 60)) > /dev/null &
	busy+=($!)
done
mkdir -p "$out/rx"
python3 tests/lib/otlp_receiver.py "$out/rx" 0 2> "$out/rx.log" &
rx=$!
trap 'kill "${busy[@]}" $rx 2> /dev/null || true' EXIT
for i in $(seq 100); do [ -s "$out/rx/port" ] && break; sleep 0.1; done
url=http://127.0.0.1:$(cat "$out/rx/port")

for ((r = 1; r <= runs; r++)); do
	for way in files push otlp; do
		dir=$out/$way-$r
		mkdir -p "$dir"
		case $way in
		files) send=() ;;
		push) send=(--push "$url") ;;
		otlp) send=(--otlp "$url") ;;
		esac
		"$CFIPROF" agent --interval 10 --duration "$secs" --output-dir "$dir/profiles" \
			--spool-dir "$dir/spool" --metrics-addr 127.0.0.1:$port "${send[@]}" \
			2> "$dir/agent.log" &
		agent=$!
		sleep 5
		read -r u0 s0 < <(awk '{print $14, $15}' /proc/$agent/stat)
		t0=$(date +%s.%N)
		sleep $((secs - 10))
		read -r u1 s1 < <(awk '{print $14, $15}' /proc/$agent/stat)
		t1=$(date +%s.%N)
		rss=$(curl -s "127.0.0.1:$port/metrics" |
			awk '$1 == "process_resident_memory_bytes" {print $2}')
		wait $agent || true
		sent=$(grep -c 'msg=interval' "$dir/agent.log" || true)
		awk -v u0="$u0" -v s0="$s0" -v u1="$u1" -v s1="$s1" -v hz="$hz" -v t0="$t0" \
			-v t1="$t1" -v rss="$rss" -v way="$way" -v sent="$sent" 'BEGIN {
			printf "%s %.4f %.1f %d\n", way, 100 * (u1 + s1 - u0 - s0) / hz / (t1 - t0),
				rss / 1e6, sent }' >> "$out/runs.txt"
	done
done

report=$out/agent_send.md
{
	echo "# What sending costs the agent, $(date -u +%Y-%m-%d), $(uname -r), $ncpu CPUs"
	echo
	echo "\`cfiprof agent --interval 10\` at 19 Hz, every core busy, to a loopback receiver;"
	echo "$secs s per run, $runs runs of each way interleaved, medians (tests/bench/agent_send.sh)."
	echo
	echo "| way | agent CPU, % of one core | RSS, MB | intervals per run |"
	echo "|---|---|---|---|"
	median() { awk -v w="$1" -v k="$2" '$1 == w {print $k}' "$out/runs.txt" | sort -g |
		awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
	for way in files push otlp; do
		printf '| %s | %.3f | %.1f | %d |\n' "$way" "$(median $way 2)" "$(median $way 3)" \
			"$(median $way 4)"
	done
} > "$report"
cat "$report"
