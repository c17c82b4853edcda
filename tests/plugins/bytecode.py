"""evo_agent's bytecode written once at the start of the run, so the console scripts and Python children
the tests start (hundreds of them) load it instead of compiling the package again each time.

A normal install compiles on `pip install`; an editable one (`pip install -e`, what `.ci/run` and the
README's set-up do) compiles on first import, unless `PYTHONDONTWRITEBYTECODE` is set, as it is in the
shells on the team's machine: then every child compiled every module it imported (five CLI test files:
21.1 s of CPU without the bytecode, 10.0 s with it). `compileall` writes whatever is missing or stale
and skips the rest (a stat per file); what runs is the same source either way."""

from __future__ import annotations

import compileall
import importlib.util

import pytest


def pytest_sessionstart(session: pytest.Session) -> None:
    spec = importlib.util.find_spec("evo_agent")  # finds the package without importing it
    for directory in (spec.submodule_search_locations or []) if spec else []:
        compileall.compile_dir(directory, quiet=2)
