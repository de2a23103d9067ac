#!/bin/bash
# The agent's RSS and CPU while a JVM with 10,000 compiled methods runs (issue 33): a
# generated class of METHODS small methods, each called until HotSpot compiled it (the
# JVM's own `jcmd Compiler.codelist` counts them: the oracle), then the whole host sampled
# at 19 Hz for AGENT_SECONDS; the same agent beside build/progs/chain instead, interleaved,
# ROUNDS of each.  Figures from /proc/PID/stat and the agent's /metrics.
#   [METHODS=10000] [AGENT_SECONDS=40] [ROUNDS=2] tests/bench/jvm_agent.sh
set -eu
cd "$(dirname "$0")/../.."
. tests/bench/agent_lib.sh
CFIPROF=${CFIPROF:-build/cfiprof}
methods=${METHODS:-10000}
secs=${AGENT_SECONDS:-40}
rounds=${ROUNDS:-2}
out=build/bench/jvm_agent
report=build/bench/jvm_agent.md
port=19468
hz=$(getconf CLK_TCK)
mkdir -p "$out/classes"

# Many.java: m0..mN-1, called by drivers of 100 calls each (a method's bytecode is < 64 KiB)
python3 - "$methods" > "$out/Many.java" <<'PY'
import sys
n = int(sys.argv[1])
print("public class Many {")
for i in range(n):
    print(f"  static long m{i}(long x) {{ return (x * {i * 2 + 1}L) ^ (x >>> {i % 31 + 1}); }}")
drivers = (n + 99) // 100
for d in range(drivers):
    print(f"  static long d{d}(long x) {{")
    for i in range(d * 100, min(n, d * 100 + 100)):
        print(f"    x = m{i}(x);")
    print("    return x; }")
print("  public static void main(String[] a) throws Exception {")
print("    long end = System.nanoTime() + Long.parseLong(a[0]) * 1000000000L, x = 1;")
print("    while (System.nanoTime() < end) {")
for d in range(drivers):
    print(f"      x = d{d}(x);")
print("    }")
print("    System.out.println(x);")
print("  } }")
PY
javac -d "$out/classes" "$out/Many.java"


# one arm: the workload's pid in $1, its name in $2; appends a line to $out/rows
arm() {
	local pid=$1 name=$2 agent u0 s0 u1 s1 rss nm
	"$CFIPROF" agent --interval 10 --duration "$secs" --output-dir "$out/agent-$name" \
		--metrics-addr 127.0.0.1:$port 2> "$out/agent-$name.log" &
	agent=$!
	sleep 3
	read -r u0 s0 < <(awk '{print $14, $15}' /proc/$agent/stat)
	sleep $((secs - 8))
	read -r u1 s1 < <(awk '{print $14, $15}' /proc/$agent/stat)
	rss=$(value process_resident_memory_bytes)
	nm=-
	[ "$name" = jvm ] && nm=$(jcmd "$pid" Compiler.codelist 2> /dev/null | grep -c '^[0-9]' || true)
	wait $agent || true
	echo "$name $rss $(((u1 + s1 - u0 - s0))) $((secs - 11)) $nm" >> "$out/rows"
}

: > "$out/rows"
for r in $(seq "$rounds"); do
	java -cp "$out/classes" Many $((secs + 90)) > /dev/null &
	jvm=$!
	# compiled: the codelist stops growing past the methods' count
	for i in $(seq 60); do
		n=$(jcmd "$jvm" Compiler.codelist 2> /dev/null | grep -c '^[0-9]' || true)
		[ "${n:-0}" -ge "$methods" ] && break
		sleep 1
	done
	arm "$jvm" jvm
	kill "$jvm" 2> /dev/null || true
	wait "$jvm" 2> /dev/null || true
	build/progs/chain $((secs + 10)) > /dev/null &
	chain=$!
	arm "$chain" chain
	kill "$chain" 2> /dev/null || true
	wait "$chain" 2> /dev/null || true
done
{
	echo "# The agent beside a JVM with $methods compiled methods, 19 Hz, ${secs} s intervals of 10 s"
	echo
	echo "| workload | round | nmethods (jcmd Compiler.codelist) | agent RSS | agent CPU (user+sys) |"
	echo "|---|---|---|---|---|"
	awk -v hz="$hz" '{r[$1]++; printf "| %s | %d | %s | %.1f MB | %.2f s of %d s (%.2f%% of a CPU) |\n", $1 == "jvm" ? "java Many" : "build/progs/chain", r[$1], $5, $2 / 1e6, $3 / hz, $4, 100 * $3 / hz / $4}' "$out/rows"
} > "$report"
cat "$report"
