"""The sandboxed executor: the ten atomic tools (S-6x) and apps' custom tools
(`tools/`), the confinement they run in (`sandbox/`), the registry of apps, the
running of calls and step plans (`toolbox`) and its log (`audit`), served over HTTP
by `service.create_app` (`python -m executor`; see docs/ARCHITECTURE.md).
"""
