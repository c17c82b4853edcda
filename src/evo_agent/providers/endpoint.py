"""What the HTTP providers share before their first request: settings, the label, the client.

    api_key = setting(api_key_argument, "ANTHROPIC_API_KEY")    # the argument, else the environment
    client = open_client(label, headers, timeout=..., max_retries=...)
"""

from __future__ import annotations

import os

from .base import ProviderError
from .errors import ApiLabel
from .http_client import Client


def setting(explicit: str | None, env_name: str) -> str:
    """An explicit argument, else the environment variable, stripped ("" when neither is set).

    Each goes into a header or the request line, so a control character inside (a line break pasted into the
    key) is refused in one line naming the variable, never its value: `x-api-key: sk-…\r\nHost: other` wrote
    a header of its own into every request."""
    value = (explicit or "").strip() or (os.environ.get(env_name) or "").strip()
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ProviderError(f"{env_name} holds a line break or another control character: set it again")
    return value


def open_client(label: ApiLabel, headers: dict[str, str], *, timeout: float | None, max_retries: int) -> Client:
    """The client for `label.base_url`; a malformed URL is one ProviderError naming the variable that sets it."""
    try:
        return Client(label.base_url, timeout=timeout, max_retries=max_retries, headers=headers)
    except ValueError as exc:
        raise ProviderError(f"{exc}: check {label.url_env}") from None
