"""The sandboxed executor: runs the ten atomic tools (S-6x) and apps' custom tools.

`python -m executor` serves `service.create_app`; see docs/ARCHITECTURE.md.
"""
