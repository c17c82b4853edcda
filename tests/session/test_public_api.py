"""The session library's public API: `__all__`, loaded lazily (PEP 562), and nothing else public.

In the style of httpx's `test_exported_members`: every name in `__all__` resolves to the object
its submodule defines, and once all of them are loaded the package holds no other public name
but its submodules. Each check runs in a fresh interpreter, where nothing has been imported yet.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

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


_ADMIN_PROBE = """
import json, sys
import evo_agent.session as session
import evo_agent.session.admin as admin
loaded = sorted(m for m in sys.modules if m.startswith("evo_agent.session.") and m != "evo_agent.session.admin")
resolved = {name: getattr(admin, name) is getattr(sys.modules[f"evo_agent.session.{admin._EXPORTS[name]}"], name)
            for name in admin.__all__}
print(json.dumps({"all": admin.__all__, "session_all": session.__all__, "loaded_by_import": loaded,
                  "resolved": resolved}))
"""


def test_the_admin_names_live_in_their_own_submodule_and_resolve_lazily():
    """fsck, rm/prune and rename's names are `evo_agent.session.admin`'s, not the everyday API's."""
    out = subprocess.run([sys.executable, "-c", _ADMIN_PROBE], capture_output=True, text=True, timeout=60, check=True)
    data = json.loads(out.stdout)
    assert {"rebuild_meta", "restore_gitignore", "held_for_removal", "rename_session"} <= set(data["all"])
    assert not set(data["all"]) & set(data["session_all"])
    assert data["loaded_by_import"] == []
    assert [name for name, same in data["resolved"].items() if not same] == []


def _type_checking_names(path: Path) -> list[tuple[str, str | None]]:
    """(name, alias) of every import in the module's `if TYPE_CHECKING:` block."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING")
    return [(alias.name, alias.asname) for node in ast.walk(block) if isinstance(node, ast.ImportFrom)
            for alias in node.names]


def test_what_type_checkers_see_is_the_table_each_name_re_exported():
    """The `TYPE_CHECKING` imports name what `__all__` names, each as `X as X` (explicit re-export for mypy),
    so the table stays the one place a public name is added."""
    import evo_agent.session as session
    import evo_agent.session.admin as admin

    for module in (session, admin):
        pairs = _type_checking_names(Path(module.__file__))
        assert sorted(name for name, _ in pairs) == sorted(module.__all__), module.__name__
        assert [name for name, alias in pairs if alias != name] == [], module.__name__
