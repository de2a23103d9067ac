# Known chain for test_python: coroutines run by asyncio's event loop.
import asyncio, sys, time; A = sys.argv[1] if len(sys.argv) > 1 else "2"; CLOCK = time.process_time if A.endswith("c") else time.monotonic  # "2c": the process's CPU time


def crunch():
    x = 0
    for i in range(2000):
        x += i * i
    return x


async def worker(until):
    while CLOCK() < until:
        crunch()
        await asyncio.sleep(0)


async def main(until):
    await asyncio.gather(worker(until), worker(until))


if __name__ == "__main__":
    asyncio.run(main(CLOCK() + float(A.rstrip("c"))))
