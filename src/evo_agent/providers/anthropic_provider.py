"""The Anthropic provider: the official SDK, streaming, with the SDK's own retries.

The SDK call runs in a worker thread and hands its events to the caller's thread
through a queue, so the caller can react to `cancel` (and to Ctrl+C) at once even
while the socket read is blocked; callbacks always run in the caller's thread.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import anthropic

from .base import ModelResponse, ProviderCancelled, ProviderError, StreamCallbacks
from .base import one_line as _one_line
from .retries import report_retries
from .streaming import CONTINUE, Put, run_in_worker

DEFAULT_MODEL = "claude-sonnet-4-5"
DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MAX_RETRIES = 3


def _root_cause(exc: BaseException) -> BaseException:
    seen: set[int] = set()
    current = exc
    while id(current) not in seen:
        seen.add(id(current))
        nxt = current.__cause__ or current.__context__
        if nxt is None:
            break
        current = nxt
    return current


def _reason(exc: BaseException) -> str:
    """The most specific short reason behind a connection failure, e.g. "connection refused"."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.strerror:
            return current.strerror[0].lower() + current.strerror[1:]
        current = current.__cause__ or current.__context__
    root = _root_cause(exc)
    text = str(root) or type(root).__name__
    if "[Errno" in text and "]" in text:
        text = text.split("]", 1)[1].strip()
    if "connection refused" in text.lower():
        return "connection refused"
    return text


def block_to_param(block: Any) -> dict | None:
    """One response content block in request-param shape (None: drop it).

    Built field by field, so SDK-internal fields (`citations: None`, `caller`,
    `parsed_output`, ...) never reach the transcript or the next request.
    """
    kind = getattr(block, "type", None)
    if kind == "text":
        return {"type": "text", "text": block.text} if block.text else None
    if kind == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": dict(block.input or {})}
    if kind == "thinking":
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.data}
    # A block type this version does not know (server tools, ...): keep what the SDK has, minus nulls.
    if hasattr(block, "model_dump"):
        return block.model_dump(mode="json", exclude_none=True)
    return dict(block) if isinstance(block, dict) else None


def describe_error(exc: BaseException, base_url: str) -> str:
    """One clear line for a failed call (no traceback, no SDK repr)."""
    if isinstance(exc, anthropic.APIStatusError):
        kind = exc.type or getattr(exc.body, "get", lambda *_: None)("type")
        message = exc.api_message or exc.message
        status = exc.status_code
        where = f"Anthropic API error {status}" if status and status >= 400 else "Anthropic API error"
        kind_part = f" ({kind})" if kind else ""
        return _one_line(f"{where}{kind_part}: {message}")
    if isinstance(exc, anthropic.APITimeoutError):
        return f"the Anthropic API at {base_url} did not answer in time (request timed out)"
    if isinstance(exc, anthropic.APIConnectionError):
        return _one_line(f"cannot reach the Anthropic API at {base_url}: {_reason(exc)}")
    if isinstance(exc, TypeError) and "authentication" in str(exc).lower():
        return "no Anthropic API key: set ANTHROPIC_API_KEY (or choose --provider demo)"
    if isinstance(exc, anthropic.AnthropicError):
        return _one_line(f"Anthropic client error: {exc}")
    name = type(exc).__module__.split(".")[0]
    if name.startswith("httpx") or name.startswith("httpcore") or isinstance(exc, OSError):
        return _one_line(f"the connection to the Anthropic API at {base_url} broke: {_reason(exc)}")
    return _one_line(f"Anthropic API call failed: {type(exc).__name__}: {exc}")


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
        self.base_url = (base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        kwargs: dict[str, Any] = {"max_retries": max_retries}
        if api_key:
            kwargs["api_key"] = api_key
        if base_url:
            kwargs["base_url"] = base_url
        if timeout is not None:
            kwargs["timeout"] = timeout
        try:
            self._client = anthropic.Anthropic(**kwargs)
            report_retries(self._client)  # retries become notices (retries.py)
        except Exception as exc:  # e.g. a malformed base URL
            raise ProviderError(describe_error(exc, self.base_url)) from None

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
        params: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens, "messages": messages}
        if system:
            params["system"] = system
        if tools:
            params["tools"] = tools
        if cancel is not None and cancel.is_set():
            raise ProviderCancelled()

        def work(put: Put, stop: threading.Event, live: dict) -> None:
            with self._client.messages.stream(**params) as stream:
                live["stream"] = stream
                for event in stream:
                    if stop.is_set():
                        return
                    if event.type == "content_block_delta":
                        delta = event.delta
                        if delta.type == "text_delta":
                            put(("text", delta.text))
                        elif delta.type == "thinking_delta":
                            put(("thinking", delta.thinking))
                    elif event.type == "content_block_start" and event.content_block.type == "tool_use":
                        put(("tool_use", (event.content_block.id, event.content_block.name)))
                message = stream.get_final_message()
            put(("done", message))

        def handle(kind: str, payload: Any) -> Any:
            if kind == "text":
                if callbacks.on_text and payload:
                    callbacks.on_text(payload)
            elif kind == "thinking":
                if callbacks.on_thinking and payload:
                    callbacks.on_thinking(payload)
            elif kind == "tool_use":
                if callbacks.on_tool_use_start:
                    callbacks.on_tool_use_start(*payload)
            elif kind == "error":
                raise ProviderError(describe_error(payload, self.base_url)) from None
            else:
                return self._to_response(payload)
            return CONTINUE

        return run_in_worker(work, handle, cancel=cancel, thread_name="evo-agent-anthropic", on_retry=callbacks.on_retry)

    @staticmethod
    def _to_response(message: Any) -> ModelResponse:
        content = [p for p in (block_to_param(b) for b in message.content) if p is not None]
        usage = message.usage
        return ModelResponse(
            message={"role": "assistant", "content": content},
            input_tokens=usage.input_tokens or 0,
            output_tokens=usage.output_tokens or 0,
            cache_creation_input_tokens=usage.cache_creation_input_tokens,
            cache_read_input_tokens=usage.cache_read_input_tokens,
            stop_reason=message.stop_reason,
        )
