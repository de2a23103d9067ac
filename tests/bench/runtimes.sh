#!/bin/bash
# Stacks through JIT runtimes and code without CFI (issue 14): per runtime, the share of
# complete stacks, user frames and frame-pointer frames per sample, as cfiprof's summary
# gives them (all the command's threads), medians of RUNS runs of 3 s at 499 Hz.
set -eu
cd "$(dirname "$0")/../.."
CFIPROF=$(realpath "${CFIPROF:-build/cfiprof}")
OUT=$(realpath "${OUT:-build}")
RUNS=${RUNS:-3}
out=$OUT/bench
mkdir -p "$out"
report=$out/runtimes.md
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

cat > "$out/busy.js" <<'JS'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function work(ms) {
  const end = Date.now() + ms;
  let acc = 0;
  while (Date.now() < end) {
    acc += fib(20);
    const arr = [];
    for (let i = 0; i < 200; i++) arr.push({ k: i, v: String(i * 7) });
    arr.sort((a, b) => b.k - a.k);
    acc += arr.map((o) => o.v.length).reduce((a, b) => a + b, 0);
  }
  return acc;
}
console.log(work(Number(process.argv[2]) * 1000));
JS
cat > "$out/Busy.java" <<'JAVA'
import java.util.*;
public class Busy {
    static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
    public static void main(String[] a) {
        long end = System.currentTimeMillis() + Long.parseLong(a[0]) * 1000, acc = 0;
        while (System.currentTimeMillis() < end) {
            acc += fib(20);
            List<String> l = new ArrayList<>();
            for (int i = 0; i < 200; i++) l.add(Integer.toString(i * 7));
            Collections.sort(l);
        }
        System.out.println(acc);
    }
}
JAVA
javac -d "$out" "$out/Busy.java"

declare -A cmds=(
	[node]="node --perf-basic-prof $out/busy.js 3"
	[java]="java -XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -cp $out Busy 3"
	[lazybind]="env -u LD_BIND_NOW $OUT/progs/lazybind 3"
	[drap_loop]="$OUT/progs/drap_loop 3"
)
{
	echo "# Runtimes and code without CFI, $(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs"
	echo
	echo "Medians of $RUNS runs of \`cfiprof record -F 499 -- CMD\` (3 s each); every thread of the command."
	echo
	echo "| runtime | complete % (runs) | user frames/sample | frame-pointer frames/sample | command |"
	echo "|---|---|---|---|---|"
} > "$report"
for name in node java lazybind drap_loop; do
	pc=() ; uf=() ; fp=()
	for i in $(seq "$RUNS"); do
		log=$out/runtime-$name-$i.log
		# in $out: V8 under --perf-basic-prof writes isolate-*-v8.log into its working directory
		# shellcheck disable=SC2086
		(cd "$out" && exec "$CFIPROF" record -v -F 499 -o /dev/null -- ${cmds[$name]}) > /dev/null 2> "$log" || true
		pc+=("$(sed -n 's/.*stop reasons: complete [0-9]* (\([0-9.]*\)%).*/\1/p' "$log")")
		uf+=("$(sed -n 's/.*, \([0-9.]*\) user frames per sample.*/\1/p' "$log")")
		fp+=("$(sed -n 's/.*frame-pointer frames (\([0-9.]*\) per sample).*/\1/p' "$log")")
	done
	echo "| $name | $(printf '%s\n' "${pc[@]}" | median) (${pc[*]}) | $(printf '%s\n' "${uf[@]}" | median) | $(printf '%s\n' "${fp[@]}" | median) | \`${cmds[$name]}\` |" >> "$report"
done
cat "$report"
