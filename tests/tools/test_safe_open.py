"""File tools open what they checked (issue #26): a symlink swapped in between the check and the open
— at a directory on the way or at the file itself — never redirects a read, a write, an edit or a restore.

The race is made deterministic: the swap happens inside the open hook, after the tool resolved and
checked the path and before the open. Each test runs twice: with openat2 (RESOLVE_BENEATH |
RESOLVE_NO_SYMLINKS) where the kernel has it, and with the O_NOFOLLOW walk that replaces it elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import evo_agent.tools._common as common
from evo_agent.tools import BASIC_TOOLS, ToolContext, run_tool, safe_open
from evo_agent.tools.confine import real

SECRET = "ssh-ed25519 AAAA-the-users-own-key\n"


@pytest.fixture(params=["openat2", "walk"])
def way(request):
    safe_open.set_openat2(None if request.param == "openat2" else False)
    yield request.param
    safe_open.set_openat2(None)


@pytest.fixture
def world(tmp_path: Path, way):
    """A project with sub/notes.txt, and outside it a directory holding a file of the same name."""
    project = tmp_path / "proj"
    (project / "sub").mkdir(parents=True)
    (project / "sub" / "notes.txt").write_text("old line\n")
    outside = tmp_path / "home" / ".ssh"
    outside.mkdir(parents=True)
    (outside / "notes.txt").write_text(SECRET)
    return project, outside


def swap_directory(project: Path, outside: Path) -> None:
    os.rename(project / "sub", project / "sub-moved")
    os.symlink(outside, project / "sub")


def swap_file(project: Path, outside: Path) -> None:
    os.rename(project / "sub" / "notes.txt", project / "sub" / "notes-moved")
    os.symlink(outside / "notes.txt", project / "sub" / "notes.txt")


def swapping_between_check_and_open(monkeypatch, swap) -> None:
    real_open = common.open_file

    def open_file(*args, **kwargs):
        swap()
        return real_open(*args, **kwargs)

    monkeypatch.setattr(common, "open_file", open_file)


CALLS = {
    "read_file": {"path": "sub/notes.txt"},
    "write_file": {"path": "sub/notes.txt", "content": "attacker-controlled\n"},
    "edit_file": {"path": "sub/notes.txt", "old_string": "ssh-ed25519", "new_string": "owned"},
}


@pytest.mark.parametrize("tool", sorted(CALLS))
@pytest.mark.parametrize("swap", [swap_directory, swap_file])
def test_a_symlink_swapped_in_after_the_check_is_not_followed(world, monkeypatch, tool, swap):
    project, outside = world
    swapping_between_check_and_open(monkeypatch, lambda: swap(project, outside))
    result = run_tool(BASIC_TOOLS, tool, dict(CALLS[tool]), ToolContext(project_dir=project))
    assert result.is_error and "symbolic link appeared" in result.content, result.content
    assert "AAAA-the-users-own-key" not in result.content  # nothing was read through it
    assert (outside / "notes.txt").read_text() == SECRET  # nothing was written through it
    assert sorted(p.name for p in outside.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize("tool", sorted(CALLS))
def test_a_path_that_changed_since_the_permission_check_is_refused(world, tool):
    """The gate checked sub/notes.txt inside the project; by the time the tool runs, sub points outside."""
    project, outside = world
    checked = real(project / "sub" / "notes.txt")
    swap_directory(project, outside)
    ctx = ToolContext(project_dir=project, checked_path=checked)
    result = run_tool(BASIC_TOOLS, tool, dict(CALLS[tool]), ctx)
    assert result.is_error and "points somewhere else than when it was checked" in result.content
    assert (outside / "notes.txt").read_text() == SECRET and "AAAA" not in result.content


@pytest.mark.parametrize("depth", [1, 3])
def test_a_symlinked_directory_met_while_making_parents_is_not_followed(world, monkeypatch, depth):
    project, outside = world
    parts = ["new"] + [f"d{i}" for i in range(depth - 1)]

    def plant() -> None:
        os.symlink(outside, project.joinpath(parts[0]))

    swapping_between_check_and_open(monkeypatch, plant)
    path = "/".join([*parts, "authorized_keys"])
    result = run_tool(BASIC_TOOLS, "write_file", {"path": path, "content": "ssh-rsa attacker\n"},
                      ToolContext(project_dir=project))
    assert result.is_error and "symbolic link appeared" in result.content
    assert sorted(p.name for p in outside.iterdir()) == ["notes.txt"]


def test_symlinks_resolved_before_the_check_still_work_inside_and_out(world, tmp_path):
    """A symlink that was there when the path was checked is resolved then: the real file is opened."""
    project, outside = world
    (project / "link.txt").symlink_to(project / "sub" / "notes.txt")
    (project / "dirlink").symlink_to(project / "sub")
    ctx = ToolContext(project_dir=project)
    assert run_tool(BASIC_TOOLS, "read_file", {"path": "link.txt"}, ctx).content == "     1\told line"
    assert not run_tool(BASIC_TOOLS, "edit_file", {"path": "dirlink/notes.txt", "old_string": "old",
                                                    "new_string": "new"}, ctx).is_error
    assert (project / "sub" / "notes.txt").read_text() == "new line\n" and (project / "link.txt").is_symlink()
    elsewhere = tmp_path / "approved" / "deep" / "out.txt"  # outside the project, as approved by the user
    assert not run_tool(BASIC_TOOLS, "write_file", {"path": str(elsewhere), "content": "ok\n"}, ctx).is_error
    assert elsewhere.read_text() == "ok\n"
    assert run_tool(BASIC_TOOLS, "read_file", {"path": str(elsewhere)}, ctx).content == "     1\tok"


def test_open_dir_and_open_file_refuse_every_symlink_on_the_way(world):
    project, outside = world
    swap_directory(project, outside)
    with pytest.raises(safe_open.SymlinkInPath):
        safe_open.open_dir(project / "sub", root=project)
    with pytest.raises(safe_open.SymlinkInPath):
        safe_open.open_file(project / "sub" / "notes.txt", os.O_RDONLY, root=project)
    with pytest.raises(safe_open.SymlinkInPath):  # from "/" too, for a path outside any root
        safe_open.open_file(project / "sub" / "notes.txt", os.O_RDONLY)
    fd = safe_open.open_file(project / "sub-moved" / "notes.txt", os.O_RDONLY, root=project)
    with os.fdopen(fd) as f:
        assert f.read() == "old line\n"


def test_the_rewind_restore_never_writes_through_a_swapped_directory(world, monkeypatch):
    import evo_agent.agent.file_restore as file_restore
    from evo_agent.session import FileChange

    project, outside = world
    backup = project.parent / "backup"
    backup.write_text("restored content\n")
    change = FileChange(path=str(project / "sub" / "notes.txt"), existed=True, backup=backup,
                        before_sha256=None, mode=0o644, last_written_sha256=None)
    real_open_dir = file_restore.open_dir

    def open_dir(*args, **kwargs):
        swap_directory(project, outside)
        return real_open_dir(*args, **kwargs)

    monkeypatch.setattr(file_restore, "open_dir", open_dir)
    with pytest.raises(OSError):
        file_restore.restore_opened(change)
    assert (outside / "notes.txt").read_text() == SECRET
    assert sorted(p.name for p in outside.iterdir()) == ["notes.txt"]
    gone = FileChange(path=str(project / "sub" / "notes.txt"), existed=False, backup=None, before_sha256=None,
                      mode=None, last_written_sha256=None)
    os.unlink(project / "sub")
    os.rename(project / "sub-moved", project / "sub")
    with pytest.raises(OSError):  # removing a file created since: not through the symlink either
        file_restore.restore_opened(gone)
    assert (outside / "notes.txt").read_text() == SECRET


def test_the_rewind_restore_puts_the_file_back_through_opened_directories(world):
    import evo_agent.agent.file_restore as file_restore
    from evo_agent.session import FileChange

    project, _ = world
    backup = project.parent / "backup"
    backup.write_text("as it was\n")
    target = project / "sub" / "new-dir" / "f.txt"
    change = FileChange(path=str(target), existed=True, backup=backup, before_sha256=None, mode=0o640,
                        last_written_sha256=None)
    file_restore.restore_opened(change)
    assert target.read_text() == "as it was\n" and (target.stat().st_mode & 0o777) == 0o640
    file_restore.restore_opened(FileChange(path=str(target), existed=False, backup=None, before_sha256=None,
                                           mode=None, last_written_sha256=None))
    assert not target.exists() and sorted(os.listdir(target.parent)) == []
