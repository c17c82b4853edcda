"""Everything a test builds before it checks something: projects, stores, messages, sessions, agents.

One place, so there is one way to make each thing:

- a project: `make_git_project(parent)` (the `project` fixture's), a store on it: `quiet_store(project)`;
- messages in the API's shape: `user_text`, `assistant_text`, `assistant_tools`, `tool_results`,
  and whole histories: `history_of((prompt, answer), ...)`;
- sessions written by the session library as the agent writes them: `write_session` (the one
  builder, returns the recorder), with two presets that return the id: `seed_session` (turns in a
  project) and `simple_session` (one turn, optionally backdated); and, for listings of
  thousands, `write_sessions_fast` (files written directly);
- an agent on a fresh session: `make_agent(project, provider)`; the real Anthropic provider on a
  fake server: `server_provider(server)`;
- reading back: `read_records(path)`, `lines_of(path)`.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

from evo_agent.session import Recorder, SessionStore, new_session_id

# --------------------------------------------------------------------------- projects and stores


def make_git_project(parent: Path) -> Path:
    """`parent/project`: a git repository on branch `main` with one commit (the `project` fixture's).

    A copy of one such repository made once per test run: `git init` + `add` + `commit` are three git
    processes (~35 ms, more under load) and ~950 tests ask for a project; a copy of its ~40 files is ~3 ms.
    The copy is a real, independent repository (git's index notices the new inodes and re-checks the file).
    """
    root = parent / "project"
    if not parent.is_dir():
        raise FileNotFoundError(parent)  # as `mkdir` said when each project was made in place
    shutil.copytree(_template_project(), root, symlinks=True)
    return root


_template: Path | None = None


def _template_project() -> Path:
    """The repository `make_git_project` copies, made on first use in a temp dir removed at exit."""
    global _template
    if _template is None or not _template.is_dir():
        base = Path(tempfile.mkdtemp(prefix="evo-test-project-"))
        atexit.register(shutil.rmtree, base, True)
        _template = _init_git_project(base)
    return _template


def _init_git_project(parent: Path) -> Path:
    """Made with no git configuration but the test's own: whichever test asks first, whatever its environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    root = parent / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True, env=env)
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    (root / "README.md").write_text("# a test project\n")
    subprocess.run([*git, "add", "README.md"], check=True, env=env)
    subprocess.run([*git, "commit", "-q", "-m", "init"], check=True, env=env)
    return root


def quiet_store(project: Path) -> SessionStore:
    """A SessionStore on `project` whose warnings go nowhere (tests check files, not stderr)."""
    return SessionStore(project, warn=lambda line: None)


# --------------------------------------------------------------------------- messages


def user_text(text: str) -> dict:
    return {"role": "user", "content": text}


def assistant_text(text: str) -> dict:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def assistant_tools(text: str, *ids: str) -> dict:
    """An assistant message calling `bash` once per id (after `text`, when given)."""
    blocks = [{"type": "text", "text": text}] if text else []
    blocks += [{"type": "tool_use", "id": i, "name": "bash", "input": {"command": f"echo {i}"}} for i in ids]
    return {"role": "assistant", "content": blocks}


def tool_results(*ids: str) -> dict:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": i, "content": f"out {i}"} for i in ids]}


def history_of(*turns: tuple[str, str]) -> list[dict]:
    """The messages of `(prompt, answer)` turns, in order."""
    out: list[dict] = []
    for prompt, answer in turns:
        out += [user_text(prompt), assistant_text(answer)]
    return out


# --------------------------------------------------------------------------- sessions


def write_session(
    store: SessionStore,
    *turns: tuple[str, str],
    model: str = "claude-sonnet-4-5",
    provider: str = "anthropic",
    tokens: tuple[int, int] = (100, 10),
    session_id: str | None = None,
    **create: object,
) -> Recorder:
    """A finished session of `(prompt, answer)` turns, written through the library; the recorder, checkpointed."""
    recorder = store.create(model=model, provider=provider, session_id=session_id, **create)
    for prompt, answer in turns:
        recorder.user(user_text(prompt))
        recorder.assistant(assistant_text(answer), input_tokens=tokens[0], output_tokens=tokens[1])
    recorder.checkpoint()
    return recorder


def seed_session(project: Path, *turns: tuple[str, str], tokens: tuple[int, int] = (100, 10)) -> str:
    """A finished session in `project`, as the agent writes one (no CLI run needed); its id."""
    return write_session(quiet_store(project), *turns, tokens=tokens).session_id


def simple_session(project: Path, prompt: str = "hello", *, days_ago: float = 0) -> str:
    """A one-turn session; `days_ago` backdates its id, its records' timestamps and its files' times."""
    import pytest

    from evo_agent.session import recorder as recorder_module

    then = datetime.now().astimezone() - timedelta(days=days_ago)
    with pytest.MonkeyPatch.context() as patch:
        if days_ago:  # the recorder's clock, so the library itself writes the old timestamps
            stamp = then.isoformat(timespec="milliseconds")
            patch.setattr(recorder_module, "now_iso", lambda: stamp)
            patch.setattr(recorder_module, "stamp_now", lambda: (stamp, int(then.timestamp() * 1000)))
        rec = write_session(quiet_store(project), (prompt, "hi"), model="m", provider="demo", tokens=(10, 2),
                            session_id=new_session_id(int(then.timestamp() * 1000)))
    if days_ago:
        for path in (rec.path, rec.session_dir / "meta.json"):
            os.utime(path, (then.timestamp(), then.timestamp()))
    return rec.session_id


def write_sessions_fast(store: SessionStore, count: int, *, base_ms: int = 1_780_000_000_000) -> list[str]:
    """`count` sessions written straight to disk (a transcript and a matching meta.json each)."""
    store.ensure_sessions_dir()
    ids = []
    for i in range(count):
        created = base_ms + i * 1000
        sid = f"{created:013d}_{i:08x}"
        d = store.sessions_dir / sid
        os.mkdir(d, 0o700)
        line = json.dumps({"type": "user", "session_id": sid,
                           "message": {"role": "user", "content": f"prompt number {i}"}}) + "\n"
        line += json.dumps({"type": "assistant", "session_id": sid, "input_tokens": i, "output_tokens": 1,
                            "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}}) + "\n"
        (d / "messages.jsonl").write_text(line)
        os.chmod(d / "messages.jsonl", 0o600)  # as the recorder writes it: wider modes mark a session foreign
        meta = {"id": sid, "created_ms": created, "updated_ms": created + 500, "agent_version": "0.1.0",
                "cwd": str(store.project_dir), "git_branch": None, "model": "m", "provider": "demo",
                "first_prompt": f"prompt number {i}", "total_input_tokens": i, "total_output_tokens": 1,
                "total_cache_creation_tokens": 0, "total_cache_read_tokens": 0,
                "message_count": 2, "answer_count": 1, "compact_count": 0, "resumed_from": None,
                "messages_bytes": len(line.encode())}
        (d / "meta.json").write_text(json.dumps(meta))
        ids.append(sid)
    return ids


# --------------------------------------------------------------------------- agents


def make_agent(project: Path, provider, tools=None, mode: str = "bypass", **kw):
    """An agent on a fresh session, and its store; `mode` is its permission mode (loop tests: bypass)."""
    from evo_agent.agent import Agent
    from evo_agent.agent.permissions import PermissionGate, Policy

    store = quiet_store(project)
    recorder = store.create(model=provider.model, provider=provider.name)
    kw.setdefault("permissions", PermissionGate(Policy(project, mode)))
    return Agent(provider=provider, recorder=recorder, project_dir=project, store=store, tools=tools, **kw), store


def server_provider(server):
    """The real Anthropic provider (over HTTP) talking to a local fake API (tests/fake_model_server.py)."""
    from evo_agent.providers.anthropic_provider import AnthropicProvider

    return AnthropicProvider("claude-test", api_key="test-key", base_url=server.base_url, max_retries=0)


class Refusing:
    """A front end that answers every approval "no" and keeps each request it was asked (`asked`)."""

    def __init__(self) -> None:
        self.asked: list = []

    def on_approval(self, request):
        from evo_agent.tools.approval import ApprovalDecision

        self.asked.append(request)
        return ApprovalDecision("no")


def asked_in_a_turn(agent, prompt: str) -> list:
    """The approval requests one turn of `agent` raised, each refused; the agent is closed after it."""
    front = Refusing()
    try:
        agent.run_turn(prompt, front)
    finally:
        agent.close()
    return front.asked


# --------------------------------------------------------------------------- reading back


def read_records(path) -> list[dict]:
    """The JSON records of a transcript (blank lines skipped)."""
    return [json.loads(line) for line in Path(path).read_bytes().splitlines() if line.strip()]


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()
