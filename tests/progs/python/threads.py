# Known chains for test_python: three threads, each in its own function, and main in its own.
import sys, threading, time; CLOCK = time.monotonic  # "1c": the process's CPU time


def spin(until):
    x = 0
    while CLOCK() < until:
        for i in range(500):
            x += i
    return x


def alpha_work(until):
    return spin(until)


def beta_work(until):
    return spin(until)


def gamma_work(until):
    return spin(until)


def main_work(until):
    return spin(until)


def main():
    global CLOCK; a = sys.argv[1] if len(sys.argv) > 1 else "2"; CLOCK = time.process_time if a.endswith("c") else CLOCK; until = CLOCK() + float(a.rstrip("c"))
    ts = [threading.Thread(target=f, args=(until,)) for f in (alpha_work, beta_work, gamma_work)]
    for t in ts:
        t.start()
    main_work(until)
    for t in ts:
        t.join()


if __name__ == "__main__":
    main()
