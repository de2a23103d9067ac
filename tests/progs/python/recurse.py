# Known chain for test_python: main -> outer -> rec(x6) -> leaf, all on the CPU.
import sys, time


def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def rec(depth):
    if depth == 0:
        return leaf(2000)
    return rec(depth - 1)


def outer(clock, until, every):
    # the clock read every `every` rounds: process_time is a system call
    n = 0
    while n % every or clock() < until:
        rec(5)  # OUTER
        n += 1


def main():
    # "1.5" seconds of the wall, "1.5c" of the process's CPU (spin.h's convention)
    arg = sys.argv[1] if len(sys.argv) > 1 else "2"
    cpu = arg.endswith("c")
    clock = time.process_time if cpu else time.monotonic
    outer(clock, clock() + float(arg.rstrip("c")), 16 if cpu else 1)  # MAIN


if __name__ == "__main__":
    main()  # MODULE
