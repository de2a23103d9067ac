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


def outer(until):
    while time.monotonic() < until:
        rec(5)


def main():
    outer(time.monotonic() + float(sys.argv[1] if len(sys.argv) > 1 else 2))


if __name__ == "__main__":
    main()
