# Known function from the start, for test_python_frames:deferred: the first
# EARLY seconds in early_work (while the process's tables are still being
# built, its samples deferred), then late_work until SECONDS, all on the CPU.
# Seconds of the process's CPU time: the samples it gives at a rate are the
# same however busy the machine is.  With LIBS (copies of libdefer_big.so),
# early_work spends its seconds in each one's big_leaf in turn, each loaded
# right before: its samples wait for that copy's tables, whatever the
# interpreter's start took.
import ctypes, sys, time


def spin(until):
    s = 0
    while time.process_time() < until:
        s += 1
    return s


def early_work(until):
    libs = sys.argv[3:]
    for i, path in enumerate(libs):
        lib = ctypes.CDLL(path)
        secs = (until - time.process_time()) / (len(libs) - i)
        lib.big_entry(2, (ctypes.c_char_p * 2)(b"early", b"%.3fc" % secs))
    return spin(until)


def late_work(until):
    return spin(until)


def main():
    t0 = time.process_time()
    early_work(t0 + float(sys.argv[1]))
    late_work(t0 + float(sys.argv[2]))


if __name__ == "__main__":
    main()
