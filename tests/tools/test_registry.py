"""The public surface: BASIC_TOOLS, tool_by_name, run_tool's validation."""

from __future__ import annotations

from evo_agent.tools import BASIC_TOOLS, Tool, ToolContext, ToolResult, run_tool, tool_by_name


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
