"""`sessions fsck --secrets [ID]`: what today's rules find in old transcripts, by kind and count, never the value."""

from __future__ import annotations

import hashlib
import json

from evo_agent.session import SessionStore

GITLAB = "glpat-Zq8Rk2Lm9Xv4Tn7Wc3Yb"
GITHUB = "ghp_" + "Q7xK2mL9vR4tN8wC3yB6zD1fG5hJ0kP2sA4e"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY1234567890"


def _old_session(project) -> str:
    """A session written without redaction (an older version, or EVO_AGENT_REDACT=0)."""
    rec = SessionStore(project, warn=lambda line: None, redact=False).create(model="m", provider="demo")
    rec.user({"role": "user", "content": f"push with {GITLAB} and AWS_SECRET_ACCESS_KEY={AWS_SECRET}"})
    rec.assistant({"role": "assistant", "content": [{"type": "text", "text": f"I used {GITLAB} again"}]})
    side = rec.start_subagent("explore", "toolu_1")
    side.user({"role": "user", "content": f"token {GITHUB}"})
    rec.end_subagent(side, "toolu_1", "done")
    rec.checkpoint()
    return rec.id


def _clean_session(project) -> str:
    rec = SessionStore(project, warn=lambda line: None).create(model="m", provider="demo")
    rec.user({"role": "user", "content": f"my key {GITLAB}"})  # masked when written
    rec.checkpoint()
    return rec.id


def _digests(sessions_dir) -> dict:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(sessions_dir.rglob("*.jsonl"))}


def test_secrets_in_old_transcripts_are_reported_by_kind_and_count_never_by_value(demo_cli):
    old, clean = _old_session(demo_cli.project), _clean_session(demo_cli.project)
    before = _digests(demo_cli.sessions_dir)
    result = demo_cli.run("sessions", "fsck", "--secrets")
    assert result.rc == 0, result.out + result.err
    lines = result.out.splitlines()
    assert lines[0] == "checked 2 sessions: no problems"
    main_line = next(line for line in lines if line.startswith(f"{old}  messages.jsonl: "))
    assert "gitlab-pat 2" in main_line and "secret 1" in main_line and "4 secrets" not in main_line
    assert any(line.startswith(f"{old}  subagent/") and "github-token 1" in line for line in lines)
    assert not any(line.startswith(clean) for line in lines)
    assert lines[-1] == "scanned 2 sessions for secrets: 4 secrets in 1 session"
    for secret in (GITLAB, GITHUB, AWS_SECRET):
        assert secret not in result.out
    assert _digests(demo_cli.sessions_dir) == before  # never rewritten

    one = demo_cli.run("sessions", "fsck", "--secrets", clean[:15])
    assert one.rc == 0 and one.out.splitlines()[-1] == "scanned 1 session for secrets: none found"


def test_json_adds_the_secrets_to_the_integrity_report_and_the_exit_status_stays_about_integrity(demo_cli):
    old = _old_session(demo_cli.project)
    report = demo_cli.run("sessions", "fsck", "--secrets", "--json")
    assert report.rc == 0, report.err
    doc = json.loads(report.out)
    assert doc["problems"] == [] and doc["checked"] == 1
    by_path = {s["path"]: s for s in doc["secrets"]}
    assert by_path["messages.jsonl"]["kinds"] == {"gitlab-pat": 2, "secret": 1}
    assert by_path["messages.jsonl"]["session"] == old and by_path["messages.jsonl"]["secrets"] == 3

    with open(demo_cli.sessions_dir / old / "messages.jsonl", "ab") as f:
        f.write(b"not json\n")  # damage: now the status says so, whatever the secrets
    damaged = demo_cli.run("sessions", "fsck", "--secrets")
    assert damaged.rc == 1 and "unreadable" in damaged.out and "gitlab-pat 2" in damaged.out
