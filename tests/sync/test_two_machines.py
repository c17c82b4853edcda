"""One session appended to on two machines never splices their histories in the team store.

A user's own session fetched to a second machine (it resumes as theirs there) can be appended to on both: a
rename records a `session_name` line in the session it names. Each push appended from the store's end, where
the other machine's line had ended: the store's copy got the tail of one machine's line after the other's
(a torn record that every teammate then fetched and showed), the rest of that machine's lines were lost, and
both pushes said they succeeded. Real cluster, alice's own role, the real console script on two machines; the
control renames on one machine only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evo_agent.sync.db import connect

from .helpers import store_bytes
from .pgcluster import add_teammate
from .test_cli import team_cli

REPO = "github.com/team/app"


def _two_machines(tmp_path: Path, sync_url: str):  # noqa: ANN202
    """alice's desk with a session pushed, and her laptop that resumed it (fetched as hers); (desk, laptop, id)."""
    connect(sync_url).close()
    _, alice_url = add_teammate(sync_url, [REPO])
    desk = team_cli(tmp_path, "desk", "git@github.com:team/app.git", alice_url)
    sid = desk.run("-p", "alice's own work").hint_id()
    laptop = team_cli(tmp_path, "laptop", "https://github.com/team/app", alice_url)
    resumed = laptop.run("--resume", sid, "-p", "go on")
    assert resumed.rc == 0, resumed.err
    return desk, laptop, sid


def _records(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.splitlines()]  # every line a whole record


@pytest.mark.parametrize("order", ["desk first", "laptop first", "at once"])
def test_a_session_appended_on_two_machines_is_never_spliced(tmp_path: Path, sync_url: str, order: str) -> None:
    desk, laptop, sid = _two_machines(tmp_path, sync_url)
    assert laptop.run("sessions", "rename", sid, "the laptop's much longer name for it").rc == 0
    assert desk.run("sessions", "rename", sid, "desk name").rc == 0
    if order == "at once":
        procs = [who.popen("sessions", "push", sid) for who in (desk, laptop)]
        results = [(p.wait(60), *p.communicate()) for p in procs]
    else:
        first, second = (desk, laptop) if order == "desk first" else (laptop, desk)
        results = [(r.rc, r.out, r.err) for r in (first.run("sessions", "push", sid), second.run("sessions", "push", sid))]
    stored = store_bytes(sync_url, sid)
    _records(stored)
    assert stored in (desk.transcript(sid).read_bytes(), laptop.transcript(sid).read_bytes())
    refused = [r for r in results if r[0] != 0]
    assert len(refused) == 1, results
    rc, _, err = refused[0]
    assert rc == 1 and "Traceback" not in err and len(err.splitlines()) == 1 and "differs from the team store" in err
    loser = laptop if laptop.transcript(sid).read_bytes() != stored else desk
    if loser.transcript(sid).stat().st_size > len(stored):  # "behind": the next run's catch-up tries it too
        turn = loser.run("-p", "next")  # and meets the same refusal: one warning, no promise to retry
        warned = [line for line in turn.err_lines if "differs from the team store" in line]
        assert turn.rc == 0 and len(warned) == 1 and "will be pushed" not in warned[0], turn.err
    fetched = team_cli(tmp_path, "bob-machine", "https://github.com/team/app", sync_url)
    shown = fetched.run("sessions", "show", sid)
    assert shown.rc == 0 and "Traceback" not in shown.err, shown.err


def test_a_session_appended_on_one_machine_is_pushed_from_either(tmp_path: Path, sync_url: str) -> None:
    """The control: the laptop's copy goes on from the store's; the desk's shorter copy is a prefix of it."""
    desk, laptop, sid = _two_machines(tmp_path, sync_url)
    assert laptop.run("sessions", "rename", sid, "the laptop's name for it").rc == 0
    pushed = laptop.run("sessions", "push", sid)
    assert pushed.rc == 0 and "pushed 1 line" in pushed.out, pushed.err
    again = desk.run("sessions", "push", sid)
    assert again.rc == 0 and "0 sessions were behind" in again.out, (again.out, again.err)
    stored = store_bytes(sync_url, sid)
    assert stored == laptop.transcript(sid).read_bytes()
    assert _records(stored)[-1]["name"] == "the laptop's name for it"
