#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""
make test-cpu: where make test's CPU goes, by suite and by command.

make test is CPU-bound on a 2-CPU machine (its suites run side by side until
the CPUs are full), so its wall time follows the CPU its parts use: the
builds' compilers, cfiprof itself, the workloads the tests start.  This runs
a command (default: make test) under BSD process accounting (acct(5): every
process's user + system CPU, its pid and its parent's, written at its exit)
and charges each process to the nearest ancestor named test_* (the suite
that started it) or make (the builds).  Processes reparented to init (a
daemon's) are charged to "?".  Accounting is the whole host's: run it with
nothing else running.

  tests/bench/suite_cpu.py [CMD ...]      (root: accton)

Writes the accounting file to build/bench/suite_cpu.acct and prints the
totals, the top commands, suites and (suite, command) pairs.
"""
import collections
import os
import shutil
import subprocess
import sys

OUT = os.environ.get("OUT", "build")


def need(tool, package):
    if shutil.which(tool):
        return
    subprocess.run(["apt-get", "install", "-y", "-qq", package], check=True,
                   stdout=subprocess.DEVNULL)


def records(path):
    """(comm, cpu seconds, pid, ppid) in exit order."""
    text = subprocess.run(["dump-acct", path], capture_output=True, text=True,
                          check=True).stdout
    for line in text.splitlines():
        f = [x.strip() for x in line.split("|")]
        if len(f) < 11:
            continue
        # utime and stime in AHZ (100) ticks
        yield f[0], (float(f[2]) + float(f[3])) / 100.0, int(f[9]), int(f[10])


def main():
    cmd = sys.argv[1:] or ["make", "test"]
    need("accton", "acct")
    os.makedirs(f"{OUT}/bench", exist_ok=True)
    acct = f"{OUT}/bench/suite_cpu.acct"
    open(acct, "w").close()
    subprocess.run(["accton", acct], check=True, stdout=subprocess.DEVNULL)
    try:
        rc = subprocess.run(cmd).returncode
    finally:
        subprocess.run(["accton", "off"], stdout=subprocess.DEVNULL)
    recs = list(records(acct))
    # a parent exits after its children: its record is the first later one with its pid
    parent, later = [None] * len(recs), {}
    for i in range(len(recs) - 1, -1, -1):
        parent[i] = later.get(recs[i][3])
        later[recs[i][2]] = i

    def suite(i):
        for _ in range(64):
            if i is None:
                break
            comm = recs[i][0]
            if comm.startswith("test_") or comm == "make":
                return comm
            i = parent[i]
        return "?"

    by_comm, by_suite, by_pair = (collections.Counter() for _ in range(3))
    for i, (comm, cpu, _, _) in enumerate(recs):
        s = comm + " (itself)" if comm.startswith("test_") else suite(parent[i])
        by_comm[comm] += cpu
        by_suite[s] += cpu
        by_pair[(s, comm)] += cpu
    print(f"\n{' '.join(cmd)}: exit {rc}, {len(recs)} processes, "
          f"{sum(r[1] for r in recs):.0f} CPU-s (comm names cut at 15 characters)")
    for title, counter, n in (("commands", by_comm, 25), ("suites", by_suite, 40),
                              ("suite, command", by_pair, 60)):
        print(f"--- CPU-s by {title}")
        for key, cpu in counter.most_common(n):
            print(f"{cpu:8.1f}  {key if isinstance(key, str) else ' / '.join(key)}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
