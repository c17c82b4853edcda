"""The help `evo-agent --help` prints from cli/help_static.py is the parser's own, at 80 columns.

When the parser changes, regenerate it:
    EVO_AGENT_UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/cli/test_help_static.py
"""

from __future__ import annotations

import os
from pathlib import Path

from evo_agent.cli import help_static
from evo_agent.cli.entry import HELP_WIDTH
from evo_agent.cli.main import build_parser

STATIC = Path(help_static.__file__)


def _render(text: str) -> str:
    lines = "".join(f"    {line!r}\n" for line in text.splitlines(keepends=True))
    return (f'"""`evo-agent --help` at {HELP_WIDTH} columns, printed by cli/entry.py without building the parser.\n\n'
            "Generated from cli/main.py's parser; tests/cli/test_help_static.py says how to regenerate it.\n"
            f'"""\n\nHELP = (\n{lines})\n')


def test_the_static_help_is_what_the_parser_prints_at_80_columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", str(HELP_WIDTH))
    expected = build_parser().format_help()
    if os.environ.get("EVO_AGENT_UPDATE_GOLDEN") == "1":
        STATIC.write_text(_render(expected))
    assert expected == help_static.HELP, "regenerate cli/help_static.py (see this test's docstring)"


def test_help_is_the_same_through_the_fast_path_and_the_parser(cli):
    fast = cli.run("--help", env={"COLUMNS": "80"})
    assert fast.rc == 0 and fast.out == help_static.HELP
    narrow = cli.run("--help", env={"COLUMNS": "60"})  # formatted for the width at hand by argparse
    assert narrow.rc == 0 and narrow.out != fast.out and narrow.out.startswith("usage: evo-agent")
    wide = cli.run("-h", env={"COLUMNS": "200"})
    assert wide.rc == 0 and wide.out == fast.out
