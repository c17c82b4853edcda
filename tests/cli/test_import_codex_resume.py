"""A resumed import of a real Codex rollout sends the model what Codex itself sends when it resumes that
rollout: the requests Codex sent (`<rollout>.sent.json`, made by make_fixtures.py --probe) are the truth
the import is checked against, atom by atom (tests/cli/codex_requests.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.codex_requests import codex_atoms, evo_atoms, sent_by_codex
from tests.cli.import_helpers import FIXTURES, resume_request

PROBED = sorted(FIXTURES.joinpath("codex").glob("*/*.sent.json"))


def _import(cli, path: Path) -> tuple[str, str]:
    result = cli.run("sessions", "import", "codex", str(path))
    assert result.rc == 0, result.err
    return result.out.split(" → ", 1)[1].split(" ", 1)[0], result.out


@pytest.mark.parametrize("probe", PROBED, ids=lambda p: f"{p.parent.name}/{p.name[36:44]}")
def test_a_resumed_import_sends_what_codex_sends_when_it_resumes(cli, model_server, probe):
    source = probe.with_name(probe.name.replace(".sent.json", ".jsonl"))
    sid, out = _import(cli, source)
    theirs = codex_atoms(sent_by_codex(probe))
    ours = evo_atoms(resume_request(cli, model_server, sid))
    assert theirs[-1] == ours[-1] == ("text", "next")
    if ("sealed",) in theirs:  # OpenAI's encrypted compaction: the import keeps the conversation it replaced
        rest = iter(ours)
        assert all(atom in rest for atom in theirs if atom != ("sealed",)), (theirs, ours)
        assert len(ours) > len(theirs)
    else:
        assert ours == theirs
    assert "not understood" not in out and " 0 lines skipped" in out, out
