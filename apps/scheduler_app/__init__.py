"""定时任务: reminders and scheduled jobs in words, and the Scheduled Tasks window.

`agent.SchedulerAgent` hands every call to `flows.SchedulerFlows`: `phrases` reads
what the user said ("10分钟后提醒我喝水", "每天早上8点播放音乐", "取消喝水提醒")
into a request, the flows turn it into calls of the `schedule` tool (the controller
keeps and runs the jobs), and `views` builds the window (list, enable/disable, run
now, history, cancel).
"""

from .agent import SchedulerAgent

__all__ = ["SchedulerAgent"]
