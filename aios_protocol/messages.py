"""The one wire protocol of Triton AIOS.

Every message that crosses a process boundary — controller ⇄ app, app ⇄ executor,
controller ⇄ executor, desktop ⇄ controller — is one of the pydantic models in this
module (S-3x, S-4x, S-5x, S-8x in docs/DESIGN.md). Services validate at their edge
with these models and no other module re-declares a field name. A view's `data`
is a plain dict here, passed on unchanged; the shape each view type's renderers
read is written in `aios_protocol.views`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from aios_protocol.views import Choice, FormInput, upgrade_view_data

__all__ = [
    "build_models",
    "ACTION_TYPES",
    "ATOMIC_TOOLS",
    "JOB_ID_PATTERN",
    "UI_OPS",
    "WINDOW_OPS",
    "RiskLevel",
    "SystemRole",
    "describe_validation_error",
    "parse",
    "Action",
    "ActionPost",
    "ActionRequest",
    "AppInfo",
    "AppRegistration",
    "AppReply",
    "AppStatus",
    "ButtonAction",
    "ChangeColorCommand",
    "ChangeTextCommand",
    "CheckboxAction",
    "ConfirmationDecision",
    "Context",
    "ScheduleJob",
    "ScheduleJobPatch",
    "ScheduleJobState",
    "ScheduleRun",
    "ScheduleToolCall",
    "DatetimeAction",
    "DesktopLayout",
    "FileAction",
    "Event",
    "EventsPage",
    "FormField",
    "HandleRequest",
    "HideCommand",
    "InputAction",
    "InstructionRequest",
    "InstructionResponse",
    "InstructionSource",
    "Language",
    "LayoutChange",
    "LinkAction",
    "Manifest",
    "MoveCommand",
    "OpenRequest",
    "Option",
    "RadioAction",
    "ResizeCommand",
    "RestoreCommand",
    "RotateCommand",
    "RunRequest",
    "RunResponse",
    "SelectAction",
    "ShowCommand",
    "SliderAction",
    "Step",
    "SubmitFormAction",
    "SystemCacheWrite",
    "Task",
    "TaskCancelRequest",
    "ToggleAction",
    "ToolCall",
    "TurnStart",
    "ToolResult",
    "ToolSpec",
    "ToolInfo",
    "ToolsListing",
    "UICommand",
    "UIElement",
    "UISnapshot",
    "UndoCommand",
    "Viewport",
    "WindowCommand",
]


# defer_build: a model's validator is built on its first use, not at import, so each
# process pays only for the models it really exchanges (an app uses a handful). That
# first build is not safe when two threads make it at once (pydantic's rebuild can
# fail with AttributeError in one of them): a process that serves requests on
# threads builds the models it uses first, with `build_models`.
class _Model(BaseModel):
    """Base of wire models: unknown fields are kept, so newer peers stay compatible."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, defer_build=True)

    def dump(self) -> dict[str, Any]:
        """The JSON-ready dict of this model, without unset optional noise."""
        return self.model_dump(mode="json", exclude_none=True)


class _Strict(BaseModel):
    """Base of models whose unknown fields are a mistake worth reporting."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    def dump(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


def describe_validation_error(exc: ValidationError) -> str:
    """One readable line per problem, each naming the field at fault."""
    lines = []
    for err in exc.errors():
        where = ".".join(str(part) for part in err.get("loc", ())) or "(body)"
        lines.append(f"{where}: {err.get('msg', 'invalid')}")
    return "; ".join(lines)


_M = TypeVar("_M", bound=BaseModel)


def parse(model: type[_M], payload: Any) -> _M:
    """Validate `payload` as `model`; raise `InvalidRequest` naming the field at fault."""
    from aios_protocol.errors import InvalidRequest

    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        raise InvalidRequest(
            f"invalid {model.__name__}: {describe_validation_error(exc)}"
        ) from exc


# ------------------------------------------------------------------ steps and tools

ATOMIC_TOOLS: tuple[str, ...] = (
    "http_request",
    "file_read",
    "file_write",
    "file_list",
    "shell_exec",
    "process_start",
    "db_query",
    "cache_get",
    "cache_set",
    "notify",
    "system_info",
    "file_import",
)


class Step(_Model):
    """One planned tool call. `args` may hold `{{step_N.result…}}` placeholders."""

    step_id: int
    tool: Annotated[str, Field(min_length=1, max_length=128)]
    args: dict[str, Any] = Field(default_factory=dict)


class ToolResult(_Model):
    """The outcome of one tool call; failures are data, never a crashed request."""

    tool: str
    status: Literal["ok", "error"]
    result: Any = None
    error: str | None = None
    code: str | None = None
    duration_ms: float = 0.0


class ToolSpec(_Model):
    """A tool as the executor lists it: name, description and JSON schema of its args."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})
    custom: bool = False


RiskLevel = Literal["read", "write", "execute", "network", "system"]


class ToolInfo(ToolSpec):
    """One entry of the executor's tool listing: a tool with the metadata the runtime enforces.

    `input_schema` is the JSON Schema of the arguments; `parameters` carries the same
    schema for readers of `ToolSpec`. `provider` names the source (`atomic`,
    `app:<app_id>`, `skills`, `mcp:<server>`); a tool with `available` false cannot be
    called now and `unavailable_reason` says why.
    """

    description: str
    provider: str
    input_schema: dict[str, Any]
    risk_level: RiskLevel
    requires_confirmation: bool
    concurrency_safe: bool
    max_result_size_chars: int
    available: bool = True
    unavailable_reason: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _one_schema(cls, data: Any) -> Any:
        if isinstance(data, dict):
            if "input_schema" not in data and "parameters" in data:
                data = {**data, "input_schema": data["parameters"]}
            if "parameters" not in data and "input_schema" in data:
                data = {**data, "parameters": data["input_schema"]}
        return data


class ToolsListing(_Model):
    app_id: str
    tools: list[ToolInfo]
    # provider id → {"state": "running"|"starting"|"failed"|"stopped", "error": str|None}
    providers: dict[str, dict[str, Any]] = Field(default_factory=dict)
    # what the providers tell a model about their tools: whole, and by provider id
    prompt: str = ""
    prompts: dict[str, str] = Field(default_factory=dict)


class ToolCall(_Model):
    """A single synchronous tool call (the SDK's `call_tool`)."""

    tool: Annotated[str, Field(min_length=1, max_length=128)]
    args: dict[str, Any] = Field(default_factory=dict)
    app_id: str | None = None
    session_id: str | None = None
    # the user the call acts for (their sandbox's workdir); none: the owner. The
    # controller names any user; an app process acts for the user it runs for only
    user_id: str | None = None


class TurnStart(_Model):
    """An agent loop's new turn (`POST /turns`): the user's next request, which ends
    the skills' holds of the ones before, or, with `parent_turn_id`, a background
    sub-agent's turn, held to its parent's limits."""

    turn_id: Annotated[str, Field(min_length=1, max_length=100)]
    parent_turn_id: Annotated[str, Field(min_length=1, max_length=100)] | None = None
    app_id: str | None = None
    session_id: str | None = None
    user_id: str | None = None  # as in `ToolCall`


class RunRequest(_Model):
    """A step plan for the executor."""

    steps: list[Step]
    app_id: str | None = None
    session_id: str | None = None
    user_id: str | None = None  # as in `ToolCall`
    # programs outside the command whitelist the user allowed for this plan; the
    # executor honours them from the controller (master token) only
    approved_commands: list[str] | None = None


class RunResponse(_Model):
    tool_results: dict[str, ToolResult]


class SystemCacheWrite(_Model):
    """Body of the executor's `POST /cache/system` (controller only): one shared entry."""

    key: Annotated[str, Field(min_length=1, max_length=256)]
    value: Any = None
    ttl: float | None = None


class AppRegistration(_Model):
    """What the controller tells the executor about one app it started."""

    app_id: str
    workdir: str
    token: str
    url: str | None = None
    shell_whitelist: list[str] | None = None
    http_domain_whitelist: list[str] | None = None
    custom_tools: list[ToolSpec] = Field(default_factory=list)
    # the user this process serves alone (its workdir is theirs); none: the owner
    user_id: str | None = None


# ------------------------------------------------------------------------- context


Language = Literal["zh-CN", "en-US"]
"""The user's language: the desktop's (its settings' `ui_language`, else the
browser's), else the settings' `ui_language`, else Chinese. Apps answer in it."""


class Context(_Model):
    """What the controller injects into every call of an app's `handle`.

    `language` is the language the user reads: an app writes its
    messages and labels in it (`Turn.tr(zh, en)`).
    """

    role: str = ""
    workdir: str = ""
    cwd_state: dict[str, Any] = Field(default_factory=dict)
    available_tools: list[str] = Field(default_factory=list)
    session_id: str = ""
    history_summary: str = ""
    tool_results: dict[str, ToolResult] | None = None
    language: Language = "zh-CN"
    # the user this call serves (none: the owner); a call for another user reaches
    # a process of the app that serves that user alone
    user_id: str | None = None


# ------------------------------------------------------------------------ actions

ACTION_TYPES: tuple[str, ...] = (
    "button",
    "submit_form",
    "select",
    "checkbox",
    "radio",
    "input",
    "link",
    "toggle",
    "slider",
    "datetime",
    "file",
)


# A field of a `submit_form` action has the shape of a `form` view's field, and
# an option of select / radio / checkbox that of a form field's option: one each.
FormField = FormInput
Option = Choice
OptionList = list[Union[str, Choice]]


class _ActionBase(_Model):
    """Every action's fields. `item_id` names the `id` of the list item, table
    row or card the control belongs to: the desktop draws it inside that item (an id
    no item has, or none: in the action bar under the view)."""

    label: str = ""
    action_id: Annotated[str, Field(min_length=1, max_length=200)]
    item_id: Annotated[str, Field(max_length=200)] | None = None


class ButtonAction(_ActionBase):
    type: Literal["button"]
    params: dict[str, Any] = Field(default_factory=dict)


class SubmitFormAction(_ActionBase):
    type: Literal["submit_form"]
    fields: list[FormField] = Field(default_factory=list)


class SelectAction(_ActionBase):
    type: Literal["select"]
    options: OptionList = Field(default_factory=list)
    value: Any = None


class CheckboxAction(_ActionBase):
    type: Literal["checkbox"]
    options: OptionList = Field(default_factory=list)
    checked: list[Any] = Field(default_factory=list)


class RadioAction(_ActionBase):
    type: Literal["radio"]
    options: OptionList = Field(default_factory=list)
    value: Any = None


class InputAction(_ActionBase):
    type: Literal["input"]
    placeholder: str | None = None
    value: str | None = None


class LinkAction(_ActionBase):
    type: Literal["link"]
    href: str = ""


class ToggleAction(_ActionBase):
    type: Literal["toggle"]
    on: bool = False


class SliderAction(_ActionBase):
    type: Literal["slider"]
    min: float = 0
    max: float = 100
    step: float = 1
    value: float | None = None


class DatetimeAction(_ActionBase):
    type: Literal["datetime"]
    value: str | None = None


class FileAction(_ActionBase):
    """Files the user chooses (or, with `drop`, drops on the window), each sent in
    pieces in order, one action per piece: `value` = {`name`, `size`, `offset`,
    `data` (the piece in base64)}. An error answer stops that file's pieces. `accept`
    only filters the chooser: the app checks what arrives."""

    type: Literal["file"]
    accept: str = ""
    multiple: bool = True
    drop: bool = False


Action = Annotated[
    Union[
        ButtonAction,
        SubmitFormAction,
        SelectAction,
        CheckboxAction,
        RadioAction,
        InputAction,
        LinkAction,
        ToggleAction,
        SliderAction,
        DatetimeAction,
        FileAction,
    ],
    Field(discriminator="type"),
]


class ActionRequest(_Model):
    """What the system forwards to the app when an action is triggered.

    Only the payload key of the action's type is set: `params` (button),
    `form_values` (submit_form), `selected` (select, radio), `checked` (checkbox),
    `value` (input, slider, datetime, file), `href` (link), `on` (toggle).
    """

    action_id: Annotated[str, Field(min_length=1, max_length=200)]
    type: str | None = None
    params: dict[str, Any] | None = None
    form_values: dict[str, Any] | None = None
    selected: Any = None
    checked: list[Any] | None = None
    value: Any = None
    href: str | None = None
    on: bool | None = None
    session_id: str | None = None


class ActionPost(ActionRequest):
    """Body of `POST /api/apps/<app_id>/action` from the desktop (`language`: the
    desktop's, kept for the session and not forwarded to the app)."""

    language: Language | None = None


# ---------------------------------------------------------------------- UI control

UI_OPS: tuple[str, ...] = (
    "move",
    "resize",
    "hide",
    "show",
    "change_color",
    "change_text",
    "rotate",
)


class _UIBase(_Strict):
    id: Annotated[str, Field(min_length=1, max_length=200)]


class MoveCommand(_UIBase):
    op: Literal["move"]
    x: float
    y: float


class ResizeCommand(_UIBase):
    op: Literal["resize"]
    width: float
    height: float


class HideCommand(_UIBase):
    op: Literal["hide"]


class ShowCommand(_UIBase):
    op: Literal["show"]


class ChangeColorCommand(_UIBase):
    op: Literal["change_color"]
    color: Annotated[str, Field(min_length=1, max_length=64)]


class ChangeTextCommand(_UIBase):
    op: Literal["change_text"]
    text: str


class RotateCommand(_UIBase):
    op: Literal["rotate"]
    degrees: float


class RestoreCommand(_UIBase):
    """Take back earlier commands on element `id`: those of the ops in `changes`
    (`move`, `resize`, `hide`, `change_color`, `change_text`, `rotate`; `show` counts
    as `hide`), or all of them when it is empty. The element is as the page drew it
    again: a moved control back in its place, in its row."""

    op: Literal["restore"]
    changes: list[
        Literal["move", "resize", "hide", "change_color", "change_text", "rotate"]
    ] = Field(default_factory=list)


class UndoCommand(_UIBase):
    """Take back the desktop's latest change to its layout: what the commands of one
    answer changed, as the desktop's own history keeps it (`UISnapshot.undo`); said
    again, the change before that. `id` names the history: `layout`."""

    op: Literal["undo"]
    # the same undo reaches the desktop twice (the answer, the event stream): done once
    ref: Annotated[str, Field(max_length=64)] = ""


WINDOW_OPS: tuple[str, ...] = (
    "open_window",
    "close_window",
    "focus_window",
    "maximize_window",
    "minimize_window",
)


class WindowCommand(_UIBase):
    """Open, close or raise the window of the app whose id is `id`; maximise it
    (opened first when it is not open) or minimise it to the taskbar."""

    op: Literal[
        "open_window", "close_window", "focus_window", "maximize_window", "minimize_window"
    ]


UICommand = Annotated[
    Union[
        MoveCommand,
        ResizeCommand,
        HideCommand,
        ShowCommand,
        ChangeColorCommand,
        ChangeTextCommand,
        RotateCommand,
        RestoreCommand,
        UndoCommand,
        WindowCommand,
    ],
    Field(discriminator="op"),
]


class Viewport(_Model):
    width: float
    height: float


class UIElement(_Model):
    """One element of the desktop's UI snapshot.

    `row` is the title of the list item, table row or card a control belongs to (the
    song a 播放 button plays), `window` the id of the window it is in (`win_<app>`),
    and `changed` the UI commands the desktop has applied to it and not taken back
    (op names as `RestoreCommand.changes` spells them). A window also says the type
    of the view it shows (`view`) and how many rows that view lists (`items`)."""

    id: str
    type: str = "element"
    label: str = ""
    x: float = 0
    y: float = 0
    width: float = 0
    height: float = 0
    visible: bool = True
    row: str = ""
    window: str = ""
    changed: list[str] = Field(default_factory=list)
    view: str = ""
    items: int | None = None


class UISnapshot(_Model):
    """The desktop as it is drawn; `undo` lists the changes to its layout that it can
    take back (`UndoCommand`), oldest first: each the `{op, id}` of the commands one
    answer performed. The list lasts until the user resets the layout."""

    viewport: Viewport | None = None
    elements: list[UIElement] = Field(default_factory=list)
    undo: list[list[dict[str, str]]] = Field(default_factory=list)


_LAYOUT_HISTORY_MAX = 100  # the changes to the layout that can be taken back
_LAYOUT_ELEMENTS_MAX = 2000


class LayoutChange(_Model):
    """One step of the desktop's layout history: what the commands of one answer
    changed. `steps` are their `{op, id, label}` (and a moved window's `frame`
    before it moved); `before` is what every element had changed before this step,
    as `[id, [[op, value], …]]` pairs."""

    before: list[Any] = Field(default_factory=list)
    steps: list[dict[str, Any]] = Field(default_factory=list, min_length=1)


class DesktopLayout(_Model):
    """What UI commands changed on the desktop, kept by the controller for its user
    (`GET` / `PUT /api/layout`), so that every browser shows it: `changed` pairs an
    element id with its changes (`{"move": {"x": 20, "y": 20}, "change_color":
    "blue"}`), `history` is the way back through them, oldest first. A reset of the
    layout is an empty one."""

    changed: list[tuple[str, dict[str, Any]]] = Field(
        default_factory=list, max_length=_LAYOUT_ELEMENTS_MAX
    )
    history: list[LayoutChange] = Field(
        default_factory=list, max_length=_LAYOUT_HISTORY_MAX
    )


# -------------------------------------------------------------------- app replies


class AppReply(_Model):
    """An app's answer to `handle`.

    `data` is passed on as the app sent it, but for the older forms of a view's data,
    which `aios_protocol.views.upgrade_view_data` turns into its one shape. `steps` go to the executor untouched.
    `ui_commands` are desktop commands the desktop performs. `notice` marks an
    `ok` reply as degraded (`warning`: it answered, but not all went well — a source
    unreachable, the user's program failed), as not done at all (`error`: nothing of
    what was asked was done, and its `message` says why — no model to answer with, a
    skill that did not run) or merely informative (`info`); the desktop styles its
    toast and window by it. `detail` is the technical text behind
    the plain `message` (an exception, a tool's error), shown folded away.
    """

    status: Literal["ok", "error"]
    view_type: Annotated[str, Field(min_length=1, max_length=64)]
    data: dict[str, Any]
    actions: list[Action] = Field(default_factory=list)
    steps: list[Step] = Field(default_factory=list)
    message: str | None = None
    notice: Literal["info", "warning", "error"] | None = None
    detail: str | None = None
    ui_commands: list[UICommand] = Field(default_factory=list)

    @field_validator("actions", "steps", "ui_commands", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return [] if value is None else value

    @model_validator(mode="after")
    def _one_shape(self) -> AppReply:
        """Older forms of a view's data become the one shape every renderer reads."""
        self.data = upgrade_view_data(self.view_type, self.data)
        return self

    @classmethod
    def error(cls, code: str, message: str, **detail: Any) -> AppReply:
        """The standard error view: readable `message`, machine `code` in `data`."""
        return cls(
            status="error",
            view_type="error",
            data={"code": code, "message": message, **detail},
            message=message,
        )


class HandleRequest(_Model):
    """The body the system POSTs to an app's `handle_endpoint`."""

    instruction: str | None = None
    context: Context = Field(default_factory=Context)
    action_request: ActionRequest | None = None


SystemRole = Literal["catch_all", "skills", "scheduler"]


class Manifest(_Model):
    """An app's `manifest.json`, plus `keywords` / `examples` for routing."""

    name: Annotated[str, Field(min_length=1, max_length=100)]
    entry: Annotated[str, Field(min_length=1)]
    icon: str = "📦"
    description: str = ""
    # the name and description in each language the app speaks ({"en-US": "Music"});
    # a language missing here reads `name` / `description`
    names: dict[Language, Annotated[str, Field(min_length=1, max_length=100)]] = Field(
        default_factory=dict
    )
    descriptions: dict[Language, str] = Field(default_factory=dict)
    role_prompt: str | None = None
    workdir: str = "workspace"
    port: Annotated[int, Field(ge=1, le=65535)] | None = None
    author: str | None = None
    version: str | None = None
    handle_endpoint: str = "/handle"
    keywords: list[str] = Field(default_factory=list)
    examples: list[str] = Field(default_factory=list)
    # what the app shows or keeps ("CPU", "技能", "my songs"): a request for knowledge
    # about one of them ("说说现在的CPU占用") is this app's, not the assistant's
    subjects: list[str] = Field(default_factory=list)
    shell_whitelist: list[str] | None = None
    http_domain_whitelist: list[str] | None = None
    # false: run unconfined, only once the user allowed it
    sandbox: bool = True
    # true: the app means to reach the internet itself; shown to the user
    network: bool = False
    # true: started at launch and never stopped for being idle (controller.apps)
    keep_alive: bool = False
    # a part the system itself relies on: `catch_all` takes what no other app claims
    # (with a model), `skills` runs the installed skills, `scheduler` shows the jobs
    system_role: SystemRole | None = None

    def name_in(self, language: str) -> str:
        """The app's name for a reader of `language`."""
        return next((v for k, v in self.names.items() if k == language), self.name)

    def description_in(self, language: str) -> str:
        """The app's description for a reader of `language`."""
        return next(
            (v for k, v in self.descriptions.items() if k == language), self.description
        )

    @field_validator("handle_endpoint")
    @classmethod
    def _endpoint_is_path(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError("must start with '/'")
        return value


# -------------------------------------------------------------- controller API

# idle: installed and routable, not running; it starts on first use
AppStatus = Literal["idle", "starting", "running", "restarting", "failed", "stopped"]


class AppInfo(_Model):
    """One row of `GET /api/apps`."""

    id: str
    name: str
    icon: str = "📦"
    description: str = ""
    # the manifest's `names` / `descriptions`: the desktop shows its language's
    names: dict[Language, str] = Field(default_factory=dict)
    descriptions: dict[Language, str] = Field(default_factory=dict)
    status: AppStatus
    port: int | None = None
    error: str | None = None
    pid: int | None = None  # the app's process while it runs
    restarts: int | None = None  # times the supervisor started it again
    sandbox: Literal["bubblewrap", "none"] | None = None  # how it runs
    sandbox_note: str | None = None  # why it runs so, in words
    network: bool = False  # its manifest says it reaches the internet itself
    # a part the system relies on (the manifest's): the desktop does not offer to uninstall it
    system_role: SystemRole | None = None


InstructionSource = Literal["text", "voice"]  # typed (or clicked), or spoken


class InstructionRequest(_Model):
    text: Annotated[str, Field(min_length=1, max_length=4000)]
    session_id: str | None = None
    source: InstructionSource = "text"
    # which desktop page sent it: its `task_done` events say so, and a page renders
    # from events only the results of instructions it did not send itself
    client_id: Annotated[str, Field(max_length=64)] | None = None
    language: Language | None = None  # the desktop's; kept for the session


class Task(_Model):
    """One task of an instruction: routed to one app, maybe after other tasks."""

    task_id: str
    app_id: str
    instruction: str
    depends_on: list[str] = Field(default_factory=list)
    # skipped: not run, since a task it waits for failed (that failure says why)
    status: Literal["pending", "running", "done", "error", "skipped"] = "pending"
    result: AppReply | None = None


class InstructionResponse(_Model):
    session_id: str
    message: str
    tasks: list[Task]
    llm_calls: int = 0


class OpenRequest(_Model):
    session_id: str | None = None
    language: Language | None = None


class TaskCancelRequest(_Model):
    """Body of `POST /api/tasks/<task_id>/cancel`: whose task it is. A plan's task ids
    ("t1", "t2") repeat from instruction to instruction, so the session (and the app,
    when given) names which running work is meant."""

    session_id: str = Field(min_length=1)
    app_id: str | None = None


class ConfirmationDecision(_Model):
    """Body of `POST /api/confirmations/<id>`: the user's answer to a paused step."""

    decision: Literal["allow_once", "allow_always", "deny"]


# ------------------------------------------------------------------------- events

EventType = Literal[
    "task_started",
    "step_done",
    "task_done",
    "notify",
    "ui_commands",
    "speak",
    "app_status",
    "confirm_request",
    "confirm_resolved",
    "agent_progress",  # an app's agent loop, live (aios_sdk.llm.AgentProgress)
]


class Event(_Model):
    """One event on the controller's SSE stream (and the executor's event queue)."""

    type: EventType
    seq: int = 0
    app_id: str | None = None
    session_id: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)


class EventsPage(_Model):
    events: list[Event]
    next: int


# ---------------------------------------------------------------------- schedules

JOB_ID_PATTERN = r"^job_[a-z0-9]{6,32}$"
_SCHEDULE_FIELD = {"once": "run_at", "interval": "interval_s", "cron": "cron"}
_EXECUTION_FIELD = {"agent": "instruction", "command": "command"}


class ScheduleJob(_Strict):
    """A job of the controller's scheduler: what runs, when, inside which app's boundary.

    `id` is given by the controller. `run_at` (ISO 8601) without an offset is the
    user's local time. The field named by `schedule_type` (`run_at` / `interval_s` /
    `cron`) and the one named by `execution_type` (`instruction` / `command`) are
    required; the other schedule and execution fields must be left out.
    """

    id: Annotated[str, Field(pattern=JOB_ID_PATTERN)] | None = None
    name: Annotated[str, Field(min_length=1, max_length=100)]
    execution_type: Literal["command", "agent"]
    schedule_type: Literal["once", "interval", "cron"]
    run_at: datetime | None = None
    interval_s: Annotated[float, Field(ge=1, le=366 * 86400)] | None = None
    cron: Annotated[str, Field(min_length=9, max_length=200)] | None = None
    enabled: bool = True
    timeout: Annotated[float, Field(gt=0, le=86400)] = 60.0
    max_runs: Annotated[int, Field(ge=1)] | None = None
    app_id: Annotated[str, Field(min_length=1, max_length=64)]
    instruction: Annotated[str, Field(min_length=1, max_length=4000)] | None = None
    command: Annotated[str, Field(min_length=1, max_length=4000)] | list[str] | None = None
    # the language of the user who made it: its runs answer, toast and ask in it
    # (None: the settings' `ui_language`)
    language: Language | None = None
    # the user it belongs to, whose sandbox it runs in (None: the owner); set by the
    # controller from who made it, never taken from a client's body
    user_id: Annotated[str, Field(min_length=1, max_length=64)] | None = None

    @model_validator(mode="after")
    def _fields_match_types(self) -> ScheduleJob:
        wanted = _SCHEDULE_FIELD[self.schedule_type]
        for name in _SCHEDULE_FIELD.values():
            given = getattr(self, name) is not None
            if name == wanted and not given:
                raise ValueError(
                    f"{name} is required when schedule_type is {self.schedule_type}"
                )
            if name != wanted and given:
                raise ValueError(
                    f"{name} is not allowed when schedule_type is {self.schedule_type}"
                )
        wanted = _EXECUTION_FIELD[self.execution_type]
        for name in _EXECUTION_FIELD.values():
            given = getattr(self, name) not in (None, [])
            if name == wanted and not given:
                raise ValueError(
                    f"{name} is required when execution_type is {self.execution_type}"
                )
            if name != wanted and given:
                raise ValueError(
                    f"{name} is not allowed when execution_type is {self.execution_type}"
                )
        return self


class ScheduleJobPatch(_Strict):
    """Body of `PATCH /api/schedules/<id>`: the fields to change (the rest stay)."""

    name: Annotated[str, Field(min_length=1, max_length=100)] | None = None
    schedule_type: Literal["once", "interval", "cron"] | None = None
    run_at: datetime | None = None
    interval_s: Annotated[float, Field(ge=1, le=366 * 86400)] | None = None
    cron: Annotated[str, Field(min_length=9, max_length=200)] | None = None
    enabled: bool | None = None
    timeout: Annotated[float, Field(gt=0, le=86400)] | None = None
    max_runs: Annotated[int, Field(ge=1)] | None = None
    instruction: Annotated[str, Field(min_length=1, max_length=4000)] | None = None
    command: Annotated[str, Field(min_length=1, max_length=4000)] | list[str] | None = None


class ScheduleJobState(_Model):
    """A job's run state (`jobs-state.json`): when it runs next, how its runs went.

    `running_run_id` is the running marker (a job never overlaps itself);
    `awaiting_confirmation` says what waits for the user's yes (the job stays
    disabled until the user enables it); `approved_commands` are the programs
    outside the whitelist the user allowed for this job.
    """

    job_id: str
    created_at: datetime
    next_run_at: datetime | None = None
    run_count: int = 0
    skipped: int = 0
    last_run_at: datetime | None = None
    last_status: Literal["ok", "error", "timeout"] | None = None
    running_run_id: str | None = None
    running_since: datetime | None = None
    awaiting_confirmation: str | None = None
    approved_commands: list[str] = Field(default_factory=list)


class ScheduleRun(_Model):
    """One run of a job (`runs/<job_id>/<run_id>.json`)."""

    run_id: str
    job_id: str
    trigger: Literal["schedule", "catch_up", "manual"] = "schedule"
    started: datetime
    finished: datetime | None = None
    duration_s: float | None = None
    status: Literal["ok", "error", "timeout"]
    summary: str = ""
    output_tail: str = ""


class ScheduleToolCall(_Strict):
    """Arguments of the `schedule` tool: an app creates, lists, changes and cancels
    its own jobs (`job` for `create`; `job_id` for the others; `changes` for `update`)."""

    action: Literal["create", "list", "cancel", "update", "run", "runs"]
    job: dict[str, Any] | None = None
    job_id: Annotated[str, Field(pattern=JOB_ID_PATTERN)] | None = None
    changes: dict[str, Any] | None = None
    # the user the calling app serves (the executor adds it; none: the owner); the
    # controller checks it against the calling process's token
    user_id: str | None = None


def build_models(*models: type[BaseModel]) -> None:
    """Build the validators of `models` (none named: every model of this module) now,
    before threads use them; a model already built is left as it is."""
    chosen = models or tuple(
        value
        for value in globals().values()
        if isinstance(value, type)
        and issubclass(value, BaseModel)
        and value.__module__ == __name__
    )
    for model in chosen:
        if not model.__pydantic_complete__:
            model.model_rebuild()
