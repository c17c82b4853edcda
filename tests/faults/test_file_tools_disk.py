"""The file tools on a full disk (root: a small tmpfs under the project): the user's file is never lost.

`edit_file` and `write_file` truncated the file and then wrote the new text: when the disk was full, the
write failed after the truncation and the user's file was left empty (or cut), its old text gone. A
refused write must leave the file as it was and tell the model in one line.
"""

from __future__ import annotations

import pytest

from tests.fake_model_server import text, tool_use
from tests.helpers import fill_disk, last_tool_results, needs_root, result_text, tmpfs_or_skip

pytestmark = pytest.mark.faults

ORIGINAL = "".join(f"line {n}: some source code\n" for n in range(300))  # ~8 KB: two pages


def _result(body: dict) -> dict:
    (result,) = last_tool_results(body)
    return result


@needs_root
@pytest.mark.parametrize("tool", ["edit_file", "write_file"])
def test_a_file_tool_on_a_full_disk_leaves_the_users_file_as_it_was(cli, model_server, project, tool):
    src = project / "src"
    with tmpfs_or_skip(src, "256k"):
        target = src / "main.py"
        target.write_text(ORIGINAL)
        filler = fill_disk(src, leave=0)
        grown = ORIGINAL + "x" * 10_000  # needs pages the disk does not have
        call = (tool_use("edit_file", {"path": "src/main.py", "old_string": "line 299: some source code\n",
                                       "new_string": "line 299: some source code\n" + "x" * 10_000})
                if tool == "edit_file" else tool_use("write_file", {"path": "src/main.py", "content": grown}))
        model_server.script(call, text("Could not."))
        result = cli.run("-p", "grow it", "--permission-mode", "bypass")
        assert result.rc == 0 and result.out == "Could not.\n", result.err
        assert "Traceback" not in result.err
        assert target.read_text() == ORIGINAL  # the user's file, whole
        said = _result(model_server.requests[-1])
        assert said.get("is_error") and "No space left on device" in result_text(said), said
        assert len(result_text(said).splitlines()) == 1, result_text(said)
        assert not [p.name for p in src.iterdir() if p.name not in ("main.py", "filler")]
        filler.unlink()
