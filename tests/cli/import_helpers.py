"""What the import tests share: a real fixture transcript by name, and the request a resume of an import sends."""

from __future__ import annotations

import json
from pathlib import Path

from tests.api_rules import check_request
from tests.fake_model_server import text

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def fixture(folder: str, name: str) -> Path:
    """The one transcript in tests/fixtures/<folder>/<name>/ (folder: claude_code or codex)."""
    (path,) = (FIXTURES / folder / name).glob("*.jsonl")
    return path


def resume_request(cli, model_server, sid: str) -> list[dict]:
    """Resume `sid` with one prompt; the messages the model was sent, checked against the API's rules."""
    model_server.script(text("continuing"))
    result = cli.run("--resume", sid, "-p", "next")
    assert result.rc == 0, result.err
    sent = model_server.requests[-1]["messages"]
    check_request(sent)
    return sent


def recorded_in(source: Path, cwd: Path, target: Path) -> Path:
    """A copy of a Claude Code fixture transcript at `target`, as if Claude Code had run in `cwd`."""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(source.read_text().replace('"cwd":"/home/user/project"', json.dumps({"cwd": str(cwd)})[1:-1]))
    return target
