"""Snapshot tests: `sessions show` and the Markdown export of a rich session, against golden files.

Ids, sidechain names, times and the project path are replaced by placeholders
before comparing (see `normalise`). After an intended change of the output,
regenerate the files and review the diff:

    EVO_AGENT_UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/cli/test_sessions_golden.py
    git diff tests/cli/golden/
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli.sessions_helpers import normalise, rich_session

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("EVO_AGENT_UPDATE_GOLDEN") == "1"


def check_golden(name: str, actual: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"no golden file {path}; create it with EVO_AGENT_UPDATE_GOLDEN=1"
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, (
        f"{name} differs from its golden file; if the change is intended, regenerate with "
        "EVO_AGENT_UPDATE_GOLDEN=1 and review the diff"
    )


@pytest.fixture
def rich(demo_cli):
    return rich_session(demo_cli.project)


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("show.txt", ["show", "{source}"]),
        ("show_resumed.txt", ["show", "{resumed}"]),
        ("show_resumed_restored_full.txt", ["show", "{resumed}", "--restored", "--full"]),
        ("export.md", ["export", "{source}", "--format", "md"]),
        ("export_resumed.md", ["export", "{resumed}", "--format", "md"]),
    ],
)
def test_output_matches_its_golden_file(demo_cli, rich, name, args):
    argv = [a.format(source=rich.source, resumed=rich.resumed) for a in args]
    result = demo_cli.run("sessions", *argv)
    assert result.rc == 0 and result.err == ""
    check_golden(name, normalise(result.out, demo_cli.project))
