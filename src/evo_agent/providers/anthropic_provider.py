"""The Anthropic provider: the Messages API, streamed, over the small stdlib client in http_client.py.

It keeps what the official SDK gave (which cost 1.5–3 s to import): server-sent events
folded into one message (text, thinking with its signature, redacted thinking, tool_use
with its streamed JSON input), usage with the cache counts, retries with backoff on
429/5xx/529 reported through `on_retry`, ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN /
ANTHROPIC_BASE_URL, and one clear line per failure (providers/errors.py).

The request runs in a worker thread and hands its events to the caller's thread through
a queue, so the caller can react to `cancel` (and to Ctrl+C) at once even while the
socket read is blocked; callbacks always run in the caller's thread.
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any

from .base import ModelResponse, ProviderCancelled, ProviderError, StreamCallbacks
from .errors import ApiLabel, failure_line, retry_notice, status_line
from .http_client import Client, HTTPFailure, encode_json
from .streaming import CONTINUE, Put, run_in_worker

DEFAULT_MODEL = "claude-sonnet-4-5"
DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MAX_RETRIES = 4
API_VERSION = "2023-06-01"
MAX_REQUEST_BYTES = 32 * 1024 * 1024  # the Messages API refuses larger requests
MISSING_KEY_MESSAGE = "no Anthropic API key: set ANTHROPIC_API_KEY (or choose --provider demo)"


class StreamEventError(Exception):
    """An `error` event inside a 200 stream (e.g. overloaded_error mid-answer)."""

    def __init__(self, kind: str | None, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def block_to_param(block: dict) -> dict | None:
    """One response content block in request-param shape (None: drop it).

    Built field by field, so response-only fields (`citations: None`, ...) never reach the
    transcript or the next request.
    """
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": block["text"]} if block.get("text") else None
    if kind == "tool_use":
        return {"type": "tool_use", "id": block["id"], "name": block["name"], "input": dict(block.get("input") or {})}
    if kind == "thinking":
        return {"type": "thinking", "thinking": block.get("thinking", ""), "signature": block.get("signature", "")}
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block["data"]}
    # A block type this version does not know (server tools, ...): keep it, minus nulls.
    return {k: v for k, v in block.items() if v is not None} if isinstance(kind, str) else None


class MessageAssembler:
    """Folds Messages API stream events into the final message, as the SDK's accumulator did.

    `feed(name, data)` returns what to show now: ("text", str), ("thinking", str),
    ("tool_use", (id, name)); `done` is set by message_stop.
    """

    def __init__(self) -> None:
        self.message: dict[str, Any] | None = None
        self.blocks: dict[int, dict] = {}
        self.partial_json: dict[int, list[str]] = {}
        self.usage: dict[str, Any] = {}
        self.stop_reason: str | None = None
        self.done = False

    def feed(self, name: str, data: str) -> list[tuple[str, Any]]:
        event = json.loads(data)
        kind = event.get("type", name) if isinstance(event, dict) else name
        if kind == "error" or name == "error":
            err = event.get("error") if isinstance(event, dict) else None
            err = err if isinstance(err, dict) else {}
            raise StreamEventError(err.get("type"), str(err.get("message") or "the stream reported an error"))
        if kind == "message_start":
            self.message = dict(event.get("message") or {})
            self.usage = dict(self.message.get("usage") or {})
        elif kind == "content_block_start":
            block = dict(event.get("content_block") or {})
            index = event.get("index", len(self.blocks))
            self.blocks[index] = block
            if block.get("type") in ("tool_use", "server_tool_use"):
                self.partial_json[index] = []
                if block.get("type") == "tool_use":
                    return [("tool_use", (block.get("id", ""), block.get("name", "")))]
        elif kind == "content_block_delta":
            return self._delta(event.get("index", 0), event.get("delta") or {})
        elif kind == "content_block_stop":
            self._finish_block(event.get("index", 0))
        elif kind == "message_delta":
            delta = event.get("delta") or {}
            if "stop_reason" in delta:
                self.stop_reason = delta["stop_reason"]
            for key, value in (event.get("usage") or {}).items():
                if value is not None:
                    self.usage[key] = value
        elif kind == "message_stop":
            self.done = True
        return []

    def _delta(self, index: int, delta: dict) -> list[tuple[str, Any]]:
        block = self.blocks.setdefault(index, {"type": "text", "text": ""})
        kind = delta.get("type")
        if kind == "text_delta":
            piece = delta.get("text", "")
            block["text"] = block.get("text", "") + piece
            return [("text", piece)] if piece else []
        if kind == "thinking_delta":
            piece = delta.get("thinking", "")
            block["thinking"] = block.get("thinking", "") + piece
            return [("thinking", piece)] if piece else []
        if kind == "signature_delta":
            block["signature"] = block.get("signature", "") + delta.get("signature", "")
        elif kind == "input_json_delta":
            self.partial_json.setdefault(index, []).append(delta.get("partial_json", ""))
        return []

    def _finish_block(self, index: int) -> None:
        parts = self.partial_json.pop(index, None)
        if parts is None or index not in self.blocks:
            return
        raw = "".join(parts).strip()
        if raw:
            self.blocks[index]["input"] = json.loads(raw)

    def response(self) -> ModelResponse:
        for index in list(self.partial_json):
            self._finish_block(index)
        content = [p for p in (block_to_param(self.blocks[i]) for i in sorted(self.blocks)) if p is not None]
        usage = self.usage
        return ModelResponse(
            message={"role": "assistant", "content": content},
            input_tokens=int(usage.get("input_tokens") or 0),
            output_tokens=int(usage.get("output_tokens") or 0),
            cache_creation_input_tokens=usage.get("cache_creation_input_tokens"),
            cache_read_input_tokens=usage.get("cache_read_input_tokens"),
            stop_reason=self.stop_reason,
        )


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
        self.model = model or DEFAULT_MODEL
        env_url = (os.environ.get("ANTHROPIC_BASE_URL") or "").strip()
        self.base_url = ((base_url or "").strip() or env_url or DEFAULT_BASE_URL).rstrip("/")
        self.api_key = (api_key or "").strip() or (os.environ.get("ANTHROPIC_API_KEY") or "").strip()
        self.auth_token = (os.environ.get("ANTHROPIC_AUTH_TOKEN") or "").strip() if not self.api_key else ""
        self.max_retries = max_retries
        self.label = ApiLabel("Anthropic API", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", self.base_url, self.model,
                              DEFAULT_BASE_URL)
        headers = {"anthropic-version": API_VERSION, "Accept": "application/json"}
        if self.api_key:
            headers["x-api-key"] = self.api_key
        elif self.auth_token:
            headers["Authorization"] = f"Bearer {self.auth_token}"
        try:
            self._client = Client(self.base_url, timeout=timeout, max_retries=max_retries, headers=headers)
        except ValueError as exc:  # a malformed base URL
            raise ProviderError(f"{exc}: check ANTHROPIC_BASE_URL") from None

    def warm_up(self) -> None:
        """Connect to the API in the background so the first request does not wait for the handshake."""
        self._client.warm()

    def build_body(self, *, system: str, messages: list[dict], tools: list[dict], max_tokens: int) -> bytes:
        params: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens, "messages": messages}
        if system:
            params["system"] = system
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
        messages: list[dict],
        tools: list[dict],
        max_tokens: int = 8192,
        callbacks: StreamCallbacks | None = None,
        cancel: threading.Event | None = None,
    ) -> ModelResponse:
        callbacks = callbacks or StreamCallbacks()
        if cancel is not None and cancel.is_set():
            raise ProviderCancelled()
        if not self.api_key and not self.auth_token:
            raise ProviderError(MISSING_KEY_MESSAGE)
        body = self.build_body(system=system, messages=messages, tools=tools, max_tokens=max_tokens)
        assembler = MessageAssembler()
        attempts = 1 + self.max_retries

        def work(put: Put, stop: threading.Event, live: dict) -> None:
            response = self._client.post("/v1/messages", body, stop=stop,
                                         on_retry=lambda retry: put(("notice", retry_notice(self.label, retry))))
            live["stream"] = response
            if stop.is_set():
                response.close()
                return
            for name, data in response.events():
                if stop.is_set():
                    return
                put(("event", (name, data)))
            put(("end", None))

        def handle(kind: str, payload: Any) -> Any:
            if kind == "event":
                for event, value in self._feed(assembler, *payload):
                    if event == "text":
                        if callbacks.on_text:
                            callbacks.on_text(value)
                    elif event == "thinking":
                        if callbacks.on_thinking:
                            callbacks.on_thinking(value)
                    elif event == "tool_use" and callbacks.on_tool_use_start:
                        callbacks.on_tool_use_start(*value)
                return CONTINUE
            if kind == "notice":
                if callbacks.on_retry:
                    callbacks.on_retry(payload)
                return CONTINUE
            if kind == "error":
                if isinstance(payload, HTTPFailure):
                    raise ProviderError(failure_line(self.label, payload, attempts)) from None
                raise ProviderError(failure_line(self.label, payload)) from None
            return self._finish(assembler)

        return run_in_worker(work, handle, cancel=cancel, thread_name="evo-agent-anthropic")

    def _feed(self, assembler: MessageAssembler, name: str, data: str) -> list[tuple[str, Any]]:
        try:
            return assembler.feed(name, data)
        except StreamEventError as exc:
            raise ProviderError(status_line(self.label, None, exc.kind, exc.message)) from None
        except ValueError as exc:
            raise ProviderError(
                f"the Anthropic API at {self.base_url} sent an event that could not be read: {exc}") from None

    def _finish(self, assembler: MessageAssembler) -> ModelResponse:
        if assembler.message is None:
            raise ProviderError(f"the Anthropic API at {self.base_url} sent no message (is it a Messages API server?)")
        if not assembler.done:
            raise ProviderError(
                f"the connection to the Anthropic API at {self.base_url} ended before the answer was complete"
            )
        return assembler.response()
