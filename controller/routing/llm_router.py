"""Routing by the LLM, behind the deterministic router.

`FallbackRouter` is the `Router` the pipeline uses when an LLM may be configured:

1. the deterministic router answers first; a confident plan (tasks and
   `confidence >= threshold`) is returned as is — never sent to the model, never
   overridden;
2. otherwise, when the model is configured, `LLMRouter` asks it once for
   `{"tasks": [{"id", "app_id", "instruction", "depends_on"}]}` given the installed
   apps' ids, names, descriptions and examples; the answer is validated (known app
   ids, dependencies only on earlier tasks, hence no cycles) and, when invalid, the
   model gets ONE repair request quoting the problem;
3. when the model fails, times out, answers badly twice or finds no app — or there
   is no model — the deterministic plan is returned, and an instruction it gives to
   no app goes to the catch-all app (`FallbackRouter`).

`RoutePlan.llm_calls` counts the model calls made for the instruction in every case.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aios_protocol.llm import LLMBadReply, LLMError
from aios_protocol.messages import describe_validation_error
from controller.llm.client import LLMClient
from controller.routing.router import (
    AppProfile,
    PlannedTask,
    RoutePlan,
    Router,
    app_in_role,
)

__all__ = [
    "DEFAULT_THRESHOLD",
    "FallbackRouter",
    "LLMRouteAttempt",
    "LLMRouter",
    "routing_prompt",
    "validate_tasks",
]

log = logging.getLogger("aios.controller.routing")

DEFAULT_THRESHOLD = 0.6  # when the deterministic router has no `confident`
LLM_PLAN_CONFIDENCE = 0.8
MAX_EXAMPLES = 4


class _TaskOut(BaseModel):
    model_config = ConfigDict(extra="ignore", coerce_numbers_to_str=True)

    id: Annotated[str, Field(min_length=1, max_length=40)]
    app_id: Annotated[str, Field(min_length=1, max_length=200)]
    instruction: Annotated[str, Field(min_length=1, max_length=4000)]
    depends_on: list[str] = Field(default_factory=list)


class _TasksOut(BaseModel):
    model_config = ConfigDict(extra="ignore")

    tasks: list[_TaskOut]


def validate_tasks(
    payload: Any, apps: Sequence[AppProfile], *, max_tasks: int = 6
) -> list[PlannedTask]:
    """The model's answer as tasks numbered t1, t2, …; `ValueError` saying what is wrong.

    An app may be named by its id or, leniently, by its exact display name.
    """
    try:
        parsed = _TasksOut.model_validate(payload)
    except ValidationError as exc:
        raise ValueError(describe_validation_error(exc)) from None
    if len(parsed.tasks) > max_tasks:
        raise ValueError(f"at most {max_tasks} tasks, got {len(parsed.tasks)}")
    by_id = {app.app_id: app.app_id for app in apps}
    by_name = {app.name.strip().lower(): app.app_id for app in apps}
    renamed: dict[str, str] = {}
    tasks: list[PlannedTask] = []
    for index, task in enumerate(parsed.tasks, start=1):
        app_id = by_id.get(task.app_id.strip()) or by_name.get(task.app_id.strip().lower())
        if app_id is None:
            raise ValueError(
                f"task {task.id!r}: app_id {task.app_id!r} is not one of {sorted(by_id)}"
            )
        if task.id in renamed:
            raise ValueError(f"task id {task.id!r} is used twice")
        depends = []
        for dep in task.depends_on:
            if dep not in renamed:
                raise ValueError(
                    f"task {task.id!r} depends on {dep!r}, which is not an earlier task"
                )
            if renamed[dep] not in depends:
                depends.append(renamed[dep])
        renamed[task.id] = f"t{index}"
        tasks.append(PlannedTask(f"t{index}", app_id, task.instruction.strip(), depends))
    return tasks


def routing_prompt(apps: Sequence[AppProfile]) -> str:
    """The system message: the job, the apps (one JSON line each), the answer's shape."""
    lines = []
    for app in apps:
        entry: dict[str, Any] = {"app_id": app.app_id, "name": app.name}
        if app.description:
            entry["description"] = app.description
        if app.examples:
            entry["examples"] = list(app.examples[:MAX_EXAMPLES])
        lines.append(json.dumps(entry, ensure_ascii=False))
    return (
        "You route a user's instruction on a desktop computer to the apps that can "
        "carry it out.\n\nInstalled apps (one JSON object per line):\n"
        + "\n".join(lines)
        + "\n\nAnswer with only a JSON object of this shape:\n"
        '{"tasks": [{"id": "t1", "app_id": "<an app_id above>", '
        '"instruction": "<what that app must do, in the user\'s language>", '
        '"depends_on": []}]}\n'
        "Rules:\n"
        "- One task per job. Split the instruction into several tasks only when it "
        "asks for several things; keep each task's instruction self-contained.\n"
        "- A task that needs another task's result lists that task's id in "
        '"depends_on"; a task may depend only on tasks listed before it.\n'
        "- Use only the app_id values listed above. If no app fits, answer "
        '{"tasks": []}.'
    )


@dataclass
class LLMRouteAttempt:
    """What asking the model gave: a plan (or None) and how many calls it took."""

    plan: RoutePlan | None
    llm_calls: int
    error: str = ""


class LLMRouter:
    """Asks the model to split an instruction into tasks for installed apps."""

    def __init__(
        self,
        client: LLMClient,
        *,
        max_tasks: int = 6,
        max_tokens: int = 800,
        current: Callable[[], LLMClient] | None = None,
    ):
        """`current()`, when given, is the model of the request being routed (its
        user's, `controller.user_settings.model_for`); else `client` serves all."""
        self.client = client
        self.max_tasks = max_tasks
        self.max_tokens = max_tokens
        self._current = current

    @property
    def model(self) -> LLMClient:
        """The model client that routes the request handled in this thread."""
        return self._current() if self._current is not None else self.client

    @property
    def configured(self) -> bool:
        return self.model.configured

    def route(self, text: str, apps: Sequence[AppProfile]) -> RoutePlan | None:
        """A validated plan, or None when the caller should fall back."""
        return self.attempt(text, apps).plan

    def attempt(self, text: str, apps: Sequence[AppProfile]) -> LLMRouteAttempt:
        model = self.model
        if not apps or not model.configured:
            return LLMRouteAttempt(None, 0, "no apps" if not apps else "not configured")
        messages: list[dict[str, str]] = [
            {"role": "system", "content": routing_prompt(apps)},
            {"role": "user", "content": text},
        ]
        calls = 0
        problem = ""
        for _round in range(2):  # the first answer and at most one repair
            calls += 1
            try:
                payload = model.chat_json(
                    messages, max_tokens=self.max_tokens, temperature=0
                )
                tasks = validate_tasks(payload, apps, max_tasks=self.max_tasks)
            except LLMBadReply as exc:
                problem = exc.message
                raw = str((exc.detail or {}).get("content", ""))
            except ValueError as exc:
                problem = str(exc)
                raw = json.dumps(payload, ensure_ascii=False)
            except LLMError as exc:
                log.info("LLM routing gave up: %s", exc)
                return LLMRouteAttempt(None, calls, exc.code)
            else:
                if not tasks:
                    return LLMRouteAttempt(None, calls, "the model found no app")
                plan = RoutePlan(
                    tasks=tasks,
                    confidence=LLM_PLAN_CONFIDENCE,
                    llm_calls=calls,
                    reason="llm",
                )
                return LLMRouteAttempt(plan, calls)
            messages = messages + [
                {"role": "assistant", "content": raw[:4000] or "(empty)"},
                {
                    "role": "user",
                    "content": f"That answer is not usable: {problem}. Answer again "
                    "with only the JSON object described above.",
                },
            ]
        log.info("LLM routing answer invalid twice: %s", problem)
        return LLMRouteAttempt(None, calls, problem)


class FallbackRouter:
    """Deterministic first; the model only for what the deterministic router doubts.

    An instruction neither router gives to any app goes whole to the app whose manifest
    gives it the `catch_all` role, when one is installed — with a model or without
    (without one, that app says what it needs); with no such app it stays unclaimed,
    and the user is told plainly that no installed app can do it.
    """

    def __init__(
        self,
        deterministic: Router,
        llm_router: LLMRouter | None,
        *,
        threshold: float | None = None,
    ):
        self.deterministic = deterministic
        self.llm_router = llm_router
        if threshold is None:  # DeterministicRouter's `confident` (its CONFIDENT)
            threshold = getattr(deterministic, "confident", None)
        self.threshold = DEFAULT_THRESHOLD if threshold is None else float(threshold)

    def is_confident(self, plan: RoutePlan) -> bool:
        return bool(plan.tasks) and plan.confidence >= self.threshold

    def route(self, text: str, apps: Sequence[AppProfile]) -> RoutePlan:
        plan = self.deterministic.route(text, apps)
        if self.is_confident(plan):
            return plan
        attempt = LLMRouteAttempt(None, 0)
        if self.llm_router is not None and self.llm_router.configured:
            attempt = self.llm_router.attempt(text, apps)
            if attempt.plan is not None and attempt.plan.tasks:
                return attempt.plan
        llm_calls = plan.llm_calls + attempt.llm_calls
        catch_all = app_in_role(apps, "catch_all")
        if not plan.tasks and catch_all is not None:
            task = PlannedTask("t1", catch_all, text.strip())
            return RoutePlan([task], 0.5, llm_calls, f"unclaimed: {catch_all}")
        if attempt.plan is not None:
            return attempt.plan
        if not llm_calls:
            return plan
        return dataclasses.replace(plan, llm_calls=llm_calls)
