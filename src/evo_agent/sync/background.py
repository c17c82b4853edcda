"""Replication off the turn's path: a daemon thread that pushes what the agent wrote.

Each batch opens its own connection and closes it: an agent between turns
holds none, and a connection that died silently is never reused (every wait
on it is bounded by db.idle_timeout, then the next batch connects afresh).

`notify(session_id)` — called after each turn — only records the id and sets
an event: the turn never waits on the network. The thread (started by the
first notify, so psycopg is never imported before the first turn ends) first
catches up every local session this machine has not fully pushed (what an
earlier run could not send), then pushes each notified session.

When the store is slow or down the agent is unaffected: one warning, the
sessions stay pending, and the next notify (the next turn), `close()` at exit,
the next run or `evo-agent sessions push` sends them. `close(wait)` gives the
last push a bounded time, then leaves; nothing is lost by leaving, because
the next push starts from what the store has.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from evo_agent.session import SessionStore

from .config import redact_url

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from psycopg import Connection

EXIT_WAIT_S = 5.0


def exit_wait() -> float:
    try:
        return max(0.0, float(os.environ.get("EVO_AGENT_SYNC_EXIT_WAIT", EXIT_WAIT_S)))
    except ValueError:
        return EXIT_WAIT_S


class BackgroundSync:
    def __init__(self, url: str, store: SessionStore, warn: Callable[[str], None]) -> None:
        self.url = url
        self.store = store
        self.warn = warn
        self._pending: set[str] = set()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._closing = False
        self._thread: threading.Thread | None = None
        self._warned = False
        self._last_failed = False
        self.pushed_lines = 0  # for tests and benchmarks
        self.failures = 0

    # Called on the turn's path: no I/O, no imports --------------------------------------------------------

    def notify(self, session_id: str) -> None:
        with self._lock:
            self._pending.add(session_id)
            self._idle.clear()
            if self._thread is None and not self._closing:
                self._thread = threading.Thread(target=self._run, name="evo-agent-sync", daemon=True)
                self._thread.start()
        self._wake.set()

    def close(self, session_id: str | None = None, wait: float | None = None) -> bool:
        """Push what is pending (plus `session_id`) within `wait` seconds; True when everything was sent."""
        if session_id is not None:
            self.notify(session_id)
        with self._lock:
            self._closing = True
            thread = self._thread
        self._wake.set()
        if thread is None:
            return True
        done = self._idle.wait(exit_wait() if wait is None else wait)
        with self._lock:
            warn_now = not done and not self._warned
            self._warned = True  # from here on the thread stays silent: the exit hint must be the last line
        if warn_now:
            self.warn("evo-agent: the team store did not answer in time; this session will be pushed by the next "
                      "run or by `evo-agent sessions push`")
        return done and not self._last_failed

    # The thread -----------------------------------------------------------------------------------------

    def _run(self) -> None:
        from .db import StoreUnavailable, connect, driver_errors, error_gist
        from .identity import project_identity
        from .push import PushRefused, behind_in_store, local_session_ids, push_session

        identity = project_identity(self.store.project_dir)
        conn: Connection | None = None
        catch_up = True
        while True:
            self._wake.wait()
            self._wake.clear()
            with self._lock:
                batch = sorted(self._pending)
                self._pending.clear()
                closing = self._closing
            failed: list[str] = []
            if catch_up:  # by the store's own offsets (one query): a restored or rolled-back store is caught up too
                try:
                    conn = connect(self.url)
                    local = [sid for sid in local_session_ids(self.store) if not self.store.foreign_reason(sid)]
                    batch = sorted(set(batch) | set(behind_in_store(conn, self.store, local)))
                    catch_up = False
                except StoreUnavailable as exc:
                    failed, batch = batch, []
                    self._fail(str(exc))
                except driver_errors() as exc:
                    failed, batch = batch, []
                    self._fail(f"cannot push to the team store {redact_url(self.url)}: {error_gist(exc, self.url)}")
                    _drop(conn)
                    conn = None
            for sid in batch:
                try:
                    if conn is None:
                        conn = connect(self.url)
                    self.pushed_lines += push_session(conn, identity, self.store, sid).lines
                except PushRefused as exc:  # another author's session, or a diverged copy: retrying cannot help
                    self._fail(str(exc), retried=False)
                except StoreUnavailable as exc:
                    failed = batch[batch.index(sid):]
                    self._fail(str(exc))
                    break
                except driver_errors() as exc:
                    failed = batch[batch.index(sid):]
                    self._fail(f"cannot push to the team store {redact_url(self.url)}: {error_gist(exc, self.url)}")
                    _drop(conn)
                    conn = None
                    break
                except Exception as exc:  # noqa: BLE001 - a sync bug must never reach the agent
                    self._fail(f"cannot push session {sid}: {type(exc).__name__}: {error_gist(exc, self.url)}")
                    _drop(conn)
                    conn = None
            _drop(conn)  # one connection per batch: an idle agent holds none (max_connections, poolers)
            conn = None
            with self._lock:
                self._last_failed = bool(failed)
                if failed and not closing:
                    self._pending.update(failed)  # tried again after the next turn
                if not self._pending:
                    self._idle.set()
                if closing and (failed or not self._pending):
                    self._idle.set()
                    _drop(conn)
                    return

    def _fail(self, message: str, *, retried: bool = True) -> None:
        """One warning per run; `retried`: the store failed, and what was not pushed will be pushed later (a
        refusal is not: saying so of a session another author wrote, or one that diverged, misled)."""
        self.failures += 1
        with self._lock:
            first, self._warned = not self._warned, True
        if first:
            text = message if message.startswith("evo-agent: ") else f"evo-agent: {message}"
            self.warn(f"{text}; sessions will be pushed when it is back (or: evo-agent sessions push)" if retried
                      else text)


def _drop(conn: Connection | None) -> None:
    """Close `conn` quietly (None: nothing to close)."""
    if conn is not None:
        try:
            conn.close()
        except Exception:  # noqa: BLE001
            pass
    return None
