# Known off-CPU chain for test_python_frames: <module> -> main -> nap_outer -> nap_leaf
# (time.sleep), 4 naps of 100 ms; prints on stderr how long nap_outer was off the CPU
# (wall time less the thread's CPU time): "naps: off-CPU NS ns".
import sys, time


def nap_leaf():
    time.sleep(0.1)


def nap_outer(n):
    for _ in range(n):
        nap_leaf()


def main():
    # a first block outside the measured naps: the profiler finds this thread's
    # state at its first off-CPU block (a clean clone once lost one nap's chain)
    time.sleep(0.05)
    wall, cpu = time.monotonic_ns(), time.thread_time_ns()
    nap_outer(4)
    off = (time.monotonic_ns() - wall) - (time.thread_time_ns() - cpu)
    print("naps: off-CPU %d ns" % off, file=sys.stderr)


if __name__ == "__main__":
    main()
