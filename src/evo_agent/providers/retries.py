"""Say when the SDK retries a model call: "API overloaded (529), retrying in 4 s, attempt 2 of 4".

Both official SDKs retry 408/409/429/5xx/529 and connection failures with backoff, silently: a user
saw 9 s of 529 retries as a hang. `report_retries(client)` wraps the client's retry sleep (the
`_sleep_for_retry` / `_calculate_retry_timeout` pair both SDKs share; if a future SDK renames them,
nothing is reported and nothing breaks). The text goes to whatever `reporting_to()` set for the
calling thread — `streaming.run_in_worker` sets it around each call, so the notice reaches the
caller's `on_retry` callback in order with the streamed events.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

__all__ = ["report_retries", "reporting_to", "retry_text"]

_local = threading.local()

_STATUS_WORDS = {529: "API overloaded", 429: "rate limited", 408: "request timed out", 409: "API conflict"}


def retry_text(status: int | None, attempt: int, attempts: int, delay: float) -> str:
    what = f"{_STATUS_WORDS.get(status, 'API error')} ({status})" if status else "connection failed"
    seconds = max(1, round(delay))
    return f"{what}, retrying in {seconds} s, attempt {attempt} of {attempts}"


@contextmanager
def reporting_to(report: Callable[[str], None] | None) -> Iterator[None]:
    """Retries in this thread, while the block runs, are reported to `report`."""
    previous = getattr(_local, "report", None)
    _local.report = report
    try:
        yield
    finally:
        _local.report = previous


def report_retries(client: Any) -> None:
    """Make `client` (an Anthropic or OpenAI SDK client) report each retry before it sleeps."""
    sleep = getattr(client, "_sleep_for_retry", None)
    calculate = getattr(client, "_calculate_retry_timeout", None)
    if not callable(sleep) or not callable(calculate):
        return

    def sleep_for_retry(*args: Any, **kwargs: Any) -> Any:
        response = kwargs.get("response")
        retries_taken, max_retries = kwargs.get("retries_taken"), kwargs.get("max_retries")
        if isinstance(retries_taken, int) and isinstance(max_retries, int):
            _local.pending = (getattr(response, "status_code", None), retries_taken + 2, max_retries + 1)
        try:
            return sleep(*args, **kwargs)
        finally:
            _local.pending = None

    def calculate_retry_timeout(*args: Any, **kwargs: Any) -> Any:
        timeout = calculate(*args, **kwargs)
        pending, report = getattr(_local, "pending", None), getattr(_local, "report", None)
        if pending is not None and report is not None:
            try:
                report(retry_text(pending[0], pending[1], pending[2], float(timeout)))
            except Exception:  # noqa: BLE001 - a notice must never break the call
                pass
        return timeout

    try:
        client._sleep_for_retry = sleep_for_retry
        client._calculate_retry_timeout = calculate_retry_timeout
    except (AttributeError, TypeError):
        pass
