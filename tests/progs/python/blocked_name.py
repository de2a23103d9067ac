# A Python process whose code object's name lies in memory no read of it
# ever finishes: co_qualname of spin's code points into a userfaultfd region
# (MISSING mode) the process never resolves, as a user's FUSE mount would
# block it.  Needs CAP_SYS_PTRACE (vm.unprivileged_userfaultfd=0 allows only
# user-mode faults, which do not block another process's reads).
# Usage: python3.11 blocked_name.py SECONDS; prints "ready" once spinning.
import ctypes
import fcntl
import os
import struct
import sys
import time

SYS_USERFAULTFD = 323  # x86_64
UFFDIO_API = 0xC018AA3F
UFFDIO_REGISTER = 0xC020AA00
UFFDIO_REGISTER_MODE_MISSING = 1


def spin(n):
    x = 0
    for i in range(n):
        x += i
    return x


libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
uffd = libc.syscall(SYS_USERFAULTFD, os.O_CLOEXEC)
if uffd < 0:
    sys.exit("userfaultfd: errno %d" % ctypes.get_errno())
fcntl.ioctl(uffd, UFFDIO_API, bytearray(struct.pack("QQQ", 0xAA, 0, 0)))
region = libc.mmap(None, 4096, 3, 0x22, -1, 0)  # PROT_READ|WRITE, MAP_PRIVATE|ANONYMOUS
fcntl.ioctl(uffd, UFFDIO_REGISTER,
            bytearray(struct.pack("QQQQ", region, 4096, UFFDIO_REGISTER_MODE_MISSING, 0)))
code = spin.__code__
qualname, found = id(code.co_qualname), 0
# co_name and co_qualname are the same str here: both point at the region
for off in range(16, 256, 8):
    slot = ctypes.c_uint64.from_address(id(code) + off)
    if slot.value == qualname:
        slot.value = region + 64  # the interpreter never reads them while spin runs
        found += 1
if not found:
    sys.exit("co_qualname not found in the code object")
print("ready", flush=True)
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    spin(100000)
# exiting would free the code object, touching the region: wait to be killed
os.kill(os.getpid(), 9)
