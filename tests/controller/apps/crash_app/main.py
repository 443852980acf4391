"""Test app that crashes at start, leaving the time of each attempt in its log."""

import sys
import time

print(f"crash_app: boom at start {time.time():.3f}", file=sys.stderr, flush=True)
sys.exit(3)
