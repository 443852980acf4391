"""Asking the user before a risky step runs.

The policy classifies the steps of a plan (overwriting another's file, writing SQL,
starting processes, programs outside the whitelist) and remembers "allow always"
rules; the confirmations store keeps each paused plan until the user allows it once,
always, or denies it, and the pipeline then resumes or reports the refusal.
"""
