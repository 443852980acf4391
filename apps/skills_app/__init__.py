"""技能: the installed skills, shown, filled in, run, installed and reloaded.

`agent.SkillsAgent` hands every call to `flows.SkillsFlows`. The skills themselves
live with the executor (`search_skills`, `run_command`, `install_skill`,
`reload_skills`: executor/providers/skills.py); this app finds the one an
instruction asks for, shows it with a form built from its `--help` (`helpform`),
runs it and shows the output (`views`). With a model configured it fills an
executable skill's arguments itself and runs it at once, or plans a Markdown
skill's steps with the atomic tools.
"""

from .agent import SkillsAgent

__all__ = ["SkillsAgent"]
