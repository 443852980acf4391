"""The skills provider through the real executor service: the listing, the five tools,
the folders (shared, per app, the examples), bad skills, hot reload and install.

Every `--help` and every `run_command` runs in the real sandbox (bubblewrap when it
works here); the watched folder is a real folder changed while the executor runs.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from executor.providers.skills import SkillsProvider
from executor.service import create_app
from tests.executor.conftest import APP_TOKEN, MASTER, OTHER_TOKEN, Harness, settings_from
from tests.skills.conftest import (
    PY_SKILL,
    call_in_turn,
    listed,
    provider_of,
    start_turn,
    wait_for,
    write_skill,
)

EXAMPLES = {"temp_convert", "text_stats", "code_review"}


def result(answer: dict) -> dict:
    assert answer["status"] == "ok", answer
    return answer["result"]


def names(answer: dict) -> list[str]:
    return [s["name"] for s in result(answer)["skills"]]


# ----------------------------------------------------------------- listing


def test_the_listing_has_the_five_tools_with_their_metadata(
    skills_harness: Harness,
) -> None:
    response = skills_harness.client.get(
        "/tools?app_id=app1", headers={"X-AIOS-Token": "master-token-for-executor-tests"}
    )
    body = response.get_json()
    tools = {t["name"]: t for t in body["tools"] if t["provider"] == "skills"}
    assert set(tools) == {
        "search_skills",
        "skill",
        "run_command",
        "install_skill",
        "reload_skills",
    }
    assert tools["install_skill"]["requires_confirmation"] is True
    assert tools["install_skill"]["risk_level"] == "system"
    assert tools["run_command"]["risk_level"] == "execute"
    assert not tools["run_command"]["requires_confirmation"]
    assert (
        tools["search_skills"]["concurrency_safe"]
        and tools["search_skills"]["risk_level"] == "read"
    )
    status = body["providers"]["skills"]
    assert status["state"] == "running" and status["error"] is None
    assert {s["name"] for s in status["skills"]} >= EXAMPLES


def test_examples_are_never_copied_over_a_users_file_nor_back_after_a_delete(
    skills_harness: Harness, shared: Path
) -> None:
    assert os.access(shared / "temp_convert", os.X_OK) and os.access(
        shared / "text_stats", os.X_OK
    )
    assert (shared / "code_review.md").is_file()
    (shared / "temp_convert").write_text("#!/bin/sh\necho mine\n")
    (shared / "code_review.md").unlink()  # the user removed an example: it stays removed
    toolbox = skills_harness.app.extensions["aios_toolbox"]
    again = SkillsProvider(toolbox, shared, watch=False)
    again.start()
    wait_for(lambda: again.status()["state"] == "running")
    assert (shared / "temp_convert").read_text() == "#!/bin/sh\necho mine\n"
    assert not (shared / "code_review.md").exists()
    assert listed(again)["temp_convert"]["summary"] == "mine"
    again.stop()


# ------------------------------------------------------------------- tools


def test_search_ranks_by_name_summary_and_content(
    skills_harness: Harness, shared: Path
) -> None:
    assert names(skills_harness.call("search_skills", keyword="温度"))[0] == "temp_convert"
    assert (
        names(skills_harness.call("search_skills", keyword="摄氏度换算成华氏度"))[0]
        == "temp_convert"
    )
    assert (
        names(skills_harness.call("search_skills", keyword="text_stats"))[0] == "text_stats"
    )
    assert names(skills_harness.call("search_skills", keyword="no-such-thing-here")) == []
    everything = result(skills_harness.call("search_skills", keyword=""))
    assert {s["name"] for s in everything["skills"]} >= EXAMPLES
    found = {s["name"]: s for s in everything["skills"]}
    convert = found["temp_convert"]
    assert convert["kind"] == "executable" and convert["source"] == "shared"
    assert convert["folder"] == str(shared.resolve()) and "--value" in convert["content"]
    review = found["code_review"]
    assert review["kind"] == "markdown" and review["summary"].startswith("代码审查指南")
    assert "file_read" in review["content"] and review["content"].startswith("## 技能说明")
    write_skill(
        shared / "pdf",
        "SKILL.md",
        "---\nname: pdf\ndescription: Fill PDF forms\nallowed-tools: [file_read]\n"
        "metadata: {author: me}\n---\n# How\n1. read the form\n",
        executable=False,
    )
    (pdf,) = result(skills_harness.call("search_skills", keyword="pdf"))["skills"]
    assert (
        pdf["kind"] == "folder" and pdf["content"] == "# How\n1. read the form"
    )  # the body
    assert pdf["allowed_tools"] == ["file_read"] and pdf["metadata"] == {"author": "me"}


def test_run_command_runs_a_skill_by_name_with_the_exit_code_convention(
    skills_harness: Harness,
) -> None:
    done = result(skills_harness.call("run_command", command="temp_convert -v 30"))
    assert done == {
        "returncode": 0,
        "stdout": "30 °C = 86.0 °F\n",
        "stderr": "",
        "truncated": False,
        "ok": True,
        "meaning": "success",
    }
    (skills_harness.workdir / "notes.txt").write_text("one two\nthree\n")
    done = result(
        skills_harness.call("run_command", command=["text_stats", "-f", "notes.txt"])
    )
    assert done["stdout"] == "lines: 2\nwords: 3\ncharacters: 14\n"
    failed = result(
        skills_harness.call("run_command", command="temp_convert -v -500", language="zh-CN")
    )
    assert failed["returncode"] == 1 and failed["ok"] is False
    assert "绝对零度" in failed["stderr"] and failed["stdout"] == ""
    english = result(
        skills_harness.call("run_command", command="temp_convert -v -500", language="en-US")
    )
    assert english["stderr"] == "error: below absolute zero\n"  # in its LANG's words
    assert failed["meaning"] == "bad arguments or a general failure"
    missing = result(skills_harness.call("run_command", command="text_stats -f nope.txt"))
    assert (
        missing["returncode"] == 2 and missing["meaning"] == "the skill's own error code 2"
    )
    usage = result(skills_harness.call("run_command", command="temp_convert"))
    assert usage["returncode"] == 2 and "required" in usage["stderr"]  # argparse's own


def test_run_command_runs_only_skills_and_never_a_shell(skills_harness: Harness) -> None:
    for command, code in [
        ("ls -la", "skill_not_found"),
        ("/bin/ls", "skill_not_found"),
        ("../temp_convert -v 1", "skill_not_found"),
        ("code_review", "skill_not_executable"),
        ("temp_convert -v 30; touch pwned", "command_not_allowed"),
        ("temp_convert -v 30 && touch pwned", "command_not_allowed"),
        ("temp_convert -v $(touch pwned)", "command_not_allowed"),
    ]:
        answer = skills_harness.call("run_command", command=command)
        assert (answer["status"], answer["code"]) == ("error", code), (command, answer)
    assert not (skills_harness.workdir / "pwned").exists()
    # a quoted argument stays one argument, with its shell characters as text
    done = result(skills_harness.call("run_command", command="temp_convert -v 1 -t 'c;x'"))
    assert done["returncode"] == 2 and "invalid choice" in done["stderr"]


def test_a_skill_runs_confined_like_shell_exec(
    skills_harness: Harness, shared: Path
) -> None:
    secret = skills_harness.other_workdir / "secret.txt"
    write_skill(
        shared,
        "peek",
        '#!/bin/sh\n[ "$1" = --help ] && { echo peek at files; exit 0; }\n'
        f"cat {secret} 2>&1; pwd; echo home=$HOME; touch made_here\n",
    )
    # a path argument outside the workdir is refused before anything runs, as for
    # shell_exec; the path written inside the skill meets the sandbox instead
    refused = skills_harness.call("run_command", command=["peek", str(secret)])
    assert refused["code"] == "path_outside_workdir", refused
    done = result(skills_harness.call("run_command", command=["peek"]))
    workdir = str(skills_harness.workdir.resolve())
    assert f"\n{workdir}\nhome={workdir}\n" in done["stdout"]
    assert (skills_harness.workdir / "made_here").exists()  # it runs in the app's workdir
    sandbox = skills_harness.app.extensions["aios_toolbox"].sandbox
    if sandbox.kind == "bubblewrap":
        assert "app2 secret" not in done["stdout"]  # another app's workdir is hidden


def test_an_apps_own_skill_overrides_the_shared_one_for_that_app_only(
    skills_harness: Harness,
) -> None:
    mine = skills_harness.workdir / "skills"
    write_skill(
        mine,
        "temp_convert",
        "#!/usr/bin/env python3\nimport sys\nprint('my own converter' if sys.argv[1:] == ['--help'] else 'mine')\n",
    )
    (found,) = [
        s
        for s in result(skills_harness.call("search_skills", keyword="temp_convert"))[
            "skills"
        ]
    ]
    assert (found["source"], found["summary"]) == ("workspace", "my own converter")
    assert (
        result(skills_harness.call("run_command", command="temp_convert"))["stdout"]
        == "mine\n"
    )
    other = skills_harness.client.post(
        "/call",
        json={"tool": "run_command", "args": {"command": "temp_convert -v 0"}},
        headers={"X-AIOS-Token": OTHER_TOKEN},
    ).get_json()
    assert other["result"]["stdout"] == "0 °C = 32.0 °F\n"


def test_an_apps_own_skill_runs_only_through_a_whitelisted_interpreter(
    skills_harness: Harness, shared: Path
) -> None:
    """A skill the app wrote into its workspace is not a way around the whitelist
    (`sh` is not in it); the same script installed as a shared skill runs."""
    script = '#!/bin/sh\n[ "$1" = --help ] && { echo says hi; exit 0; }\necho hi\n'
    write_skill(skills_harness.workdir / "skills", "sayhi", script)
    refused = skills_harness.call("run_command", command="sayhi")
    assert refused["code"] == "command_not_allowed", refused
    assert "install_skill" in refused["error"]
    write_skill(shared, "sayhi_shared", script)
    assert (
        result(skills_harness.call("run_command", command="sayhi_shared"))["stdout"]
        == "hi\n"
    )


# --------------------------------------------------------------- bad input


def test_bad_skills_are_listed_with_the_reason_and_block_nothing(
    skills_harness: Harness, shared: Path
) -> None:
    provider = provider_of(skills_harness)
    provider.help_timeout = 2.0
    write_skill(shared, "hangs", "#!/bin/sh\nsleep 60\n")
    write_skill(shared, "floods", "#!/bin/sh\nwhile :; do echo flood flood flood; done\n")
    write_skill(shared, "quiet", "#!/bin/sh\nexit 0\n")
    write_skill(shared, "noexec", "#!/bin/sh\necho hi\n", executable=False)
    write_skill(shared, "bad.name", "#!/bin/sh\necho hi\n")
    write_skill(
        shared / "badmeta",
        "SKILL.md",
        "---\nname: badmeta\ndescription: [x\n---\n",
        executable=False,
    )
    write_skill(shared, "good", "#!/bin/sh\necho a good one\n")
    # while the watcher reads them (the hanging one for 2 s), the listing answers at once
    started = time.monotonic()
    listing = skills_harness.client.get(
        "/tools?app_id=app1", headers={"X-AIOS-Token": "master-token-for-executor-tests"}
    )
    assert listing.status_code == 200 and time.monotonic() - started < 1.0
    wait_for(lambda: "good" in listed(provider) and "hangs" in listed(provider), 15)
    skills = listed(provider)
    assert skills["hangs"]["error"] == "--help did not answer within 2 s"
    assert "more than 16000 characters" in skills["floods"]["error"]
    assert "printed nothing" in skills["quiet"]["error"]
    assert "not executable" in skills["noexec"]["error"]
    assert "bad name" in skills["bad.name"]["error"]
    assert "not valid YAML" in skills["badmeta"]["error"]
    assert skills["good"]["error"] is None and skills["good"]["summary"] == "a good one"
    assert {n for n, s in skills.items() if s["error"] is None} >= EXAMPLES
    answer = skills_harness.call("run_command", command="hangs")
    assert answer["code"] == "skill_broken" and "did not answer" in answer["error"]
    (flood,) = result(skills_harness.call("search_skills", keyword="floods"))["skills"]
    assert len(flood["content"]) < 16_100  # capped
    broken = {b["name"] for b in result(skills_harness.call("reload_skills"))["broken"]}
    assert broken == {"hangs", "floods", "quiet", "noexec", "bad.name", "badmeta"}


def test_a_run_that_floods_is_capped_and_one_that_hangs_is_killed(
    skills_harness: Harness, shared: Path
) -> None:
    write_skill(
        shared,
        "spew",
        '#!/bin/sh\n[ "$1" = --help ] && { echo spews; exit 0; }\n'
        "head -c 5000000 /dev/zero | tr '\\0' x\n",
    )
    write_skill(
        shared,
        "stall",
        '#!/bin/sh\n[ "$1" = --help ] && { echo stalls; exit 0; }\nsleep 60\n',
    )
    done = result(skills_harness.call("run_command", command="spew"))
    assert done["truncated"] is True and len(done["stdout"]) <= 1 << 20
    started = time.monotonic()
    stalled = skills_harness.call("run_command", command="stall", timeout=1)
    assert stalled["code"] == "tool_timeout" and time.monotonic() - started < 10


# -------------------------------------------------------------- hot reload


def test_a_skill_added_changed_or_removed_is_seen_without_a_reload(
    skills_harness: Harness, shared: Path
) -> None:
    """The watcher sees each change by itself (how soon is a speed figure, measured
    outside the tests: reading a skill runs its `--help`, slower on a loaded machine)."""
    provider = provider_of(skills_harness)

    def seen(check) -> None:
        wait_for(lambda: check(listed(provider)), 20.0)

    path = write_skill(shared, "fresh", PY_SKILL.format(name="fresh", summary="Brand new"))
    seen(lambda s: s.get("fresh", {}).get("summary") == "Brand new")
    path.write_text(PY_SKILL.format(name="fresh", summary="Changed words"))
    seen(lambda s: s.get("fresh", {}).get("summary") == "Changed words")
    write_skill(shared, "note.md", "# 一条笔记\n", executable=False)
    seen(lambda s: s.get("note", {}).get("summary") == "一条笔记")
    path.unlink()
    seen(lambda s: "fresh" not in s)
    write_skill(
        shared / "folder_skill",
        "SKILL.md",
        "---\nname: folder_skill\ndescription: In a folder\n---\n",
        executable=False,
    )
    seen(lambda s: s.get("folder_skill", {}).get("summary") == "In a folder")


def test_reload_skills_reads_every_folder_again(
    skills_harness: Harness, shared: Path
) -> None:
    answer = result(skills_harness.call("reload_skills"))
    assert set(answer["names"]) >= EXAMPLES and answer["broken"] == []
    write_skill(skills_harness.workdir / "skills", "own.md", "# mine\n", executable=False)
    answer = result(skills_harness.call("reload_skills"))
    assert "own" in answer["names"] and answer["skills"] == len(answer["names"])


def test_the_watcher_stops_with_the_provider(skills_harness: Harness) -> None:
    provider = provider_of(skills_harness)
    thread = provider._thread
    assert thread is not None and thread.is_alive()
    skills_harness.app.extensions["aios_toolbox"].tools.remove("skills")
    assert not thread.is_alive()
    assert provider.status()["state"] == "stopped"
    assert not [t for t in threading.enumerate() if t is thread]


# ------------------------------------------------------------------ install


def app_call(harness: Harness, tool: str, **args) -> dict:
    return harness.client.post(
        "/call", json={"tool": tool, "args": args}, headers={"X-AIOS-Token": APP_TOKEN}
    ).get_json()


def test_install_needs_the_users_yes_an_app_cannot_call_it_directly(
    skills_harness: Harness, shared: Path
) -> None:
    write_skill(
        skills_harness.workdir,
        "hello.py",
        PY_SKILL.format(name="hello", summary="Say hello"),
    )
    answer = app_call(skills_harness, "install_skill", path="hello.py")
    assert answer["code"] == "needs_confirmation"
    assert not (shared / "hello").exists()
    # the same app may search and run without asking
    assert app_call(skills_harness, "search_skills", keyword="温度")["status"] == "ok"


def test_install_puts_each_kind_in_place_by_the_formats_rules(
    skills_harness: Harness, shared: Path
) -> None:
    work = skills_harness.workdir
    write_skill(
        work,
        "hello.py",
        PY_SKILL.format(name="hello", summary="Say hello"),
        executable=False,
    )
    done = result(skills_harness.call("install_skill", path="workspace/hello.py"))
    assert done["name"] == "hello" and done["kind"] == "executable" and not done["replaced"]
    assert os.access(shared / "hello", os.X_OK) and not (shared / "hello.py").exists()
    assert (
        result(skills_harness.call("run_command", command="hello -n 4"))["stdout"]
        == "got 4 \n"
    )
    write_skill(work, "tips.md", "# 小贴士\n多喝水\n", executable=False)
    assert (
        result(skills_harness.call("install_skill", path="tips.md"))["kind"] == "markdown"
    )
    assert (shared / "tips.md").read_text() == "# 小贴士\n多喝水\n"
    write_skill(
        work / "drafts" / "forms",
        "SKILL.md",
        "---\nname: forms\ndescription: Fill forms\n---\nsteps\n",
        executable=False,
    )
    assert (
        result(skills_harness.call("install_skill", path="drafts/forms"))["kind"]
        == "folder"
    )
    assert (shared / "forms" / "SKILL.md").is_file()
    write_skill(
        work,
        "hello.sh",
        '#!/bin/sh\n[ "$1" = --help ] && { echo hello v2; exit 0; }\necho v2\n',
    )
    again = result(skills_harness.call("install_skill", path="hello.sh"))
    assert again["replaced"] is True and again["summary"] == "hello v2"
    assert listed(provider_of(skills_harness))["hello"]["summary"] == "hello v2"


def test_install_refuses_what_is_no_working_skill_and_changes_nothing(
    skills_harness: Harness, shared: Path
) -> None:
    work = skills_harness.workdir
    before = sorted(os.listdir(shared))
    write_skill(work, "mute.py", "#!/bin/sh\nexit 0\n")
    write_skill(work, "_hidden.py", "#!/bin/sh\necho x\n")
    write_skill(work, "bad name.sh", "#!/bin/sh\necho x\n")
    write_skill(work / "nofm", "SKILL.md", "no frontmatter\n", executable=False)
    (work / "empty_dir").mkdir()
    (work / "linked").mkdir()
    os.symlink("/etc/passwd", work / "linked" / "passwd")
    write_skill(
        work / "linked",
        "SKILL.md",
        "---\nname: linked\ndescription: x\n---\n",
        executable=False,
    )
    for path, words in [
        ("mute.py", "printed nothing"),
        ("_hidden.py", "ignored"),
        ("bad name.sh", "bad name"),
        ("nofm", "frontmatter"),
        ("empty_dir", "no SKILL.md"),
        ("linked", "symbolic link"),
    ]:
        answer = skills_harness.call("install_skill", path=path)
        assert answer["code"] == "skill_install_failed" and words in answer["error"], (
            path,
            answer,
        )
    assert (
        skills_harness.call("install_skill", path="/etc/passwd")["code"]
        == "path_outside_workdir"
    )
    assert skills_harness.call("install_skill", path="nope.py")["code"] == "file_not_found"
    assert sorted(os.listdir(shared)) == before  # nothing staged is left either


# ------------------------------------------------------------- the skill tool


def test_the_skill_tool_substitutes_arguments_and_holds_the_turn_to_its_tools(
    skills_harness: Harness, shared: Path
) -> None:
    write_skill(
        shared / "greet",
        "SKILL.md",
        "---\nname: greet\ndescription: Greet someone\nallowed-tools: [run_command]\n"
        "---\nGreet $1 from $2; all of it: $ARGUMENTS; none: [$3]\n",
        executable=False,
    )
    write_skill(
        shared / "nothing",
        "SKILL.md",
        "---\nname: nothing\ndescription: Uses no tools\nallowed-tools: []\n---\nThink.\n",
        executable=False,
    )
    write_skill(
        shared / "free",
        "SKILL.md",
        "---\nname: free\ndescription: States no list\n---\nAnything.\n",
        executable=False,
    )
    wait_for(lambda: "greet" in names(skills_harness.call("search_skills", keyword="")))
    (skills_harness.workdir / "a.txt").write_text("A")
    start_turn(skills_harness, "t1")
    used = result(
        call_in_turn(skills_harness, "skill", "t1", name="greet", arguments='Ann "the lab"')
    )
    assert used["steps"] == 'Greet Ann from the lab; all of it: Ann "the lab"; none: []'
    assert used["allowed_tools"] == ["run_command"]
    refused = call_in_turn(skills_harness, "file_read", "t1", path="a.txt")
    assert refused["status"] == "error" and refused["code"] == "not_allowed_by_skill"
    assert "greet" in refused["error"]
    ran = call_in_turn(skills_harness, "run_command", "t1", command="temp_convert -v 0")
    assert ran["status"] == "ok"
    # the next request of that session: the skill's turn is over
    start_turn(skills_harness, "t2")
    assert call_in_turn(skills_harness, "file_read", "t2", path="a.txt")["status"] == "ok"
    # an empty list allows no tool at all, not every tool
    start_turn(skills_harness, "t3")
    result(call_in_turn(skills_harness, "skill", "t3", name="nothing"))
    for tool, args in (
        ("file_read", {"path": "a.txt"}),
        ("run_command", {"command": "temp_convert -v 0"}),
    ):
        assert (
            call_in_turn(skills_harness, tool, "t3", **args)["code"]
            == "not_allowed_by_skill"
        )
    # a SKILL.md that states no list limits nothing
    start_turn(skills_harness, "t4")
    result(call_in_turn(skills_harness, "skill", "t4", name="free"))
    assert call_in_turn(skills_harness, "file_read", "t4", path="a.txt")["status"] == "ok"
    unknown = call_in_turn(skills_harness, "skill", "t5", name="no_such_skill")
    assert unknown["status"] == "error" and "no skill named" in unknown["error"]


def test_a_skill_marked_fork_holds_only_the_sub_agents_turn(
    skills_harness: Harness, shared: Path
) -> None:
    write_skill(
        shared / "tidy",
        "SKILL.md",
        "---\nname: tidy\ndescription: Tidy up\ncontext: fork\n"
        "allowed-tools: [run_command]\n---\nTidy $1.\n",
        executable=False,
    )
    write_skill(
        shared / "odd",
        "SKILL.md",
        "---\nname: odd\ndescription: Odd context\ncontext: elsewhere\n---\nHm.\n",
        executable=False,
    )
    wait_for(lambda: "tidy" in names(skills_harness.call("search_skills", keyword="")))
    (skills_harness.workdir / "a.txt").write_text("A")
    start_turn(skills_harness, "p1")
    used = result(call_in_turn(skills_harness, "skill", "p1", name="tidy", arguments="x"))
    assert used["context"] == "fork" and used["steps"] == "Tidy x."
    sub_turn = used["sub_turn_id"]
    assert sub_turn.startswith("p1.")
    held = call_in_turn(skills_harness, "file_read", sub_turn, path="a.txt")
    assert held["code"] == "not_allowed_by_skill"  # the sub-agent is held to the list
    ran = call_in_turn(skills_harness, "run_command", sub_turn, command="temp_convert -v 0")
    assert ran["status"] == "ok"
    # the parent's own turn was never narrowed
    assert call_in_turn(skills_harness, "file_read", "p1", path="a.txt")["status"] == "ok"
    start_turn(skills_harness, "p2")
    odd = call_in_turn(skills_harness, "skill", "p2", name="odd")
    assert odd["status"] == "error" and "context" in odd["error"]


def run_as_controller(harness: Harness, steps: list[dict]) -> dict:
    """A plan the controller runs for app1 after the user's yes (no turn of its own)."""
    body = {"steps": steps, "session_id": "sess_turns", "app_id": "app1"}
    response = harness.client.post("/run", json=body, headers={"X-AIOS-Token": MASTER})
    assert response.status_code == 200, response.get_json()
    return response.get_json()["tool_results"]


def test_a_forked_skills_confirmed_steps_stay_held_to_its_tools_over_a_restart(
    skills_harness: Harness, shared: Path
) -> None:
    write_skill(
        shared / "tidy",
        "SKILL.md",
        "---\nname: tidy\ndescription: Tidy up\ncontext: fork\n"
        "allowed-tools: [run_command]\n---\nTidy $1.\n",
        executable=False,
    )
    wait_for(lambda: "tidy" in names(skills_harness.call("search_skills", keyword="")))
    (skills_harness.workdir / "a.txt").write_text("A")
    start_turn(skills_harness, "p1")
    sub_turn = result(call_in_turn(skills_harness, "skill", "p1", name="tidy"))[
        "sub_turn_id"
    ]
    confirmed = [
        {"step_id": 1, "tool": "file_read", "args": {"path": "a.txt"}, "turn_id": sub_turn},
        {
            "step_id": 2,
            "tool": "run_command",
            "args": {"command": "temp_convert -v 0"},
            "turn_id": sub_turn,
        },
    ]
    ran = run_as_controller(skills_harness, confirmed)
    assert ran["step_1"]["code"] == "not_allowed_by_skill"  # a yes does not widen it
    assert ran["step_2"]["status"] == "ok"
    # the executor restarts on the same state folder while the sub-agent waits
    skills_harness.app.extensions["aios_toolbox"].shutdown()
    again = create_app(
        settings_from(None), token=MASTER, state_dir=skills_harness.state_dir
    )
    restarted = Harness(
        again,
        again.test_client(),
        skills_harness.workdir,
        skills_harness.other_workdir,
        skills_harness.state_dir,
    )
    assert restarted.register("app1", skills_harness.workdir, APP_TOKEN).status_code == 200
    try:
        ran = run_as_controller(restarted, confirmed)
        assert ran["step_1"]["code"] == "not_allowed_by_skill"  # still held
        assert ran["step_2"]["status"] == "ok"
        held = call_in_turn(restarted, "file_read", sub_turn, path="a.txt")
        assert held["code"] == "not_allowed_by_skill"
        # a sub-agent's turn the executor does not know runs nothing, never unheld
        unknown = call_in_turn(
            restarted, "run_command", "p1.0123456789abcdef", command="temp_convert -v 0"
        )
        assert unknown["code"] == "not_allowed_by_skill"
        # a call of the parent's turn ends nothing; the user's next request ends the
        # sub-agent's turn: it runs nothing more
        assert call_in_turn(restarted, "file_read", "p1", path="a.txt")["status"] == "ok"
        held = call_in_turn(restarted, "file_read", sub_turn, path="a.txt")
        assert held["code"] == "not_allowed_by_skill"
        start_turn(restarted, "p2")
        over = call_in_turn(restarted, "run_command", sub_turn, command="temp_convert -v 0")
        assert over["code"] == "not_allowed_by_skill" and "over" in over["error"]
    finally:
        again.extensions["aios_toolbox"].shutdown()
