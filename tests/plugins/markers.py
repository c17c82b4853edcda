"""`exhaustive`: the long variants of property tests, run only when asked for (`pytest -m exhaustive`).

CI runs each property test with a bounded number of examples; its exhaustive twin (same body, many
more examples) carries this marker and is deselected unless the `-m` expression names `exhaustive`.
Done here rather than with `addopts = -m "not exhaustive"` because a `-m` on the command line
replaces the one in addopts: `pytest -m faults` would then run the exhaustive fault tests too. A test
named on the command line (`path::test_name`) runs whatever its marker.
"""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "exhaustive" in (config.getoption("markexpr") or ""):
        return
    named = _named_tests(config)
    keep, drop = [], []
    for item in items:
        wanted = not item.get_closest_marker("exhaustive") or (item.path, item.originalname) in named
        (keep if wanted else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _named_tests(config: pytest.Config) -> set[tuple[Path, str]]:
    """The tests named on the command line (`path::test_name`): those run whatever their marker."""
    named = set()
    for arg in config.args:
        if "::" in arg:
            path, rest = arg.split("::", 1)
            named.add((Path(config.invocation_params.dir, path).resolve(), rest.split("::")[-1].split("[")[0]))
    return named
