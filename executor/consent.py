"""Tool calls an app may make only through a reviewed plan, so the user could say no.

The controller reviews every plan before it reaches the executor and pauses risky
ones for the user's decision (`controller/permissions/policy.py`); an app, though,
holds its own token and could call `/call` or `/run` around that review. So the
executor runs the calls it can judge risky on its own — starting a program
(`process_start`), SQL that writes (`db_query`) and copying files from outside the
workdir (`file_import`) — only for the controller: an app
asking for one gets `needs_confirmation`, telling it to plan the step with
`plan_steps` so the user is asked. Overwriting a file is judged by the controller
alone (it knows which files an app created itself).
"""

from __future__ import annotations

from typing import Any

from aios_protocol.errors import NeedsConfirmation
from aios_protocol.tools import sql_writes

__all__ = ["check_consent", "sql_writes"]


def check_consent(tool: str, args: dict[str, Any]) -> None:
    """Raise `NeedsConfirmation` for a call that an app may not make unreviewed."""
    if tool == "process_start":
        what = "starting a program"
    elif tool == "db_query" and sql_writes(str(args.get("sql", ""))):
        what = "SQL that writes"
    elif tool == "file_import":
        what = "copying files from outside the workdir"
    else:
        return
    raise NeedsConfirmation(
        f"{tool}: {what} needs the user's confirmation; plan it with plan_steps "
        "(the controller asks the user) instead of calling it directly"
    )
