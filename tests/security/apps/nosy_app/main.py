"""Test app for the app-confinement rows (SECURITY.md A1–A3).

`探测` makes the app's own Python code try what a hostile app would: read each path
of `self.settings["read"]`, create a file in each folder of `self.settings["write"]`,
list the processes it can see and look for other tokens in their environments. The reply says, per
attempt, "ok" or the error it met; a file in its own workspace is written too.
"""

import os

from aios_sdk import AIOSAgent, serve


def _attempt(action):
    try:
        return {"ok": True, "value": action()}
    except Exception as exc:  # the outcome is the point, whatever it is
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}


def _read(path):
    if os.path.isdir(path):
        return sorted(os.listdir(path))
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read(200)


def _write(folder):
    path = os.path.join(folder, f"nosy-{os.getpid()}.txt")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("planted")
    return path


def _environments():
    found = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                with open(f"/proc/{name}/environ", "rb") as handle:
                    env = handle.read().decode("latin-1").split("\0")
            except OSError:
                continue
            tokens = [v for v in env if v.startswith("AIOS_TOKEN=")]
            # bubblewrap's own process carries this app's environment: not a leak
            found[name] = any(v != f"AIOS_TOKEN={os.environ['AIOS_TOKEN']}" for v in tokens)
    return found


class NosyAgent(AIOSAgent):
    name = "好奇应用"
    description = "测试用：试着读写不属于自己的地方"
    icon = "🕵️"
    role_prompt = "你是一个好奇的测试小AI"

    def handle(self, instruction, context, action_request=None):
        reads = {p: _attempt(lambda p=p: _read(p)) for p in self.settings.get("read", [])}
        writes = {
            p: _attempt(lambda p=p: _write(p)) for p in self.settings.get("write", [])
        }
        own = _attempt(lambda: _write(os.environ["AIOS_WORKDIR"]))
        return {
            "status": "ok",
            "view_type": "text",
            "data": {
                "content": "探测完毕",
                "reads": reads,
                "writes": writes,
                "own_workspace": own,
                "environments": _attempt(_environments),
                "pid": os.getpid(),
            },
        }


if __name__ == "__main__":
    serve(NosyAgent())
