"""The documents a newcomer reads in a clone: no dead relative link, and the spec copy equal to the team's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_relative_link_resolves_inside_the_clone(doc):
    dead = []
    for target in LINK.findall(doc.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue  # a web address or an anchor on the same page
        path = (doc.parent / target.split("#", 1)[0]).resolve()
        if not path.exists() or not path.is_relative_to(ROOT):
            dead.append(target)
    assert dead == []


def test_the_spec_copy_is_the_teams_spec():
    shared = ROOT.parent / "shared" / "SPEC.md"
    if not shared.exists():
        pytest.skip("no shared/SPEC.md beside this clone to compare with")
    assert (ROOT / "docs" / "SPEC.md").read_text(encoding="utf-8") == shared.read_text(encoding="utf-8"), (
        "docs/SPEC.md differs from ../shared/SPEC.md: copy the team's spec into docs/")
