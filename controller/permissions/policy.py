"""Which planned steps are risky and need the user's yes first.

What a tool needs is stated by its entry in the executor's listing (`ToolInfo`,
`tool_entries(app_id)`): a step whose tool `requires_confirmation` pauses the plan
(`process_start` among the atomic tools; any provider's tool that says so). When
the listing cannot be had, the atomic provider's declared entries stand in. Beside
the entries, finer rules judge the arguments of three atomic tools:

- `file_write` that overwrites an existing file which is not one of the app's own
  files. An app's own files are those it created itself through a planned
  `file_write` (recorded here, per app, in `<state_dir>/permissions.json`); a file
  that was already there (shipped with the app, put there by the user, written by
  another launch before this record existed) is not. Appending is not overwriting.
  A path only known when the plan runs (`{{step_N…}}`) counts as an overwrite;
- `db_query` whose SQL writes: `INSERT`, `UPDATE`, `DELETE`, `REPLACE`, `DROP`,
  `ALTER`, `CREATE` (or a statement only known when the plan runs);
- `file_import`, whose question counts the audio files it would copy and names the
  folder they come from;
- `shell_exec` of a program outside the command whitelist (config ∪ the app's
  manifest), when the user allowed asking (`tool_sandbox.ask_outside_whitelist:
  true`); otherwise the executor refuses it as before and nothing is asked (the
  program is named in `not_allowed`, for a caller that refuses it up front).

Any other tool that asks first is said in the reader's words from the sentence table
(`requires_confirmation.<tool>`, e.g. installing a skill; else one for its provider
or a general one), never by its id or its developer's English description: those are
the step's technical `detail`.

"Allow always" is remembered per app + tool (+ program for `shell_exec` and
`process_start`) in the same file. A plan none of whose risky steps are covered by
such a rule pauses; `review` answers what to ask and which programs outside the
whitelist the executor should accept for this one plan (`approved_commands`).
"""

from __future__ import annotations

import json
import os
import shlex
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from aios_protocol.errors import AiosError
from aios_protocol.messages import ToolInfo
from aios_protocol.strings import user_message
from aios_protocol.tools import declared_tools, sql_writes
from aios_runtime.audio import audio_files, folder_of
from aios_runtime.files import atomic_write_text, read_state
from aios_runtime.settings import Settings
from aios_runtime.users import OWNER
from aios_runtime.workdir import resolve_in_workdir
from controller.pipeline.context import tr

__all__ = ["PermissionPolicy", "Review", "RiskyStep", "sql_writes"]

_MAX_OWN_FILES = 5000


def _templated(value: Any) -> bool:
    return isinstance(value, str) and "{{" in value


def _argv(cmd: Any, extra: Any = None) -> list[str]:
    if isinstance(cmd, list):
        argv = [str(part) for part in cmd]
    elif isinstance(cmd, str):
        try:
            argv = shlex.split(cmd)
        except ValueError:
            argv = [cmd]
    else:
        argv = []
    if isinstance(extra, list):
        argv += [str(part) for part in extra]
    return argv


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class RiskyStep:
    """One step that needs confirmation, with the sentence the user reads."""

    step_id: int
    tool: str
    # process_start | file_overwrite | db_write | command_outside_whitelist |
    # requires_confirmation (any other tool whose entry says so)
    kind: str
    sentence: str
    command: str | None = None  # the program, for process_start / shell_exec
    # the tool as its developer states it, for a sentence that does not name it
    detail: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Review:
    """What a plan needs: questions, the programs to approve, the files it creates."""

    risky: list[RiskyStep] = field(default_factory=list)
    allowed_by_rule: list[RiskyStep] = field(default_factory=list)
    outside_whitelist: list[str] = field(default_factory=list)
    # programs outside the whitelist while asking is off: the executor will refuse them
    not_allowed: list[str] = field(default_factory=list)
    new_files: dict[int, str] = field(default_factory=dict)  # step_id → relative path

    @property
    def needs_confirmation(self) -> bool:
        return bool(self.risky)


def _own_key(app_id: str, user: str) -> str:
    """Whose created files a set holds: the app's for the owner (the older name), else
    the app's for that user."""
    return app_id if user == OWNER else f"{app_id}@{user}"


class PermissionPolicy:
    """Classifies planned steps; remembers "allow always" and each app's own files."""

    def __init__(
        self,
        path: Path,
        settings: Callable[[], Settings],
        app_whitelist: Callable[[str], list[str] | None] = lambda app_id: None,
        tool_entries: Callable[[str], list[ToolInfo]] | None = None,
    ):
        self.path = Path(path)
        self._settings = settings
        self._app_whitelist = app_whitelist
        self._tool_entries = tool_entries
        self._lock = threading.Lock()
        self._always: set[tuple[str, str, str]] = set()
        self._own: dict[str, set[str]] = {}
        self._load()

    # ------------------------------------------------------------ storage

    def _load(self) -> None:
        """The user's saved choices; a damaged file grants nothing (it is set aside
        and named, and every risky step asks again)."""
        saved = read_state(self.path, _parse_permissions, "a permissions file")
        if saved is not None:
            self._always, self._own = saved

    def _save(self) -> None:
        body = {
            "always": [
                {"app_id": a, "tool": t, "command": c or None}
                for a, t, c in sorted(self._always)
            ],
            "own_files": {app: sorted(paths) for app, paths in sorted(self._own.items())},
        }
        atomic_write_text(
            self.path, json.dumps(body, ensure_ascii=False, indent=1), mode=0o600
        )

    def remember(self, app_id: str, steps: list[RiskyStep]) -> None:
        """ "Allow always": these kinds of step of `app_id` are not asked again."""
        with self._lock:
            for step in steps:
                self._always.add((app_id, step.tool, step.command or ""))
            self._save()

    def record_created(
        self,
        app_id: str,
        new_files: dict[int, str],
        results: dict[str, Any],
        *,
        user: str = OWNER,
    ) -> None:
        """The files a plan created (its `file_write` steps that succeeded) become own
        (of that app for that user)."""
        added = False
        with self._lock:
            own = self._own.setdefault(_own_key(app_id, user), set())
            for step_id, rel in new_files.items():
                result = results.get(f"step_{step_id}")
                if (
                    isinstance(result, dict)
                    and result.get("status") == "ok"
                    and rel not in own
                ):
                    own.add(rel)
                    added = True
            if added:
                while len(own) > _MAX_OWN_FILES:
                    own.pop()
                self._save()

    # ------------------------------------------------------------- review

    def review(
        self,
        app_id: str,
        workdir: Path | None,
        plan: list[dict[str, Any]],
        *,
        language: str = "zh-CN",
        user: str = OWNER,
    ) -> Review:
        """Classify every step of `plan` (as the app wrote it, before templating); the
        sentences are in `language` (a clause after "will" / "将要"). `workdir` is the
        one of `user`, whose files the app created count as its own."""
        review = Review()
        entries = self._entries(app_id)
        for step in plan:
            found = self._classify(
                app_id, workdir, step, review, entries, language, _own_key(app_id, user)
            )
            if found is None:
                continue
            with self._lock:
                rule = (app_id, found.tool, found.command or "")
                covered = rule in self._always
            (review.allowed_by_rule if covered else review.risky).append(found)
        return review

    def _entries(self, app_id: str) -> dict[str, ToolInfo]:
        """The app's tools by name, from the listing (or the atomic declared entries)."""
        entries: list[ToolInfo] | None = None
        if self._tool_entries is not None:
            try:
                entries = self._tool_entries(app_id)
            except Exception:  # the executor busy or restarting
                entries = None
        if entries is None:
            limits = self._settings().limits
            entries = declared_tools(limits.response_bytes, limits.output_bytes)
        return {entry.name: entry for entry in entries}

    def _whitelist(self, app_id: str) -> set[str] | None:
        sandbox = self._settings().tool_sandbox
        if not sandbox.enable_shell_whitelist:
            return None
        return set(sandbox.shell_whitelist) | set(self._app_whitelist(app_id) or ())

    def _ask_outside(self) -> bool:
        return self._settings().tool_sandbox.ask_outside_whitelist

    def _classify(
        self,
        app_id: str,
        workdir: Path | None,
        step: dict[str, Any],
        review: Review,
        entries: dict[str, ToolInfo],
        language: str,
        own_key: str,
    ) -> RiskyStep | None:
        tool = str(step.get("tool") or "")
        given = step.get("args")
        args: dict[str, Any] = given if isinstance(given, dict) else {}
        step_id = int(step.get("step_id") or 0)
        entry = entries.get(tool)
        confirm = entry is not None and entry.requires_confirmation
        if tool in ("process_start", "shell_exec"):
            argv = _argv(
                args.get("cmd"), args.get("args") if tool == "process_start" else None
            )
            program = os.path.basename(argv[0]) if argv else ""
            line = (
                _short(shlex.join(argv))
                if argv
                else tr(language, "(空命令)", "(no command)")
            )
            whitelist = self._whitelist(app_id)
            outside = whitelist is not None and program not in whitelist
            if outside and program:
                if self._ask_outside():
                    review.outside_whitelist.append(program)
                else:
                    review.not_allowed.append(program)
            if tool == "process_start" and confirm:
                where = tr(language, "在后台", " in the background")
                where = where if args.get("background") else ""
                sentence = tr(
                    language,
                    f"{where}启动程序：{line}",
                    f"start the program{where}: {line}",
                )
                return RiskyStep(step_id, tool, "process_start", sentence, command=program)
            if outside and self._ask_outside() and program:
                sentence = tr(
                    language,
                    f"运行白名单之外的命令：{line}",
                    f"run a command outside the whitelist: {line}",
                )
                return RiskyStep(
                    step_id, tool, "command_outside_whitelist", sentence, command=program
                )
            if confirm:
                sentence = tr(language, f"运行命令：{line}", f"run the command: {line}")
                return RiskyStep(
                    step_id, tool, "requires_confirmation", sentence, command=program
                )
            return None
        if tool == "file_write":
            found = self._file_write(own_key, workdir, step_id, args, review, language)
            if found is not None or not confirm:
                return found
        if tool == "db_query":
            sql = args.get("sql")
            if _templated(sql) or (isinstance(sql, str) and sql_writes(sql)):
                dsn, said = str(args.get("dsn") or ""), _short(str(sql))
                sentence = tr(
                    language,
                    f"修改数据库 {dsn}：{said}",
                    f"change the database {dsn}: {said}",
                )
                return RiskyStep(step_id, tool, "db_write", sentence)
        if tool == "file_import" and confirm and not _templated(args.get("source")):
            sentence = self._import_sentence(args, language)
            return RiskyStep(step_id, tool, "requires_confirmation", sentence)
        if confirm and entry is not None:
            return RiskyStep(
                step_id,
                tool,
                "requires_confirmation",
                _tool_sentence(entry, args, language),
                detail=_technical(entry),
            )
        return None

    def _import_sentence(self, args: dict[str, Any], language: str) -> str:
        """What a `file_import` would copy: how many audio files, how large, from
        where (found as the executor will find them) and into which folder."""
        source = folder_of(str(args.get("source") or ""))
        dest = str(args.get("dest") or "").strip("/") or "."
        if not source.is_dir():
            return tr(
                language,
                f"从 {source} 导入音频文件（这个文件夹不存在）",
                f"import audio files from {source} (no such folder)",
            )
        limits = self._settings().limits
        found, too_large = audio_files(
            source, max_bytes=limits.file_size_bytes, limit=limits.file_list_max
        )
        total = sum(f.size for f in found)
        size = (
            f"{total / (1 << 20):.1f} MB" if total >= 1 << 20 else f"{-(-total // 1024)} KB"
        )
        sentence = tr(
            language,
            f"从 {source} 复制 {len(found)} 个音频文件（共 {size}）到这个应用的 {dest} 文件夹",
            f"copy {len(found)} audio file{'' if len(found) == 1 else 's'} ({size}) "
            f"from {source} into this app's {dest} folder",
        )
        if too_large:
            sentence += tr(
                language,
                f"；另有 {too_large} 个太大，不复制",
                f"; {too_large} more are too large and stay where they are",
            )
        return sentence

    def _file_write(
        self,
        own_key: str,
        workdir: Path | None,
        step_id: int,
        args: dict[str, Any],
        review: Review,
        language: str,
    ) -> RiskyStep | None:
        path = args.get("path")
        if str(args.get("mode") or "overwrite") == "append":
            return None
        if _templated(path):
            named = _short(str(path))
            sentence = tr(
                language,
                f"写入一个运行时才确定的文件：{named}",
                f"write a file named only when the plan runs: {named}",
            )
            return RiskyStep(step_id, "file_write", "file_overwrite", sentence)
        found = _in_workdir(workdir, path)
        if found is None:
            return None  # outside the workdir or malformed: the executor refuses it
        target, rel = found
        if not target.exists():
            review.new_files[step_id] = rel
            return None
        with self._lock:
            own = rel in self._own.get(own_key, set())
        if own:
            return None
        size = target.stat().st_size if target.is_file() else 0
        content = args.get("content")
        length = len(content) if isinstance(content, str) else len(json.dumps(content))
        sentence = tr(
            language,
            f"覆盖已有文件 workspace/{rel}（原有 {size} 字节，新内容 {length} 个字符）",
            f"overwrite the existing file workspace/{rel} ({size} bytes now, "
            f"{length} characters new)",
        )
        return RiskyStep(step_id, "file_write", "file_overwrite", sentence)


def _tool_sentence(entry: ToolInfo, args: dict[str, Any], language: str) -> str:
    """What a step of a tool that asks first does, in the reader's words: the
    sentence table's own for that tool (`requires_confirmation.<tool>`), else for its
    kind of provider, else the general one; never the tool's id or description."""
    said: dict[str, str] = {}
    path = args.get("path")
    if isinstance(path, str) and path and not _templated(path):
        said["path"] = _short(path, 120)
    if entry.provider.startswith("mcp:"):
        said["server"] = entry.provider.removeprefix("mcp:")
        return user_message("requires_confirmation.mcp", language, **said)
    return user_message(f"requires_confirmation.{entry.name}", language, **said)


def _technical(entry: ToolInfo) -> str:
    """The tool as its developer states it (its id, risk, provider and description):
    the technical detail behind the sentence."""
    what = _short(entry.description or entry.name, 300)
    return f"{entry.name} ({entry.risk_level}, {entry.provider}): {what}"


def _in_workdir(workdir: Path | None, path: Any) -> tuple[Path, str] | None:
    """The real file `path` names as the executor reads it, and its path relative to
    the workdir; None when it is the workdir itself, outside it or malformed."""
    if workdir is None or not isinstance(path, str) or not path:
        return None
    root = Path(os.path.realpath(workdir))
    try:
        target = resolve_in_workdir(root, path)
    except AiosError:
        return None
    return None if target == root else (target, target.relative_to(root).as_posix())


def _parse_permissions(text: str) -> tuple[set[tuple[str, str, str]], dict[str, set[str]]]:
    """`permissions.json` read whole or not at all: one value of the wrong kind makes
    the file damaged, never a permission."""
    raw = json.loads(text)
    if not isinstance(raw, dict):
        raise TypeError(f"a JSON {type(raw).__name__}, not an object")
    rules = raw.get("always", [])
    if not isinstance(rules, list):
        raise TypeError("always is not a list")
    always: set[tuple[str, str, str]] = set()
    for rule in rules:
        command = rule.get("command") if isinstance(rule, dict) else None
        if not (
            isinstance(rule, dict)
            and _text(rule.get("app_id"))
            and _text(rule.get("tool"))
            and (command is None or isinstance(command, str))
        ):
            raise ValueError(f"an always rule is not valid: {str(rule)[:80]}")
        always.add((rule["app_id"], rule["tool"], command or ""))
    files = raw.get("own_files", {})
    if not isinstance(files, dict) or not all(
        isinstance(paths, list) and all(_text(p) for p in paths) for paths in files.values()
    ):
        raise ValueError("own_files is not a map of apps to lists of paths")
    return always, {str(app): set(paths) for app, paths in files.items()}


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value)
