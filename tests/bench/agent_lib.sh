# Sourced by the agent benches (run from the source tree).

# value NAME: the agent's metric NAME from its /metrics on 127.0.0.1:$port
value() {
	curl -s "127.0.0.1:$port/metrics" | awk -v n="$1" '$1 == n {print $2}'
}

# rss_split PID: where the process's RSS is (issue 34), in bytes, as "BPF ANON
# FILE": BPF maps mapped into it (the rows and rules it writes, the ring buffer
# it reads: kernel memory, counted once more in RSS), the heap and other
# anonymous memory, and files (its own text, libraries).
rss_split() {
	awk '
	/^[0-9a-f]+-[0-9a-f]+ / { kind = ($6 == "anon_inode:bpf-map") ? "bpf" : ($6 == "" || $6 ~ /^\[/) ? "anon" : "file" }
	/^Rss:/ { kb[kind] += $2 }
	END { printf "%d %d %d\n", kb["bpf"] * 1024, kb["anon"] * 1024, kb["file"] * 1024 }' "/proc/$1/smaps"
}

# thread_ticks PID: each thread's CPU (user + sys, clock ticks) by its name, one
# "NAME TICKS" line per name (threads of one name summed), sorted by name
thread_ticks() {
	for t in /proc/"$1"/task/*; do
		printf '%s %s\n' "$(cat "$t/comm")" "$(awk '{print $14 + $15}' "$t/stat")"
	done 2> /dev/null | awk '{ticks[$1] += $2} END {for (n in ticks) print n, ticks[n]}' | sort
}
