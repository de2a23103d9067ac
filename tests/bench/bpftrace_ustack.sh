#!/bin/bash
# bpftrace's `ustack` (bpf_get_stackid: the kernel's frame-pointer walk plus its stack map) on
# one command, for walker_cost.sh: prints "ns_per_sample N frames_per_sample F" as
# tests/bench/fpwalk does.  The run time comes from kernel.bpf_stats_enabled (the caller turns
# it on), read with bpftool by bpftrace itself just before it exits, so that it and the samples
# counted cover the same window.
#   tests/bench/bpftrace_ustack.sh [-F HZ] -- PROG SECONDS ARGS...
set -eu
hz=999
[ "${1:-}" = -F ] && hz=$2 && shift 2
[ "${1:-}" = -- ] && shift
secs=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; kill "$pid" 2> /dev/null || true' EXIT
# the command stopped before its exec, continued once bpftrace is attached: bpftrace's start
# takes from under one second to over two (a cold one), longer than the command may run
sh -c 'kill -STOP $$; exec "$@"' sh "$@" > /dev/null &
pid=$!
until [ "$(cut -d' ' -f3 /proc/$pid/stat 2> /dev/null)" = T ]; do
	kill -0 "$pid" 2> /dev/null || { echo "bpftrace_ustack: $1 did not start" >&2; exit 1; }
	sleep 0.01
done
# 100 ms ticks after the continue, until half a second before the command ends
ticks=$(awk -v s="$secs" 'BEGIN {printf "%d", s * 10 - 5}')
# bpftrace's stack map cannot be deeper than the kernel allows perf callchains
depth=$(sysctl -n kernel.perf_event_max_stack)
bpftrace --unsafe -q -e "
profile:hz:$hz /pid == $pid/ { @n = count(); @s[ustack(perf, $depth)] = count(); }
interval:ms:100 {
	@ticks++;
	if (@ticks == 1) { system(\"kill -CONT $pid\"); }
	if (@ticks > $ticks) { system(\"bpftool prog show > $tmp/progs\"); exit(); }
}" > "$tmp/out" 2>&1
wait "$pid" 2> /dev/null || true
# the profile program (bpftrace names it after its rate): run time over the samples it kept (the command's), frames from its stacks
awk -v progs="$tmp/progs" -v hz="$hz" '
	/^@n: / { n = $2 }
	/^@s\[/ { depth = 0; inside = 1; next }
	inside && /^\]: / { frames += depth * $2; inside = 0; next }
	inside && NF { depth++ }
	END {
		while ((getline l < progs) > 0)
			if (l ~ ("perf_event +name " hz " ") && match(l, /run_time_ns [0-9]+/))
				ns += substr(l, RSTART + 12, RLENGTH - 12)
		if (!n || !ns) { print "bpftrace_ustack: no samples or no run time" > "/dev/stderr"; exit 1 }
		printf "ns_per_sample %.1f frames_per_sample %.2f samples %d\n", ns / n, frames / n, n
	}' "$tmp/out"
