"""The public surface: BASIC_TOOLS, tool_by_name, run_tool's validation; the registry of tools' facts.

Until issue #32 a tool's facts were tables spread over seven modules (`TOOL_KINDS`, `INTERNAL_TOOLS`,
`OPENING_TOOLS`, `FILE_TOOLS`, `PARALLEL_TOOLS`, `PLAN_WRITE_TOOLS`, `_MAIN_ARG`, …). Their last values
are written out below once, literally, and compared with what the registry derives, so the move changed
no answer.
"""

from __future__ import annotations

import json
import os
from typing import Any, get_args

import pytest

from evo_agent.agent.rules import RULE_KINDS
from evo_agent.session import MemoryStore
from evo_agent.tools import (
    BASIC_TOOLS,
    Tool,
    ToolContext,
    ToolFacts,
    ToolResult,
    call_argument,
    facts_of,
    run_tool,
    tool_by_name,
)
from evo_agent.tools.base import Approval, Kind
from evo_agent.tools.glob_tool import search_root
from evo_agent.tools.mcp_tools import McpToolDef, mcp_tool
from evo_agent.tools.plan_tools import PLAN_TOOL_NAMES
from evo_agent.tools.registry import REGISTRY, TOOL_FACTS
from tests.builders import make_agent
from tests.scripted_provider import ScriptedProvider


def test_basic_tools_in_order_with_schemas():
    assert [t.name for t in BASIC_TOOLS] == ["bash", "read_file", "write_file", "edit_file", "glob", "grep"]
    required = {
        "bash": ["command"],
        "read_file": ["path"],
        "write_file": ["path", "content"],
        "edit_file": ["path", "old_string", "new_string"],
        "glob": ["pattern"],
        "grep": ["pattern"],
    }
    for tool in BASIC_TOOLS:
        spec = tool.api_spec()
        assert spec["input_schema"]["type"] == "object"
        assert spec["input_schema"]["required"] == required[tool.name]
        assert set(spec["input_schema"]["required"]) <= set(spec["input_schema"]["properties"])
        assert spec["description"]


def test_tool_by_name():
    assert tool_by_name("grep") is BASIC_TOOLS[5]
    assert tool_by_name("task") is None


def test_unknown_tool(ctx):
    r = run_tool(BASIC_TOOLS, "rm_rf", {}, ctx)
    assert r.is_error and "unknown tool" in r.content and "bash" in r.content


def test_missing_required_field(ctx):
    r = run_tool(BASIC_TOOLS, "edit_file", {"path": "a"}, ctx)
    assert r.is_error and "old_string" in r.content and "new_string" in r.content


def test_wrong_types(ctx):
    cases = [
        ("bash", {"command": ["ls"]}),
        ("bash", {"command": "ls", "timeout": True}),
        ("read_file", {"path": "a", "offset": 1.5}),
        ("read_file", {"path": "a", "limit": "10"}),
        ("write_file", {"path": "a", "content": 5}),
    ]
    for name, tool_input in cases:
        r = run_tool(BASIC_TOOLS, name, tool_input, ctx)
        assert r.is_error and "must be of type" in r.content, (name, tool_input, r)
    assert not (ctx.project_dir / "a").exists()


def test_input_not_an_object(ctx):
    r = run_tool(BASIC_TOOLS, "bash", "ls", ctx)  # type: ignore[arg-type]
    assert r.is_error and "JSON object" in r.content


def test_null_optional_fields_are_dropped(ctx):
    (ctx.project_dir / "a.txt").write_text("one\n")
    r = run_tool(BASIC_TOOLS, "read_file", {"path": "a.txt", "offset": None, "limit": None}, ctx)
    assert r.content == "     1\tone"
    r = run_tool(BASIC_TOOLS, "read_file", {"path": None}, ctx)
    assert r.is_error


def test_a_crashing_tool_becomes_an_error(ctx):
    def boom(tool_input: dict, ctx: ToolContext) -> ToolResult:
        raise RuntimeError("kaput\nsecond line")

    tool = Tool("boom", "explodes", {"type": "object", "properties": {}}, boom)
    r = run_tool([tool], "boom", {}, ctx)
    assert r.is_error and "kaput" in r.content and "\n" not in r.content


def test_tools_do_not_raise_on_os_errors(ctx, tmp_path):
    locked = ctx.project_dir / "locked"
    locked.mkdir()
    (locked / "f.txt").write_text("x")
    locked.chmod(0)
    try:
        r = run_tool(BASIC_TOOLS, "write_file", {"path": "locked/f.txt", "content": "y"}, ctx)
        # root can write anywhere; everyone else gets a one-line error
        assert r.is_error == ("Permission" in r.content)
    finally:
        locked.chmod(0o755)
    (ctx.project_dir / "f.txt").write_text("file")
    r = run_tool(BASIC_TOOLS, "write_file", {"path": "f.txt/child", "content": "y"}, ctx)
    assert r.is_error and "\n" not in r.content


def test_arguments_that_were_not_json_get_a_clear_error_and_run_nothing(tmp_path):
    from evo_agent.tools import BASIC_TOOLS, ToolContext, run_tool

    marker = tmp_path / "ran"
    result = run_tool(BASIC_TOOLS, "bash", {"__invalid_arguments__": '{"command": "touch ran'},
                      ToolContext(project_dir=tmp_path))
    assert result.is_error and "not one JSON object" in result.content and "nothing was run" in result.content
    assert not marker.exists()


# ---- the registry: every tool's facts


def _names(test) -> set[str]:  # noqa: ANN001 - a predicate on ToolFacts
    return {f.name for f in TOOL_FACTS if test(f)}


def test_every_registered_tool_has_complete_facts():
    names = [f.name for f in TOOL_FACTS]
    assert len(names) == len(set(names)) and all(names)
    for f in TOOL_FACTS:
        assert f.kind in get_args(Kind) and f.approval in get_args(Approval) and f.approval != "ask", f
        if f.approval in ("read", "edit"):  # the gate must know where the call reaches
            assert f.path_arg or f.path_of, f
        if f.approval == "edit":  # an approval says what it does and shows the diff
            assert f.verb and f.change_of, f
        if f.opens_path:
            assert f.path_arg and f.approval in ("read", "edit"), f
        if f.approval == "none":
            assert f.kind == "internal", f
        assert f.result_lines is None or f.result_lines > 0
    for row in REGISTRY:  # a ready tool carries its own row's facts, and its label field is in its schema
        if isinstance(row, Tool):
            assert row.facts is not None and row.facts.name == row.name
            for field in (row.facts.label_arg, row.facts.path_arg):
                assert field is None or field in row.input_schema["properties"], (row.name, field)


def test_every_tool_an_agent_offers_carries_the_registrys_facts(project, tmp_path):
    memory = MemoryStore(project, user_dir=tmp_path / "home" / "memory")
    agent, _ = make_agent(project, ScriptedProvider(), memory=memory)
    tools = [*agent.tools, mcp_tool(McpToolDef("mcp__gh__get_issue", "", {"type": "object"}, "gh", "get_issue"), None)]
    assert {t.name for t in agent.tools} == {f.name for f in TOOL_FACTS}  # no tool without a row, no row unused
    for tool in tools:
        assert tool.facts is not None and tool.facts == facts_of(tool.name), tool.name


def test_the_tables_the_facts_replaced_answer_as_before():
    # agent/rules.py TOOL_KINDS: the rule kind that covers each tool
    assert {f.name: RULE_KINDS[f.approval] for f in TOOL_FACTS if f.approval in RULE_KINDS} == {
        "bash": "Bash", "write_file": "Edit", "edit_file": "Edit", "read_file": "Read", "glob": "Read", "grep": "Read"}
    # agent/permissions.py INTERNAL_TOOLS and OPENING_TOOLS; agent/compaction.py FILE_TOOLS
    assert _names(lambda f: f.approval == "none") == {"compact", "task"}
    assert _names(lambda f: f.opens_path) == {"read_file", "write_file", "edit_file"}
    assert {f.path_arg for f in TOOL_FACTS if f.opens_path} == {"path"}
    # agent/loop.py PARALLEL_TOOLS
    assert _names(lambda f: f.parallel) == {"task"}
    # tools/plan_tools.py PLAN_TOOL_NAMES and PLAN_WRITE_TOOLS; tools/memory_tool.py MEMORY_TOOL_NAME
    assert PLAN_TOOL_NAMES == ("plan_create", "plan_task_create", "plan_task_update", "plan_task_get",
                               "plan_task_list", "plan_list", "plan_complete")
    assert _names(lambda f: f.approval == "plan") == set(PLAN_TOOL_NAMES)
    assert _names(lambda f: f.approval == "plan" and f.kind != "read") == {
        "plan_create", "plan_task_create", "plan_task_update", "plan_complete"}
    assert _names(lambda f: f.approval == "memory") == {"memory"}
    # ui/render.py _MAIN_ARG, _preview_lines, the diffs of edits; permissions' verbs
    assert {f.name: f.label_arg for f in TOOL_FACTS if f.label_arg} == {
        "bash": "command", "read_file": "path", "write_file": "path", "edit_file": "path", "glob": "pattern",
        "grep": "pattern", "task": "description", "compact": "focus"}
    assert _names(lambda f: f.result_lines == 1) == {"read_file", "task"}
    assert _names(lambda f: f.change_of is not None) == {"edit_file", "write_file"}
    assert {f.name: f.verb for f in TOOL_FACTS if f.verb} == {"write_file": "write", "edit_file": "edit"}
    # families and strangers: an MCP tool asks like bash, an unknown tool asks
    assert (facts_of("mcp__gh__x").approval, facts_of("mcp__gh__x").kind) == ("mcp", "exec")
    assert facts_of("no_such_tool") == ToolFacts("no_such_tool", kind="exec", approval="ask")


def _old_label_argument(name: str, tool_input: Any) -> str:
    """ui/render.py's tool_label before the registry, verbatim but for the final cut: the reference."""
    main_arg = {"bash": "command", "read_file": "path", "write_file": "path", "edit_file": "path",
                "glob": "pattern", "grep": "pattern", "task": "description", "compact": "focus"}
    arg = ""
    if isinstance(tool_input, dict):
        key = main_arg.get(name)
        value = tool_input.get(key) if key else None
        if name == "memory":
            where = tool_input.get("old_path") if tool_input.get("command") == "rename" else tool_input.get("path")
            arg = " ".join(str(v) for v in (tool_input.get("command"), where) if isinstance(v, str) and v)
        elif name == "grep" and isinstance(value, str):
            where = tool_input.get("path")
            arg = json.dumps(value, ensure_ascii=False) + (f" in {where}" if isinstance(where, str) and where else "")
        elif isinstance(value, str) and value:
            arg = value
        else:
            for key in ("command", "path", "pattern", "description", "focus"):
                value = tool_input.get(key)
                if isinstance(value, str) and value:
                    arg = value
                    break
            else:
                arg = json.dumps(tool_input, ensure_ascii=False) if tool_input else ""
    elif tool_input:
        arg = str(tool_input)
    return arg


_INPUTS: list[Any] = [
    {}, None, "text", {"command": "ls -la"}, {"path": "README.md"}, {"pattern": "def main", "path": "src"},
    {"pattern": "", "path": "src"}, {"pattern": 3}, {"description": "look", "prompt": "p"}, {"focus": "tests"},
    {"command": "create", "path": "/memories/project/a.md"}, {"command": "rename", "old_path": "/memories/user/a.md",
                                                              "new_path": "/memories/user/b.md"},
    {"command": "view"}, {"title": "t", "goal": "g"}, {"task_id": 2}, {"old_string": "a", "new_string": "b"},
]


# The plan tools' labels were JSON before (`plan_create({"title": …, "goal": …})`): now their own (below).
_PLAN_LABELLED = ("plan_create", "plan_task_create", "plan_task_update", "plan_task_get")


@pytest.mark.parametrize("name", [*(f.name for f in TOOL_FACTS if f.name not in _PLAN_LABELLED),
                                  "mcp__gh__get_issue", "something_else"])
def test_a_calls_label_is_what_the_app_showed_before(name):
    for tool_input in _INPUTS:
        assert call_argument(name, tool_input) == _old_label_argument(name, tool_input), (name, tool_input)


@pytest.mark.parametrize(("name", "tool_input", "label"), [
    ("plan_create", {"title": "Fix the upload retry", "goal": "Uploads retry on 503", "steps": ["a"]},
     "Fix the upload retry"),
    ("plan_task_create", {"subject": "Read the handler", "description": "find the retry"}, "Read the handler"),
    ("plan_task_update", {"task_id": 2, "status": "completed"}, "#2 → completed"),
    ("plan_task_update", {"task_id": 2, "subject": "Read it again"}, "#2 Read it again"),
    ("plan_task_update", {"task_id": 2, "subject": "Read it again", "status": "pending"}, "#2 Read it again → pending"),
    ("plan_task_update", {"task_id": 2, "status": "in_progress", "blocked_by": [1]}, "#2 → in_progress"),
    ("plan_task_get", {"task_id": 3}, "#3"),
    ("plan_task_list", {}, ""),
    ("plan_complete", {}, ""),
    # what the schema refuses still shows what the model sent, as any other tool's call does
    ("plan_create", {"goal": "no title"}, '{"goal": "no title"}'),
    ("plan_task_get", {"task_id": True}, '{"task_id": true}'),
])
def test_a_plan_calls_label_is_its_title_subject_or_task(name, tool_input, label):
    assert call_argument(name, tool_input) == label


@pytest.mark.parametrize(("pattern", "root"), [
    ("**/*.py", "."), ("src/**/*.py", "src"), ("/etc/*.conf", "/etc"), ("/*", "/"), ("src/*/../../../x", "/"),
    ("", "."), ("a/b/c.txt", "a/b/c.txt"), ("~/x/*", "~/x"),
])
def test_glob_reaches_the_literal_directory_its_pattern_starts_from(pattern, root):
    assert search_root({"pattern": pattern}) == os.path.expanduser(root)
