"""One line for every way a model call fails, saying what to do about it (both providers).

    label = ApiLabel("Anthropic API", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", base_url, model)
    failure_line(label, failure, attempts)
        -> "Anthropic API error 401 (authentication_error): ...; check ANTHROPIC_API_KEY"
    retry_notice(label, retry)               -> "Anthropic API overloaded (529), retrying in 4 s, attempt 2 of 5"

`failure_line` is the one place that says why a request failed: an HTTP failure (http_client's
types), an error the server reported inside a 200 stream (StreamError), an answer that is not
what the API sends (BadAnswer), or anything else (named by its type, never a traceback).
"""

from __future__ import annotations

import json

from evo_agent.session import one_line
from evo_agent.session import plain_dataclass as dataclass
from evo_agent.session import plain_field as field

from .http_client import ConnectError, HTTPFailure, Retry, StatusError, StreamBroken, Timeout, TooLarge

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

_TOO_LONG = ("prompt is too long", "context_length_exceeded", "maximum context length", "context length",
             "too many tokens", "request too large", "too large")


class StreamError(Exception):
    """An error the server reported inside a 200 stream (e.g. overloaded_error mid-answer)."""

    def __init__(self, kind: str | None, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class BadAnswer(Exception):
    """The server answered, but not as the API does; the text completes "the <API> at <url> ..."."""


@dataclass(frozen=True)
class ApiLabel:
    """How one provider names itself and the settings a user can change."""

    name: str  # "Anthropic API"
    key_env: str  # "ANTHROPIC_API_KEY"
    url_env: str  # "ANTHROPIC_BASE_URL"
    base_url: str
    model: str
    default_url: str
    url_in_status: bool = False  # OpenAI-compatible servers are many: name which one answered
    # (secret value, the variable it came from): never shown in a line, even where the server echoes it (hidden)
    secrets: tuple[tuple[str, str], ...] = field(default=(), repr=False, compare=False)


MIN_SECRET_CHARS = 8  # a shorter key ("ollama", a placeholder) is masked nowhere: it would mask ordinary words


def credentials(base_url: str, *pairs: tuple[str, str]) -> tuple[tuple[str, str], ...]:
    """The (value, variable) pairs a provider's lines never show: its key (`pairs`) and the base URL's password.

    A server that refuses a key often quotes it (`invalid x-api-key: sk-ant-...`, `Incorrect API key provided:`):
    that text became the failure line on stderr, in the app and in a subagent's tool_result.
    """
    from urllib.parse import urlsplit

    try:
        password = urlsplit(base_url).password
    except ValueError:
        password = None
    keys = tuple((value, name) for value, name in pairs if len(value) >= MIN_SECRET_CHARS)
    # a URL's password counts from 6 characters, as on disk (session/redact.py)
    return (*keys, (password, "URL password")) if password and len(password) >= 6 else keys


def hidden(label: ApiLabel, text: str) -> str:
    """`text` with each of the label's secrets replaced by the name of the variable it came from."""
    for value, name in label.secrets:
        if value in text:
            text = text.replace(value, f"[{name}]")
    return text


def error_detail(body: Any, reason: str = "") -> tuple[str, str | None]:
    """(message, kind) from the many error bodies servers send ({"error": {...}}, {"error": "..."}, text)."""
    inner = body.get("error", body) if isinstance(body, dict) else body
    message: Any = None
    kind: Any = None
    if isinstance(inner, dict):
        message = inner.get("message") or inner.get("detail") or inner.get("error")
        kind = inner.get("code") or inner.get("type")
        if isinstance(message, dict):
            message = message.get("message") or json.dumps(message)
        if message is None:
            message = json.dumps(inner, ensure_ascii=False)
        if kind == "error" and isinstance(body, dict) and body.get("type") == "error":
            kind = None
    elif isinstance(inner, str) and inner.strip() and not inner.lstrip().startswith("<"):
        message = inner
    if not message:
        message = reason or "no details"
    return str(message), (str(kind) if kind not in (None, "") else None)


def error_words(failure: BaseException) -> str:
    """What an error answer says (message, kind, the parameter it names), lower-cased: to recognise a refusal."""
    if isinstance(failure, StatusError):
        message, kind = error_detail(failure.body, failure.reason)
        inner = failure.body.get("error", failure.body) if isinstance(failure.body, dict) else None
        param = inner.get("param") if isinstance(inner, dict) else None
        return f"{message} {kind or ''} {param or ''}".lower()
    return str(failure).lower()


def is_too_long(status: int | None, message: str) -> bool:
    text = message.lower()
    return status == 413 or any(marker in text for marker in _TOO_LONG)


def _hint(label: ApiLabel, status: int | None, kind: str | None, message: str, attempts: int) -> str:
    tried = f" ({attempts} attempts)" if attempts > 1 else ""
    if status is not None and 300 <= status < 400:
        return f"a redirect, which evo-agent never follows (it would resend the key): check {label.url_env}"
    if status == 401:
        return f"check {label.key_env}"
    if status == 403:
        return f"the key in {label.key_env} may not use this model or API: check its permissions"
    if is_too_long(status, message):
        return "the conversation is too long for the model: run /compact, or start a new session"
    if status == 404:
        return f"check the model name {label.model!r} (choose another with --model) and {label.url_env}"
    if status == 429:
        return f"rate limited{tried}: wait a minute and try again"
    if status == 529 or kind == "overloaded_error":
        return f"the API is overloaded{tried}: try again in a minute"
    if status is not None and status >= 500:
        return f"the server failed{tried}: try again later"
    return ""


def status_line(label: ApiLabel, status: int | None, kind: str | None, message: str, attempts: int = 1) -> str:
    """An API error answer (an HTTP status, or an error event inside a stream when `status` is None).

    What the server said is masked (`hidden`) before the line is cut: a cut key left its first characters."""
    message, kind = hidden(label, message), (hidden(label, kind) if kind else kind)
    where = f"{label.name} error {status}" if status else f"{label.name} error"
    kind_part = f" ({kind})" if kind and kind != str(status) else ""
    at = f" at {hidden(label, label.base_url)}" if label.url_in_status else ""
    hint = _hint(label, status, kind, message, attempts)
    text = f"{where}{kind_part}{at}: {one_line(message, 240).rstrip('.')}"
    return one_line(f"{text}; {hint}" if hint else text, 400)


ERROR_CHARS = 300  # a failure's line is cut here (… at the end)


def failure_line(label: ApiLabel, failure: BaseException, attempts: int = 1) -> str:
    """Why a request failed, in one line (no traceback, no repr, no secret of the label's); `attempts`: how many
    tries were made."""
    if isinstance(failure, StreamError):
        return status_line(label, None, failure.kind, failure.message)
    if isinstance(failure, StatusError):
        message, kind = error_detail(failure.body, failure.reason)
        return status_line(label, failure.status, kind, message, attempts)
    return one_line(hidden(label, _failure_text(label, failure)), ERROR_CHARS)


def _failure_text(label: ApiLabel, failure: BaseException) -> str:
    """failure_line's text for what is not an error answer, before it is masked and cut."""
    if isinstance(failure, (BadAnswer, TooLarge)):
        return f"the {label.name} at {label.base_url} {failure}"
    if isinstance(failure, Timeout):
        return f"the {label.name} at {label.base_url} did not answer in time (request timed out)"
    if isinstance(failure, ConnectError):
        if failure.tls:
            return (f"cannot connect securely to the {label.name} at {label.base_url}: {failure.reason}; "
                    "behind a TLS-inspecting proxy, set SSL_CERT_FILE to its CA bundle")
        if failure.proxy:
            advice = "check HTTPS_PROXY, HTTP_PROXY and ALL_PROXY"
        elif label.base_url.rstrip("/") == label.default_url.rstrip("/"):
            advice = "check your network connection"
        else:
            advice = f"is the server running? ({label.url_env} sets the URL)"
        return f"cannot reach the {label.name} at {label.base_url}: {failure.reason}; {advice}"
    if isinstance(failure, StreamBroken):
        return f"the connection to the {label.name} at {label.base_url} broke: {failure}"
    if isinstance(failure, HTTPFailure):
        return f"the {label.name} at {label.base_url} failed: {failure}"
    return f"{label.name} call failed: {type(failure).__name__}: {failure}"


def _seconds(delay: float) -> str:
    if delay < 1:
        return f"{delay * 1000:.0f} ms"
    return f"{delay:.0f} s" if delay >= 10 or delay == int(delay) else f"{delay:.1f} s"


def retry_notice(label: ApiLabel, retry: Retry) -> str:
    """What a user sees while a request is retried.

    E.g. "Anthropic API overloaded (529), retrying in 4 s, attempt 2 of 5".
    """
    failure = retry.failure
    if isinstance(failure, StatusError):
        _, kind = error_detail(failure.body)
        if failure.status == 529 or kind == "overloaded_error":
            what = f"{label.name} overloaded ({failure.status})"
        elif failure.status == 429:
            what = f"{label.name} rate limit reached (429)"
        else:
            what = f"{label.name} error {failure.status}"
    elif isinstance(failure, Timeout):
        what = f"the {label.name} did not answer in time"
    elif isinstance(failure, ConnectError):
        what = f"cannot reach the {label.name} at {label.base_url} ({failure.reason})"
    else:
        what = f"the {label.name} request failed ({failure})"
    return hidden(label, f"{what}, retrying in {_seconds(retry.delay)}, attempt {retry.attempt} of {retry.attempts}")
