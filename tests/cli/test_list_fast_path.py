"""`sessions list` read without argparse (cli/entry.py → `list_arguments`) means what the parser says.

Every sequence of up to three words from a pool of spellings — the options, their abbreviations,
`=` forms, numbers argparse takes or refuses, stray words — is given to both: whatever the fast
reader accepts, the parser accepts with the same values; whatever the parser refuses, the fast
reader leaves to it (None). Then the console script itself, both ways, prints the same bytes.
"""

from __future__ import annotations

import contextlib
import io
import itertools

import pytest

from evo_agent.cli.main import parse_arguments
from evo_agent.cli.sessions.command import list_arguments
from tests.builders import seed_session

POOL = ("--json", "--all", "--wide", "--worktrees", "--limit", "5", "12", "05", "0", "-1", "+3", " 7", "٣",
        "--lim", "--limit=4", "--remote", "--user", "--project-dir", "x", "--", "-h", "--js")
FIELDS = ("sessions_command", "json", "all", "limit", "wide", "worktrees", "remote", "user", "branch")


def _parsed(words: list[str]):  # noqa: ANN202
    """The parser's Namespace for `sessions list WORDS`, or None when it refuses them (exit 2) or prints help."""
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        try:
            return parse_arguments(["sessions", "list", *words])
        except SystemExit:
            return None


@pytest.mark.parametrize("length", [0, 1, 2, 3])
def test_the_fast_reader_agrees_with_the_parser_on_every_spelling(length):
    for words in itertools.product(POOL, repeat=length):
        fast = list_arguments(list(words))
        if fast is None:
            continue  # left to the parser: always right
        parsed = _parsed(list(words))
        assert parsed is not None, words
        assert parsed.command == fast.command == "sessions"
        assert {f: getattr(parsed, f) for f in FIELDS} == {f: getattr(fast, f) for f in FIELDS}, words
        assert not getattr(parsed, "project_dir", None) and not hasattr(fast, "project_dir")  # the cwd's project


def test_the_fast_reader_takes_the_plain_forms():
    assert list_arguments(["--limit", "20"]).limit == 20
    assert list_arguments(["--json", "--limit", "3", "--limit", "7", "--all"]).limit == 7
    for declined in (["--limit=20"], ["--lim", "20"], ["--limit", "05"], ["--remote"], ["-h"], ["--project-dir", "x"],
                     ["--limit"], ["x"]):
        assert list_arguments(declined) is None, declined


def test_the_console_script_prints_the_same_either_way(cli):
    seed_session(cli.project, ("hello", "hi"))
    seed_session(cli.project, ("second", "one"))
    fast = cli.run("sessions", "list", "--limit", "1", "--wide")
    slow = cli.run("sessions", "list", "--limit=1", "--wide")  # `=`: the parser's path
    assert fast.rc == slow.rc == 0
    assert fast.out == slow.out and "older sessions not shown" in fast.out
    fast_json = cli.run("sessions", "list", "--json", "--all")
    slow_json = cli.run("sessions", "list", "--json", "--al")  # an abbreviation: the parser's path
    assert fast_json.out == slow_json.out and fast_json.rc == 0 and '"id"' in fast_json.out
