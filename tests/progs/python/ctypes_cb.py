# Known chain for test_python: qsort calls back into Python via ctypes, for argv[1] s of CPU.
import ctypes, ctypes.util, sys, time

libc = ctypes.CDLL(ctypes.util.find_library("c"))
CMP = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))


def compare(a, b):
    x = 0
    for i in range(50):
        x += i
    return a[0] - b[0]


def sort_with_callback(until):
    cmp = CMP(compare)
    arr = (ctypes.c_int * 64)()
    while time.process_time() < until:
        for i in range(64):
            arr[i] = (i * 7919) % 64
        libc.qsort(arr, 64, ctypes.sizeof(ctypes.c_int), cmp)


if __name__ == "__main__":
    sort_with_callback(time.process_time() + float(sys.argv[1] if len(sys.argv) > 1 else 2))
