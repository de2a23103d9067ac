#!/bin/bash
# Agent overhead at 19 Hz with both cores busy: agent CPU (user + sys) and BPF run
# time as a share of the machine, RSS and kernel map memory.  AGENT_SECONDS (default
# 600) long; the numbers come from /proc/PID/stat and the agent's own metrics.
set -eu
cd "$(dirname "$0")/../.."
. tests/bench/agent_lib.sh
CFIPROF=${CFIPROF:-build/cfiprof}
secs=${AGENT_SECONDS:-600}
out=build/bench
mkdir -p "$out/agent"
report=$out/agent.md
ncpu=$(nproc)
hz=$(getconf CLK_TCK)
port=19467

# one spinning program per core, for the whole run
busy=()
for i in $(seq "$ncpu"); do
	build/progs/chain $((secs + 30)) > /dev/null &
	busy+=($!)
done
"$CFIPROF" agent --interval 60 --duration "$secs" --output-dir "$out/agent" --bpf-stats \
	--metrics-addr 127.0.0.1:$port 2> "$out/agent.log" &
agent=$!
sleep 5
bpf0=$(value cfiprof_bpf_run_seconds_total)
loads0=$(value cfiprof_process_loads_total)
read -r u0 s0 < <(awk '{print $14, $15}' /proc/$agent/stat)
thread_ticks $agent > "$out/agent-threads0.txt"
t0=$(date +%s.%N)
sleep $((secs - 15))
read -r u1 s1 < <(awk '{print $14, $15}' /proc/$agent/stat)
thread_ticks $agent > "$out/agent-threads1.txt"
t1=$(date +%s.%N)
bpf1=$(value cfiprof_bpf_run_seconds_total)
loads1=$(value cfiprof_process_loads_total)
rss=$(value process_resident_memory_bytes)
read -r rss_bpf rss_anon rss_file < <(rss_split $agent)
hwm=$(awk '/^VmHWM:/ {print $2 * 1024}' /proc/$agent/status)
kmem=$(value cfiprof_kernel_map_bytes)
tables=$(value cfiprof_table_bytes)
wait $agent || true
kill "${busy[@]}" 2> /dev/null || true
awk -v u0="$u0" -v s0="$s0" -v u1="$u1" -v s1="$s1" -v hz="$hz" -v t0="$t0" -v t1="$t1" \
	-v b0="$bpf0" -v b1="$bpf1" -v n="$ncpu" -v rss="$rss" -v km="$kmem" -v tb="$tables" \
	-v secs="$secs" -v l0="${loads0:-0}" -v l1="${loads1:-0}" -v rb="$rss_bpf" -v ra="$rss_anon" -v rf="$rss_file" -v hwm="$hwm" 'BEGIN {
	wall = t1 - t0; cpu = (u1 + s1 - u0 - s0) / hz; bpf = b1 - b0;
	printf "# Agent overhead, %d s at 19 Hz, every core busy\n\n", secs;
	printf "| measured over | agent CPU (user+sys) | BPF run time | together, share of the machine | RSS | kernel map memory | table bytes |\n";
	printf "|---|---|---|---|---|---|---|\n";
	printf "| %.0f s, %d CPUs | %.2f s = %.3f%% of the machine | %.2f s = %.3f%% | **%.3f%%** | %.1f MB | %.1f MB | %.1f MB |\n",
		wall, n, cpu, 100 * cpu / (wall * n), bpf, 100 * bpf / (wall * n),
		100 * (cpu + bpf) / (wall * n), rss / 1e6, km / 1e6, tb / 1e6;
	printf "\nRSS at the end: %.1f MB of BPF maps mapped (rows and rules written, the ring buffer read), %.1f MB anonymous (heap), %.1f MB files; peak (VmHWM) %.1f MB.\n",
		rb / 1e6, ra / 1e6, rf / 1e6, hwm / 1e6;
	printf "\nProcesses the agent loaded over the same time: %d (what else ran on the host: each process started costs the agent a load, so the share is the spinning programs alone only on an idle host).\n", l1 - l0;
	printf "\nTargets (issue 34): <= 0.1%% of the machine and <= 40 MB RSS; OpenTelemetry profiler budget: <= 1%% CPU, <= 250 MB.\n";
}' > "$report"
# where the agent's CPU went, by thread (user/agent and user/session name them)
join -a 2 -e 0 -o 0,1.2,2.2 "$out/agent-threads0.txt" "$out/agent-threads1.txt" |
	awk -v hz="$hz" 'BEGIN { printf "\nAgent CPU by thread over the same time:" }
	{ printf " %s %.2f s;", $1, ($3 - $2) / hz } END { printf "\n" }' >> "$report"
cat "$report"
