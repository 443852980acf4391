import os
import sys
import time

# a child, and a daemon that double-forks into its own session
if os.fork() == 0:
    time.sleep(120)
    os._exit(0)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(120)
    os._exit(0)
print("forked", sys.argv[1:], flush=True)
time.sleep(120)
