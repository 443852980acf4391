"""Intent routing: which app handles which part of an instruction.

The interface (`AppProfile`, `PlannedTask`, `RoutePlan`, `Router`) is what the
pipeline depends on; `DeterministicRouter` answers without an LLM, the way
hassil / Padatious match intents locally: it splits a compound instruction into
parts (`split`), scores each part against every app's manifest (`index`) and
turns the scores into a confidence. An LLM router plugs in behind the same interface
for plans below `DeterministicRouter.CONFIDENT`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from aios_protocol.messages import Manifest
from controller.routing.index import AppFit, RoutingIndex, index_for
from controller.routing.split import Piece, clean_part, split_pieces

__all__ = [
    "AppProfile",
    "DeterministicRouter",
    "PlannedTask",
    "RoutePlan",
    "Router",
    "no_match_message",
]


@dataclass(frozen=True)
class AppProfile:
    """What the router knows of one installed, routable app (from its manifest)."""

    app_id: str
    name: str
    description: str = ""
    keywords: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    system_role: str | None = None  # the manifest's `system_role`

    @classmethod
    def of(cls, app_id: str, manifest: Manifest) -> AppProfile:
        """What the router reads of an app's manifest."""
        return cls(
            app_id=app_id,
            name=manifest.name,
            description=manifest.description,
            keywords=tuple(manifest.keywords),
            examples=tuple(manifest.examples),
            system_role=manifest.system_role,
        )


def app_in_role(apps: Sequence[AppProfile], role: str) -> str | None:
    """The id of the first app whose manifest gives it `role`, or None."""
    return next((app.app_id for app in apps if app.system_role == role), None)


@dataclass
class PlannedTask:
    task_id: str  # "t1", "t2", …
    app_id: str
    instruction: str
    depends_on: list[str] = field(default_factory=list)


@dataclass
class RoutePlan:
    """The tasks of one instruction; no tasks means no app matched."""

    tasks: list[PlannedTask]
    confidence: float  # 0..1
    llm_calls: int = 0
    reason: str = ""


class Router(Protocol):
    def route(self, text: str, apps: Sequence[AppProfile]) -> RoutePlan: ...


def no_match_message(apps: Sequence[AppProfile], language: str = "zh-CN") -> str:
    """The reply when no app matches: what the installed apps can do, in `language`
    (Chinese, or English for "en-US")."""
    english = language == "en-US"
    if not apps:
        return "No apps are installed." if english else "没有已安装的应用。"
    colon = ": " if english else "："
    lines = [
        f"· {app.name}{colon}{app.description}" if app.description else f"· {app.name}"
        for app in apps
    ]
    if english:
        return (
            "Sorry, I could not tell which app should handle that. The installed apps"
            " can:\n" + "\n".join(lines)
        )
    return "抱歉，我不确定该交给哪个应用处理。已安装的应用可以：\n" + "\n".join(lines)


@dataclass(frozen=True)
class _Decision:
    """The app for one part, or none; `confidence` is calibrated 0..1."""

    app_id: str | None
    confidence: float
    fits: tuple[AppFit, ...]


class DeterministicRouter:
    """Local intent matching over manifests; no LLM, no I/O.

    `MINIMUM`: a part whose best app fits below it goes to no app. `CONFIDENT`: a
    plan whose confidence is at or above it is a sure match, so an LLM router need
    not run. Confidence is the weakest part's: its best fit, discounted by how
    closely the runner-up app fits — two apps that fit equally well still get a
    task (the first), but a low confidence.
    """

    CONFIDENT = 0.6
    MINIMUM = 0.3
    # keyword evidence that names an app when no other app shows any (one
    # two-character keyword such as "内存" or "download"), and evidence strong
    # enough even beside other apps' loose vocabulary (several keywords)
    EXCLUSIVE = 0.6
    STRONG = 0.8

    def __init__(
        self, confident: float | None = None, minimum: float | None = None
    ) -> None:
        self.confident = self.CONFIDENT if confident is None else confident
        self.minimum = self.MINIMUM if minimum is None else minimum
        # the latest (profiles, index): the supervisor hands out the same tuple every
        # time, and `index_for` hashes every profile to look it up
        self._latest: tuple[tuple[AppProfile, ...], RoutingIndex] | None = None

    def _index(self, profiles: tuple[AppProfile, ...]) -> RoutingIndex:
        latest = self._latest
        if latest is not None and latest[0] is profiles:
            return latest[1]
        index = index_for(profiles)
        self._latest = (profiles, index)
        return index

    def route(self, text: str, apps: Sequence[AppProfile]) -> RoutePlan:
        profiles = tuple(apps)
        if not profiles or not clean_part(text):
            return RoutePlan(tasks=[], confidence=0.0, reason=no_match_message(profiles))
        index = self._index(profiles)
        decisions: dict[str, _Decision] = {}

        def decide(part: str) -> _Decision:
            if part not in decisions:
                decisions[part] = self._decide(index, part)
            return decisions[part]

        parts = self._parts(text, decide)
        if len(parts) == 1:
            decisions.setdefault(text.strip(), decide(parts[0]))
            parts = [text.strip()]  # one task: the app gets the words as typed
        tasks: list[PlannedTask] = []
        unmatched: list[str] = []
        notes: list[str] = []
        for part in parts:
            decision = decide(part)
            if decision.app_id is None:
                unmatched.append(part)
                continue
            task = PlannedTask(
                f"t{len(tasks) + 1}",
                decision.app_id,
                part,
                depends_on=[earlier.task_id for earlier in tasks],
            )
            tasks.append(task)
            hits = ", ".join(decision.fits[0].hits[:4])
            notes.append(f"{task.task_id}→{task.app_id} {decision.confidence:.2f} [{hits}]")
        confidence = min(decide(part).confidence for part in parts)
        if not tasks:
            best = max(decide(part).confidence for part in parts)
            return RoutePlan(tasks=[], confidence=best, reason=no_match_message(profiles))
        reason = "; ".join(notes)
        if unmatched:
            reason += "; 未匹配 unmatched: " + " | ".join(unmatched)
        return RoutePlan(tasks=tasks, confidence=confidence, reason=reason)

    def _parts(self, text: str, decide: Callable[[str], _Decision]) -> list[str]:
        """The instruction's parts: strong boundaries always, weak ones between apps."""
        pieces = split_pieces(text)
        if not pieces:
            return []
        parts: list[str] = []
        start, end = pieces[0].start, pieces[0].end
        # the one piece text[start:end] is, until pieces merge: its text is already
        # that span cleaned
        alone: Piece | None = pieces[0]
        for piece in pieces[1:]:
            current = alone.text if alone is not None else clean_part(text[start:end])
            if not piece.strong:
                left, right = decide(current), decide(piece.text)
                sure = min(left.confidence, right.confidence) >= self.confident
                if not sure or left.app_id == right.app_id:
                    end = piece.end
                    alone = None
                    continue
            parts.append(current)
            start, end = piece.start, piece.end
            alone = piece
        parts.append(alone.text if alone is not None else clean_part(text[start:end]))
        return parts

    def _decide(self, index: RoutingIndex, part: str) -> _Decision:
        fits = tuple(index.score(part))
        if not fits:
            return _Decision(None, 0.0, ())
        best = fits[0].fit
        runner_up = fits[1].fit if len(fits) > 1 else 0.0
        confidence = _calibrate(best, runner_up)
        if self._keywords_only_for_best(fits):
            # the app's own keywords and none of any other app's: the words the fit
            # does not explain are the task's arguments ("来一首陈奕迅的十年"), not
            # doubt about the app, so a model would only be asked to agree
            confidence = max(confidence, self.confident)
        app_id = fits[0].app_id if best >= self.minimum else None
        return _Decision(app_id, confidence, fits)

    def _keywords_only_for_best(self, fits: tuple[AppFit, ...]) -> bool:
        """The best app's keywords hit and no rival's did: one real keyword when no
        rival shows any evidence at all, or strong keyword evidence (several
        keywords, or a long one) when rivals share only loose vocabulary. A runner-up
        whose hits are all the best app's object is no rival ("close the [code]
        window": the code app's word sits inside the window phrase). A keyword
        beside a rival's keyword stays in doubt: "write code to download a web page"
        could be the code app's or the music app's ("add hello world to my
        playlist" has the same shape and is the music app's)."""
        best = fits[0].keyword
        rivals = [f for f in fits[1:] if not f.argument]
        if any(f.keyword > 0 for f in rivals):
            return False
        return best >= self.STRONG or (not rivals and best >= self.EXCLUSIVE)


def _calibrate(best: float, runner_up: float) -> float:
    """Confidence from the best fit, discounted when another app fits nearly as well."""
    return max(0.0, min(1.0, best - 0.5 * runner_up))
