"""A test's server thread blocked in `accept()` must be woken before its listener is closed (`shut_listener`).

Closed under it, the thread stays in accept(); when the descriptor's number is reused by a later test's server,
it accepts that server's connections: a fake model server's own thread then blocked in accept() with nothing to
accept, and the suite hung in its teardown (twice: tests/hostile_endpoint.py, then tests/security/hostile.py's
`self_signed_https` and a proxy listener). This reads every test module that accepts in a loop.
"""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
_ACCEPT_LOOP = re.compile(r"while [^\n]*:\n(?:[^\n]*\n){0,3}?[^\n]*\.accept\(\)")
# A listener read without blocking (`setblocking(False)`) is never left in accept(); the helpers define it.
_SAFE = ("shut_listener", "setblocking(False)", "SHUT_RDWR")


def test_every_accept_loop_is_woken_before_its_listener_closes():
    unsafe = []
    for path in sorted(TESTS.rglob("*.py")):
        text = path.read_text()
        if _ACCEPT_LOOP.search(text) and not any(word in text for word in _SAFE):
            unsafe.append(str(path.relative_to(TESTS)))
    assert not unsafe, f"close a listener with tests.hostile_endpoint.shut_listener(listener, thread): {unsafe}"
