"""The team store's password is the agent's own secret (SPEC §9): wherever it came from, tools never hand it on."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from evo_agent.session import redact
from evo_agent.sync.config import url_password
from evo_agent.sync.hooks import session_store
from evo_agent.tools import BASIC_TOOLS
from evo_agent.tools.base import ToolContext
from evo_agent.tools.runner import run_tool

PASSWORD = "Tr0ub4dor-and-3"


@pytest.mark.parametrize("url", [
    f"postgresql://alice:{PASSWORD}@db.example.com/team",
    f"postgres://alice:{PASSWORD.replace('-', '%2D')}@db.example.com:5432/team?sslmode=verify-full",
    f"postgresql://db.example.com/team?user=alice&password={PASSWORD}",
])
def test_the_password_is_found_in_every_spelling(url: str) -> None:
    assert url_password(url) == PASSWORD


@pytest.fixture
def restore_redaction():
    saved, added = dict(redact._start_values), dict(redact._added_values)
    yield
    redact._start_values.clear()
    redact._start_values.update(saved)
    redact._added_values.clear()  # else a value added again by a later test is taken as known, and not masked
    redact._added_values.update(added)
    redact.use_environment(None)


def test_a_password_from_the_config_file_never_reaches_the_model(tmp_path: Path, monkeypatch, restore_redaction):
    home = tmp_path / "home"
    config = home / ".config" / "evo-agent" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'sync_url = "postgresql://alice:{PASSWORD}@db.example.com/team"\n')
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("EVO_AGENT_SYNC_URL", raising=False)
    from evo_agent.sync import hooks

    monkeypatch.setattr(hooks._AGENT_URL, "value", None)
    project = tmp_path / "project"
    project.mkdir()
    session_store(project, warn=lambda line: None)  # what the agent does at start: reads the URL
    ctx = ToolContext(project_dir=project)
    for command in (f"cat {config}", f"grep -r sync_url {home}", f"sed -n 1p {config}"):
        result = run_tool(BASIC_TOOLS, "bash", {"command": command}, ctx)
        assert "db.example.com" in result.content, result.content  # it ran (the user approved it)
        assert PASSWORD not in result.content and "[REDACTED:" in result.content
    read = run_tool(BASIC_TOOLS, "read_file", {"path": str(config)}, ctx)
    assert PASSWORD not in read.content
    assert PASSWORD not in redact.redact_text(f"the log said {PASSWORD} here")  # nor the transcript on disk


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_the_sandbox_does_not_even_show_the_config_file(tmp_path: Path, monkeypatch) -> None:
    from evo_agent.tools.sandbox import SandboxError, check_sandbox

    home = tmp_path / "home"
    config = home / ".config" / "evo-agent" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'sync_url = "postgresql://alice:{PASSWORD}@db.example.com/team"\n')
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    try:
        sandbox = check_sandbox(project)
    except SandboxError as exc:
        pytest.skip(str(exc))
    done = subprocess.run(sandbox.wrap(["cat", str(config)]), capture_output=True, text=True, timeout=30)
    assert done.returncode != 0 and PASSWORD not in done.stdout


@pytest.mark.parametrize("spelling", [
    "?password={pw}%zz",  # libpq quotes a token it cannot decode as written
    "?password={pw}%20and%zz",
    "?sslmode=disable&password={pw}%zz",
    "?password=x&password={pw}%zz",
    ":{pw}%zz@",  # the user part: masked before too (the control)
])
def test_a_url_libpq_cannot_parse_never_prints_its_password(tmp_path: Path, pg_cluster, spelling: str) -> None:
    from .test_cli import team_cli

    base = f"postgresql://alice@127.0.0.1:{pg_cluster.port}/postgres"
    if spelling.startswith(":"):
        url = base.replace("alice@", "alice" + spelling.format(pw=PASSWORD))
    else:
        url = base + spelling.format(pw=PASSWORD)
    alice = team_cli(tmp_path, "alice", "git@github.com:team/app.git", url)
    listed = alice.run("sessions", "list", "--remote")
    assert listed.rc != 0 and len(listed.err_lines) == 1 and "Traceback" not in listed.err, listed.err
    assert "percent-encoded" in listed.err and "***" in listed.err  # what libpq said, the password masked
    ran = alice.run("-p", "hello")  # the agent's one warning about the store
    assert ran.rc == 0 and "bad EVO_AGENT_SYNC_URL" in ran.err, ran.err
    for said in (listed.out + listed.err, ran.out + ran.err):
        assert PASSWORD not in said and PASSWORD[:8] not in said, said


@pytest.mark.parametrize("value", [
    f"alice:{PASSWORD}@db.example.com/team",  # the scheme forgotten
    f"postgresql:/alice:{PASSWORD}@db.example.com/team",  # a slash short
    f"postgresql:alice:{PASSWORD}@db.example.com/team",
    f"mysql://alice:{PASSWORD}@db.example.com/team",  # another database's URL: masked before too (the control)
])
@pytest.mark.parametrize("source", ["the variable", "the config file"])
def test_a_mistyped_store_url_never_prints_its_password(tmp_path: Path, value: str, source: str) -> None:
    from .test_cli import team_cli

    alice = team_cli(tmp_path, "alice", "git@github.com:team/app.git", value if source == "the variable" else None)
    if source == "the config file":
        config = Path(alice.env["XDG_CONFIG_HOME"]) / "evo-agent" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text(f'sync_url = "{value}"\n')
    listed = alice.run("sessions", "list", "--remote")
    assert listed.rc != 0 and len(listed.err_lines) == 1 and "Traceback" not in listed.err, listed.err
    assert "must be a postgresql://… URL" in listed.err
    ran = alice.run("-p", "hello")  # every run of the agent says it once
    assert ran.rc == 0 and "must be a postgresql://… URL" in ran.err, ran.err
    for said in (listed.out + listed.err, ran.out + ran.err):
        assert PASSWORD not in said and PASSWORD[:8] not in said, said


@pytest.mark.parametrize("branch", ["fix-AKIAQWERTYUIOPASDFGH", "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
                                    "main"], ids=["aws key", "github token", "main (the control)"])
def test_a_secret_in_the_branch_name_never_leaves_the_machine(tmp_path: Path, sync_url: str, branch: str) -> None:
    """SPEC §9: only what is redacted leaves. The branch travels in every record's envelope, in meta.json and
    in the store's row; the envelope is never scanned, so a key in a branch name went to every teammate."""
    import json

    import psycopg

    from .test_cli import team_cli

    kim = team_cli(tmp_path, "kim", "git@github.com:team/app.git", sync_url)
    subprocess.run(["git", "-C", str(kim.project), "checkout", "-q", "-B", branch], check=True)
    sid = kim.run("-p", "hello").hint_id()
    with psycopg.connect(sync_url) as conn:
        (row,) = conn.execute("SELECT branch, meta::text FROM evo_agent_sessions WHERE session_id = %s",
                              (sid,)).fetchall()
        chunks = b"".join(bytes(b) for (b,) in conn.execute("SELECT body FROM evo_agent_chunks"))
    local = b"".join(p.read_bytes() for p in (kim.sessions_dir / sid).rglob("*") if p.is_file())
    listed = json.loads(kim.run("sessions", "list", "--remote", "--json").out)
    if branch == "main":
        assert row[0] == "main" and listed[0]["git_branch"] == "main" and b'"git_branch":"main"' in chunks
        return
    secret = branch.split("-")[-1]
    assert secret not in row[0] + row[1] and secret.encode() not in chunks + local, row
    assert "[REDACTED:" in row[0] and "[REDACTED:" in listed[0]["git_branch"]


GLPAT = "glpat-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn"


@pytest.mark.parametrize(("origin", "clean"), [
    (f"https://gitlab.com/team/app.git?private_token={GLPAT}", "https://gitlab.com/team/app.git"),
    (f"https://gitlab.com/team/app.git#{GLPAT}", "git@gitlab.com:team/app.git"),
    (f"https://gitlab.com/{GLPAT}/app.git", None),
])
def test_a_token_in_the_origin_url_never_reaches_the_store(tmp_path: Path, sync_url: str, origin: str,
                                                           clean: str | None) -> None:
    """The repository's identity (the normalised origin) is in every session row; a token in the URL's query,
    fragment or path went with it, unredacted."""
    import json

    import psycopg

    from .test_cli import team_cli

    kim = team_cli(tmp_path, "kim", origin, sync_url)
    sid = kim.run("-p", "hello").hint_id()
    with psycopg.connect(sync_url) as conn:
        rows = repr(conn.execute("SELECT * FROM evo_agent_sessions").fetchall())
    assert sid in rows and GLPAT not in rows, rows
    lee = team_cli(tmp_path, "lee", origin, sync_url)  # the same origin elsewhere: the same repository
    assert sid in {r["id"] for r in json.loads(lee.run("sessions", "list", "--remote", "--json").out)}
    if clean is not None:  # the origin without the token: the same repository too
        ann = team_cli(tmp_path, "ann", clean, sync_url)
        assert sid in {r["id"] for r in json.loads(ann.run("sessions", "list", "--remote", "--json").out)}


@pytest.mark.parametrize("value", [f"alice:{PASSWORD}@db.example.com/team", f"postgresql:/alice:{PASSWORD}@db/team",
                                   f"postgresq://alice:{PASSWORD.replace('-', '%2D')}@db/team"])
def test_a_mistyped_url_s_password_is_still_masked_for_the_model(value: str, restore_redaction) -> None:
    from evo_agent.sync.config import SyncConfigError, configured_url

    with pytest.raises(SyncConfigError):
        configured_url({"EVO_AGENT_SYNC_URL": value})
    assert PASSWORD not in redact.redact_text(f'sync_url = "{value}"\nand the log said {PASSWORD}')
