"""Opening the team store: psycopg imported here only, failures turned into one line.

What every connection gets unless its URL says otherwise (README "Team store"):
- verified TLS: for any host that is not loopback or a Unix socket,
  `sslmode=verify-full` with the system's CA store (`sslrootcert=system`);
- no hang: libpq's `connect_timeout`, TCP keepalives and `tcp_user_timeout`
  (a peer that vanished), a server-side `statement_timeout` (a lock held
  for ever) and `idle_in_transaction_session_timeout` (the transaction of a
  client that went silent ends, so its row locks do not block the retry's
  inserts of the same lines), and, on the client, an idle deadline on every wait: a server
  that accepts bytes but never answers (a stopped backend, a proxy that
  stopped forwarding) fails the operation after EVO_AGENT_SYNC_TIMEOUT
  seconds (default 30) without a byte, closing the connection;
- pooler safety: no prepared statements (`prepare_threshold=None`), so
  PgBouncer in transaction mode works; connections live for one command or
  one background batch, never for the agent's life.

Every foreseeable failure — psycopg missing, a malformed URL, a wrong
password, an unreachable host, a server that went away mid-transaction —
becomes `StoreUnavailable` with a message that names the store by its
redacted URL and never holds the password.
"""

from __future__ import annotations

import os

from evo_agent.safe_text import terminal_line
from evo_agent.session import one_line

from .config import redact_url
from .schema import SchemaTooNew, SchemaTooOld, check_schema

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

    from psycopg import Connection
    from psycopg.abc import RV, PQGen

CONNECT_TIMEOUT_S = 5
IDLE_TIMEOUT_S = 30.0
STATEMENT_TIMEOUT_MS = 120_000
_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}
_PSYCOPG_HINT = "the team store needs psycopg: pip install 'evo-agent[sync]'"


class StoreUnavailable(Exception):
    """The store cannot be used right now: one printable line."""


def _connect_timeout() -> int:
    try:
        return max(1, int(os.environ.get("EVO_AGENT_SYNC_CONNECT_TIMEOUT", CONNECT_TIMEOUT_S)))
    except ValueError:
        return CONNECT_TIMEOUT_S


def idle_timeout() -> float:
    """Seconds a store operation may wait without a byte from the server (EVO_AGENT_SYNC_TIMEOUT)."""
    try:
        return max(0.1, float(os.environ.get("EVO_AGENT_SYNC_TIMEOUT", IDLE_TIMEOUT_S)))
    except ValueError:
        return IDLE_TIMEOUT_S


def _stuck_ms() -> int:
    """How long the server keeps a transaction whose client went silent (its row locks would block the retry)."""
    return max(2000, int(idle_timeout() * 2000))


def lock_wait_ms() -> int:
    """How long a statement waits for a lock another connection holds: half the idle window, so the server
    says so (SQLSTATE 55P03) before the client gives up on a silence it could not explain. Any member may
    `LOCK TABLE` a table it may UPDATE or DELETE from, and hold it in a transaction it never ends."""
    return max(500, int(idle_timeout() * 500))


LOCKED_HINT = ("another connection holds a lock on the team store's tables (its admin finds it in pg_locks and "
               "ends it with pg_terminate_backend)")


def is_local_host(host: str) -> bool:
    """Loopback or a Unix socket (an empty host is libpq's default socket): no TLS needed there."""
    host = host.strip()
    if not host or host.startswith("/") or host.startswith("@") or host.lower() in _LOOPBACK_NAMES:
        return True
    import ipaddress

    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _given(url: str) -> dict[str, Any]:
    from psycopg.conninfo import conninfo_to_dict

    return conninfo_to_dict(url)


_SYSTEM_SERVICE_FILES = ("/etc/postgresql-common/pg_service.conf", "/etc/pg_service.conf")


def service_settings(given: dict[str, Any]) -> dict[str, str]:
    """The settings of the connection service the URL (or PGSERVICE) names, read as libpq reads them: the
    user's file ($PGSERVICEFILE, else ~/.pg_service.conf), else the system's; {} when none is named or found.

    `postgresql:///team?service=prod` names no host: without reading the service, a store whose service
    file says `host=db.example.com` looked like a Unix socket and was reached with libpq's default
    sslmode=prefer (no TLS against anyone on the path)."""
    import configparser

    name = str(given.get("service") or os.environ.get("PGSERVICE", ""))
    if not name:
        return {}
    home = os.environ.get("HOME") or os.path.expanduser("~")
    user_file = os.environ.get("PGSERVICEFILE") or os.path.join(home, ".pg_service.conf")
    sysconf = os.environ.get("PGSYSCONFDIR")
    files = [user_file, *([os.path.join(sysconf, "pg_service.conf")] if sysconf else _SYSTEM_SERVICE_FILES)]
    for path in files:
        parser = configparser.ConfigParser(interpolation=None, strict=False, delimiters=("=",))
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                parser.read_file(f)
        except (OSError, configparser.Error):
            continue
        if parser.has_section(name):
            return {k.strip(): v.strip() for k, v in parser.items(name)}
    return {}


_CA_BUNDLES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem",
               "/usr/local/etc/openssl/cert.pem")


def system_roots() -> str:
    """What `sslrootcert` names for "the system's CAs": `system` where libpq knows the word (16 and later),
    else the system's CA bundle by its absolute path.

    An older libpq (a psycopg without its binary wheel uses the machine's: Debian 12 has 15) reads
    `sslrootcert=system` as a file named `system` in the directory evo-agent runs in, the project: a clone
    committing one chose whom the store's "verified" TLS trusted. Where no bundle is found the path named
    does not exist, and the connection is refused with the hint to set ?sslrootcert=."""
    import ssl

    import psycopg

    if psycopg.pq.version() >= 160000:
        return "system"
    paths = ssl.get_default_verify_paths()
    for candidate in (paths.cafile, paths.openssl_cafile, *_CA_BUNDLES):
        if candidate and os.path.isabs(candidate) and os.path.isfile(candidate):
            return candidate
    return "/nonexistent/system-ca-bundle.pem"


def connection_options(url: str) -> dict[str, Any]:  # libpq options: str and int values
    """What libpq gets besides the URL: TLS, timeouts and keepalives, each only when the URL does not set it."""
    given = _given(url)
    given = {**service_settings(given), **given}  # the URL's own settings win over its service's, as in libpq
    # UTF8 whatever the database's encoding: a SQL_ASCII store made psycopg encode every query as ASCII
    # (search's « » failed with a traceback) and hand text back as bytes (every row dropped unseen).
    extra: dict[str, Any] = {"connect_timeout": _connect_timeout(), "application_name": "evo-agent",
                                "client_encoding": "UTF8",
                                "keepalives": 1, "keepalives_idle": 15, "keepalives_interval": 5,
                                "keepalives_count": 3, "tcp_user_timeout": int(idle_timeout() * 1000),
                                "options": f"-c statement_timeout={STATEMENT_TIMEOUT_MS} "
                                           f"-c idle_in_transaction_session_timeout={_stuck_ms()} "
                                           f"-c lock_timeout={lock_wait_ms()}"}
    # The name is what a certificate is checked against, whatever `hostaddr` says (a tunnel sets sslmode itself);
    # the address is where the bytes go: `?hostaddr=10.1.2.3` with no host (or host=localhost) is not loopback.
    hosts = [h for h in str(given.get("host") or os.environ.get("PGHOST", "")).split(",")]
    addrs = [a for a in str(given.get("hostaddr") or os.environ.get("PGHOSTADDR", "")).split(",") if a.strip()]
    remote = any(not is_local_host(h) for h in hosts) or any(not is_local_host(a) for a in addrs)
    if remote and "sslmode" not in given and "PGSSLMODE" not in os.environ:
        extra["sslmode"] = "verify-full"
        if "sslrootcert" not in given and "PGSSLROOTCERT" not in os.environ:
            extra["sslrootcert"] = system_roots()
    return {k: v for k, v in extra.items() if k not in given}


# Parameters naming a file libpq reads (or, sslkeylogfile, writes): a relative one is taken from the directory
# evo-agent runs in, a project, where a clone commits `ca.pem` (whom the store's TLS trusts) or `.pgpass`.
_FILE_PARAMS = ("sslrootcert", "sslcert", "sslkey", "sslcrl", "sslcrldir", "passfile", "sslkeylogfile")


def relative_file_param(given: dict[str, Any]) -> str | None:
    """`name=value` of the first file parameter of the URL whose value is a relative path, else None."""
    for name in _FILE_PARAMS:
        value = str(given.get(name) or "")
        if value and not value.startswith("/") and not (name == "sslrootcert" and value == system_roots()):
            return f"{name}={value}"
    return None


def tls_hint(url: str, text: str) -> str:
    """The setting to change when a verified TLS connection failed, else ''."""
    lowered = text.lower()
    if not any(w in lowered for w in ("certificate", "ssl", "tls", "server does not support")):
        return ""
    return (" (the team store is reached over verified TLS: give the server a certificate for its host name "
            "signed by a CA this machine trusts, or name the CA with ?sslrootcert=/path/ca.pem in the URL; "
            "?sslmode=require skips the check)")


def connect(url: str, *, check: bool = True) -> Connection:
    """An autocommit connection to a store whose schema this client speaks; StoreUnavailable otherwise.

    Clients run no DDL (`check` reads one row); `evo-agent sync migrate` connects with check=False.
    """
    try:
        import psycopg
    except ImportError:
        raise StoreUnavailable(_PSYCOPG_HINT) from None
    try:
        options = connection_options(url)
        given = _given(url)
        relative = relative_file_param({**service_settings(given), **given})  # a service file's paths too
        if relative is not None:
            raise StoreUnavailable(f"bad EVO_AGENT_SYNC_URL {redact_url(url)!r}: {terminal_line(relative)[:120]} "
                                   "is a relative path, read from the directory evo-agent runs in (a clone's "
                                   "committed file there would be used): give an absolute path")
        conn = _connection_class().connect(url, autocommit=True, prepare_threshold=None, **options)
    except psycopg.ProgrammingError as exc:  # the URL itself cannot be parsed
        raise StoreUnavailable(f"bad EVO_AGENT_SYNC_URL {redact_url(url)!r}: {error_gist(exc, url)}") from None
    except psycopg.Error as exc:
        text = error_gist(exc, url)
        raise StoreUnavailable(f"cannot connect to the team store {redact_url(url)}: {text}"
                               f"{tls_hint(url, text)}") from None
    except (ValueError, OSError) as exc:
        raise StoreUnavailable(f"bad EVO_AGENT_SYNC_URL {redact_url(url)!r}: {error_gist(exc, url)}") from None
    if check:
        try:
            check_schema(conn)
        except (SchemaTooNew, SchemaTooOld) as exc:
            conn.close()
            raise StoreUnavailable(str(exc)) from None
        except psycopg.Error as exc:
            conn.close()
            raise StoreUnavailable(f"cannot prepare the team store {redact_url(url)}: {error_gist(exc, url)}") from None
    return conn


_CLASS: type[Connection] | None = None


def _connection_class() -> type[Connection]:
    """psycopg's Connection whose every wait ends after `idle_timeout()` seconds without a byte."""
    global _CLASS
    if _CLASS is None:
        from typing import Any

        import psycopg

        class BoundedConnection(psycopg.Connection[Any]):
            def wait(self, gen: PQGen[RV], interval: float = 0.1, timeout: float | None = None) -> RV:
                try:
                    return _wait_idle(gen, self.pgconn.socket, idle_timeout())
                except _Silent as silent:
                    self.pgconn.finish()  # the server may never answer: the connection is done for
                    idle = idle_timeout()
                    said = (f"the server's answer went on past {idle * WAIT_CAP_WINDOWS:g}s" if silent.endless else
                            f"the server sent nothing for {idle:g}s" if not silent.trickled else
                            f"the server sent only {silent.trickled} bytes in {idle:g}s")
                    raise psycopg.OperationalError(f"{said} (EVO_AGENT_SYNC_TIMEOUT)") from None

        _CLASS = BoundedConnection
    return _CLASS


class _Silent(Exception):
    def __init__(self, trickled: int, endless: bool = False) -> None:
        super().__init__(trickled)
        self.trickled = trickled  # bytes that came in the last window, too few to keep it open
        self.endless = endless  # the answer outlasted WAIT_CAP_WINDOWS windows, bytes flowing or not


WINDOW_BYTES = 16384  # bytes that keep a wait open for a whole idle window (EVO_AGENT_SYNC_TIMEOUT)
# Windows one wait (a statement and its answer, one FETCH of a fetch) may last at most, however fast the bytes
# come: 10 minutes by default. A server runs no statement past its statement_timeout (2 min), and the largest
# answer, four chunks, travels well within it; a server that never ends its answer (notices or rows without
# end, at full speed) kept a command waiting for ever.
WAIT_CAP_WINDOWS = 20


def _pending(fileno: int) -> int:
    """Bytes waiting in the socket's receive queue (FIONREAD); WINDOW_BYTES where that cannot be asked."""
    import fcntl
    import struct
    import termios

    try:
        return int(struct.unpack("i", fcntl.ioctl(fileno, termios.FIONREAD, b"\0\0\0\0"))[0])
    except (OSError, AttributeError, struct.error):
        return WINDOW_BYTES


def _wait_idle(gen: PQGen[RV], fileno: int, idle: float) -> RV:
    """psycopg's wait loop with a deadline that moves on as bytes come (a long transfer is not cut short).

    Each byte received buys idle / WINDOW_BYTES seconds, up to a whole window from now; being able to send
    buys a whole window. A byte alone no longer does: a server (or a path) that trickled one byte every few
    seconds kept `list --remote` waiting for ever, EVO_AGENT_SYNC_TIMEOUT=1 notwithstanding (SPEC §9: no hang).
    A live server sends its answer in packets of kilobytes, or sends nothing until it is done."""
    import time
    from selectors import EVENT_READ, DefaultSelector

    from psycopg.waiting import READY_NONE

    try:
        state = next(gen)
        deadline = time.monotonic() + idle
        cap = time.monotonic() + idle * WAIT_CAP_WINDOWS
        trickled = 0  # bytes received since the deadline was last a whole window away
        with DefaultSelector() as sel:
            sel.register(fileno, state)
            while True:
                ready = sel.select(timeout=min(0.5, max(0.0, deadline - time.monotonic())))
                if ready:
                    now = time.monotonic()
                    if now >= cap:
                        raise _Silent(0, endless=True)
                    got = _pending(fileno) if ready[0][1] == EVENT_READ else WINDOW_BYTES
                    deadline = min(now + idle, deadline + idle * got / WINDOW_BYTES)
                    trickled = 0 if deadline >= now + idle else trickled + got
                    new = gen.send(ready[0][1])
                else:
                    if time.monotonic() >= deadline:
                        raise _Silent(trickled)
                    new = gen.send(READY_NONE)
                if new != state:
                    sel.unregister(fileno)
                    sel.register(fileno, new)
                    state = new
    except StopIteration as done:
        value: RV = done.value
        return value


def error_gist(exc: BaseException, url: str | None = None) -> str:
    """The gist of a driver error on one line, the password never in it."""
    text = one_line(exc) or type(exc).__name__
    if getattr(exc, "sqlstate", None) == "55P03":  # lock_not_available: lock_timeout ran out
        primary = getattr(getattr(exc, "diag", None), "message_primary", None) or "lock timeout"
        text = f"{one_line(primary)}: {LOCKED_HINT}"
    # libpq repeats the attempt per address; the first clause says it.
    for marker in (" Multiple connection attempts failed.", " This probably means"):
        text = text.split(marker)[0]
    if text.startswith("connection failed: "):
        text = text[len("connection failed: "):]
    if url:
        text = text.replace(url, redact_url(url))
        for password in sorted(_passwords_of(url), key=len, reverse=True):
            text = _mask_token(text, password)
    return text[:300]


def _mask_token(text: str, password: str) -> str:
    """`text` with `password` masked where it stands as a token of its own (quoted, between blanks or a URL's
    delimiters), never inside a word: a password `p` made libpq's "port 9 failed" read "***ort 9 failed"."""
    import re

    return re.sub(rf"(?<!\w){re.escape(password)}(?!\w)", "***", text)


def _passwords_of(url: str) -> set[str]:
    """Every spelling of the URL's password an error could quote: as written (in the user part or a
    `password=` parameter, libpq quotes a token it cannot decode as it stands) and decoded."""
    from .config import password_spellings

    return {p for p in password_spellings(url) if p}


def driver_errors() -> tuple[type[BaseException], ...]:
    """The exceptions a store operation can raise when the server fails (for `except`): a server's text that is
    not in the encoding it announced (a SQL_ASCII database holds any bytes) fails to decode in psycopg."""
    import psycopg

    return (psycopg.Error, OSError, UnicodeError)
