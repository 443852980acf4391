"""A risky command job asks the user at its creation through the confirmation flow.

The scheduler with the real `ConfirmationGate` (files under the state folder, events
on a real bus) and the real permission policy: the question is a `schedule`
confirmation naming the job; its answer enables the job (allow) or drops it (deny);
it survives a restart, and goes away when the job is enabled, changed or deleted
another way.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from aios_protocol.errors import CommandNotAllowed
from aios_protocol.messages import ScheduleJob, ScheduleJobPatch
from aios_protocol.strings import user_message_of
from aios_runtime.settings import Settings
from controller.events import EventBus
from controller.permissions.confirmations import ConfirmationGate
from controller.permissions.policy import PermissionPolicy
from scheduler import JobRunner, JobStore, Scheduler
from scheduler.wiring import KIND, GateConfirmations, policy_review

RISKY = {
    "name": "clean",
    "execution_type": "command",
    "schedule_type": "interval",
    "interval_s": 60,
    "app_id": "hello_app",
    "command": ["date", "-u"],
    "timeout": 5,
}


def settings() -> Settings:
    return Settings.model_validate(
        {"tool_sandbox": {"shell_whitelist": ["echo"], "ask_outside_whitelist": True}}
    )


class System:
    """One controller's worth: a bus, the gate, the policy and the scheduler."""

    def __init__(self, root: Path, clock, executor, pipeline):
        self.events = EventBus()
        self.gate = ConfirmationGate(root / "confirmations", self.events)
        policy = PermissionPolicy(root / "permissions.json", settings)
        asking = GateConfirmations(self.gate, lambda app_id, language: "Hello小AI")
        self.scheduler = Scheduler(
            JobStore(root),
            JobRunner(executor, pipeline),
            clock=clock,
            review=policy_review(policy, lambda app_id: None),
            confirmations=asking,
        )
        asking.bind(self.scheduler)

    def answer(self, confirmation_id: str, decision: str) -> str:
        """What `Pipeline.resume` does with a question of a registered kind."""
        pending = self.gate.claim(confirmation_id, decision)
        settle = self.gate.handler_for(pending.kind)
        assert settle is not None
        return settle(pending, decision).message or ""

    def kinds(self) -> list[str]:
        return [e.type for e in self.events.since(0)]


@pytest.fixture
def make_system(tmp_path, clock, executor, pipeline):
    return lambda: System(tmp_path / "state", clock, executor, pipeline)


def test_a_risky_job_asks_once_and_allow_enables_it(make_system, clock, executor):
    system = make_system()
    job = system.scheduler.create(ScheduleJob.model_validate(RISKY), caller="hello_app")
    assert job["enabled"] is False and "date -u" in job["awaiting_confirmation"]
    [pending] = system.gate.pending()
    assert (pending.kind, pending.job_id, pending.app_id) == (KIND, job["id"], "hello_app")
    public = pending.public()
    assert public["kind"] == "schedule" and public["job_id"] == job["id"]
    assert "定时任务「clean」" in public["summary"] and "date -u" in public["summary"]
    assert public["steps"][0]["kind"] == "command_outside_whitelist"
    assert public["plan"] == [
        {"step_id": 1, "tool": "shell_exec", "args": {"cmd": ["date", "-u"]}}
    ]
    assert system.kinds() == ["confirm_request"]
    clock.advance(seconds=120)
    assert system.scheduler.tick() == []  # nothing runs before the yes

    said = system.answer(pending.confirmation_id, "allow_once")
    assert "已允许" in said and "clean" in said
    enabled = system.scheduler.get(job["id"])
    assert enabled["enabled"] and enabled["awaiting_confirmation"] is None
    assert enabled["approved_commands"] == ["date"] and enabled["next_run_at"]
    assert system.gate.pending() == [] and system.kinds()[-1] == "confirm_resolved"
    clock.advance(seconds=61)
    assert len(system.scheduler.tick()) == 1
    assert system.scheduler.wait_idle()
    assert executor.bodies[0]["approved_commands"] == ["date"]


def test_deny_drops_the_job(make_system):
    system = make_system()
    job = system.scheduler.create(ScheduleJob.model_validate(RISKY))
    [pending] = system.gate.pending()
    said = system.answer(pending.confirmation_id, "deny")
    assert "已拒绝" in said
    assert system.scheduler.jobs() == [] and system.gate.pending() == []
    assert (
        "没有创建" in said and job["id"] not in system.scheduler.store.jobs_file.read_text()
    )


def test_the_question_survives_a_restart(make_system):
    first = make_system()
    job = first.scheduler.create(ScheduleJob.model_validate(RISKY))
    cid = first.gate.pending()[0].confirmation_id
    second = make_system()  # a new controller over the same state folder
    assert [p.confirmation_id for p in second.gate.pending()] == [cid]
    assert second.scheduler.get(job["id"])["awaiting_confirmation"]
    second.answer(cid, "allow_always")
    assert second.scheduler.get(job["id"])["enabled"] is True


def test_the_question_goes_when_answered_another_way(make_system):
    system = make_system()
    first = system.scheduler.create(ScheduleJob.model_validate(RISKY))
    second = system.scheduler.create(ScheduleJob.model_validate({**RISKY, "name": "b"}))
    third = system.scheduler.create(ScheduleJob.model_validate({**RISKY, "name": "c"}))
    assert len(system.gate.pending()) == 3
    system.scheduler.update(first["id"], ScheduleJobPatch(enabled=True))  # the window
    system.scheduler.delete(second["id"])
    safe = ScheduleJobPatch.model_validate({"command": ["echo", "hi"]})
    assert system.scheduler.update(third["id"], safe)["awaiting_confirmation"] is None
    assert system.gate.pending() == []
    assert system.kinds().count("confirm_resolved") == 3
    again = ScheduleJobPatch.model_validate({"command": ["date"]})
    assert system.scheduler.update(third["id"], again)["enabled"] is False
    assert [p.job_id for p in system.gate.pending()] == [third["id"]]


def test_an_answer_for_a_job_that_is_gone_says_so(make_system):
    system = make_system()
    job = system.scheduler.create(ScheduleJob.model_validate(RISKY))
    pending = system.gate.pending()[0]
    system.scheduler.store.save({}, {})  # removed behind the scheduler's back
    other = make_system()
    assert job["id"] not in {j["id"] for j in other.scheduler.jobs()}
    assert "不存在" in other.answer(pending.confirmation_id, "allow_once")


def test_the_question_and_its_answers_in_english(tmp_path, clock, executor, pipeline):
    english = lambda: "en-US"  # noqa: E731  the settings' ui_language
    gate = ConfirmationGate(tmp_path / "confirmations", EventBus())
    policy = PermissionPolicy(tmp_path / "permissions.json", settings)
    names = {"zh-CN": "你好", "en-US": "Hello"}  # the app's name, by the reader's language
    asking = GateConfirmations(gate, lambda app_id, language: names[language], english)
    scheduler = Scheduler(
        JobStore(tmp_path),
        JobRunner(executor, pipeline),
        clock=clock,
        review=policy_review(policy, lambda app_id: None, english),
        confirmations=asking,
        language=english,
    )
    asking.bind(scheduler)
    job = scheduler.create(ScheduleJob.model_validate(RISKY))
    assert job["awaiting_confirmation"] == "run a command outside the whitelist: date -u"
    [pending] = gate.pending()
    assert pending.summary == (
        'The scheduled job "clean" (app "Hello") wants to run a command outside the'
        " whitelist: date -u"
    )
    claimed = gate.claim(pending.confirmation_id, "deny")
    reply = gate.handler_for(claimed.kind)(claimed, "deny")
    assert reply.message == 'Refused: the scheduled job "clean" was not created'


def test_a_command_outside_the_whitelist_without_asking_is_refused_at_creation(
    tmp_path, clock, executor, pipeline
):
    """`ask_outside_whitelist` off: the executor would refuse every run, so the job
    is refused when it is made (nothing stored, nothing asked), and so is a change
    of an allowed job's command to such a program."""
    strict = lambda: Settings.model_validate(  # noqa: E731
        {"tool_sandbox": {"shell_whitelist": ["echo"]}}
    )
    gate = ConfirmationGate(tmp_path / "confirmations", EventBus())
    scheduler = Scheduler(
        JobStore(tmp_path / "state"),
        JobRunner(executor, pipeline),
        clock=clock,
        review=policy_review(PermissionPolicy(tmp_path / "p.json", strict), lambda a: None),
        confirmations=GateConfirmations(gate, lambda app_id, language: "Hello"),
    )
    with pytest.raises(CommandNotAllowed) as refused:
        scheduler.create(ScheduleJob.model_validate(RISKY), caller="scheduler_app")
    assert refused.value.placeholders == {"command": "date"}
    assert user_message_of(refused.value, "zh-CN") == "不允许运行命令「date」。"
    assert scheduler.jobs() == [] and gate.pending() == []
    allowed = scheduler.create(
        ScheduleJob.model_validate({**RISKY, "command": ["echo", "hi"]})
    )
    assert allowed["enabled"] is True
    with pytest.raises(CommandNotAllowed):
        scheduler.update(
            allowed["id"], ScheduleJobPatch.model_validate({"command": "date"})
        )
    assert scheduler.get(allowed["id"])["command"] == ["echo", "hi"]
