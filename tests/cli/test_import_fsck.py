"""An imported session is a healthy one: `sessions fsck` finds nothing to repair in any real fixture's import.

The importer writes each record with the source's own timestamp; the session's meta.json must agree with
the transcript it sits beside (fsck rebuilds it from the lines and compares), or every import would be
reported as a problem on its first check.
"""

from __future__ import annotations

from tests.cli.import_helpers import FIXTURES

AGENTS = {"claude-code": "claude_code", "codex": "codex"}


def test_every_fixture_imports_into_a_session_fsck_finds_healthy(cli):
    imported = 0
    for agent, folder in AGENTS.items():
        # each scenario's transcript, and each scenario's of a version kept in a folder of its own (2.1.332/)
        for source in sorted([*(FIXTURES / folder).glob("*/*.jsonl"), *(FIXTURES / folder).glob("*/*/*.jsonl")]):
            result = cli.run("sessions", "import", agent, str(source))
            if " → " in result.out:
                imported += 1
    assert imported >= 26, "the fixtures should import"
    checked = cli.run("sessions", "fsck")
    assert checked.rc == 0, checked.out + checked.err
    assert f"checked {imported} sessions: no problems" in checked.out, checked.out
