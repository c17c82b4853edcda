"""SPEC §1 in code: evo_agent.session.layout names what a session looks like on disk.

The literals here are the contract itself (a rename is a format change, so it must fail here); the
last test keeps them from creeping back into other modules, so renaming a file stays a one-line change.
"""

from __future__ import annotations

import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from evo_agent.session import SessionStore, layout

SRC = Path(__file__).resolve().parents[2] / "src" / "evo_agent"


def test_the_names_are_the_spec_s():
    assert layout.SESSIONS_SUBDIR.as_posix() == ".evo-agent/sessions"
    assert layout.sessions_dir("/p") == Path("/p/.evo-agent/sessions")
    assert layout.transcript_path("/s") == Path("/s/messages.jsonl")
    assert (layout.META_NAME, layout.LOCK_NAME, layout.SUBAGENT_DIR) == ("meta.json", ".lock", "subagent")
    assert (layout.DIR_MODE, layout.FILE_MODE) == (0o700, 0o600)
    assert layout.GITIGNORE_TEXT == "*\n"


def test_sidechain_and_backup_names():
    assert layout.SIDECHAIN_PATH_RE.match("subagent/1780227556183_general-purpose_0a1b.jsonl")
    for bad in ("subagent/../x.jsonl", "subagent/1780227556183_Gen_0a1b.jsonl", "x/1780227556183_a_0a1b.jsonl",
                "subagent/1780227556183_a_0a1b.jsonl.tmp"):
        assert not layout.SIDECHAIN_PATH_RE.match(bad), bad
    assert layout.BACKUP_NAME_RE.match("file-history/1780227556183_0a1b")
    assert not layout.BACKUP_NAME_RE.match("file-history/../../etc/passwd")


def test_a_recorded_session_has_that_layout(tmp_path):
    store = SessionStore(tmp_path)
    rec = store.create(model="m", provider="demo", git_branch=None)
    rec.user({"role": "user", "content": "hello"})
    rec.checkpoint()
    side = rec.start_subagent("general-purpose", "toolu_1")
    side.user({"role": "user", "content": "sub"})
    root = tmp_path / ".evo-agent" / "sessions"
    assert (root / ".gitignore").read_text() == "*\n"
    session = root / rec.id
    assert stat.S_IMODE(session.stat().st_mode) == 0o700
    for name in ("messages.jsonl", "meta.json"):
        assert stat.S_IMODE((session / name).stat().st_mode) == 0o600, name
    [sidechain] = [p.relative_to(session).as_posix() for p in (session / "subagent").iterdir()]
    assert layout.SIDECHAIN_PATH_RE.match(sidechain), sidechain


def test_the_name_patterns_are_compiled_at_first_use_and_kept():
    """A listing loads layout.py and needs none of its `*_RE`: each is compiled when first asked for (PEP 562)."""
    code = ("import re, sys\nfrom evo_agent.session import layout\n"
            "names = sorted(layout._PATTERNS)\n"
            "print(sorted(n for n in names if n in vars(layout)))\n"
            "from evo_agent.session.layout import PLAN_ID_RE\n"
            "print(isinstance(PLAN_ID_RE, re.Pattern), 'PLAN_ID_RE' in vars(layout), layout.PLAN_ID_RE is PLAN_ID_RE)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.splitlines() == ["[]", "True True True"]
    assert set(layout._PATTERNS) == {"SIDECHAIN_PATH_RE", "FETCH_STAGING_RE", "BACKUP_NAME_RE", "PLAN_ID_RE",
                                     "TASK_FILE_RE", "MEMORY_TOPIC_RE"}
    assert all(isinstance(getattr(layout, name), re.Pattern) for name in layout._PATTERNS)
    with pytest.raises(AttributeError):
        layout.NO_SUCH_RE  # noqa: B018


def test_no_other_module_spells_the_layout():
    literal = re.compile(r"""["'](messages\.jsonl|meta\.json|\.evo-agent|\.lock|file-history)["']|\b0o(600|700)\b""")
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "layout.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if literal.search(code) and not code.strip().startswith(('"""', "`")):
                found.append(f"{path.relative_to(SRC)}:{number}: {line.strip()}")
    assert not found, "use evo_agent.session.layout:\n" + "\n".join(found)

