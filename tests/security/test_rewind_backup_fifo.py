"""A rewind never waits on a backup that is a FIFO (an unpacked archive's planted session).

`--restore-files` reads each changed file's backup from the session's `file-history/`. tar keeps FIFOs, so a
session unpacked from an archive (then adopted) can hold one where a backup should be: the restore opened it
without O_NONBLOCK and waited for a writer forever. Now it is refused in one line, like any backup that is not
a regular file, and the rewind goes on.
"""

from __future__ import annotations

import os

import pytest

from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text
from tests.security.hostile import unpack_archive_of, upstream
from tests.security.test_restore_confinement import BACKUP, PLANTED, _planted_session


@pytest.mark.parametrize("how", ["fifo", "link to a fifo", "link to /dev/zero"])
def test_a_fifo_for_a_backup_never_hangs_the_rewind(tmp_path, model_server, how):
    origin = upstream(tmp_path, {})
    target = str(tmp_path / "unpacked" / "notes.sh")
    base = origin / ".evo-agent" / "sessions" / PLANTED
    for rel, content in _planted_session(target).items():
        (origin / rel).parent.mkdir(parents=True, exist_ok=True)
        (origin / rel).write_bytes(content if isinstance(content, bytes) else content.encode())
    backup = base / BACKUP
    backup.unlink()
    if how == "fifo":
        os.mkfifo(backup)
    elif how == "link to a fifo":
        os.mkfifo(base / "pipe")
        backup.symlink_to("../pipe")
    else:
        backup.symlink_to("/dev/zero")
    project = unpack_archive_of(origin, tmp_path / "unpacked")
    home = tmp_path / "home"
    home.mkdir()
    cli = Cli(project, model_server.env(clean_env(home)))
    adopted = cli.run("sessions", "adopt", PLANTED, timeout=120)
    assert adopted.rc == 0, adopted.err
    new_id = adopted.out_lines[-1].removeprefix("Resume it with: evo-agent --resume ")
    model_server.script(text("Again."))
    result = cli.run("--resume", new_id, "--at", "1", "--restore-files", "-p", "again", timeout=120)
    assert result.rc == 0, result.err
    assert "Restored 0 of 1 file" in result.err, result.err
    assert not (project / "notes.sh").exists()
