"""PgBouncer in transaction mode (issue #33): every push goes through, exactly once, with a pool smaller than the pushers.

Needs the `pgbouncer` binary (Debian's package); skipped where it is not installed. As root it runs as nobody,
like the test cluster. The pool has 2 server connections for 8 concurrent pushers, so consecutive statements of one
client land on different server connections: a prepared statement would not be found there.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from evo_agent.sync.db import connect
from evo_agent.sync.push import push_session
from tests.builders import quiet_store

from .helpers import complete_line_count, identity_of, line_rows, project_with_origin
from .pgcluster import PASSWORD, USER, free_port

BIN = shutil.which("pgbouncer") or ("/usr/sbin/pgbouncer" if os.access("/usr/sbin/pgbouncer", os.X_OK) else None)
pytestmark = pytest.mark.skipif(BIN is None, reason="pgbouncer is not installed (apt-get install pgbouncer)")


@pytest.fixture
def bouncer(pg_cluster, tmp_path: Path):
    base = Path("/tmp" if os.geteuid() == 0 else tmp_path) / f"evo-bouncer-{os.getpid()}-{free_port()}"
    base.mkdir(mode=0o700)
    port = free_port()
    (base / "users.txt").write_text(f'"{USER}" "{PASSWORD}"\n')
    (base / "bouncer.ini").write_text(f"""[databases]
* = host=127.0.0.1 port={pg_cluster.port}
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {port}
unix_socket_dir =
auth_type = scram-sha-256
auth_file = {base}/users.txt
pool_mode = transaction
default_pool_size = 2
max_client_conn = 100
ignore_startup_parameters = options
logfile = {base}/bouncer.log
pidfile = {base}/bouncer.pid
""")
    as_user: list[str] = []
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        for path in (base, *base.iterdir()):
            os.chown(path, nobody.pw_uid, nobody.pw_gid)
        as_user = ["runuser", "-u", "nobody", "--"]
    proc = subprocess.Popen([*as_user, BIN, str(base / "bouncer.ini")], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                with __import__("socket").create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                time.sleep(0.05)
        yield port
    finally:
        _stop(proc, base / "bouncer.pid")
        shutil.rmtree(base, ignore_errors=True)


def _stop(proc: subprocess.Popen, pid_file: Path) -> None:
    """SIGTERM to pgbouncer itself (its immediate shutdown), not to `runuser`: runuser, signalled, passes the
    signal on and then sleeps 2 s before its SIGKILL, whatever the child did."""
    try:
        os.kill(int(pid_file.read_text().split()[0]), signal.SIGTERM)
    except (OSError, ValueError, IndexError):
        proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def test_pushes_through_pgbouncer_in_transaction_mode(sync_url: str, bouncer: int, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from evo_agent.sync import push as push_module

    monkeypatch.setattr(push_module, "BATCH_LINES", 10)  # the same INSERT 30 times a connection: psycopg would prepare it
    connect(sync_url).close()  # the schema, made directly (the admin's connection)
    database = sync_url.rsplit("/", 1)[1]
    url = f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{bouncer}/{database}"
    project = project_with_origin(tmp_path / "p", "git@github.com:team/app.git")
    store = quiet_store(project)
    ids = []
    for n in range(8):
        rec = store.create(model="m", provider="demo")
        rec.append_many(("user", {"message": {"role": "user", "content": f"pusher {n} line {i}"}})
                        for i in range(300))
        rec.checkpoint()
        ids.append(rec.session_id)
    errors: list[BaseException] = []

    def pusher(sid: str) -> None:
        try:
            for _ in range(3):  # again and again: each statement may meet another server connection
                with connect(url) as conn:
                    push_session(conn, identity_of(project), store, sid)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=pusher, args=(sid,)) for sid in ids]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    for sid in ids:
        assert line_rows(sync_url, sid) == complete_line_count(store.sessions_dir / sid / "messages.jsonl")
