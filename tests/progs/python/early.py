# Known function from the start, for test_python_frames:deferred: the first
# EARLY seconds in early_work (while the process's tables are still being
# built, its samples deferred), then late_work until SECONDS, all on the CPU.
import sys, time


def spin(until):
    s = 0
    while time.monotonic() < until:
        s += 1
    return s


def early_work(until):
    return spin(until)


def late_work(until):
    return spin(until)


def main():
    t0 = time.monotonic()
    early_work(t0 + float(sys.argv[1]))
    late_work(t0 + float(sys.argv[2]))


if __name__ == "__main__":
    main()
