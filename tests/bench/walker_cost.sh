#!/bin/bash
# The walker's kernel cost per frame against the kernel's own frame-pointer walk
# (bpf_get_stack(BPF_F_USER_STACK), tests/bench/fpwalk), issue 15's measure:
#   per-frame = the least-squares slope of ns per sample over frames per sample across DEPTHS
#   (with two: (ns deep - ns shallow) / (frames deep - frames shallow))
# ns per sample from kernel.bpf_stats_enabled (run time of every run, the early exits of other
# tasks' samples included, / samples of the target), the recursion test program at each depth,
# pinned to CPU 0, with a second copy of it busy on every other CPU (not profiled: filtered, cheap early exits,
# the same number at every depth, so they cancel in the difference).  Walkers: bpf_loop and
# tail calls (--tail-calls), on recurse (-fomit-frame-pointer: CFI) and recurse_fp (frame
# pointers, walked with CFI too); bpf_get_stack and bpfwalk (the same frame-pointer walk in BPF,
# one 16-byte bpf_probe_read_user per frame) on recurse_fp, and bpftrace's ustack
# (tests/bench/bpftrace_ustack.sh: bpf_get_stackid, the same walk plus its stack map).  Every round runs each
# configuration once, interleaved, its depths back to back; the ratio is taken within a round,
# then the median.
# cfiprof's run time counts sending each frame to user space (its samples ring), bpf_get_stack's
# (into a per-CPU buffer) does not: a second reference, bpf_get_stack + ring (fpwalk -m ring),
# sends its stacks through a ring buffer of the size cfiprof's samples ring has here.
#
#   RUNS=5 DEPTHS="8 120" SECS=2 HZ=999 tests/bench/walker_cost.sh
#   VARIANTS="old=/tmp/cfiprof-old new=build/cfiprof" ...   (two builds, interleaved)
#   MODES="loop tail-calls" PROGS="recurse recurse_fp"      (the default: all four)
#   LOCK=/tmp/cfiprof-e2e.lock: taken for each run (LOCK= : not taken, the caller holds it)
set -eu
cd "$(dirname "$0")/../.."
CFIPROF=${CFIPROF:-build/cfiprof}
VARIANTS=${VARIANTS:-cfiprof=$CFIPROF}
FPWALK=${FPWALK:-build/bench/fpwalk}
RUNS=${RUNS:-5}
DEPTHS=${DEPTHS:-8 120}
SECS=${SECS:-2}
HZ=${HZ:-999}
MODES=${MODES:-loop tail-calls}
PROGS=${PROGS:-recurse recurse_fp}
LOCK=${LOCK-/tmp/cfiprof-e2e.lock}
out=build/bench
mkdir -p "$out"
report=$out/walker.md
raw=$out/walker-raw.tsv
old=$(sysctl -n kernel.bpf_stats_enabled)
bg=()
cleanup() {
	for p in "${bg[@]}"; do kill "$p" 2> /dev/null || true; done
	sysctl -qw kernel.bpf_stats_enabled="$old"
}
trap cleanup EXIT
sysctl -qw kernel.bpf_stats_enabled=1
: > "$raw"

# Every run on CPU 0, the busy copies on the others: the BPF run time of one
# walk differs between the vCPUs of a PVM guest (1.7x one day, the same
# program and build: 6.5 us a sample on one, 11 on the other), so a run left
# to the scheduler measured which CPU it landed on more than its walker.
ncpu=$(nproc)
pin=()
[ "$ncpu" -gt 1 ] && pin=(taskset -c 0)

# busy PROG DEPTH: the same recursion on every other CPU, for the duration of one run
busy() {
	bg=()
	for c in $(seq 1 $((ncpu - 1))); do
		taskset -c "$c" "build/progs/$1" $((SECS + 3)) "$2" 9>&- & bg+=($!)
	done
}
unbusy() {
	for p in "${bg[@]}"; do kill "$p" 2> /dev/null || true; wait "$p" 2> /dev/null || true; done
	bg=()
}

# one ROUND LABEL PROG DEPTH COMMAND...: a line of $raw
one() {
	local round=$1 label=$2 prog=$3 depth=$4 log=$out/walker-run.log ns fr hit complete
	shift 4
	# the lock first (other BPF tests, one at a time), then the load: busy for the whole run
	[ -n "$LOCK" ] && exec 9> "$LOCK" && flock 9
	busy "$prog" "$depth"
	"${pin[@]}" "$@" "build/progs/$prog" "$SECS" "$depth" > "$log" 2>&1 9>&- || true
	unbusy
	[ -n "$LOCK" ] && flock -u 9
	if [ "${label#fpwalk}" != "$label" ] || [ "${label#fpring}" != "$label" ] ||
		[ "${label#bpfwalk}" != "$label" ] || [ "${label#bpftrace}" != "$label" ]; then
		ns=$(sed -n 's/.*ns_per_sample \([0-9.]*\).*/\1/p' "$log")
		fr=$(sed -n 's/.*frames_per_sample \([0-9.]*\).*/\1/p' "$log")
		hit=- complete=-
	else
		ns=$(sed -n 's/.*BPF run time \([0-9]*\) ns per sample.*/\1/p' "$log")
		fr=$(sed -n 's/.*, \([0-9.]*\) user frames per sample.*/\1/p' "$log")
		hit=$(sed -n 's/.*rule cache hit rate \([0-9.]*\)%.*/\1/p' "$log")
		complete=$(sed -n 's/.*complete [0-9]* (\([0-9.]*\)%).*/\1/p' "$log" | head -1)
	fi
	if [ -z "$ns" ] || [ -z "$fr" ]; then
		echo "walker_cost: no figures from $label depth $depth:" >&2
		tail -3 "$log" >&2
		return 0
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$label" "$prog" "$depth" "$ns" "$fr" \
		"${hit:--}" "${complete:--}" >> "$raw"
}

# the size of cfiprof's samples ring here: bpf_get_stack's stacks go through one as large
ring_kib=$("$CFIPROF" record -v -o /dev/null -- true 2>&1 |
	sed -n 's/.*ring buffers: samples \([0-9]*\) KiB.*/\1/p')
if [ -z "$ring_kib" ]; then
	echo "walker_cost: $CFIPROF record -v names no samples ring" >&2
	exit 1
fi

# One configuration's depths back to back, in an order that alternates by round: a slow
# phase of the host (this guest has minutes-long ones) then shifts the two ends of one
# configuration's slope together, and a drift within a round cancels over two rounds.
depths_of() {
	if [ $(($1 % 2)) -eq 0 ]; then
		echo "$DEPTHS" | tr ' ' '\n' | tac | tr '\n' ' '
	else
		echo "$DEPTHS"
	fi
}
each() {
	local round=$1 label=$2 prog=$3 depth
	shift 3
	for depth in $(depths_of "$round"); do
		one "$round" "$label" "$prog" "$depth" "$@"
	done
}

for r in $(seq "$RUNS"); do
	echo "walker_cost: round $r/$RUNS" >&2
	each "$r" "fpwalk" recurse_fp "$FPWALK" -m kstack -F "$HZ" --
	each "$r" "fpring" recurse_fp "$FPWALK" -m ring -r $((ring_kib * 1024)) -F "$HZ" --
	each "$r" "bpfwalk" recurse_fp "$FPWALK" -m bpfwalk -F "$HZ" --
	each "$r" "bpftrace" recurse_fp tests/bench/bpftrace_ustack.sh -F "$HZ" --
	for v in $VARIANTS; do
		name=${v%%=*} bin=${v#*=}
		for prog in $PROGS; do
			for mode in $MODES; do
				flag=
				[ "$mode" = tail-calls ] && flag=--tail-calls
				each "$r" "$name $mode" "$prog" "$bin" record -v -F "$HZ" \
					--user-only --max-frames 1024 $flag -o /dev/null --
			done
		done
	done
done

python3 - "$raw" "$report" "$RUNS" "$HZ" "$DEPTHS" "$out/walker.json" "$ring_kib" << 'EOF'
import statistics, sys, subprocess, collections
raw, report, runs, hz, depths = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5].split()
summary_path, ring_kib = sys.argv[6], sys.argv[7]
rows = collections.defaultdict(dict)  # (label, prog) -> round -> depth -> (ns, frames, hit, complete)
for line in open(raw):
    r, label, prog, depth, ns, fr, hit, comp = line.rstrip("\n").split("\t")
    rows[(label, prog)].setdefault(r, {})[depth] = (float(ns), float(fr), hit, comp)

sys.path.insert(0, "tests/bench")
from peers import spread as med  # "median (min–max)", the same cells as RESULTS.md's

def per_frame(key, r):
    """ns per frame: the least-squares slope of ns/sample over frames/sample, this round's depths"""
    pts = [(v[1], v[0]) for v in rows[key].get(r, {}).values()]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    if sxx <= 0:
        return None
    return sum((x - mx) * (y - my) for x, y in pts) / sxx

name = {"recurse": "recurse (no frame pointers)", "recurse_fp": "recurse_fp (frame pointers)"}
base = ("fpwalk", "recurse_fp")
ring_base = ("fpring", "recurse_fp")
names = {"fpwalk": "bpf_get_stack", "fpring": "bpf_get_stack + ring",
         "bpftrace": "bpftrace ustack"}
uname = subprocess.run(["uname", "-r"], capture_output=True, text=True).stdout.strip()
w = open(report, "w")
def p(s=""):
    w.write(s + "\n")
    print(s)
p("# Walker cost per frame against the kernel's frame-pointer walk (`tests/bench/walker_cost.sh`)")
p()
p("%s, %d CPUs, cpu-clock at %s Hz, %s rounds; every run on CPU 0, every CPU busy (a second copy "
  "of the program at the same depth on each other CPU). Per frame = the slope of ns/sample over "
  "frames/sample across depths %s (least squares; two depths: their difference over the frames'), "
  "each configuration's depths run back to back, in an order alternating by round; ratio = per frame / bpf_get_stack's per frame in the same round, median of the "
  "rounds (min–max). `bpf_get_stack` = the kernel's own frame-pointer walk "
  "(`BPF_F_USER_STACK`), `bpfwalk` = that walk in BPF (one 16-byte read per frame), "
  "`bpftrace ustack` = `bpf_get_stackid` (that walk plus bpftrace's stack map), "
  "`bpf_get_stack + ring` = that walk with each stack then sent through a ring buffer read by "
  "user space, %s KiB as cfiprof's samples ring here (cfiprof's figures count the delivery of "
  "its frames; `bpf_get_stack`'s, into a per-CPU buffer, none)."
  % (uname, __import__("os").cpu_count(), hz, runs, ", ".join(depths), ring_kib))
p()
p("| walker | program | ns/frame | × bpf_get_stack per frame | × bpf_get_stack + ring |")
p("|---|---|---|---|---|")
summary = []
for key in rows:
    label, prog = key
    pfs, ratios, ring_ratios = [], [], []
    for r in rows[key]:
        pf, b, rb = per_frame(key, r), per_frame(base, r), per_frame(ring_base, r)
        pfs.append(pf)
        ratios.append(pf / b if pf is not None and b else None)
        ring_ratios.append(pf / rb if pf is not None and rb else None)
    shown = names.get(label, label)
    p("| %s | %s | %s | %s | %s |" % (shown, name.get(prog, prog), med(pfs), med(ratios, "%.2f"),
                                     med(ring_ratios, "%.2f")))
    ok = [x for x in ratios if x is not None]
    ok_ring = [x for x in ring_ratios if x is not None]
    summary.append({"walker": shown, "program": prog,
                    "ns_frame": statistics.median([x for x in pfs if x is not None] or [0]),
                    "ratio": statistics.median(ok) if ok else None,
                    "ratio_ring": statistics.median(ok_ring) if ok_ring else None})
p()
p("| walker | program | depth | user frames/sample | ns/sample | rule cache hit % | complete % |")
p("|---|---|---|---|---|---|---|")
for key in rows:
    label, prog = key
    for depth in depths:
        v = [rows[key][r][depth] for r in rows[key] if depth in rows[key][r]]
        if not v:
            continue
        shown = names.get(label, label)
        p("| %s | %s | %s | %.1f | %s | %s | %s |" % (
            shown, prog, depth, statistics.median(x[1] for x in v), med([x[0] for x in v], "%.0f"),
            v[-1][2], v[-1][3]))
json = __import__("json")
json.dump({"depths": depths, "runs": int(runs), "rows": summary}, open(summary_path, "w"), indent=1)
EOF
