"""A full disk while the `memory` tool writes (root: the project memory on a small tmpfs), then space back.

A memory write replaces the topic file, then MEMORY.md (the index evo-agent keeps in step). When the
topic file landed and the index did not, the tool told the model the write had failed and no
`memory_write` was recorded, though the file was changed on disk: the model believed a memory it had
not saved missing (a `create` again is refused: the file exists), and the session's record of what
memory it changed lost a change.
"""

from __future__ import annotations

import json

import pytest

from tests.fake_model_server import text, tool_use
from tests.helpers import fill_disk, last_tool_results, needs_root, result_text, tmpfs_or_skip

pytestmark = pytest.mark.faults

EDITS = ("--permission-mode", "accept-edits")


def _topic(name: str) -> str:
    return f"---\nname: {name}\ndescription: what {name} is about\ntype: project\n---\n{name} body\n"


def _result(body: dict) -> dict:
    (result,) = last_tool_results(body)
    return result


@needs_root
def test_a_memory_write_whose_index_hits_a_full_disk_is_reported_and_recorded_as_done(cli, model_server, project):
    memory = project / ".evo-agent" / "memory"
    with tmpfs_or_skip(memory, "256k"):
        model_server.script(tool_use("memory", {"command": "create", "path": "/memories/project/alpha.md",
                                                "file_text": _topic("alpha")}), text("Saved alpha."))
        first = cli.run("-p", "remember alpha", *EDITS)
        assert first.rc == 0 and first.out == "Saved alpha.\n", first.err
        index_before = (memory / "MEMORY.md").read_text()

        filler = fill_disk(memory, leave=4096)  # one page: the new topic file lands, the new index cannot
        model_server.script(tool_use("memory", {"command": "create", "path": "/memories/project/beta.md",
                                                "file_text": _topic("beta")}), text("Saved beta."))
        second = cli.run("-c", "-p", "remember beta", *EDITS)
        assert second.rc == 0 and second.out == "Saved beta.\n", second.err
        assert "Traceback" not in second.err
        assert (memory / "beta.md").read_text() == _topic("beta")  # the change is on disk
        result = _result(model_server.requests[-1])
        said = result_text(result)
        assert not result.get("is_error"), said  # so the model is told it was made
        assert "MEMORY.md" in said and "No space left on device" in said, said
        writes = [json.loads(line) for line in cli.transcript(second.hint_id()).read_text().splitlines()
                  if '"memory_write"' in line]
        assert [(w["path"], w["op"]) for w in writes if not w.get("restored")] == [
            ("/memories/project/beta.md", "create")]
        assert (memory / "MEMORY.md").read_text() == index_before  # the old index, whole
        assert not [p.name for p in memory.iterdir() if p.name.endswith(".tmp")]

        filler.unlink()  # space is back: the next write brings the index in step
        model_server.script(tool_use("memory", {"command": "create", "path": "/memories/project/gamma.md",
                                                "file_text": _topic("gamma")}), text("Saved gamma."))
        third = cli.run("-c", "-p", "remember gamma", *EDITS)
        assert third.rc == 0, third.err
        index = (memory / "MEMORY.md").read_text()
        assert all(f"{name}.md" in index for name in ("alpha", "beta", "gamma")), index
        model_server.assert_all_valid()
