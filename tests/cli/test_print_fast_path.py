"""`-p PROMPT` read without argparse (cli/main.py's `plain_print_arguments`) means what the parser says.

Every sequence of up to three words from a pool of spellings is given to both: whatever the fast
reader accepts, the parser accepts with the same values in every field; whatever else, the fast
reader leaves to the parser (None). Then `-p hi` runs without loading argparse at all.
"""

from __future__ import annotations

import contextlib
import io
import itertools

import pytest

from evo_agent.cli.main import plain_print_arguments
from evo_agent.cli.parser import parse_arguments
from tests.cli.test_startup_imports import loaded

POOL = ("-p", "--print", "--pr", "hi", "two words", "-x", "--", "", " -p", "sessions", "trust", "-1", "--print=hi",
        "-phi", "--model", "-h", "é", "plan")


def _parsed(words: list[str]):  # noqa: ANN202
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        try:
            return parse_arguments(words)
        except SystemExit:
            return None


@pytest.mark.parametrize("length", [0, 1, 2, 3])
def test_the_fast_reader_agrees_with_the_parser_on_every_spelling(length):
    for words in itertools.product(POOL, repeat=length):
        fast = plain_print_arguments(list(words))
        if fast is None:
            continue  # left to the parser: always right
        parsed = _parsed(list(words))
        assert parsed is not None, words
        assert vars(parsed) == vars(fast), words


def test_the_fast_reader_takes_only_the_plain_forms():
    assert plain_print_arguments(["-p", "hi"]).print_prompt == "hi"
    assert plain_print_arguments(["--print", "what failed?"]).print_prompt == "what failed?"
    for declined in (["-p"], ["-p", ""], ["-p", "-x"], ["-p", "hi", "--model", "m"], ["hi"], ["--pr", "hi"],
                     ["--print=hi"], ["-phi"], ["sessions", "list"]):
        assert plain_print_arguments(declined) is None, declined


def test_print_mode_loads_no_argparse(cli, model_server, tmp_path):
    code, modules = loaded(cli, tmp_path, "-p", "hi")
    assert code == 0 and len(model_server.requests) == 1
    assert not modules & {"argparse", "evo_agent.cli.parser", "gettext", "shutil"}
