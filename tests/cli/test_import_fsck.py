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
        # each scenario's transcript, and each scenario's of a version kept in a folder of its own (2.1.332/),
        # in one command (one start-up, not one per fixture): each source its own line
        sources = sorted([*(FIXTURES / folder).glob("*/*.jsonl"), *(FIXTURES / folder).glob("*/*/*.jsonl")])
        result = cli.run("sessions", "import", agent, *map(str, sources))
        done = sum(" → " in line for line in result.out.splitlines())
        # every fixture imports but what holds no conversation of its own (2.0.x's subagents, its empty files),
        # which is said in one line each
        nothing = sum(line.startswith("evo-agent: nothing to import from ") for line in result.err.splitlines())
        assert done + nothing == len(sources) and done >= 20, result.out + result.err
        assert "Traceback" not in result.err
        imported += done
    checked = cli.run("sessions", "fsck")
    assert checked.rc == 0, checked.out + checked.err
    assert f"checked {imported} sessions: no problems" in checked.out, checked.out
