"""The apps as processes: found on disk, given ports, started, watched and restarted.

Discovery reads each app folder's manifest into an app spec; ports assigns each
service a port for one launch; processes starts a child in its own process group;
the supervisor health-checks the executor and every app, restarts a crashed one
with back-off, registers its tools with the executor and publishes status changes.
`app_site/` is put first on each app's `PYTHONPATH`: it keeps the app on loopback
and behind the same edge as every service.
"""
