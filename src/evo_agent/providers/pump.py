"""Run a blocking HTTP stream in a worker thread so the caller can cancel it.

A socket read can block for as long as the server likes; Ctrl+C and the
cancel event must not. The worker puts `(kind, payload)` events on a queue;
the caller's thread runs `handle` on each (so UI callbacks run there) and
checks `cancel` every 50 ms. Whenever the caller stops before `handle`
returned a result, the stream the worker registered in `live["stream"]` is
closed and the worker told to stop.

`stream_answer` is how both HTTP providers use it: the worker forwards the
server's events, the caller's thread folds them into the answer and shows
them as they come, and every failure becomes one ProviderError line.
"""

from __future__ import annotations

import threading

# queue.SimpleQueue and queue.Empty are these two, from C: `import queue` (its Queue classes) was ~1.7 M
# instructions before `-p`'s first request (issue #30), and an unbounded put/get(timeout) needs no more.
from _queue import Empty, SimpleQueue
from collections.abc import Callable

from .base import ModelResponse, ProviderCancelled, ProviderError, Retrying, StreamCallbacks
from .errors import ApiLabel, BadAnswer, StreamError, failure_line, retry_notice
from .http_client import Response, Retry

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

    Put = Callable[[tuple[str, Any]], None]
    Work = Callable[[Put, threading.Event, dict[str, Any]], None]

POLL_SECONDS = 0.05
CONTINUE = object()  # what `handle` returns to keep reading events


def pump_stream(work: Work, handle: Callable[[str, Any], Any], *, cancel: threading.Event | None,
                thread_name: str) -> Any:
    """Run `work(put, stop, live)` in a daemon thread; return the first non-CONTINUE `handle` result.

    An exception in `work` arrives as an ("error", exc) event.
    """
    events: SimpleQueue[tuple[str, Any]] = SimpleQueue()
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
            except Empty:
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


# --------------------------------------------------------------------------- what the HTTP providers share


def retry_notices(put: Put, label: ApiLabel) -> Callable[[Retry], None]:
    """An `on_retry` for http_client that hands each retry to the caller's thread as a notice."""
    return lambda retry: put(("notice", retry_notice(label, retry)))


def forward(
    response: Response, put: Put, stop: threading.Event, live: dict[str, Any], *, done: str | None = None
) -> None:
    """Hand a streamed answer's server-sent events over as ("data", (name, data)), then ("end", None).

    `done`: a data line that ends the stream early (chat completions' "[DONE]").
    """
    live["stream"] = response
    if stop.is_set():
        response.close()
        return
    for name, data in response.events():
        if stop.is_set():
            return
        if done is not None and data.strip() == done:
            break
        put(("data", (name, data)))
    response.close()
    put(("end", None))


def _reading(step: Callable[..., Any], *args: Any) -> Any:
    """`step(*args)`, folding what the server sent: a shape no API sends (`"delta": [1]`, `"index": [0]`, a
    tool_use without its id) is a BadAnswer, not a crash (`internal error: KeyError: 'id'`)."""
    try:
        return step(*args)
    except (StreamError, BadAnswer):
        raise
    except (TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:
        raise BadAnswer(f"sent an answer that could not be read ({type(exc).__name__}: {exc})") from None


def stream_answer(work: Work, *, feed: Callable[[Any], list[Any]], finish: Callable[[], ModelResponse],
                  callbacks: StreamCallbacks, cancel: threading.Event | None, label: ApiLabel, attempts: int,
                  thread_name: str) -> ModelResponse:
    """Run `work` in a worker; in this thread, `feed` each ("data", x) and show the events it returns.

    ("notice", text) goes on as `Retrying`; ("end", None) returns `finish()`. A failure in the worker
    (after `attempts` tries), a StreamError or BadAnswer from `feed`/`finish`: one ProviderError line.
    """

    def handle(kind: str, payload: Any) -> Any:
        if kind == "data":
            callbacks.show(_reading(feed, payload))
            return CONTINUE
        if kind == "notice":
            callbacks.emit(Retrying(payload))
            return CONTINUE
        if kind == "error":
            raise ProviderError(failure_line(label, payload, attempts)) from None
        return _reading(finish)

    try:
        response: ModelResponse = pump_stream(work, handle, cancel=cancel, thread_name=thread_name)
        return response
    except (StreamError, BadAnswer) as exc:
        raise ProviderError(failure_line(label, exc)) from None
