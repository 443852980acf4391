"""AIOSAgent without HTTP: attribute checks, @tool schemas, plan_steps, environment,
`Flows` dispatch, an app folder imported as a package, and the SDK's `__all__`."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any, Literal

import pytest

from aios_protocol.errors import AiosError, InvalidRequest
from aios_protocol.messages import AppReply, Step
from aios_sdk import AIOSAgent, Flows, ToolFailed, Turn, action, tool, views
from aios_sdk.agent import numbered_steps, parameters_schema
from executor.tools.catalog import ArgumentSchema


class Echo(AIOSAgent):
    name = "Echo"
    description = "repeats"
    icon = "🔁"
    role_prompt = "you repeat"

    def handle(self, instruction, context, action_request=None):
        return {"status": "ok", "view_type": "text", "data": {"content": instruction}}

    @tool(name="shout", desc="upper-case a word")
    def shout(self, word: str, times: int = 1) -> str:
        return word.upper() * times

    @tool
    def add(self, a: float, b: float, **extra: Any) -> float:
        """Add two numbers.

        Extra arguments are ignored."""
        return a + b


# ------------------------------------------------------------- class attributes


def test_concrete_subclass_without_attributes_names_each_missing_one() -> None:
    with pytest.raises(TypeError) as err:

        class Half(AIOSAgent):
            name = "half"

            def handle(self, instruction, context, action_request=None):
                return {}

    message = str(err.value)
    assert "Half" in message
    for attr in ("'description'", "'icon'", "'role_prompt'"):
        assert attr in message
    assert "'name'" not in message


def test_empty_string_attribute_counts_as_missing() -> None:
    with pytest.raises(TypeError, match="'icon'"):

        class NoIcon(AIOSAgent):
            name = "n"
            description = "d"
            icon = ""
            role_prompt = "r"

            def handle(self, instruction, context, action_request=None):
                return {}


def test_subclass_without_handle_is_not_checked_but_cannot_be_built() -> None:
    class Base(AIOSAgent):
        name = "base only"

    with pytest.raises(TypeError, match="abstract"):
        Base()  # type: ignore[abstract]


def test_abstract_keyword_skips_the_check_for_a_shared_base() -> None:
    class Base(AIOSAgent, abstract=True):
        def handle(self, instruction, context, action_request=None):
            return {"status": "ok", "view_type": "text", "data": {}}

    class Concrete(Base):
        name = "c"
        description = "d"
        icon = "i"
        role_prompt = "r"

    assert Concrete().handle("x", {})["status"] == "ok"
    with pytest.raises(TypeError, match="'name'"):

        class Unnamed(Base):
            description = "d"
            icon = "i"
            role_prompt = "r"

            def handle(self, instruction, context, action_request=None):
                return {}


# ------------------------------------------------------------------------ @tool


def test_tool_schema_from_signature() -> None:
    tools = Echo.custom_tools()
    assert set(tools) == {"shout", "add"}
    shout = tools["shout"]
    assert shout.description == "upper-case a word"
    assert shout.parameters == {
        "type": "object",
        "properties": {
            "word": {"type": "string"},
            "times": {"type": "integer", "default": 1},
        },
        "required": ["word"],
        "additionalProperties": False,
    }
    add = tools["add"]
    assert add.description == "Add two numbers."
    assert add.parameters["required"] == ["a", "b"]
    assert add.parameters["additionalProperties"] is True
    spec = shout.spec()
    assert spec.custom is True and spec.name == "shout"


def test_schema_maps_containers_optionals_and_literals() -> None:
    def method(
        self,
        names: list[str],
        table: dict[str, int],
        mode: Literal["a", "b"] = "a",
        limit: int | None = None,
        anything=None,
        flag: bool = False,
    ) -> None: ...

    schema = parameters_schema(method)
    props = schema["properties"]
    assert props["names"] == {"type": "array", "items": {"type": "string"}}
    assert props["table"] == {"type": "object"}
    assert props["mode"] == {"enum": ["a", "b"], "default": "a"}
    assert props["limit"] == {"type": "integer", "default": None}
    assert props["anything"] == {"default": None}
    assert props["flag"] == {"type": "boolean", "default": False}
    assert schema["required"] == ["names", "table"]


def test_tool_args_are_checked_by_name_against_the_declared_schema() -> None:
    # the executor checks a custom tool's arguments with the schema the SDK declares
    shout = Echo.custom_tools()["shout"]
    check = ArgumentSchema(shout.name, shout.parameters).check
    check({"word": "hi", "times": 2})
    with pytest.raises(AiosError, match="missing required argument 'word'"):
        check({})
    with pytest.raises(AiosError, match="argument 'times' must be integer, got string"):
        check({"word": "x", "times": "2"})
    with pytest.raises(AiosError, match="unknown argument 'loud'"):
        check({"word": "x", "loud": True})
    with pytest.raises(AiosError, match="must be integer, got boolean"):
        check({"word": "x", "times": True})
    assert Echo().run_custom_tool("add", {"a": 1, "b": 2.5, "note": "ignored"}) == 3.5


def test_tool_name_may_not_shadow_an_atomic_tool_or_repeat() -> None:
    with pytest.raises(TypeError, match="atomic tool"):

        class Shadow(Echo):
            @tool(name="file_read")
            def mine(self, path: str) -> str:
                return path

    with pytest.raises(TypeError, match="two @tool methods named 'shout'"):

        class Twice(Echo):
            @tool(name="shout")
            def other(self) -> None: ...

    with pytest.raises(ValueError, match="letters, digits"):
        tool(name="bad name!")


def test_overriding_a_tool_method_without_decorator_removes_the_tool() -> None:
    class Quiet(Echo):
        def shout(self, word: str, times: int = 1) -> str:
            return word

    assert set(Quiet.custom_tools()) == {"add"}


# ------------------------------------------------------------------- plan_steps


def test_plan_steps_is_the_s51_loading_reply_with_numbered_steps() -> None:
    reply = Echo().plan_steps(
        [
            {"tool": "file_list", "args": {"path": "workspace"}},
            {"step_id": 5, "tool": "file_read", "args": {"path": "a.txt"}},
            Step(step_id=7, tool="notify", args={"title": "t"}),
            {"tool": "cache_get", "args": {"key": "k"}},
        ]
    )
    assert reply["status"] == "ok"
    assert reply["view_type"] == "loading"
    assert reply["data"] == {} and reply["actions"] == []
    assert reply["message"] == "正在处理..."
    assert [step["step_id"] for step in reply["steps"]] == [1, 5, 7, 8]
    assert reply["steps"][0] == {
        "step_id": 1,
        "tool": "file_list",
        "args": {"path": "workspace"},
    }
    assert AppReply.model_validate(reply).steps[3].tool == "cache_get"


def test_the_sdks_own_texts_follow_the_calls_language() -> None:
    """plan_steps' default message and step_outcome's "did not run", inside a call."""
    from aios_sdk import step_outcome

    class Planner(AIOSAgent):
        name = "Planner"
        description = "plans one step"
        icon = "🗺️"
        role_prompt = "you plan"

        def handle(self, instruction, context, action_request=None):
            plan = self.plan_steps([{"tool": "file_list", "args": {}}])
            return {**plan, "data": {"reason": step_outcome({}, 1)[2]}}

    english = Planner().handle("x", {"language": "en-US"})
    assert english["message"] == "Working…"
    assert english["data"]["reason"] == "did not run"
    chinese = Planner().handle("x", {"language": "zh-CN"})
    assert chinese["message"] == "正在处理..." and chinese["data"]["reason"] == "没有执行"
    assert Planner().handle("x", {})["message"] == "正在处理..."
    # outside a call (or told): the language given, else Chinese
    assert step_outcome({}, 1) == (False, None, "没有执行")
    assert step_outcome({}, 1, "en-US") == (False, None, "did not run")


@pytest.mark.parametrize(
    ("steps", "fragment"),
    [
        ([{"args": {}}], "steps[0]: tool"),
        ([{"tool": "x"}, {"tool": "y", "args": "no"}], "steps[1]: args"),
        ([{"step_id": 1, "tool": "x"}, {"step_id": 1, "tool": "y"}], "used twice"),
        ([{"step_id": 0, "tool": "x"}], "not a positive number"),
        (["file_read"], "steps[0]: must be an object"),
        ({"tool": "x"}, "must be a list"),
    ],
)
def test_plan_steps_refuses_bad_steps_naming_the_field(steps: Any, fragment: str) -> None:
    with pytest.raises(InvalidRequest) as err:
        numbered_steps(steps)
    assert fragment in str(err.value)


# ------------------------------------------------------- results and environment


def test_step_result_reads_tool_results_and_raises_for_failures() -> None:
    context = {
        "tool_results": {
            "step_1": {"tool": "file_read", "status": "ok", "result": "你好"},
            "step_2": {
                "tool": "file_read",
                "status": "error",
                "error": "no such file",
                "code": "not_found",
            },
        }
    }
    agent = Echo()
    assert agent.step_result(context, 1) == "你好"
    with pytest.raises(ToolFailed) as err:
        agent.step_result(context, 2)
    assert err.value.code == "not_found" and "no such file" in err.value.message
    with pytest.raises(ToolFailed, match="step 3 has no result"):
        agent.step_result(context, 3)
    assert agent.tool_results({}) == {} and agent.tool_results(None) == {}


def test_environment_is_read_when_used(monkeypatch: pytest.MonkeyPatch) -> None:
    agent = Echo()
    monkeypatch.delenv("AIOS_APP_ID", raising=False)
    monkeypatch.delenv("AIOS_APP_SETTINGS", raising=False)
    assert agent.app_id == "echo"
    assert agent.settings == {}
    monkeypatch.setenv("AIOS_APP_ID", "echo_app")
    monkeypatch.setenv("AIOS_WORKDIR", "/tmp/echo_ws")
    monkeypatch.setenv("AIOS_APP_SETTINGS", '{"api_base": "http://127.0.0.1:9"}')
    assert agent.app_id == "echo_app"
    assert str(agent.workdir) == "/tmp/echo_ws"
    assert agent.settings == {"api_base": "http://127.0.0.1:9"}
    assert agent.log.name == "aios.app.echo_app"
    monkeypatch.setenv("AIOS_APP_SETTINGS", "not json")
    assert agent.settings == {}


def test_call_tool_without_an_executor_says_how_to_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("AIOS_EXECUTOR_URL", raising=False)
    monkeypatch.delenv("AIOS_TOKEN", raising=False)
    with pytest.raises(ToolFailed) as err:
        Echo().call_tool("file_read", path="a.txt")
    assert err.value.code == "not_connected"
    assert "aios start" in err.value.message


def test_manifest_comes_from_the_class_when_there_is_no_file() -> None:
    manifest = Echo().manifest()
    # tests/sdk has no manifest.json beside this module
    assert manifest["name"] == "Echo"
    assert manifest["role_prompt"] == "you repeat"
    assert manifest["handle_endpoint"] == "/handle"


def test_executor_url_must_be_http() -> None:
    from aios_sdk.client import client_from_env

    with pytest.raises(ToolFailed) as err:
        client_from_env({"AIOS_EXECUTOR_URL": "ftp://x", "AIOS_TOKEN": "t"})
    assert err.value.code == "not_connected"


# ------------------------------------------------------------ Flows and flows=


class NotesFlows(Flows):
    def on_instruction(self, turn: Turn) -> dict[str, Any]:
        return views.text_reply(f"said {turn.instruction!r}", state=dict(turn.state))

    @action("open", "peek")
    def open_note(self, turn: Turn) -> dict[str, Any]:
        if not turn.results:
            return self.agent.plan_steps([{"tool": "file_read", "args": turn.params}])
        ok, text, reason = turn.outcome(1)
        return views.text_reply(f"{turn.action_id}: {text if ok else reason}")


class Notes(AIOSAgent, flows=NotesFlows):
    name = "笔记"
    description = "notes"
    icon = "📝"
    role_prompt = "you keep notes"


def test_flows_answer_what_was_said_and_each_action_by_its_id() -> None:
    agent = Notes()
    said = agent.handle("你好", {"cwd_state": {"last": "a.txt"}})
    assert said["data"]["content"] == "said '你好'" and said["state"] == {"last": "a.txt"}
    opened = agent.handle("", {}, None)
    assert opened["data"]["content"] == "said ''"
    planned = agent.handle(None, {}, {"action_id": "peek", "params": {"path": "a.txt"}})
    assert planned["view_type"] == "loading"
    assert planned["steps"] == [
        {"step_id": 1, "tool": "file_read", "args": {"path": "a.txt"}}
    ]
    results = {
        "tool_results": {"step_1": {"tool": "file_read", "status": "ok", "result": "hi"}}
    }
    assert agent.handle(None, results, {"action_id": "open"})["data"] == {
        "content": "open: hi"
    }
    failed = {"tool_results": {"step_1": {"status": "error", "error": "no such file"}}}
    assert agent.handle(None, failed, {"action_id": "open"})["data"]["content"] == (
        "open: no such file"
    )
    # an action no method claims is answered as if the window had just opened
    assert agent.handle(None, {}, {"action_id": "home"})["data"]["content"] == "said ''"
    assert AppReply.model_validate(said).view_type == "text"


def test_turn_reads_the_call_once() -> None:
    turn = Turn.read(
        None,
        {"tool_results": {"step_2": {"status": "ok", "result": 3}}, "cwd_state": None},
        {"action_id": "save", "form_values": {"path": "a.py"}, "selected": "x"},
    )
    assert turn.instruction == "" and turn.action_id == "save"
    assert turn.form_values == {"path": "a.py"} and turn.params == {}
    assert turn.selected == "x" and turn.value is None and turn.state == {}
    assert turn.outcome(2) == (True, 3, "") and turn.outcome(1) == (False, None, "没有执行")
    assert Turn.read("hi", None).action == {} and Turn.read("hi", None).action_id == ""


def test_turn_speaks_the_users_language() -> None:
    assert Turn.read("hi", {}).language == "zh-CN"
    assert Turn.read("hi", {}).tr("已保存", "Saved") == "已保存"
    english = Turn.read("hi", {"language": "en-US"})
    assert english.language == "en-US" and english.tr("已保存", "Saved") == "Saved"
    assert Turn.read("hi", {"language": "fr"}).language == "zh-CN"  # unknown: Chinese


def test_flows_and_handle_are_one_or_the_other() -> None:
    with pytest.raises(TypeError, match="not both"):

        class Both(AIOSAgent, flows=NotesFlows):
            name, description, icon, role_prompt = "b", "d", "i", "r"

            def handle(self, instruction, context, action_request=None):
                return {}

    with pytest.raises(TypeError, match="'icon'"):

        class NoIcon(AIOSAgent, flows=NotesFlows):
            name, description, role_prompt = "n", "d", "r"

    with pytest.raises(TypeError, match="answered by both"):

        class Twice(Flows):
            @action("go")
            def one(self, turn): ...

            @action("go")
            def two(self, turn): ...

    class Override(NotesFlows):
        @action("open")
        def mine(self, turn):
            return views.text_reply("mine")

    assert Override.actions["open"] == "mine" and Override.actions["peek"] == "open_note"


def test_flows_reach_the_agents_llm_without_raising() -> None:
    class Broken:
        @property
        def available(self) -> bool:
            raise RuntimeError("controller down")

    class Agent:
        llm = Broken()

    assert NotesFlows(Agent()).llm_available() is False
    assert (
        NotesFlows(object()).llm is None and NotesFlows(object()).llm_available() is False
    )


# ------------------------------------------------------------ the package's surface


def test_all_names_what_an_app_author_imports() -> None:
    import aios_sdk

    assert sorted(aios_sdk.__all__) == sorted(set(aios_sdk.__all__))
    for name in aios_sdk.__all__:
        assert getattr(aios_sdk, name) is not None, name
    assert dir(aios_sdk) == sorted(aios_sdk.__all__)
    assert aios_sdk.views is views and aios_sdk.Flows is Flows
    with pytest.raises(AttributeError):
        aios_sdk.not_an_sdk_name  # noqa: B018
    # every name the shipped apps and the template import from aios_sdk is exported
    root = Path(__file__).resolve().parents[2]
    sources = [*root.glob("apps/*/*.py"), *root.glob("aios_sdk/template/*.tmpl")]
    imported: set[str] = set()
    for source in sources:
        for line in source.read_text("utf-8").splitlines():
            if line.startswith("from aios_sdk import "):
                imported |= {n.strip() for n in line.split("import", 1)[1].split(",")}
    assert imported and imported <= set(aios_sdk.__all__)


def test_import_package_loads_an_app_folder_under_its_own_name(tmp_path: Path) -> None:
    from aios_sdk.entry import agent_class, import_package

    folder = tmp_path / "pkg_notes_app"
    folder.mkdir()
    (folder / "__init__.py").write_text("from .agent import PkgAgent\n")
    (folder / "agent.py").write_text(
        "from aios_sdk import AIOSAgent\n"
        "from .flows import PkgFlows\n\n"
        "class PkgAgent(AIOSAgent, flows=PkgFlows):\n"
        "    name, description, icon, role_prompt = 'p', 'd', 'i', 'r'\n"
    )
    (folder / "flows.py").write_text(
        "from aios_sdk import Flows, views\n\n"
        "class PkgFlows(Flows):\n"
        "    def on_instruction(self, turn):\n"
        "        return views.text_reply('pkg ' + turn.instruction)\n"
    )
    try:
        package = import_package(folder)
        assert package.__name__ == "pkg_notes_app"
        assert import_package(folder) is package  # imported once
        agent = agent_class(package)()
        assert agent.handle("hi", {})["data"] == {"content": "pkg hi"}
        assert agent.app_folder() == folder.resolve()
    finally:
        for name in [n for n in sys.modules if n.split(".")[0] == "pkg_notes_app"]:
            del sys.modules[name]
    with pytest.raises(ImportError, match="not a Python package"):
        import_package(tmp_path)
    shadow = tmp_path / "json"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("")
    with pytest.raises(ImportError, match="name of another Python module"):
        import_package(shadow)
    with pytest.raises(ImportError, match="exactly one AIOSAgent subclass"):
        agent_class(types.ModuleType("empty"))


def test_identity_comes_from_the_manifest_and_agent_true_answers_without_a_model(
    tmp_path: Path,
) -> None:
    from aios_sdk.entry import agent_class, import_package

    folder = tmp_path / "pkg_loop_app"
    folder.mkdir()
    manifest = {"name": "循环", "icon": "🔁", "description": "d", "entry": "main.py"}
    manifest["agent"] = True
    (folder / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False))
    (folder / "role.md").write_text("你是循环小AI\n", encoding="utf-8")
    (folder / "__init__.py").write_text(
        "from aios_sdk import AIOSAgent, tool\n\n"
        "class LoopAgent(AIOSAgent):\n"
        "    @tool\n"
        "    def ping(self) -> str:\n"
        "        return 'pong'\n"
    )
    try:
        cls = agent_class(import_package(folder))
        assert (cls.name, cls.icon, cls.role_prompt, cls.agent) == (
            "循环",
            "🔁",
            "你是循环小AI",
            True,
        )
        agent = cls()
        agent.llm.controller_url = ""  # no controller: no model
        reply = agent.handle("hi", {"language": "en-US"})
        assert reply["notice"] == "error" and "needs a model" in reply["message"]
        assert reply["message"].startswith("Nothing was done: ")
        assert "API address" in reply["message"]
        assert agent.manifest()["name"] == "循环"
    finally:
        for name in [n for n in sys.modules if n.split(".")[0] == "pkg_loop_app"]:
            del sys.modules[name]


def test_tool_metadata_is_checked_and_stated_in_the_spec() -> None:
    from pydantic import BaseModel

    class Query(BaseModel):
        text: str

    class Meta(AIOSAgent, abstract=True):
        @tool(input=Query, risk_level="network", requires_confirmation=True)
        def look_up(self, query: Query) -> str:
            """Look it up."""
            return query.text.upper()

    spec = Meta.custom_tools()["look_up"].spec().dump()
    assert spec["risk_level"] == "network" and spec["requires_confirmation"] is True
    assert spec["concurrency_safe"] is False
    assert spec["parameters"]["required"] == ["text"]
    assert spec["description"] == "Look it up."
    with pytest.raises(ValueError, match="risk_level"):
        tool(risk_level="dangerous")
    with pytest.raises(ValueError, match="max_result_size_chars"):
        tool(max_result_size_chars=0)
    with pytest.raises(TypeError, match="pydantic model"):
        tool(input=dict)
    with pytest.raises(TypeError, match="unknown option"):
        tool(risky=True)
