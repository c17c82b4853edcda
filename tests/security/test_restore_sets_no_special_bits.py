"""A rewind's restore gives a file back its permissions, never set-user-ID, set-group-ID or sticky bits.

The mode a restore gives a file comes from the transcript's `file_backup` record, and a transcript can be
planted (then adopted). A planted record with `"mode": 0o6755` made the restored file set-user-ID and
set-group-ID: run as root (a container's usual user), a program in the project that any local user could run
as root; as anyone else, as that user. Now only the permission bits (0o777, under the umask) are restored.

The hostile upstream commits a session whose turn 1 "changed" `tools/run`; the victim adopts it and rewinds
with `--restore-files` (print mode: inside the project a restore needs no question). The control: the
executable bits of the same record are restored.
"""

from __future__ import annotations

import json
import stat

import pytest

from tests.fake_model_server import text
from tests.security.hostile import upstream
from tests.security.test_restore_confinement import PAYLOAD, PLANTED, _planted_session, adopt_planted


def _restored_mode(tmp_path, model_server, mode: int) -> int:
    target = tmp_path / "clone" / "tools" / "run"
    files = _planted_session(str(target))
    transcript = f".evo-agent/sessions/{PLANTED}/messages.jsonl"
    records = [json.loads(line) for line in files[transcript].splitlines()]
    for record in records:
        if record["type"] == "file_backup":
            record["mode"] = mode
    files[transcript] = b"".join(json.dumps(r).encode() + b"\n" for r in records)
    cli, new_id = adopt_planted(tmp_path, model_server, upstream(tmp_path, files))
    model_server.script(text("Again."))
    result = cli.run("--resume", new_id, "--at", "1", "--restore-files", "-p", "again")
    assert result.rc == 0 and target.read_bytes() == PAYLOAD, result.err
    return target.stat().st_mode


@pytest.mark.parametrize("mode", [0o4755, 0o2755, 0o6777, 0o7755, 0o1777, 0o104755], ids=oct)
def test_a_planted_mode_never_makes_a_restored_file_set_id(tmp_path, model_server, mode):
    restored = _restored_mode(tmp_path, model_server, mode)
    assert not restored & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX), oct(restored)
    assert stat.S_ISREG(restored)


def test_the_control_the_permission_bits_are_restored(tmp_path, model_server):
    restored = _restored_mode(tmp_path, model_server, 0o750)
    assert stat.S_IMODE(restored) == 0o750
