"""The runtime the services share, which app authors never import.

Settings (`config.json` as a model), the HTTP edge every service installs (loopback
Host, Origin, token, JSON-only bodies, the error shape), serving and calling
between our own processes, crash-safe file writes, and the one check of whether a
path lies inside a workdir. The controller, the executor and the SDK's server build
on it.
"""
