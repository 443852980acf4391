"""A "server" that writes a reason to stderr and exits before answering anything."""

import sys

print("dies_at_start: missing API key", file=sys.stderr)
sys.exit(1)
