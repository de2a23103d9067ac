# Known function from the start, for test_python_frames:deferred: the first
# EARLY seconds in early_work (while the process's tables are still being
# built, its samples deferred), then late_work until SECONDS, all on the CPU.
# Seconds of the process's CPU time: the samples it gives at a rate are the
# same however busy the machine is.
import sys, time


def spin(until):
    s = 0
    while time.process_time() < until:
        s += 1
    return s


def early_work(until):
    return spin(until)


def late_work(until):
    return spin(until)


def main():
    t0 = time.process_time()
    early_work(t0 + float(sys.argv[1]))
    late_work(t0 + float(sys.argv[2]))


if __name__ == "__main__":
    main()
