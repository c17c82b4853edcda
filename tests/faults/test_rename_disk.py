"""`sessions rename` on a disk that refuses the write (RLIMIT_FSIZE, as any user: a full disk cut short).

The rename appends a `session_name` record to a finished session. When the write was cut, it printed two
lines, the first saying "this conversation is not being saved" (no conversation runs), and it left the
torn fragment in the user's transcript for good: every resume of it after warned of an unreadable line
and `sessions fsck` reported a problem. A refused rename is one line and leaves the transcript as it was.
"""

from __future__ import annotations

import hashlib
import resource
import subprocess

import pytest

from tests.builders import seed_session
from tests.cli_runner import COMMAND
from tests.fake_model_server import text

pytestmark = pytest.mark.faults


def test_a_rename_cut_short_is_one_line_and_leaves_the_transcript_as_it_was(cli, model_server):
    sid = seed_session(cli.project, ("hello", "Hi."))
    transcript = cli.transcript(sid)
    before = transcript.read_bytes()
    limit = len(before) + 40  # the record is cut 40 bytes in

    def cut() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    refused = subprocess.run([*COMMAND, "sessions", "rename", sid, "my name"], cwd=cli.project, env=cli.env,
                             capture_output=True, text=True, preexec_fn=cut, timeout=60)
    assert refused.returncode == 1 and refused.stdout == "", refused
    (line,) = refused.stderr.splitlines()
    assert line.startswith(f"evo-agent: cannot rename session {sid}: ") and "File too large" in line, line
    assert hashlib.sha256(transcript.read_bytes()).digest() == hashlib.sha256(before).digest()

    checked = cli.run("sessions", "fsck")
    assert checked.rc == 0, checked.out
    renamed = cli.run("sessions", "rename", sid, "my name")
    assert renamed.rc == 0, renamed.err
    model_server.script(text("Resumed."))
    resumed = cli.run("--resume", "my name", "-p", "go on")
    assert resumed.rc == 0 and resumed.out == "Resumed.\n", resumed.err
    assert "unreadable" not in resumed.err, resumed.err
