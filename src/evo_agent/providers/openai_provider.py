"""The OpenAI-compatible provider: chat completions, streamed, over a small stdlib HTTP client.

It talks to anything that speaks `POST {base_url}/chat/completions` with tool calling:
OpenAI itself, Ollama, vLLM, llama.cpp's server, OpenRouter, LM Studio. Configuration
comes from the arguments, else from OPENAI_API_KEY and OPENAI_BASE_URL (read here, so
this module knows which URL it is talking to; the SDK would read the same variables).
A local server needs no key: when a base URL is set and no key is, a placeholder key
is sent.

The stored history stays in the Anthropic MessageParam shape (SPEC §2): the request is
translated by openai_translate.py, the streamed answer assembled by openai_stream.py.

Compatibility fallbacks, each tried at most once per provider and then remembered:
a 400 that names `stream_options` drops it, a 400 that asks for
`max_completion_tokens` instead of `max_tokens` switches (api.openai.com gets
`max_completion_tokens` from the start), a 400 that names `prompt_cache_key` drops it.

`prompt_cache_key` (SPEC §12): a conversation's requests (those with a `cache_key`, the resume
chain's first session id) carry it where the endpoint is known to accept it: api.openai.com, or
any endpoint when EVO_AGENT_PROMPT_CACHE_KEY=1; EVO_AGENT_PROMPT_CACHE_KEY=0 never sends it. Other
servers (Ollama, vLLM, llama.cpp, routers) are not sent a parameter they may refuse; should one
refuse it anyway, it is dropped after the first 400 that names it.

The request (over the small stdlib client in http_client.py: the `openai` SDK cost ~1.1 s
to import) runs in a worker thread and hands the chunks to the caller's thread
through a queue (pump.py), so `cancel` (and Ctrl+C) act at once even while a socket read
is blocked; callbacks always run in the caller's thread.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .base import ModelResponse, ProviderCancelled, ProviderError, StreamCallbacks
from .endpoint import open_client, setting
from .errors import ApiLabel, BadAnswer, StreamError, credentials, error_detail, error_words
from .http_client import DEFAULT_MAX_RETRIES, Response, StatusError, encode_json, load_json
from .openai_stream import ChatStreamAssembler
from .openai_translate import history_tool_ids, to_openai_messages, to_openai_tools
from .pump import forward, retry_notices, stream_answer
from .registry import default_model

if TYPE_CHECKING:
    from .pump import Put

DEFAULT_BASE_URL = "https://api.openai.com/v1"
CACHE_KEY_ENV = "EVO_AGENT_PROMPT_CACHE_KEY"
NO_KEY_PLACEHOLDER = "sk-no-key-required"  # sent to a local server that wants no key
MISSING_KEY_MESSAGE = (
    "no OpenAI API key: set OPENAI_API_KEY (or OPENAI_BASE_URL for a local server such as Ollama), "
    "or choose --provider demo"
)


def sends_cache_key(host: str) -> bool:
    """Whether requests to `host` carry `prompt_cache_key`: EVO_AGENT_PROMPT_CACHE_KEY=1/0, else only api.openai.com."""
    forced = (os.environ.get(CACHE_KEY_ENV) or "").strip().lower()
    if forced in ("1", "true", "yes", "on"):
        return True
    if forced in ("0", "false", "no", "off"):
        return False
    return host == "api.openai.com"


def parse_chunk(data: str) -> dict[str, Any]:
    """One streamed `data:` line as a chunk; an error the server sends mid-stream raises StreamError."""
    try:
        chunk = load_json(data)
    except ValueError as exc:
        raise BadAnswer(f"sent a chunk that could not be read: {exc}") from None
    if isinstance(chunk, dict) and chunk.get("error") is not None:
        message, kind = error_detail(chunk)
        raise StreamError(kind, message)
    return chunk if isinstance(chunk, dict) else {}


class OpenAIProvider:
    name = "openai"

    def __init__(
        self,
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float | None = None,
        stream: bool = True,
    ) -> None:
        self.model = model or default_model(self.name)
        chosen_url = setting(base_url, "OPENAI_BASE_URL")
        self.base_url = (chosen_url or DEFAULT_BASE_URL).rstrip("/")
        key = setting(api_key, "OPENAI_API_KEY")
        self.missing_key = not key and not chosen_url
        self.stream = stream
        self.max_retries = max_retries
        host = (urlsplit(self.base_url).hostname or "").lower()
        self.max_tokens_param = "max_completion_tokens" if host == "api.openai.com" else "max_tokens"
        self.send_stream_options = True
        self.send_cache_key = sends_cache_key(host)
        self.send_tool_choice = True  # a server that refuses `tool_choice` (a 400 naming it) is sent none again
        self._compat_tried: set[str] = set()
        self.label = ApiLabel("OpenAI-compatible API", "OPENAI_API_KEY", "OPENAI_BASE_URL", self.base_url,
                              self.model, DEFAULT_BASE_URL, url_in_status=True,
                              secrets=credentials(self.base_url, (key, "OPENAI_API_KEY")))
        # a local server needs no key; without a URL, complete() says one is missing
        headers = {"Authorization": f"Bearer {key or NO_KEY_PLACEHOLDER}", "Accept": "application/json"}
        for env, header in (("OPENAI_ORG_ID", "OpenAI-Organization"), ("OPENAI_PROJECT_ID", "OpenAI-Project")):
            if setting(None, env):
                headers[header] = setting(None, env)
        self._client = open_client(self.label, headers, timeout=timeout, max_retries=max_retries)

    def warm_up(self) -> None:
        """Connect to the API in the background so the first request does not wait for the handshake."""
        self._client.warm()

    # ---- request building
    def build_params(self, *, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]], max_tokens: int,
                     cache_key: str | None = None, text_only: bool = False) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.model, "messages": to_openai_messages(system, messages)}
        if tools:
            params["tools"] = to_openai_tools(tools)
            if text_only and self.send_tool_choice:  # the tools stay in the prompt (and the cache); none is called
                params["tool_choice"] = "none"
        if cache_key and self.send_cache_key:
            params["prompt_cache_key"] = cache_key
        params[self.max_tokens_param] = max_tokens
        if self.stream:
            params["stream"] = True
            if self.send_stream_options:
                params["stream_options"] = {"include_usage": True}
        return params

    def _adapt(self, exc: BaseException, params: dict[str, Any]) -> bool:
        """After a 400: adjust `params` for a server that refuses a parameter; False when nothing applies."""
        if not (isinstance(exc, StatusError) and exc.status == 400):
            return False
        text = error_words(exc)
        if "prompt_cache_key" in params and "prompt_cache_key" in text:
            self.send_cache_key = False
            del params["prompt_cache_key"]
            return True
        if "tool_choice" in params and "tool_choice" in text:
            self.send_tool_choice = False
            del params["tool_choice"]
            return True
        if "stream_options" in params and "stream_options" in text and "stream_options" not in self._compat_tried:
            self._compat_tried.add("stream_options")
            self.send_stream_options = False
            del params["stream_options"]
            return True
        if (
            "max_tokens" in params
            and "max_completion_tokens" in text
            and "max_completion_tokens" not in self._compat_tried
        ):
            self._compat_tried.add("max_completion_tokens")
            self.max_tokens_param = "max_completion_tokens"
            params["max_completion_tokens"] = params.pop("max_tokens")
            return True
        return False

    def _post(self, params: dict[str, Any], put: Put, stop: threading.Event) -> Response:
        """POST the request, adapting it once per refused parameter (see _adapt)."""
        while True:
            try:
                return self._client.post("/chat/completions", encode_json(params), stop=stop,
                                         on_retry=retry_notices(put, self.label))
            except StatusError as exc:
                if not self._adapt(exc, params):
                    raise

    # ---- the call
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
        text_only: bool = False,
    ) -> ModelResponse:
        if cancel is not None and cancel.is_set():
            raise ProviderCancelled()
        if self.missing_key:
            raise ProviderError(MISSING_KEY_MESSAGE)
        params = self.build_params(system=system, messages=messages, tools=tools, max_tokens=max_tokens,
                                   cache_key=cache_key, text_only=text_only)
        assembler = ChatStreamAssembler(history_tool_ids(messages), seed=len(messages))
        return stream_answer(lambda put, stop, live: self._send(params, put, stop, live),
                             feed=lambda event: _feed(assembler, event), finish=lambda: _finish(assembler),
                             callbacks=callbacks or StreamCallbacks(), cancel=cancel, label=self.label,
                             attempts=1 + self.max_retries, thread_name="evo-agent-openai")

    def _send(self, params: dict[str, Any], put: Put, stop: threading.Event, live: dict[str, Any]) -> None:
        """The worker: POST, then hand the chunks (or the one completion) to the caller's thread."""
        response = self._post(params, put, stop)
        if params.get("stream"):
            forward(response, put, stop, live, done="[DONE]")
            return
        live["stream"] = response
        try:
            completion = response.json()
        except ValueError as exc:
            raise BadAnswer(f"sent a response that could not be read: {exc}") from None
        put(("data", ("completion", completion)))
        put(("end", None))


def _feed(assembler: ChatStreamAssembler, event: tuple[str, Any]) -> list[Any]:
    name, data = event
    return assembler.feed(data if name == "completion" else parse_chunk(data))


def _finish(assembler: ChatStreamAssembler) -> ModelResponse:
    if assembler.chunks == 0:
        raise BadAnswer("sent an empty stream (does the server support stream=true for chat completions?)")
    if assembler.finish_reason is None:
        raise BadAnswer("ended the stream before the answer was complete (no finish_reason)")
    return assembler.response()
