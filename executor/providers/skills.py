"""The skills provider: the skills as five tools, read from watched folders.

Skills live in the shared folder (the owner's, `<state_dir>/users/default/skills/`,
where the repository's example skills are copied at the first start and brought up
to date at later ones where the user left them unchanged:
`executor.skills.examples.seed_examples`) and in each app's `<workdir>/skills/`; an
app sees both, its own overriding a shared one of the same name. A call for another
user sees the shared ones and that user's own installed skills, theirs in place of a
shared one of the same name (`<state_dir>/users/<user_id>/skills/`, seeded with the
examples when first used, read again at every call), and its `install_skill`
installs there, so no user sees or changes another's skills. The prompt text and
the status (`prompt_for`, `status_for`) name the skills of the user asked for. What a skill is and how a folder is read is
`executor.skills.catalog`; every `--help` runs here in the sandbox, with the same
confinement as `shell_exec` (rlimits, bubblewrap when in force, other apps' workdirs
hidden) and the skill's folder readable. The tools: `search_skills {keyword}` (the
matching skills ranked: name, kind, summary, content — a SKILL.md body is read at
this point — source and folder; an empty keyword lists every skill, broken ones with
their error), `run_command {command}` (an executable skill by name as argv[0], never a
shell, run in the calling app's workdir like `shell_exec`; answers `{returncode,
stdout, stderr, truncated, ok, meaning}` by the format's exit codes: 0 success, 1 bad
arguments or a general failure, others the skill's own), `skill {name, arguments, language}` (a
skill's steps to follow now, in that language when it has them, `$ARGUMENTS` / `$1`… replaced, and the tools it allows:
the executor holds the loop's turn to them, `executor.skills.scope`), `install_skill
{path}` (a
file or folder of the app's workspace into the shared folder; it changes what every
app can do, so it `requires_confirmation`) and `reload_skills {}` (reads every folder
again). A thread started with the provider watches the folders with `watchfiles` and
reads a changed folder again at once (and the shared folder after every quiet
second, which only stats its entries), so `status()["skills"]` — the shared skills'
short forms, which the controller routes with — follows the folder within about a
second; the thread stops with the provider.
"""

from __future__ import annotations

import logging
import re
import shlex
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aios_protocol.errors import CommandNotAllowed, ToolFailed, ToolTimeout
from aios_protocol.tools import summarize_input, summarize_result
from aios_runtime import shipped
from aios_runtime.settings import Settings
from aios_runtime.users import OWNER, user_skills_dir
from aios_runtime.workdir import resolve_in_workdir
from executor.providers.base import RiskLevel, ToolCall, ToolEntry, ToolProvider
from executor.sandbox.argv_policy import CommandPolicy, check_path_args, split_command
from executor.skills.catalog import (
    HELP_TIMEOUT,
    LOCALES,
    FolderScan,
    HelpRun,
    Skill,
    bad_name,
    skill_body,
)
from executor.skills.examples import seed_examples
from executor.skills.install import install_skill_from

if TYPE_CHECKING:
    from executor.registry import AppRecord
    from executor.toolbox import ExecutorToolbox

__all__ = ["EXAMPLES", "SkillsProvider", "rank_skills", "substitute_arguments"]

log = logging.getLogger("aios.executor.skills")

# the shipped example skills (copied into each skills folder: `seed_examples`)
EXAMPLES = shipped.EXAMPLE_SKILLS
SEARCH_LIMIT = 20
CONTENT_CHARS = 8_000  # of one skill's content in a search answer
STATUS_LIMIT = 500  # skills in `status()`
_WATCH_DEBOUNCE_MS = 200
_WATCH_WAKE_MS = 1_000  # how often the watcher checks which folders to watch

_EXIT_MEANINGS = {0: "success", 1: "bad arguments or a general failure"}


def _entry(
    name: str,
    description: str,
    schema: dict[str, Any],
    risk: RiskLevel,
    confirm: bool,
    safe: bool,
    size: int,
) -> ToolEntry:
    return ToolEntry(
        name=name,
        description=description,
        provider=SkillsProvider.name,
        input_schema={"type": "object", "additionalProperties": False, **schema},
        risk_level=risk,
        requires_confirmation=confirm,
        concurrency_safe=safe,
        max_result_size_chars=size,
    )


def _entries(settings: Settings) -> list[ToolEntry]:
    output = 4 * settings.limits.output_bytes
    return [
        _entry(
            "search_skills",
            "Find installed skills by keyword (empty: all); each with name, kind "
            "(executable | markdown | folder), summary, content (an executable's --help, "
            "a Markdown skill's steps), source and folder",
            {
                "properties": {"keyword": {"type": "string", "maxLength": 200}},
                "required": ["keyword"],
            },
            "read",
            False,
            True,
            400_000,
        ),
        _entry(
            "skill",
            "Use an installed skill by name: answers its steps (a SKILL.md's body, with "
            "`$ARGUMENTS` and `$1`, `$2`, … replaced by `arguments`) to follow now, and "
            "the tools it allows; for the rest of this request only those tools work (a "
            "skill marked `context: fork` runs as a sub-agent, and only it is held); the "
            "steps in `language` when the skill has them in it",
            {
                "properties": {
                    "name": {"type": "string", "minLength": 1, "maxLength": 200},
                    "arguments": {"type": "string", "maxLength": 8000},
                    "language": {"enum": list(LOCALES)},
                },
                "required": ["name"],
            },
            "read",
            False,
            False,
            400_000,
        ),
        _entry(
            "run_command",
            "Run an installed executable skill: command = '<skill name> [arguments]' "
            "(argv, no shell), answering in `language` (its LANG); answers returncode, "
            "stdout, stderr",
            {
                "properties": {
                    "command": {
                        "anyOf": [
                            {"type": "string", "minLength": 1, "maxLength": 8000},
                            {"type": "array", "items": {"type": "string"}, "minItems": 1},
                        ]
                    },
                    "language": {"enum": list(LOCALES)},
                },
                "required": ["command"],
            },
            "execute",
            False,
            False,
            output,
        ),
        _entry(
            "install_skill",
            "Install a skill file or SKILL.md folder from the app's workspace into the "
            "shared skills folder (an executable loses its extension and must answer "
            "--help); every app can then use it",
            {
                "properties": {
                    "path": {"type": "string", "minLength": 1, "maxLength": 1000}
                },
                "required": ["path"],
            },
            "system",
            True,
            False,
            100_000,
        ),
        _entry(
            "reload_skills",
            "Read every skills folder again; answers how many skills there are and the "
            "broken ones with their errors",
            {"properties": {}},
            "read",
            False,
            False,
            200_000,
        ),
    ]


def _settings_of(config: Any) -> Settings:
    return config if isinstance(config, Settings) else Settings()


def _cjk_pairs(text: str) -> set[str]:
    chars = [c for c in text if "\u3400" <= c <= "\u9fff"]
    return {a + b for a, b in zip(chars, chars[1:], strict=False)}


def _said_as_word(name: str, text: str) -> bool:
    """`name` in `text`, not inside a longer name ("temp_convert2")."""
    edge = "A-Za-z0-9_\\-"
    return re.search(rf"(?<![{edge}]){re.escape(name)}(?![{edge}])", text) is not None


def _score(skill: Skill, keyword: str) -> float:
    """How well `skill` matches `keyword` (0: not at all): its name first (said
    anywhere in it as a word, or one of its words), then its summary, then its content; CJK keywords also by shared character pairs."""
    said = keyword.lower().split()
    if not said:
        return 1.0
    # short English words ("to", "a") match everywhere: evidence only when alone
    words = [w for w in said if len(w) >= 3 or not w.isascii()] or said
    # every language's summary and help: a person asks in theirs
    name, summary, content = (
        skill.name.lower(),
        " \n".join(dict.fromkeys([skill.summary, *skill.summaries.values()])).lower(),
        " \n".join(dict.fromkeys([skill.content, *skill.contents.values()])).lower(),
    )
    score = 0.0
    if _said_as_word(name, keyword.lower()):  # "运行技能temp_convert": its exact name
        score += 10
    for word in words:
        if word == name:
            score += 10
        elif word in name:
            score += 5
        if word in summary:
            score += 3
        elif word in content:
            score += 1
    phrase = " ".join(words)
    if len(words) > 1 and phrase in summary:
        score += 3
    pairs = _cjk_pairs(phrase)
    if pairs and score == 0:
        shared = pairs & _cjk_pairs(summary)
        score += 1.5 * len(shared) + 0.5 * len(pairs & _cjk_pairs(content) - shared)
    return score


def substitute_arguments(body: str, arguments: str) -> str:
    """`body` with `$ARGUMENTS` replaced by `arguments` and `$1`, `$2`, … by its
    words (shell-like quoting; a missing word is empty)."""
    try:
        words = shlex.split(arguments)
    except ValueError:
        words = arguments.split()

    def word(match: re.Match[str]) -> str:
        index = int(match.group(1)) - 1
        return words[index] if 0 <= index < len(words) else ""

    return re.sub(r"\$([1-9][0-9]?)", word, body.replace("$ARGUMENTS", arguments))


def rank_skills(skills: list[Skill], keyword: str) -> list[Skill]:
    """The skills matching `keyword`, best first (by name on a tie); every skill, by
    name, for an empty keyword."""
    scored = [(score, s) for s in skills if (score := _score(s, keyword)) > 0]
    scored.sort(key=lambda pair: (-pair[0], not pair[1].usable, pair[1].name))
    return [skill for _score_, skill in scored]


def _found(skill: Skill) -> dict[str, Any]:
    content = skill_body(skill) if skill.usable else skill.content
    if len(content) > CONTENT_CHARS:
        content = (
            content[:CONTENT_CHARS] + f"\n…[cut {len(content) - CONTENT_CHARS} characters]"
        )
    found = {**skill.listed(), "content": content}
    if skill.contents:  # an executable's help in each language
        found["contents"] = {
            language: text[:CONTENT_CHARS] for language, text in skill.contents.items()
        }
    if skill.kind == "folder":
        found["allowed_tools"] = (
            None if skill.allowed_tools is None else list(skill.allowed_tools)
        )
        found["metadata"] = skill.metadata
    if skill.usable:
        found["use"] = (
            f'run_command {{"command": "{skill.name} …"}} (see its --help above)'
            if skill.kind == "executable"
            else "read the content and follow its steps with the tools you have"
        )
    return found


class SkillsProvider(ToolProvider):
    """The four skills tools over the shared folder and the apps' `skills/` folders."""

    name = "skills"

    def __init__(
        self,
        toolbox: ExecutorToolbox,
        shared: Path,
        *,
        examples: Path | None = EXAMPLES,
        watch: bool = True,
    ) -> None:
        super().__init__(toolbox.settings)
        self.toolbox = toolbox
        self.shared = Path(shared).resolve()
        self.examples = examples
        self._watch_wanted = watch
        self.help_timeout = HELP_TIMEOUT  # seconds one `--help` may take
        self._shared_scan = FolderScan(self.shared, "shared", self._run_help)
        self._app_scans: dict[tuple[str, Path], FolderScan] = {}
        self._user_scans: dict[str, FolderScan] = {}
        self._scans_lock = threading.Lock()
        self._snapshot: list[Skill] = []
        self.generation = 0  # counts the shared folder's readings
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._examples_lock = threading.Lock()
        self._synced: set[Path] = set()  # the folders whose examples are up to date

    @classmethod
    def declared_tools(cls, config: Any) -> list[ToolEntry]:
        return _entries(_settings_of(config))

    # ------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Copy the examples in (or bring them up to date); read and watch in the
        background."""
        self._stopping.clear()
        try:
            self._sync_examples(self.shared)
        except OSError as exc:
            self._state, self._error = "failed", f"the skills folder cannot be made: {exc}"
            return
        self._state, self._error = "starting", None
        self._thread = threading.Thread(target=self._run, name="aios-skills", daemon=True)
        self._thread.start()

    def _sync_examples(self, folder: Path) -> None:
        """The examples in `folder`, once a run (`seed_examples`); what changed is
        said in the log, and so is each copy kept because the user changed it."""
        with self._examples_lock:
            if folder in self._synced:
                return
            done = seed_examples(folder, self.examples)
            self._synced.add(folder)
        if done.copied:
            log.info("example skills copied into %s: %s", folder, ", ".join(done.copied))
        if done.updated:
            log.info(
                "example skills brought up to date in %s: %s",
                folder,
                ", ".join(done.updated),
            )
        if done.kept:
            log.info(
                "example skills kept as the user changed them in %s (a newer version "
                "ships, not copied over them): %s",
                folder,
                ", ".join(done.kept),
            )

    def stop(self) -> None:
        self._stopping.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)
        self._state = "stopped"

    def status(self) -> dict[str, Any]:
        skills = self._snapshot
        return {
            "state": self._state,
            "error": self._error,
            "folder": str(self.shared),
            "generation": self.generation,
            "skills": [s.listed() for s in skills[:STATUS_LIMIT]],
        }

    def _run(self) -> None:
        try:
            self._refresh_shared()
        except Exception as exc:  # a bug in reading must not kill the provider
            log.exception("the skills folder could not be read")
            self._state, self._error = "failed", f"{type(exc).__name__}: {exc}"
            return
        if self._stopping.is_set():
            return
        self._state = "running"
        if self._watch_wanted:
            self._watch()

    # ------------------------------------------------------------- watching

    def _watched(self) -> tuple[str, ...]:
        folders = [self.shared]
        folders += [r.workdir / "skills" for r in self.toolbox.registry.all()]
        return tuple(sorted(str(f) for f in folders if f.is_dir()))

    def _watch(self) -> None:
        import watchfiles

        while not self._stopping.is_set():
            paths = self._watched()
            if not paths:
                self._stopping.wait(_WATCH_WAKE_MS / 1000)
                continue
            try:
                for changes in watchfiles.watch(
                    *paths,
                    watch_filter=None,
                    debounce=_WATCH_DEBOUNCE_MS,
                    step=50,
                    stop_event=self._stopping,
                    rust_timeout=_WATCH_WAKE_MS,
                    yield_on_timeout=True,
                    raise_interrupt=False,
                ):
                    if changes:
                        self._changed({Path(path) for _change, path in changes})
                    else:  # a quiet second: catch what came before the watch was set
                        self._refresh_shared()
                    if self._watched() != paths:
                        break  # a folder came or went: watch the new set
                else:
                    continue
            except Exception:  # the folder vanished mid-watch, inotify ran out…
                log.warning("watching the skills folders failed; retrying", exc_info=True)
                self._stopping.wait(1.0)
                continue
            self._refresh_shared()  # what changed while the watch was rebuilt

    def _changed(self, paths: set[Path]) -> None:
        if any(self.shared in p.parents or p == self.shared for p in paths):
            self._refresh_shared()
        with self._scans_lock:
            scans = list(self._app_scans.values())
        for scan in scans:
            if any(scan.folder in p.parents for p in paths):
                scan.scan()

    def _refresh_shared(self) -> list[Skill]:
        skills = self._shared_scan.scan()
        if [s.listed() for s in skills] != [s.listed() for s in self._snapshot]:
            self.generation += 1
        self._snapshot = skills
        return skills

    # -------------------------------------------------------------- reading

    def _run_help(self, path: Path, folder: Path, lang: str) -> HelpRun:
        """`<path> --help` in the sandbox with `LANG=lang`: a scratch workdir, the
        skill's folder readable."""
        with tempfile.TemporaryDirectory(prefix="aios-skill-help-") as scratch:
            where = Path(scratch).resolve()
            run = self.toolbox.sandbox.run(
                [str(path), "--help"],
                workdir=where,
                cwd=where,
                timeout=self.help_timeout,
                hide=[str(r.workdir) for r in self.toolbox.registry.all()],
                readable=[str(folder)],
                lang=lang,
            )
        return HelpRun(
            run.stdout, run.stderr, run.returncode, run.timed_out, self.help_timeout
        )

    def _app_scan(self, app: AppRecord) -> FolderScan:
        key = (app.app_id, app.workdir)
        with self._scans_lock:
            scan = self._app_scans.get(key)
            if scan is None:
                for old in [k for k in self._app_scans if k[0] == app.app_id]:
                    del self._app_scans[old]
                scan = self._app_scans[key] = FolderScan(
                    app.workdir / "skills", "workspace", self._run_help
                )
        return scan

    def _installed_folder(self, app: AppRecord | None) -> Path:
        """Where the skills of the user `app` acts for are installed."""
        if app is None or app.user_id == OWNER:
            return self.shared
        return self._user_folder(app.user_id)

    def _user_folder(self, user_id: str) -> Path:
        """`user_id`'s own skills folder, seeded with the examples on first use."""
        folder = user_skills_dir(self.toolbox.state_dir, user_id)
        self._sync_examples(folder)
        return folder

    def _own(self, user_id: str) -> list[Skill]:
        """The skills `user_id` (not the owner) installed."""
        folder = self._user_folder(user_id)
        with self._scans_lock:
            scan = self._user_scans.get(user_id)
            if scan is None:
                scan = self._user_scans[user_id] = FolderScan(
                    folder, "shared", self._run_help
                )
        return scan.scan()

    def installed_for(self, user_id: str, *, fresh: bool = True) -> list[Skill]:
        """The installed skills `user_id` sees, by name: the shared ones and, for
        another user than the owner, their own in place of a shared one of the same
        name. `fresh` reads the shared folder again; else its last reading (the
        watcher's, at most about a second old) is used, so a listing never waits for
        a slow `--help` there."""
        shared = self._refresh_shared() if fresh else self._snapshot
        if user_id == OWNER:
            return shared
        by_name = {s.name: s for s in shared}
        by_name.update({s.name: s for s in self._own(user_id)})
        return [by_name[name] for name in sorted(by_name)]

    def _installed(self, app: AppRecord | None) -> list[Skill]:
        """The installed skills the user of `app` sees."""
        return self.installed_for(OWNER if app is None else app.user_id)

    def skills_for(self, app: AppRecord | None) -> list[Skill]:
        """Every skill `app` sees, by name: the installed ones, its own in their place."""
        by_name = {s.name: s for s in self._installed(app)}
        if app is not None:
            by_name.update({s.name: s for s in self._app_scan(app).scan()})
        return [by_name[name] for name in sorted(by_name)]

    def status_for(self, user_id: str = OWNER) -> dict[str, Any]:
        """`status()` with the skills `user_id` sees, and their own folder."""
        if user_id == OWNER:
            return self.status()
        skills = self.installed_for(user_id, fresh=False)
        return {
            **self.status(),
            "folder": str(user_skills_dir(self.toolbox.state_dir, user_id)),
            "skills": [s.listed() for s in skills[:STATUS_LIMIT]],
        }

    def prompt_text(self) -> str:
        return self.prompt_for(OWNER)

    def prompt_for(self, user_id: str = OWNER) -> str:
        """What a model is told about the skills tools, naming the installed skills
        `user_id` may use (never another user's)."""
        skills = self.installed_for(user_id, fresh=False)
        names = [f"{s.name} ({s.summary})" for s in skills if s.usable][:20]
        listed = f" Installed: {'; '.join(names)}." if names else ""
        return (
            "Skills: `search_skills` finds them by keyword; an executable skill runs with "
            "`run_command` ('<name> --option value', no shell); a Markdown skill's "
            "content is steps to follow with the other tools; `install_skill` asks the "
            f"user first.{listed}"
        )

    # ---------------------------------------------------------------- calls

    def input_summary(self, entry: ToolEntry, args: dict[str, Any]) -> str:
        """`run_command` is logged as `shell_exec` is (the program, never its
        arguments); the other tools by their arguments' shapes."""
        if entry.name == "run_command":
            return summarize_input("shell_exec", args)
        return super().input_summary(entry, args)

    def result_summary(self, entry: ToolEntry, args: dict[str, Any], value: Any) -> str:
        if entry.name == "run_command":
            return summarize_result("shell_exec", args, value)
        return super().result_summary(entry, args, value)

    def call(self, call: ToolCall) -> Any:
        if call.tool == "search_skills":
            return self._search(call.app, str(call.args.get("keyword") or ""))
        if call.tool == "run_command":
            return self._run_command(call)
        if call.tool == "skill":
            return self._use(
                call.app,
                call.args["name"],
                call.args.get("arguments") or "",
                call.args.get("language"),
            )
        if call.tool == "install_skill":
            return self._install(call.app, call.args["path"])
        if call.tool == "reload_skills":
            return self._reload(call.app)
        raise ToolFailed(f"the skills provider has no tool {call.tool!r}")

    def _use(
        self, app: AppRecord, name: str, arguments: str, language: str | None = None
    ) -> dict[str, Any]:
        """A skill's steps (in `language` when it has them in it) with the arguments
        in place, and the tools it allows."""
        skill = next((s for s in self.skills_for(app) if s.name == name), None)
        if skill is None:
            raise ToolFailed(f"no skill named {name!r} (search_skills lists them)")
        if not skill.usable:
            raise ToolFailed(f"the skill {name!r} cannot be used: {skill.error}")
        if skill.kind == "executable":
            command = f"{skill.name} {arguments}".strip()
            steps = (
                f"{skill.content_in(language or '')}\n\nRun it with run_command: {command}"
            )
            allowed: list[str] | None = ["run_command"]
        else:
            steps = substitute_arguments(skill_body(skill, language), arguments)
            allowed = None if skill.allowed_tools is None else list(skill.allowed_tools)
        used: dict[str, Any] = {
            "name": skill.name,
            "kind": skill.kind,
            "steps": steps,
            "allowed_tools": allowed,
        }
        if skill.forks:  # the caller runs the steps as a sub-agent (`sub_turn_id`)
            used["context"] = "fork"
        return used

    def _search(self, app: AppRecord, keyword: str) -> dict[str, Any]:
        matches = rank_skills(self.skills_for(app), keyword.strip())
        return {
            "keyword": keyword,
            "total": len(matches),
            "skills": [_found(s) for s in matches[:SEARCH_LIMIT]],
        }

    def _check_interpreter(self, skill: Skill, app: Any) -> None:
        """A skill the app wrote into its own workspace runs only through a whitelisted
        interpreter (its `#!` line) while the command whitelist is on; a shared skill
        was installed with the user's yes (`install_skill`)."""
        sandbox = self.toolbox.settings.tool_sandbox
        policy = CommandPolicy.build(
            sandbox.enable_shell_whitelist, sandbox.shell_whitelist, app.shell_whitelist
        )
        if policy.whitelist is None:
            return
        with open(skill.path, "rb") as handle:
            first = handle.readline(256)
        words = (
            first[2:].decode("utf-8", "replace").split() if first.startswith(b"#!") else []
        )
        if words and Path(words[0]).name == "env":
            words = words[1:]
        interpreter = Path(words[0]).name if words else ""
        if interpreter not in policy.whitelist:
            raise CommandNotAllowed(
                f"{skill.name} is a skill of this app's own workspace and its interpreter "
                f"{interpreter or '(none)'!r} is not in the command whitelist; install it "
                "(install_skill, with the user's yes) to run it as a shared skill"
            )

    def _run_command(self, call: ToolCall) -> dict[str, Any]:
        argv = split_command(call.args["command"])
        name = argv[0]
        if bad_name(name):
            raise ToolFailed(
                f"{name!r} is not a skill name: run_command runs installed skills by name",
                code="skill_not_found",
            )
        skill = next((s for s in self.skills_for(call.app) if s.name == name), None)
        if skill is None:
            raise ToolFailed(
                f"no skill named {name!r} (search_skills lists them)",
                code="skill_not_found",
            )
        if skill.error:
            raise ToolFailed(
                f"the skill {name} is broken: {skill.error}", code="skill_broken"
            )
        if skill.kind != "executable":
            raise ToolFailed(
                f"{name} is a {skill.kind} skill: read its content (search_skills) and "
                "follow it instead of running it",
                code="skill_not_executable",
            )
        app = call.app
        check_path_args(argv[1:], app.workdir, app.workdir)  # as for shell_exec
        if skill.source == "workspace":
            self._check_interpreter(skill, app)
        run = self.toolbox.sandbox.run(
            [str(skill.path), *argv[1:]],
            workdir=app.workdir,
            cwd=app.workdir,
            timeout=call.timeout,
            readable=[str(skill.folder)],
            hide=self.toolbox.hidden_from(app),
            lang=LOCALES.get(str(call.args.get("language") or ""), "C.UTF-8"),
        )
        output = {"stdout": run.stdout, "stderr": run.stderr, "truncated": run.truncated}
        if run.timed_out:
            raise ToolTimeout(
                f"{name} killed after {call.timeout:g}s (with its child processes)",
                detail={"returncode": None, **output},
            )
        code = run.returncode
        return {
            "returncode": code,
            **output,
            "ok": code == 0,
            "meaning": _EXIT_MEANINGS.get(code, f"the skill's own error code {code}")
            if code is not None and code >= 0
            else f"killed by signal {-(code or 0)}",
        }

    def _install(self, app: AppRecord, path: str) -> dict[str, Any]:
        source = resolve_in_workdir(app.workdir, path)
        if not source.exists():
            raise ToolFailed(
                f"{path} does not exist in the workspace", code="file_not_found"
            )
        installed = install_skill_from(source, self._installed_folder(app), self._run_help)
        self._installed(app)
        return installed

    def _reload(self, app: AppRecord) -> dict[str, Any]:
        self._shared_scan.forget()
        with self._scans_lock:
            mine = self._user_scans.get(app.user_id)
        if mine is not None:
            mine.forget()
        self._app_scan(app).forget()
        skills = self.skills_for(app)
        return {
            "skills": len(skills),
            "names": [s.name for s in skills],
            "broken": [{"name": s.name, "error": s.error} for s in skills if s.error],
        }
