"""Opening the team store: psycopg imported here only, failures turned into one line.

Every foreseeable failure — psycopg missing, a malformed URL, a wrong
password, an unreachable host, a server that went away mid-transaction —
becomes `StoreUnavailable` with a message that names the store by its
redacted URL and never holds the password.
"""

from __future__ import annotations

import os

from .config import redact_url
from .schema import SchemaTooNew, ensure_schema

CONNECT_TIMEOUT_S = 5
_PSYCOPG_HINT = "the team store needs psycopg: pip install 'evo-agent[sync]'"


class StoreUnavailable(Exception):
    """The store cannot be used right now: one printable line."""


def _connect_timeout() -> int:
    try:
        return max(1, int(os.environ.get("EVO_AGENT_SYNC_CONNECT_TIMEOUT", CONNECT_TIMEOUT_S)))
    except ValueError:
        return CONNECT_TIMEOUT_S


def connect(url: str, *, migrate: bool = True):  # noqa: ANN201 - a psycopg Connection
    """An autocommit connection to the store with its schema up to date; StoreUnavailable otherwise."""
    try:
        import psycopg
    except ImportError:
        raise StoreUnavailable(_PSYCOPG_HINT) from None
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=_connect_timeout(),
                               application_name="evo-agent")
    except psycopg.ProgrammingError as exc:  # the URL itself cannot be parsed
        raise StoreUnavailable(f"bad EVO_AGENT_SYNC_URL {redact_url(url)!r}: {one_line(exc, url)}") from None
    except psycopg.Error as exc:
        raise StoreUnavailable(f"cannot connect to the team store {redact_url(url)}: {one_line(exc, url)}") from None
    except (ValueError, OSError) as exc:
        raise StoreUnavailable(f"bad EVO_AGENT_SYNC_URL {redact_url(url)!r}: {one_line(exc, url)}") from None
    if migrate:
        try:
            ensure_schema(conn)
        except SchemaTooNew as exc:
            conn.close()
            raise StoreUnavailable(str(exc)) from None
        except psycopg.Error as exc:
            conn.close()
            raise StoreUnavailable(f"cannot prepare the team store {redact_url(url)}: {one_line(exc, url)}") from None
    return conn


def one_line(exc: BaseException, url: str | None = None) -> str:
    """The gist of a driver error on one line, the password never in it."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    # libpq repeats the attempt per address; the first clause says it.
    for marker in (" Multiple connection attempts failed.", " This probably means"):
        text = text.split(marker)[0]
    if text.startswith("connection failed: "):
        text = text[len("connection failed: "):]
    if url:
        text = text.replace(url, redact_url(url))
        password = _password_of(url)
        if password:
            text = text.replace(password, "***")
    return text[:300]


def _password_of(url: str) -> str | None:
    netloc = url.partition("://")[2].split("/", 1)[0].split("?", 1)[0]
    userinfo, at, _ = netloc.rpartition("@")
    if at and ":" in userinfo:
        return userinfo.partition(":")[2] or None
    return None


def driver_errors() -> tuple[type[BaseException], ...]:
    """The exceptions a store operation can raise when the server fails (for `except`)."""
    import psycopg

    return (psycopg.Error, OSError)
