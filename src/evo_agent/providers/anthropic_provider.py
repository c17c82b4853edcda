"""The Anthropic provider: the Messages API, streamed, over the small stdlib client in http_client.py.

It keeps what the official SDK gave (which cost 1.5–3 s to import): server-sent events
folded into one message (anthropic_stream.py), retries with backoff on 429/5xx/529
reported through `on_retry`, ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN / ANTHROPIC_BASE_URL,
and one clear line per failure (providers/errors.py). A conversation's request (one with a
`cache_key`) carries prompt-cache breakpoints (anthropic_cache.py); a one-off (the flattened summary call)
none. A `text_only` request is sent like any other, without `tool_choice: {"type": "none"}`: the API
documents that a change of `tool_choice` invalidates the cached messages, which is all such a request
is for (the instruction in it asks for text, and the agent checks the answer).

The request runs in a worker thread and hands its events to the caller's thread through
a queue (pump.py), so the caller can react to `cancel` (and to Ctrl+C) at once even while
the socket read is blocked; callbacks always run in the caller's thread.
"""

from __future__ import annotations

import threading

from evo_agent.session import with_api_tool_names

from .anthropic_cache import cached_request
from .base import ModelResponse, ProviderCancelled, ProviderError, StreamCallbacks
from .endpoint import open_client, setting
from .errors import ApiLabel, BadAnswer, credentials
from .http_client import DEFAULT_MAX_RETRIES, encode_json
from .pump import forward, retry_notices, stream_answer
from .registry import default_model

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any

    from .anthropic_stream import MessageAssembler
    from .pump import Put

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
MAX_REQUEST_BYTES = 32 * 1024 * 1024  # the Messages API refuses larger requests
MISSING_KEY_MESSAGE = "no Anthropic API key: set ANTHROPIC_API_KEY (or choose --provider demo)"


class AnthropicProvider:
    name = "anthropic"

    def __init__(
        self,
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float | None = None,
    ) -> None:
        self.model = model or default_model(self.name)
        self.base_url = (setting(base_url, "ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.api_key = setting(api_key, "ANTHROPIC_API_KEY")
        self.auth_token = setting(None, "ANTHROPIC_AUTH_TOKEN") if not self.api_key else ""
        self.max_retries = max_retries
        secrets = credentials(self.base_url, (self.api_key, "ANTHROPIC_API_KEY"),
                              (self.auth_token, "ANTHROPIC_AUTH_TOKEN"))
        self.label = ApiLabel("Anthropic API", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", self.base_url, self.model,
                              DEFAULT_BASE_URL, secrets=secrets)
        headers = {"anthropic-version": API_VERSION, "Accept": "application/json"}
        if self.api_key:
            headers["x-api-key"] = self.api_key
        elif self.auth_token:
            headers["Authorization"] = f"Bearer {self.auth_token}"
        self._client = open_client(self.label, headers, timeout=timeout, max_retries=max_retries)

    def warm_up(self) -> None:
        """Connect to the API in the background so the first request does not wait for the handshake."""
        self._client.warm()

    def build_body(self, *, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]], max_tokens: int,
                   cache_key: str | None = None) -> bytes:
        """The request's bytes; a conversation's request (with a `cache_key`) gets cache breakpoints."""
        messages = with_api_tool_names(messages)  # a name an older version recorded that the API refuses
        sent_system: Any = system
        if cache_key is not None:
            sent_system, tools, messages = cached_request(system, tools, messages)
        params: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens, "messages": messages}
        if system:
            params["system"] = sent_system
        if tools:
            params["tools"] = tools
        params["stream"] = True
        body = encode_json(params)
        if len(body) > MAX_REQUEST_BYTES:
            raise ProviderError(
                f"the request is {len(body) / 2**20:.1f} MB, over the Messages API's 32 MB limit; "
                "nothing was sent: run /compact, or start a new session"
            )
        return body

    def complete(
        self,
        *,
        system: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        max_tokens: int = 8192,
        callbacks: StreamCallbacks | None = None,
        cancel: threading.Event | None = None,
        cache_key: str | None = None,
        text_only: bool = False,  # noqa: ARG002 - tool_choice would cost the cache (module docstring)
    ) -> ModelResponse:
        if cancel is not None and cancel.is_set():
            raise ProviderCancelled()
        if not self.api_key and not self.auth_token:
            raise ProviderError(MISSING_KEY_MESSAGE)
        body = self.build_body(system=system, messages=messages, tools=tools, max_tokens=max_tokens,
                               cache_key=cache_key)
        assembler: list[MessageAssembler] = []  # made at the first event: the request is on the wire by then
        return stream_answer(lambda put, stop, live: self._send(body, put, stop, live),
                             feed=lambda event: _assembler(assembler).feed(*event),
                             finish=lambda: _finish(_assembler(assembler)),
                             callbacks=callbacks or StreamCallbacks(), cancel=cancel, label=self.label,
                             attempts=1 + self.max_retries, thread_name="evo-agent-anthropic")

    def _send(self, body: bytes, put: Put, stop: threading.Event, live: dict[str, Any]) -> None:
        """The worker: POST, then hand the server-sent events to the caller's thread."""
        response = self._client.post("/v1/messages", body, stop=stop, on_retry=retry_notices(put, self.label))
        forward(response, put, stop, live)


def _assembler(made: list[MessageAssembler]) -> MessageAssembler:
    """The request's one assembler, made at first use: the stream's module (with the events' classes) is
    imported after the request is sent, not before -p's first request (issue #30)."""
    if not made:
        from .anthropic_stream import MessageAssembler

        made.append(MessageAssembler())
    return made[0]


def _finish(assembler: MessageAssembler) -> ModelResponse:
    if assembler.message is None:
        raise BadAnswer("sent no message (is it a Messages API server?)")
    if not assembler.done:
        raise BadAnswer("ended the stream before the answer was complete")
    return assembler.response()
