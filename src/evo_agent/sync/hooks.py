"""The few calls the rest of evo-agent makes into sync — each a no-op costing one environment lookup when off.

    store = session_store(project_dir, redact=…, warn=…)  # cli/main.py: resolve() falls back to the store
    sync = start_agent_sync(agent, store)                  # after each turn: notify the background thread
    stop_agent_sync(sync, agent)                           # on the way out, before the exit hint

Configuration errors never stop the agent: one warning and sync stays off.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from evo_agent.session import FETCHED_NAME, LiveSessionStore, SessionNotFound, is_id_prefix

from .config import ENV_NAME, SyncConfigError, config_path, configured_url

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any


def _stderr(line: str) -> None:
    try:
        print(line, file=sys.stderr, flush=True)
    except Exception:  # noqa: BLE001
        pass


def agent_sync_url(warn: Callable[[str], None] = _stderr) -> str | None:
    """The URL when sync is on; a bad configuration is one warning and sync off."""
    if ENV_NAME not in os.environ and not config_path(os.environ).is_file():
        return None
    try:
        return configured_url(os.environ)
    except SyncConfigError as exc:
        warn(f"evo-agent: {exc}; sessions are not synced")
        return None


class RemoteAwareStore(LiveSessionStore):
    """A LiveSessionStore whose `resolve` fetches a session from the team store when it is not here.

    So `--resume ID`, `/resume ID` and the picker's typed id resume a teammate's
    session like a local one: it is copied into the local store first, then
    resumed as always (a new local session; the copy and the remote are only read).
    """

    def __init__(self, *args: Any, sync_url: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sync_url = sync_url

    def resolve(self, text: str) -> str:
        from .commands import fetch_into

        try:
            found = super().resolve(text)
        except SessionNotFound:
            if not is_id_prefix(text):
                raise
            return fetch_into(self, self.sync_url, text, announce=self.warn)
        if (self.sessions_dir / found / FETCHED_NAME).is_file():  # a teammate's copy: brought up to date if it grew
            try:
                fetch_into(self, self.sync_url, found)
            except SessionNotFound:
                pass  # the store cannot be reached (or forgot it): the copy there is
        return found


def session_store(project_dir: Path | str, **kwargs: Any) -> LiveSessionStore:
    """The agent's session store: remote-aware when sync is configured, else the plain LiveSessionStore."""
    url = agent_sync_url(kwargs.get("warn", _stderr))
    # The URL holds a password: once read it leaves the environment, so no tool the agent runs
    # (and no transcript of what a tool printed) ever sees it. The permission layer strips it too.
    os.environ.pop(ENV_NAME, None)
    _AGENT_URL.value = url
    if url is None:
        return LiveSessionStore(project_dir, **kwargs)
    return RemoteAwareStore(project_dir, sync_url=url, **kwargs)


def start_agent_sync(agent: Any, store: LiveSessionStore) -> Any:
    """Push the agent's session after each turn, off the turn's path; None when sync is off."""
    url = getattr(store, "sync_url", None)
    if url is None:
        return None
    from .background import BackgroundSync

    sync = BackgroundSync(url, store, store.warn)
    listeners = getattr(agent, "turn_listeners", None)
    if listeners is not None:
        listeners.append(lambda a: sync.notify(a.session_id))
    return sync


def stop_agent_sync(sync: Any, agent: Any) -> None:
    """At exit: push the live session within a bounded wait (EVO_AGENT_SYNC_EXIT_WAIT, default 5 s)."""
    if sync is None:
        return
    try:
        agent.recorder.checkpoint()  # so the pushed meta is the final one
    except Exception:  # noqa: BLE001
        pass
    sync.close(agent.session_id)


def team_sessions(project_dir: Path | str, *, limit: int = 500) -> tuple[list[Any], str | None]:
    """For a "team" view in the picker: this project's sessions in the store, newest first, and an error line.

    Never raises: ([], None) when sync is off, ([], "evo-agent: …") when the store cannot be read.
    Choosing a row is `store.resolve(row.id)` on the agent's store, which fetches it (RemoteAwareStore).
    """
    try:
        url = configured_url(os.environ)
    except SyncConfigError as exc:
        return [], f"evo-agent: {exc}"
    url = url or getattr(_AGENT_URL, "value", None)
    if url is None:
        return [], None
    from .commands import SyncCommandError, store_connection
    from .identity import project_identity
    from .remote import list_remote

    try:
        with store_connection(url) as conn:
            return list_remote(conn, project_identity(project_dir), limit=limit), None
    except SyncCommandError as exc:
        return [], f"evo-agent: {exc}"


class _AgentUrl:
    value: str | None = None


_AGENT_URL = _AgentUrl()  # the URL the agent read (and took out of its environment), for team_sessions()
