"""The layer rules of docs/architecture.md, held by a test: what each package may import from evo_agent.

cli → ui, agent → tools, providers → session; evo_agent.safe_text, evo_agent.exit_codes and evo_agent.__init__ are leaves
anyone may use. The session library imports nothing from the rest of evo_agent, so it can be reused
(and replaced) on its own. Lazy imports inside functions count too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "evo_agent"
LEAVES = {"evo_agent", "evo_agent.safe_text", "evo_agent.exit_codes"}
ALLOWED = {  # package -> the evo_agent packages it may import (besides itself and the leaves)
    "session": set(),
    "providers": {"session"},
    "tools": {"session"},
    "importers": {"session"},
    "sync": {"session"},
    "agent": {"session", "providers", "tools"},
    "ui": {"session", "providers", "tools", "agent"},
    "cli": {"session", "providers", "tools", "agent", "ui", "importers", "sync"},
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    package = ".".join(path.relative_to(SRC.parent).with_suffix("").parts[:-1])
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names.add(module)
    return {n for n in names if n == "evo_agent" or n.startswith("evo_agent.")}


def _package_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and (SRC / parts[1]).is_dir() else None


@pytest.mark.parametrize("package", sorted(p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()))
def test_each_package_imports_only_what_its_layer_allows(package):
    assert package in ALLOWED, f"evo_agent.{package} is new: give it a row in ALLOWED (and docs/architecture.md)"
    bad = []
    for path in sorted((SRC / package).rglob("*.py")):
        for module in _imports(path):
            if ".".join(module.split(".")[:2]) in LEAVES:
                continue
            target = _package_of(module)
            if target == package or target in ALLOWED[package]:
                continue
            bad.append(f"{path.relative_to(SRC.parent)} imports {module}")
    assert not bad, "\n".join(bad)


def test_the_session_library_is_used_through_its_public_api():
    """Outside evo_agent.session, only `evo_agent.session` itself is imported: its `__all__` is the contract.

    The one other door is `evo_agent.session.admin`: what only the commands that look after sessions use.
    """
    bad = [f"{path.relative_to(SRC.parent)} imports {module}"
           for path in sorted(SRC.rglob("*.py")) if path.parent.name != "session" or path.parent.parent != SRC
           for module in _imports(path)
           if module.startswith("evo_agent.session.") and module != "evo_agent.session.admin"]
    assert not bad, "\n".join(bad) + "\n(add the name to _EXPORTS in session/__init__.py instead)"


def test_the_admin_names_are_used_only_by_the_sessions_commands():
    """`evo_agent.session.admin` (rebuilding meta.json, restoring the .gitignore, …) is for cli/sessions/ only."""
    users = sorted(str(path.relative_to(SRC.parent)) for path in SRC.rglob("*.py")
                   if "evo_agent.session.admin" in _imports(path) and path.parent.name != "session")
    assert users and all(user.startswith("evo_agent/cli/sessions/") for user in users), users
