# Known chains for test_python: a generator consumed by a loop, and a generator delegating
# to another (yield from), resumed by the C side (next(), gen.send).
import sys, time; A = sys.argv[1] if len(sys.argv) > 1 else "2"; CLOCK = time.process_time if A.endswith("c") else time.monotonic  # "2c": the process's CPU time


def squares(n):
    for i in range(n):
        yield i * i


def inner_gen(n):
    total = 0
    for i in range(n):
        total += i
    yield total


def outer_gen(n):
    yield from inner_gen(n)


def consume(until):
    acc = 0
    while CLOCK() < until:
        for v in squares(300):
            acc += v
        acc += next(outer_gen(300))
    return acc


if __name__ == "__main__":
    consume(CLOCK() + float(A.rstrip("c")))
