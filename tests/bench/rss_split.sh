# Sourced by the agent benches: where a process's RSS is (issue 34), in bytes, as
# "BPF ANON FILE": BPF maps mapped into it (the rows and rules it writes, the ring
# buffer it reads: kernel memory, counted once more in RSS), the heap and other
# anonymous memory, and files (its own text, libraries).
rss_split() {
	awk '
	/^[0-9a-f]+-[0-9a-f]+ / { kind = ($6 == "anon_inode:bpf-map") ? "bpf" : ($6 == "" || $6 ~ /^\[/) ? "anon" : "file" }
	/^Rss:/ { kb[kind] += $2 }
	END { printf "%d %d %d\n", kb["bpf"] * 1024, kb["anon"] * 1024, kb["file"] * 1024 }' "/proc/$1/smaps"
}
