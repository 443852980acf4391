"""Pure logic: `{{step_N.result…}}` templating (S-56)."""

from __future__ import annotations

import pytest

from aios_protocol.messages import ToolResult
from executor.templating import TemplateError, references, render_args

RESULTS = {
    1: ToolResult(
        tool="http_request",
        status="ok",
        result={
            "url": "https://cdn.example/qilixiang.mp3",
            "count": 2,
            "results": [
                {"previewUrl": "https://p/1.m4a"},
                {"previewUrl": "https://p/2.m4a"},
            ],
            "meta": {"a": {"b": True}},
            "nothing": None,
        },
    ),
    2: ToolResult(tool="file_read", status="ok", result="hello"),
    3: ToolResult(tool="shell_exec", status="error", error="boom", code="tool_timeout"),
}


def test_whole_placeholder_keeps_json_type() -> None:
    assert render_args({"v": "{{step_1.result.count}}"}, RESULTS) == {"v": 2}
    assert render_args({"v": "{{step_1.result.meta}}"}, RESULTS) == {
        "v": {"a": {"b": True}}
    }
    assert render_args({"v": "{{step_1.result.meta.a.b}}"}, RESULTS) == {"v": True}
    assert render_args({"v": "{{step_1.result.nothing}}"}, RESULTS) == {"v": None}
    assert render_args({"v": "{{step_1.result}}"}, RESULTS)["v"] == RESULTS[1].result


def test_list_index_and_nested_key() -> None:
    args = {"url": "{{step_1.result.results.0.previewUrl}}"}
    assert render_args(args, RESULTS) == {"url": "https://p/1.m4a"}
    args = {"url": "{{step_1.result.results.1.previewUrl}}"}
    assert render_args(args, RESULTS) == {"url": "https://p/2.m4a"}


def test_embedded_placeholders_are_stringified() -> None:
    out = render_args({"s": "n={{step_1.result.count}} g={{step_2.result}}!"}, RESULTS)
    assert out == {"s": "n=2 g=hello!"}
    out = render_args({"s": "meta: {{step_1.result.meta}}"}, RESULTS)
    assert out == {"s": 'meta: {"a": {"b": true}}'}


def test_recursive_in_nested_args_and_lists() -> None:
    args = {
        "body": {"items": ["{{step_2.result}}", {"n": "{{step_1.result.count}}"}], "k": 5},
        "flag": False,
    }
    assert render_args(args, RESULTS) == {
        "body": {"items": ["hello", {"n": 2}], "k": 5},
        "flag": False,
    }


def test_status_placeholder_works_even_for_a_failed_step() -> None:
    assert render_args({"a": "{{step_1.status}}", "b": "{{step_3.status}}"}, RESULTS) == {
        "a": "ok",
        "b": "error",
    }


def test_spaces_inside_braces_and_unrelated_braces() -> None:
    assert render_args({"v": "{{ step_2.result }}"}, RESULTS) == {"v": "hello"}
    assert render_args({"v": "{{not_a_step}} and {x}"}, RESULTS) == {
        "v": "{{not_a_step}} and {x}"
    }


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("{{step_9.result}}", "has not run"),
        ("{{step_1.result.missing}}", "no key 'missing'"),
        ("{{step_1.result.results.7.previewUrl}}", "no index 7"),
        ("{{step_1.result.results.first}}", "not an index"),
        ("{{step_1.result.count.deeper}}", "it has no 'deeper'"),
        ("{{step_3.result}}", "which failed"),
        ("prefix {{step_3.result.x}}", "which failed"),
        ("{{step_1.status.x}}", "status has no fields"),
    ],
)
def test_bad_references_raise_template_error(text: str, fragment: str) -> None:
    with pytest.raises(TemplateError) as caught:
        render_args({"deep": [{"v": text}]}, RESULTS)
    assert caught.value.code == "template_error"
    assert fragment in caught.value.message


def test_references_lists_every_step_used() -> None:
    assert references({"a": ["{{step_1.result}}", {"b": "x {{step_4.status}}"}]}) == {1, 4}
    assert references({"a": "plain"}) == set()
