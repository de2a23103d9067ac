# A Python process that execs another program (test_python_frames:exec_away):
# 0.02 s of CPU time in Python, then PROGRAM SECONDS.
#   exec_away.py PROGRAM SECONDS
import os
import sys
import time


def spin(seconds):
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass


spin(0.02)
os.execv(sys.argv[1], [sys.argv[1], sys.argv[2]])
