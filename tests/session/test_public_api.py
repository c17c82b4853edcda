"""The session library's public API: `__all__`, loaded lazily (PEP 562), and nothing else public.

In the style of httpx's `test_exported_members`: every name in `__all__` resolves to the object
its submodule defines, and once all of them are loaded the package holds no other public name
but its submodules. Each check runs in a fresh interpreter, where nothing has been imported yet.
"""

from __future__ import annotations

import json
import subprocess
import sys

_PROBE = """
import json, sys, types
import evo_agent.session as session
loaded_by_import = sorted(m for m in sys.modules if m.startswith("evo_agent.session."))
resolved = {}
for name in session.__all__:
    value = getattr(session, name)
    home = session._EXPORTS[name]
    module = sys.modules[f"evo_agent.session.{home}"]
    resolved[name] = getattr(module, name) is value
public = sorted(n for n, v in vars(session).items() if not n.startswith("_") and not isinstance(v, types.ModuleType))
print(json.dumps({"all": session.__all__, "exports": sorted(session._EXPORTS), "loaded_by_import": loaded_by_import,
                  "resolved": resolved, "public": public, "dir": dir(session)}))
"""


def _probe() -> dict:
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout)


def test_every_name_in_all_resolves_to_its_submodule_and_nothing_else_public_leaks():
    data = _probe()
    assert data["all"] == sorted(data["all"], key=str.casefold), "keep __all__ sorted (merges stay readable)"
    assert len(set(data["all"])) == len(data["all"])
    assert sorted(data["all"]) == data["exports"], "__all__ and the _EXPORTS table name the same things"
    assert [name for name, same in data["resolved"].items() if not same] == []
    # TYPE_CHECKING is the one module-level helper; everything else public is in __all__.
    assert sorted(set(data["public"]) - {"TYPE_CHECKING"}) == sorted(data["all"])
    assert set(data["all"]) <= set(data["dir"])


def test_importing_the_package_loads_no_submodule():
    """`import evo_agent.session` is free: `-p` and `sessions list` pay only for what they use."""
    assert _probe()["loaded_by_import"] == []


def test_an_unknown_name_is_an_attribute_error_and_submodules_still_import():
    import evo_agent.session as session

    try:
        session.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("an unknown name resolved")
    from evo_agent.session import store

    assert store.SessionStore is session.SessionStore


def test_type_checkers_see_every_public_name_from_its_submodule():
    """The `if TYPE_CHECKING:` imports name every export from its home: a missing one is `object` to mypy."""
    import ast
    from pathlib import Path

    import evo_agent.session as session

    tree = ast.parse(Path(session.__file__).read_text(encoding="utf-8"))
    seen: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for child in ast.walk(node):
                if isinstance(child, ast.ImportFrom) and child.level == 1 and child.module:
                    seen.update((alias.asname or alias.name, child.module) for alias in child.names)
    assert seen == session._EXPORTS
