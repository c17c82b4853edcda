"""Run a blocking HTTP stream in a worker thread so the caller can cancel it.

A socket read can block for as long as the server likes; Ctrl+C and the
cancel event must not. The worker puts `(kind, payload)` events on a queue;
the caller's thread runs `handle` on each (so UI callbacks run there) and
checks `cancel` every 50 ms. Whenever the caller stops before `handle`
returned a result, the stream the worker registered in `live["stream"]` is
closed and the worker told to stop.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

from .base import ProviderCancelled

POLL_SECONDS = 0.05
CONTINUE = object()  # what `handle` returns to keep reading events

Put = Callable[[tuple[str, Any]], None]


def run_in_worker(
    work: Callable[[Put, threading.Event, dict], None],
    handle: Callable[[str, Any], Any],
    *,
    cancel: threading.Event | None,
    thread_name: str,
) -> Any:
    """Run `work(put, stop, live)` in a daemon thread; return the first non-CONTINUE `handle` result.

    An exception in `work` arrives as an ("error", exc) event.
    """
    events: queue.Queue = queue.Queue()
    stop = threading.Event()
    live: dict[str, Any] = {}

    def target() -> None:
        try:
            work(events.put, stop, live)
        except BaseException as exc:  # noqa: BLE001 — handed to the caller's thread
            events.put(("error", exc))

    finished = False
    threading.Thread(target=target, name=thread_name, daemon=True).start()
    try:
        while True:
            if cancel is not None and cancel.is_set():
                raise ProviderCancelled()
            try:
                kind, payload = events.get(timeout=POLL_SECONDS)
            except queue.Empty:
                continue
            result = handle(kind, payload)
            if result is not CONTINUE:
                finished = True
                return result
    finally:
        if not finished:  # cancelled, Ctrl+C, an error or a failing callback: stop the worker and the stream
            stop.set()
            stream = live.get("stream")
            if stream is not None:
                try:
                    stream.close()
                except Exception:  # noqa: BLE001 - closing is best effort
                    pass
