"""SPEC §1 in code: evo_agent.session.layout names what a session looks like on disk.

The literals here are the contract itself (a rename is a format change, so it must fail here); the
last test keeps them from creeping back into other modules, so renaming a file stays a one-line change.
"""

from __future__ import annotations

import re
import stat
from pathlib import Path

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
