"""What confines a tool run, decided before it runs and enforced while it runs:
which programs may run with which arguments (`argv_policy`), which URLs
`http_request` may reach (`ssrf`), how a tool process is started and killed —
bubblewrap or rlimits, timeouts, capped output, its whole group (`runner`) — the
pids cgroup of each run (`pids_cgroup`) and the background processes an app started
(`background`).
"""
