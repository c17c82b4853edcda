"""`evo-agent sessions push | list --remote | search --remote | prune --remote`, and fetching for show/resume.

Each opens one connection, does its job and says what it did; a store that
cannot be reached is one line (`CommandError`), never a traceback.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TextIO

from evo_agent.session import DIR_MODE, MESSAGES_NAME, SessionStore

from .config import SyncConfigError, configured_url, redact_url

if TYPE_CHECKING:
    from psycopg import Connection

    from .identity import Identity


class SyncCommandError(Exception):
    """The command cannot do its job: one line (the CLI maps it to its own CommandError)."""


def require_url() -> str:
    try:
        url = configured_url(os.environ)
    except SyncConfigError as exc:
        raise SyncCommandError(str(exc)) from None
    if url is None:
        raise SyncCommandError("no team store configured: set EVO_AGENT_SYNC_URL=postgresql://… "
                               "(or sync_url in ~/.config/evo-agent/config.toml)")
    return url


def optional_url() -> str | None:
    try:
        return configured_url(os.environ)
    except SyncConfigError:
        return None


@contextlib.contextmanager
def store_connection(url: str) -> Iterator[Connection]:
    """One connection for one command; every driver failure becomes one line."""
    from .db import StoreUnavailable, connect, driver_errors, error_gist

    try:
        conn = connect(url)
    except StoreUnavailable as exc:
        raise SyncCommandError(str(exc)) from None
    try:
        yield conn
    except driver_errors() as exc:
        raise SyncCommandError(f"the team store {redact_url(url)} failed: {error_gist(exc, url)}") from None
    finally:
        with contextlib.suppress(Exception):
            conn.close()


def _identity(store: SessionStore) -> Identity:
    from .identity import project_identity

    return project_identity(store.project_dir)


# push -------------------------------------------------------------------------------------------------------


def push(store: SessionStore, ids: list[str], *, all_: bool, out: TextIO) -> int:
    """Push the named sessions (or all of this project's) and say what each had behind."""
    from evo_agent.safe_text import terminal_safe

    from .push import PushRefused, local_session_ids, push_session

    url = require_url()
    if not ids and not all_:
        raise SyncCommandError("name the sessions to push, or --all")
    targets = local_session_ids(store) if all_ else [store.resolve(i) for i in ids]
    identity = _identity(store)
    total_lines = total_bytes = caught_up = 0
    started = time.monotonic()
    unreadable = foreign = pruned = 0
    with store_connection(url) as conn:
        for sid in targets:
            try:
                report = push_session(conn, identity, store, sid)
            except OSError as exc:  # removed or unreadable meanwhile: say so, push the others
                unreadable += 1
                out.flush()
                print(f"evo-agent: cannot read session {sid}: {exc.strerror or exc}", file=sys.stderr)
                continue
            except PushRefused as exc:
                unreadable += 1
                out.flush()
                print(f"evo-agent: {exc}", file=sys.stderr)
                continue
            for conflict in report.conflicts:  # another push won an append: said, then caught up
                out.flush()
                print(f"evo-agent: session {sid}: {terminal_safe(conflict, keep_newlines=False)}; "
                      "continued from the store's end", file=sys.stderr)
            if report.pruned:
                pruned += 1
                if not all_:
                    out.flush()
                    print(f"evo-agent: session {sid} not pushed: {report.pruned} (an admin deletes its tombstone "
                          "in evo_agent_tombstones to allow it again)", file=sys.stderr)
                continue
            if report.skipped:
                foreign += 1
                if not all_:  # named on purpose: say why it stays here
                    out.flush()
                    print(f"evo-agent: session {sid} not pushed: recorded elsewhere "
                          f"({terminal_safe(report.skipped, keep_newlines=False)}); only your own sessions are",
                          file=sys.stderr)
                continue
            if report.lines:
                caught_up += 1
                total_lines += report.lines
                total_bytes += report.bytes
                sidechains = len([f for f in report.files if f != MESSAGES_NAME])
                extra = f" (incl. {sidechains} sidechain{'s' if sidechains != 1 else ''})" if sidechains else ""
                out.write(f"{sid}: pushed {report.lines:,} line{'s' if report.lines != 1 else ''}, "
                          f"{_size(report.bytes)}{extra}\n")
    up_to_date = len(targets) - caught_up - foreign - unreadable - pruned
    skipped = f"; {foreign} recorded elsewhere, not pushed" if foreign else ""
    skipped += f"; {pruned} pruned from the store, not pushed again" if pruned else ""
    out.write(f"{caught_up} session{' was' if caught_up == 1 else 's were'} behind ({total_lines:,} lines, "
              f"{_size(total_bytes)}); {up_to_date} already up to date{skipped}; to {redact_url(url)} "
              f"in {time.monotonic() - started:.1f}s\n")
    return 1 if unreadable or ((foreign or pruned) and not all_) else 0


def _size(n: int) -> str:
    size: float = n
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size} B"  # pragma: no cover


def unpushed_ids(store: SessionStore, ids: list[str]) -> list[str] | None:
    """Which of `ids` this machine has not fully pushed (None when sync is not configured)."""
    if optional_url() is None:
        return None
    from .push import behind

    return [sid for sid in ids if behind(store, sid) and not store.foreign_reason(sid)]


# list / search / prune --remote ----------------------------------------------------------------------------


def list_remote(store: SessionStore, out: TextIO, *, user: str | None, branch: str | None, as_json: bool,
                limit: int | None, safe: Callable[[str], str], fmt_ms: Callable[[int], str]) -> int:
    from .remote import list_remote as query

    url = require_url()
    identity = _identity(store)
    from .remote import DEFAULT_LIMIT, store_trust

    with store_connection(url) as conn:
        rows = query(conn, identity, user=user, branch=branch, limit=limit)
        trust = store_trust(conn)
    if as_json:
        out.write(json.dumps([r.to_json() for r in rows], ensure_ascii=True, indent=2) + "\n")
        return 0
    if not rows:
        where = identity.repo + (f" ({identity.subdir})" if identity.subdir else "")
        out.write(f"No sessions of {safe(where)} in the team store\n")
        return 0
    header = ("ID", "WHO", "BRANCH", "UPDATED", "MESSAGES", "NAME OR FIRST PROMPT")
    table = [header] + [(r.id, _cell(safe, r.who, 40), _cell(safe, r.branch or "-", 30), fmt_ms(r.updated_ms),
                         str(r.message_count), _cell(safe, r.name or r.first_prompt or "-", 60)) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    for row in table:
        cells = [c.rjust(w) if i == 4 else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        out.write("  ".join(cells + [row[-1]]).rstrip() + "\n")
    if not trust.verified:
        out.write(f"(authors not verified: everyone pushes as the role {safe(trust.role)}; WHO is what each "
                  "client said — give each person a role of their own, README \"Team store\")\n")
    if len(rows) == (limit or DEFAULT_LIMIT):
        out.write(f"(the {len(rows)} most recent; --limit N shows more)\n")
    return 0


def _cell(safe: Callable[[str], str], text: str, width: int) -> str:
    """A remote string made safe for the terminal, on one line, at most `width` characters."""
    return _short(safe(" ".join(str(text).split())), width)


def _short(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def search_remote(store: SessionStore, text: str, out: TextIO, *, as_json: bool, limit: int | None,
                  safe: Callable[[str], str]) -> int:
    from .db import driver_errors, error_gist
    from .remote import refresh_index, unindexed
    from .remote import search_remote as query

    if not text.strip():
        raise SyncCommandError("nothing to search for")
    _check_search_text(text)
    url = require_url()
    identity = _identity(store)
    with store_connection(url) as conn:
        stalled = ""
        try:  # the derived index catches up first, in its own transactions; a failure leaves it as it is
            refresh_index(conn, identity.repo)
        except driver_errors() as exc:
            if conn.closed:  # the search cannot go on either: say why, not "the connection is closed"
                raise
            stalled = f"the index could not catch up: {error_gist(exc, url)}"
        hits = query(conn, identity, text, limit=limit or 20)
        behind = unindexed(conn, identity.repo)
    if as_json:
        out.write(json.dumps([{"id": h.session.id, "who": h.session.who, "file": h.file, "snippet": h.snippet}
                              for h in hits], ensure_ascii=True, indent=2) + "\n")
        return 0
    note = (f"({behind} session{'s' if behind != 1 else ''} not indexed yet: "
            f"{safe(stalled) if stalled else '`evo-agent sync index` catches up'})\n" if behind else "")
    if not hits:
        out.write(f"No message of this repository's sessions in the team store matches {safe(text)!r}\n{note}")
        return 1
    for h in hits:
        where = "" if h.file == MESSAGES_NAME else f" [{safe(h.file)}]"
        out.write(f"{h.session.id}  {_cell(safe, h.session.who, 40)}{where}  {_cell(safe, h.snippet, 140)}\n")
    out.write(note)
    return 0


SEARCH_WORDS = 64  # words of a search text at most: each one is a term the store's every match must hold
SEARCH_CHARS = 2000


def _check_search_text(text: str) -> None:
    """Refuse, in one line and before connecting, a search text the store cannot take: bytes that are not UTF-8
    (a shell passes them as they are; psycopg's encoding failed, blamed on the store) and a text so long that its
    query ran past the idle deadline (18,000 words: 'the server sent nothing for 30s')."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start].encode("utf-8", "surrogateescape")
        raise SyncCommandError(f"the search text is not UTF-8 (byte 0x{bad.hex()} at character {exc.start + 1}): "
                               "the team store searches text") from None
    words = len(text.split())
    if words > SEARCH_WORDS or len(text) > SEARCH_CHARS:
        raise SyncCommandError(f"the search text is too long for the team store ({words:,} words, {len(text):,} "
                               f"characters; at most {SEARCH_WORDS} words and {SEARCH_CHARS:,} characters): "
                               "search for a few words of it")


def prune_remote(store: SessionStore, older_than_s: int | None, *, dry_run: bool, out: TextIO,
                 fmt_ms: Callable[[int], str], safe: Callable[[str], str] = str) -> int:
    from .remote import prune_remote as delete

    if older_than_s is None:
        raise SyncCommandError("prune --remote needs --older-than (e.g. --older-than 90d): it deletes from the "
                               "team store for everyone")
    url = require_url()
    cutoff = int(time.time() * 1000) - older_than_s * 1000
    with store_connection(url) as conn:
        pruned = delete(conn, _identity(store), cutoff, dry_run=dry_run)
    rows, others = pruned.deleted, pruned.kept
    verb = "would delete" if dry_run else "deleted"
    for r in rows:
        out.write(f"{verb} {r.id}  {_cell(safe, r.who, 40)}  updated {fmt_ms(r.updated_ms)}\n")
    out.write(f"{verb} {len(rows)} session{'s' if len(rows) != 1 else ''} from the team store\n")
    if pruned.partitions:
        out.write(f"({'would drop' if dry_run else 'dropped'} {len(pruned.partitions)} month partition"
                  f"{'s' if len(pruned.partitions) != 1 else ''} of chunks whole: {', '.join(pruned.partitions)})\n")
    if others:
        out.write(f"left {len(others)} session{'s' if len(others) != 1 else ''} of other authors: pruning a "
                  "teammate's sessions is an admin's job (the store's owner)\n")
    return 0


# fetching ---------------------------------------------------------------------------------------------------


class _CopyFailed(Exception):
    """Writing the local copy failed (args[0]: the OSError): this machine's trouble, not the store's."""


def fetch_into(store: SessionStore, url: str, text: str, *, announce: Callable[[str], None] | None = None) -> str:
    """Copy the repository's session `text` (id or unique prefix) from the store into `store`; its full id.

    Raises SessionNotFound / AmbiguousSessionId (SessionErrors) when the store has no such session, and a
    SessionNotFound naming the store when it cannot be reached.
    """
    from evo_agent.session import SessionNotFound

    from .remote import fetch_session, resolve_remote

    try:
        with store_connection(url) as conn:
            row = resolve_remote(conn, _identity(store), text)
            started = time.monotonic()
            if not store.ensure_sessions_dir():
                raise SyncCommandError(f"cannot create {store.sessions_dir}")
            # Registered only when this fetch wrote the copy: as the user's own when the store vouches they
            # wrote it, else its `fetched` note as one sync wrote (so listings quote it).
            try:
                fetch_session(conn, row.id, store.sessions_dir,
                              lambda foreign: store.record_fetched(row.id) if foreign else store.record_own(row.id))
            except OSError as exc:  # here, not as the store's failure (store_connection's): a full disk is ours
                raise _CopyFailed(exc) from None
    except SyncCommandError as exc:
        raise SessionNotFound(f"no session {text} here, and {exc}") from None
    except (OSError, _CopyFailed) as exc:
        cause = exc.args[0] if isinstance(exc, _CopyFailed) else exc
        raise SessionNotFound(f"cannot copy session {text} into {store.sessions_dir}: "
                              f"{cause.strerror or cause}") from None
    if announce is not None:
        from evo_agent.safe_text import terminal_safe

        announce(f"evo-agent: fetched session {row.id} ({_cell(terminal_safe, row.who, 40)}, {row.message_count} "
                 "messages) from the team "
                 f"store in {time.monotonic() - started:.2f}s")
    return row.id


@contextlib.contextmanager
def fetched_copy(store: SessionStore, text: str) -> Iterator[tuple[SessionStore, str]]:
    """This repository's remote session `text` in a temporary store (removed afterwards), for show/export."""
    from .remote import fetch_session, resolve_remote

    url = require_url()
    with tempfile.TemporaryDirectory(prefix="evo-agent-remote-") as tmp:
        os.chmod(tmp, DIR_MODE)
        temp_store = SessionStore(tmp, write_back=False, warn=lambda line: None)
        with store_connection(url) as conn:
            row = resolve_remote(conn, _identity(store), text)
            temp_store.ensure_sessions_dir()
            try:
                fetch_session(conn, row.id, temp_store.sessions_dir)
            except OSError as exc:
                raise SyncCommandError(f"cannot copy session {row.id} into {tmp}: {exc.strerror or exc}") from None
        yield temp_store, row.id


# evo-agent sync migrate | index (the admin's) ----------------------------------------------------------------


def migrate(out: TextIO, *, ahead: int) -> int:
    """Create or migrate the store's schema (as its owner) and create chunk partitions `ahead` months ahead."""
    from .db import driver_errors, error_gist
    from .schema import SchemaTooNew, SchemaTooOld
    from .schema import migrate as run

    url = require_url()
    with store_connection_unchecked(url) as conn:
        before = conn.execute("SELECT to_regclass('evo_agent_schema') IS NOT NULL").fetchone()[0]  # type: ignore[index]  # one row
        try:
            version = run(conn, ahead=ahead, say=lambda line: out.write(f"  {line}\n"))
        except (SchemaTooNew, SchemaTooOld) as exc:
            raise SyncCommandError(str(exc)) from None
        except driver_errors() as exc:
            raise SyncCommandError(f"cannot migrate the team store {redact_url(url)}: {error_gist(exc, url)}") from None
    out.write(f"the team store {redact_url(url)} is at schema version {version}"
              f"{'' if before else ' (created)'}; clients need row rights only (README \"Team store\")\n")
    return 0


def index(out: TextIO, *, budget_s: float) -> int:
    """Bring the derived search index up to date for every repository (any role may: it runs as the owner)."""
    from .remote import refresh_index, unindexed

    url = require_url()
    started = time.monotonic()
    with store_connection(url) as conn:
        done = refresh_index(conn, None, budget_s=budget_s)
        left = unindexed(conn, None)
    out.write(f"indexed {done} session{'s' if done != 1 else ''} in {time.monotonic() - started:.1f}s"
              + (f"; {left} still pending (run it again)" if left else "; the search index is up to date") + "\n")
    return 0


@contextlib.contextmanager
def store_connection_unchecked(url: str) -> Iterator[Connection]:
    """A connection that does not check the schema version (for migrate, which sets it)."""
    from .db import StoreUnavailable, connect

    try:
        conn = connect(url, check=False)
    except StoreUnavailable as exc:
        raise SyncCommandError(str(exc)) from None
    try:
        yield conn
    finally:
        with contextlib.suppress(Exception):
            conn.close()
