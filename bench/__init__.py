"""`aios bench`: the system's speed and memory goals, measured in one run.

It starts a throw-away copy of the system on ephemeral ports (with its probe app in
`apps/`), measures the loopback floor, the pipeline, routing, the executor's step
rate, cold starts, memory and many clients at once, and prints each figure beside
its goal. What the figures mean and their history: docs/PERFORMANCE.md.
"""
