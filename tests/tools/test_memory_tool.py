"""The `memory` tool over a real store: its schema, its answers, what an approval previews, and the precheck
that fails a bad call before anyone is asked (nothing written)."""

from __future__ import annotations

from evo_agent.session import MemoryChange, MemoryStore
from evo_agent.tools import ToolContext, run_tool
from evo_agent.tools.memory_tool import MEMORY_TOOL_NAME, make_memory_tool, preview

TOPIC = "---\nname: Tests\ndescription: how to run the tests\ntype: project\n---\nRun pytest -q\n"


class Hooks:
    def __init__(self, store: MemoryStore) -> None:
        self.store, self.changes = store, []

    def changed(self, change: MemoryChange) -> None:
        self.changes.append(change)


def setup(project, tmp_path):
    hooks = Hooks(MemoryStore(project, user_dir=tmp_path / "user"))
    return hooks, make_memory_tool(hooks), ToolContext(project_dir=project)


def test_the_tool_runs_each_command_and_reports_each_change(project, tmp_path):
    hooks, tool, ctx = setup(project, tmp_path)
    assert tool.name == MEMORY_TOOL_NAME == "memory" and tool.input_schema["required"] == ["command"]
    created = run_tool([tool], "memory", {"command": "create", "path": "/memories/project/t.md", "file_text": TOPIC},
                       ctx)
    assert not created.is_error
    assert created.content == ("File created successfully at: /memories/project/t.md\n"
                               "/memories/project/MEMORY.md now lists 1 topic file.")
    viewed = run_tool([tool], "memory", {"command": "view", "path": "/memories/project/t.md", "view_range": [2, 3]},
                      ctx)
    assert viewed.content.splitlines()[1:] == ["     2\tname: Tests", "     3\tdescription: how to run the tests"]
    bad_range = run_tool([tool], "memory", {"command": "view", "path": "/memories/project/t.md", "view_range": [1]},
                         ctx)
    assert bad_range.is_error and "view_range" in bad_range.content
    renamed = run_tool([tool], "memory", {"command": "rename", "old_path": "/memories/project/t.md",
                                          "new_path": "/memories/project/tests.md"}, ctx)
    assert renamed.content.startswith("Successfully renamed")
    assert [(c.op, c.path, c.new_path) for c in hooks.changes] == [
        ("create", "/memories/project/t.md", None),
        ("rename", "/memories/project/t.md", "/memories/project/tests.md")]
    assert hooks.changes[1].diff().startswith("rename from /memories/project/t.md\nrename to /memories/project/tests.md")


def test_precheck_and_preview(project, tmp_path):
    hooks, tool, ctx = setup(project, tmp_path)
    assert tool.precheck({"command": "view", "path": "/memories"}, ctx) is None
    assert tool.precheck({"command": "create", "path": "/memories/project/t.md", "file_text": TOPIC}, ctx) is None
    for bad in ({"command": "create", "path": "/tmp/x.md", "file_text": TOPIC},
                {"command": "create", "path": "/memories/project/t.md", "file_text": "no front matter"},
                {"command": "delete", "path": "/memories/project/MEMORY.md"},
                {"command": "format"}):
        refusal = tool.precheck(bad, ctx)
        assert refusal is not None and refusal.is_error, bad
    summary, diff = preview(hooks.store, {"command": "create", "path": "/memories/project/t.md", "file_text": TOPIC})
    assert summary == "memory create /memories/project/t.md" and "+name: Tests" in diff
    assert not (project / ".evo-agent").exists() and hooks.changes == []
