"""Intent routing: which app handles which part of an instruction.

The interface (`AppProfile`, `PlannedTask`, `RoutePlan`, `Router`) is what the
pipeline depends on; `DeterministicRouter` answers without an LLM, the way
hassil / Padatious match intents locally: an app named at the start takes the
instruction alone (`address`); otherwise it splits a compound instruction into
parts (`split`). A part that asks for something later ("明天下午3点播放音乐") goes
to the app whose manifest gives it the `scheduler` role, when one is installed: its
time phrase is the routing evidence and what follows is the job's content. Every
other part is scored without its content (`content`: quotes, titles and topics, a
reminder's words, a program, what a request for knowledge is about) against every
app's manifest (`index`), and the scores become a confidence. A part no app's words
claim goes to the app whose manifest gives it the `catch_all` role, when one is
installed, beside parts they do claim, or alone when it asks for knowledge or for a
work no app names ("帮我总结一下周杰伦的音乐风格", "搜索《代码大全》这本书"): what it
asks for is the evidence. An LLM router plugs in behind the same interface for plans
below `DeterministicRouter.CONFIDENT`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from aios_protocol.messages import Manifest
from aios_protocol.strings import user_message
from controller.routing.address import Addressing
from controller.routing.content import asked_topic, subject_request, timed, without_content
from controller.routing.index import AppFit, RoutingIndex, index_for
from controller.routing.owned import Ownership
from controller.routing.split import Piece, clean_part, split_pieces

__all__ = [
    "AppProfile",
    "apps_message",
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
    subjects: tuple[str, ...] = ()  # the manifest's: what the app shows or owns
    # the manifest's `names` / `descriptions`: what a reader of a language is shown
    names: Mapping[str, str] = field(default_factory=dict, compare=False)
    descriptions: Mapping[str, str] = field(default_factory=dict, compare=False)

    def name_in(self, language: str) -> str:
        """The app's name for a reader of `language`."""
        return self.names.get(language, self.name)

    def description_in(self, language: str) -> str:
        return self.descriptions.get(language, self.description)

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
            subjects=tuple(manifest.subjects),
            names={str(k): v for k, v in manifest.names.items()},
            descriptions={str(k): v for k, v in manifest.descriptions.items()},
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
    # parts of the instruction that no task carries (no app claimed them, and no
    # catch-all app is installed): the reply must say so
    unclaimed: list[str] = field(default_factory=list)
    # every task is the catch-all app's only because its part asks for knowledge or
    # for a work no app's words claim, not because any words named it: a skill whose
    # summary matches the instruction is the better answer
    asked: bool = False


class Router(Protocol):
    def route(self, text: str, apps: Sequence[AppProfile]) -> RoutePlan: ...


def no_match_message(apps: Sequence[AppProfile], language: str = "zh-CN") -> str:
    """The reply when no installed app can do what was asked: that, in one short
    sentence of `language` that says where to see what the apps can do."""
    if not apps:
        return user_message("no_apps_installed", language)
    return user_message("no_app_matched", language)


def apps_message(apps: Sequence[AppProfile], language: str = "zh-CN") -> str:
    """What the installed apps can do, one line each, in `language`."""
    if not apps:
        return user_message("no_apps_installed", language)
    colon = "：" if language == "zh-CN" else ": "
    lines = [
        f"· {app.name_in(language)}{colon}{app.description_in(language)}"
        if app.description_in(language)
        else f"· {app.name_in(language)}"
        for app in apps
    ]
    return user_message("apps_can", language) + "\n" + "\n".join(lines)


@dataclass(frozen=True)
class _Decision:
    """The app for one part, or none; `confidence` is calibrated 0..1; `evidence`
    names what decided when no keyword did ("timed", "asked")."""

    app_id: str | None
    confidence: float
    fits: tuple[AppFit, ...]
    evidence: str = ""


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
    # the confidence of a plan for an app named at the start
    ADDRESSED = 0.95
    # the confidence of a part that asks for something later, for the scheduler
    TIMED = 0.9
    # the confidence of a part that asks for knowledge or for a work no app's words
    # claim, for the catch-all app
    ASKED = 0.7

    def __init__(
        self, confident: float | None = None, minimum: float | None = None
    ) -> None:
        self.confident = self.CONFIDENT if confident is None else confident
        self.minimum = self.MINIMUM if minimum is None else minimum
        # the latest (profiles, index, names): the supervisor hands out the same tuple
        # every time, and `index_for` hashes every profile to look it up
        self._latest: (
            tuple[tuple[AppProfile, ...], RoutingIndex, Addressing, Ownership] | None
        ) = None

    def _prepared(
        self, profiles: tuple[AppProfile, ...]
    ) -> tuple[RoutingIndex, Addressing, Ownership]:
        latest = self._latest
        if latest is not None and latest[0] is profiles:
            return latest[1], latest[2], latest[3]
        index, addressing = index_for(profiles), Addressing(profiles)
        ownership = Ownership(profiles)
        self._latest = (profiles, index, addressing, ownership)
        return index, addressing, ownership

    def route(self, text: str, apps: Sequence[AppProfile]) -> RoutePlan:
        profiles = tuple(apps)
        if not profiles or not clean_part(text):
            return RoutePlan(tasks=[], confidence=0.0, reason=no_match_message(profiles))
        index, addressing, ownership = self._prepared(profiles)
        named = addressing.addressee(text)
        if named is not None:  # "智能助手，…": the named app, alone, with every word
            task = PlannedTask("t1", named.app_id, text.strip())
            reason = f"t1→{named.app_id} {self.ADDRESSED:.2f} named [{named.name}]"
            return RoutePlan(tasks=[task], confidence=self.ADDRESSED, reason=reason)
        catch_all = app_in_role(profiles, "catch_all")
        scheduler = app_in_role(profiles, "scheduler")
        decisions: dict[str, _Decision] = {}

        def decide(part: str) -> _Decision:
            if part not in decisions:
                decisions[part] = self._decide(index, ownership, part, scheduler, catch_all)
            return decisions[part]

        parts = self._parts(text, decide)
        if len(parts) == 1:
            decisions.setdefault(text.strip(), decide(parts[0]))
            parts = [text.strip()]  # one task: the app gets the words as typed
        tasks: list[PlannedTask] = []
        unmatched: list[str] = []
        notes: list[str] = []
        claimed = [part for part in parts if decide(part).app_id is not None]
        for part in parts:
            decision = decide(part)
            app_id = decision.app_id
            if app_id is None:
                unmatched.append(part)
                if catch_all is None or not claimed:
                    continue
                app_id = catch_all  # beside claimed parts: not dropped unsaid
            task = PlannedTask(
                f"t{len(tasks) + 1}",
                app_id,
                part,
                depends_on=[earlier.task_id for earlier in tasks],
            )
            tasks.append(task)
            if decision.evidence or decision.app_id is None:
                hits = decision.evidence or "unclaimed"
            else:
                hits = ", ".join(decision.fits[0].hits[:4])
            notes.append(f"{task.task_id}→{task.app_id} {decision.confidence:.2f} [{hits}]")
        confidence = min(decide(part).confidence for part in parts)
        if not tasks:
            best = max(decide(part).confidence for part in parts)
            return RoutePlan(tasks=[], confidence=best, reason=no_match_message(profiles))
        reason = "; ".join(notes)
        if unmatched:
            reason += "; unmatched: " + " | ".join(unmatched)
        unclaimed = unmatched if catch_all is None else []
        asked = all(decide(part).evidence == "asked" for part in parts)
        return RoutePlan(tasks, confidence, reason=reason, unclaimed=unclaimed, asked=asked)

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

    def _decide(
        self,
        index: RoutingIndex,
        ownership: Ownership,
        part: str,
        scheduler: str | None,
        catch_all: str | None,
    ) -> _Decision:
        if scheduler is not None and timed(part):
            # "明天下午3点播放音乐": the scheduler makes the job; playing is its content
            return _Decision(scheduler, self.TIMED, (), "timed")
        topic = asked_topic(part)
        owner = ownership.owner(topic) if topic is not None else None
        if owner is not None:
            # "说说现在的CPU占用": knowledge about what an app shows is that app's
            return _Decision(owner.app_id, self.ASKED, (), f"owned: {owner.term}")
        scored = without_content(part)
        fits = tuple(index.score(scored))
        if not fits or fits[0].fit < self.minimum:
            # a time phrase and no scheduler installed ("后天早上7点叫我起床"): what
            # follows it is the request after all
            unscheduled = without_content(part, scheduled=False)
            if unscheduled != scored:
                fits = tuple(index.score(unscheduled))
        if (not fits or fits[0].fit < self.minimum) and catch_all and subject_request(part):
            # "帮我总结一下周杰伦的音乐风格": a question, not a request to play music;
            # no app's words claim what it asks for, so it is the catch-all's
            return _Decision(catch_all, self.ASKED, (), "asked")
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
