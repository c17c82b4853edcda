"""`sessions list` fits the terminal it prints to (issue #31): id, age, messages, the title cut with …."""

from __future__ import annotations

import re

from tests.builders import seed_session, simple_session
from tests.tmux_terminal import Terminal

LONG = "please refactor the payment module so that retries are idempotent and every failure is logged " * 3


def _ids(project, count=3):
    return [seed_session(project, (f"{i} {LONG}", "ok")) for i in range(count)]


def test_at_80_columns_every_row_fits_and_names_its_session_whole(demo_cli, project):
    ids = _ids(project) + [simple_session(project, "漢字のプロンプト" * 20)]
    listed = demo_cli.run("sessions", "list", env={**demo_cli.env, "COLUMNS": "80"})
    assert listed.rc == 0, listed.err
    lines = listed.out.splitlines()
    assert lines[0].split() == ["ID", "UPDATED", "MSGS", "NAME", "OR", "FIRST", "PROMPT"]
    widths = [sum(2 if "\u3000" <= ch <= "\u9fff" else 1 for ch in line) for line in lines]
    assert max(widths) <= 80, lines
    for sid in ids:
        (row,) = [line for line in lines if line.startswith(sid)]
        assert "just now" in row and row.endswith("…")


def test_wide_and_a_pipe_show_every_column(demo_cli, project):
    sid = _ids(project, 1)[0]
    for listed in (demo_cli.run("sessions", "list", "--wide", env={**demo_cli.env, "COLUMNS": "80"}),
                   demo_cli.run("sessions", "list")):
        header, row = listed.out.splitlines()[:2]
        assert header.split()[:6] == ["ID", "CREATED", "UPDATED", "MESSAGES", "TOKENS", "BRANCH"]
        assert row.startswith(sid) and LONG.strip()[:55] in row


def test_no_row_wraps_in_a_real_80x24_terminal(project, terminals):
    ids = _ids(project, 4)
    term = Terminal(project, ["sessions", "list"])
    terminals.append(term)
    screen = term.wait(r"EXITED-0")
    rows = screen.splitlines()
    header = rows.index(next(r for r in rows if r.startswith("ID")))
    assert [re.split(r"\s+", r)[0] for r in rows[header + 1: header + 5]] == list(reversed(ids))
    assert rows[header + 5].startswith("EXITED-0")  # nothing wrapped onto a row of its own
