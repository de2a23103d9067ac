#!/bin/bash
# What a fleet host costs the agent (issue 34): the agent at 19 Hz over the whole host
# while FLEET_SIZES (default "10 500") processes, each mapping one libLLVM-sized
# library, take turns to call into it for FLEET_BURST_MS (default 100: about two
# samples each at 19 Hz) and then sleep.  One run per size, the agent started afresh:
# its RSS (and where it is), peak RSS, kernel map memory, unwind tables, processes
# tracked and CPU, and the cost of one more process between the two sizes.
set -eu
cd "$(dirname "$0")/../.."
. tests/bench/agent_lib.sh
CFIPROF=${CFIPROF:-build/cfiprof}
MEMBER=${MEMBER:-build/progs/fleet_member}
sizes=${FLEET_SIZES:-10 500}
burst=${FLEET_BURST_MS:-100}
# the largest LLVM library there is: Debian's libLLVM-15 (mesa's) or clang's libLLVM-14
lib=$(ls -S /usr/lib/*-linux-gnu/libLLVM-1[0-9].so.1 2> /dev/null | head -1)
[ -n "$lib" ] || { echo "agent_fleet: no libLLVM-NN.so.1 installed" >&2; exit 1; }
out=build/bench
mkdir -p "$out/fleet"
report=$out/agent_fleet.md
hz=$(getconf CLK_TCK)
port=19468

rows=()
for n in $sizes; do
	"$CFIPROF" agent --interval 30 --output-dir "$out/fleet" --metrics-addr 127.0.0.1:$port \
		2> "$out/fleet/agent-$n.log" &
	agent=$!
	for _ in $(seq 100); do
		[ -n "$(value cfiprof_intervals_total)" ] && break
		sleep 0.2
	done
	read -r u0 s0 < <(awk '{print $14, $15}' /proc/$agent/stat)
	# turns spread so that about one member runs at a time on each CPU: the
	# members' CPU is about half of the machine's however many there are
	spread=$((n * burst / $(nproc) * 2))
	members=()
	for i in $(seq 0 $((n - 1))); do
		"$MEMBER" "$lib" $((i * spread / n)) "$burst" &
		members+=($!)
	done
	# every member stops itself after its turn (state T): the dynamic loader's
	# relocation of the library at each start makes turns late by however long
	# those took, so wait for the members, not for a time
	while awk '$3 != "T" && $3 != "Z" { busy = 1 } END { exit !busy }' \
		$(printf '/proc/%d/stat ' "${members[@]}") 2> /dev/null; do
		sleep 1
	done
	sleep 5
	read -r u1 s1 < <(awk '{print $14, $15}' /proc/$agent/stat)
	read -r rss_bpf rss_anon rss_file < <(rss_split $agent)
	hwm=$(awk '/^VmHWM:/ {print $2 * 1024}' /proc/$agent/status)
	rss=$(value process_resident_memory_bytes)
	heap=$(value cfiprof_heap_bytes)
	kmem=$(value cfiprof_kernel_map_bytes)
	tables=$(value cfiprof_table_bytes)
	tracked=$(value cfiprof_processes_tracked)
	keys=$(value cfiprof_mapping_keys)
	loads=$(($(value cfiprof_process_loads_total) + $(value cfiprof_process_reloads_total)))
	kill -KILL "${members[@]}" 2> /dev/null || true
	wait "${members[@]}" 2> /dev/null || true
	kill -TERM $agent
	wait $agent || true
	rows+=("$(awk -v n="$n" -v u="$((u1 + s1 - u0 - s0))" -v hz="$hz" -v rss="$rss" -v hwm="$hwm" \
		-v rb="$rss_bpf" -v ra="$rss_anon" -v rf="$rss_file" -v heap="${heap:-0}" -v km="$kmem" \
		-v tb="$tables" -v tr="$tracked" -v keys="$keys" -v loads="$loads" 'BEGIN {
		printf "%d %.2f %.1f %.1f %.1f %.1f %.1f %.1f %.1f %.1f %d %d %d\n", n, u / hz, rss / 1e6,
			hwm / 1e6, rb / 1e6, ra / 1e6, rf / 1e6, heap / 1e6, km / 1e6, tb / 1e6, tr, keys,
			loads }')")
done

{
	printf '# The agent on a fleet host: processes sharing %s\n\n' "$(basename "$lib")"
	printf 'Each process maps it and calls into it for %d ms once, at its turn; the agent at 19 Hz\n' "$burst"
	printf 'over the whole host, started afresh for each size, measured once every turn is over.\n\n'
	printf '| processes | agent CPU s | RSS MB | peak RSS MB | BPF maps mapped MB | anonymous MB | files MB | heap in use MB | kernel map MB | table MB | tracked | mapping keys | loads and reloads |\n'
	printf '|---|---|---|---|---|---|---|---|---|---|---|---|---|\n'
	for r in "${rows[@]}"; do
		echo "$r" | awk '{ $1 = $1; gsub(/ /, " | "); print "| " $0 " |" }'
	done
	if [ "${#rows[@]}" -ge 2 ]; then
		printf '%s\n%s\n' "${rows[0]}" "${rows[-1]}" | awk 'NR == 1 { n = $1; r = $3; k = $9 }
			NR == 2 { printf "\nOne more process: %.1f KB of RSS, %.1f KB of kernel map memory.\n",
				($3 - r) * 1e3 / ($1 - n), ($9 - k) * 1e3 / ($1 - n) }'
	fi
	printf '\nTarget (issue 34): <= 40 MB RSS at 19 Hz.\n'
} > "$report"
cat "$report"
