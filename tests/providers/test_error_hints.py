"""Every failure a user can fix is one line that says what to do (issue #18 item 7), from both providers."""

from __future__ import annotations

import socket

import pytest

from evo_agent.providers import ProviderError
from evo_agent.providers.anthropic_provider import MAX_REQUEST_BYTES, AnthropicProvider
from evo_agent.providers.openai_provider import OpenAIProvider
from tests import fake_model_server as anthropic_api
from tests import fake_openai_server as openai_api
from tests.scripted_provider import sink

HELLO = [{"role": "user", "content": "hello"}]


@pytest.fixture(autouse=True)
def _no_real_credentials(monkeypatch):
    for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(key, raising=False)


def anthropic_failure(server, item) -> str:
    server.script(item)
    with pytest.raises(ProviderError) as info:
        AnthropicProvider("claude-x", api_key="k", base_url=server.base_url, max_retries=1).complete(
            system="", messages=HELLO, tools=[])
    return str(info.value)


def openai_failure(server, item) -> str:
    server.script(item)
    with pytest.raises(ProviderError) as info:
        OpenAIProvider("gpt-x", api_key="k", base_url=server.base_url, max_retries=1).complete(
            system="", messages=HELLO, tools=[])
    return str(info.value)


@pytest.mark.parametrize("status,kind,message,hint", [
    (401, "authentication_error", "invalid x-api-key", "; check ANTHROPIC_API_KEY"),
    (403, "permission_error", "not allowed", "; the key in ANTHROPIC_API_KEY may not use this model or API: check its permissions"),
    (404, "not_found_error", "model: claude-x", "; check the model name 'claude-x' (choose another with --model) and ANTHROPIC_BASE_URL"),
    (413, "request_too_large", "Request exceeds the maximum allowed number of bytes", "; the conversation is too long for the model: run /compact, or start a new session"),
    (400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", "; the conversation is too long for the model: run /compact, or start a new session"),
    (429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", "; rate limited (2 attempts): wait a minute and try again"),
    (529, "overloaded_error", "Overloaded", "; the API is overloaded (2 attempts): try again in a minute"),
])
def test_anthropic_errors_say_what_to_do(model_server, status, kind, message, hint):
    retried = status in (429, 529)
    if retried:
        model_server.script(anthropic_api.error(status, kind, message))
    line = anthropic_failure(model_server, anthropic_api.error(status, kind, message))
    assert line == f"Anthropic API error {status} ({kind}): {message}{hint}"


@pytest.mark.parametrize("status,kind,message,hint", [
    (401, "invalid_api_key", "Incorrect API key provided", "; check OPENAI_API_KEY"),
    (403, "permission_denied", "not allowed", "; the key in OPENAI_API_KEY may not use this model or API: check its permissions"),
    (404, "model_not_found", "The model `gpt-x` does not exist", "; check the model name 'gpt-x' (choose another with --model) and OPENAI_BASE_URL"),
    (400, "context_length_exceeded", "This model's maximum context length is 128000 tokens", "; the conversation is too long for the model: run /compact, or start a new session"),
    (429, "rate_limit_exceeded", "Rate limit reached", "; rate limited (2 attempts): wait a minute and try again"),
])
def test_openai_errors_say_what_to_do(openai_server, status, kind, message, hint):
    item = openai_api.error(status, message, code=kind)
    if status == 429:
        openai_server.script(openai_api.error(status, message, code=kind))
    line = openai_failure(openai_server, item)
    assert line == f"OpenAI-compatible API error {status} ({kind}) at {openai_server.base_url}: {message}{hint}"


def test_each_retry_is_a_notice_naming_the_wait_and_the_attempt(openai_server):
    openai_server.script(openai_api.error(503), openai_api.error(429), "fine")
    notices = []
    OpenAIProvider("m", api_key="k", base_url=openai_server.base_url).complete(
        system="", messages=HELLO, tools=[], callbacks=sink(retries=notices.append))
    assert notices == ["OpenAI-compatible API error 503, retrying in 10 ms, attempt 2 of 5",
                       "OpenAI-compatible API rate limit reached (429), retrying in 10 ms, attempt 3 of 5"]


def test_without_a_retry_after_header_the_wait_is_an_exponential_backoff(model_server):
    model_server.script(anthropic_api.error(529, retry_after_ms=None), "ok")
    notices = []
    AnthropicProvider("m", api_key="k", base_url=model_server.base_url).complete(
        system="", messages=HELLO, tools=[], callbacks=sink(retries=notices.append))
    (notice,) = notices
    waited = int(notice.split("retrying in ")[1].split(" ms")[0])
    assert 375 <= waited <= 500 and notice.endswith(", attempt 2 of 5")  # 0.5 s less up to 25% jitter


def test_retry_delays_honour_the_server_and_are_capped():
    from evo_agent.providers.http_client import MAX_BACKOFF, retry_delay

    assert retry_delay({"retry-after-ms": "1500"}, 2) == 1.5
    assert retry_delay({"retry-after": "4"}, 2) == 4.0
    assert retry_delay({"retry-after": "3600"}, 2) <= 0.5  # longer than a minute: backoff instead
    assert MAX_BACKOFF * 0.75 <= retry_delay({}, 12) <= MAX_BACKOFF


def test_tls_to_a_plain_http_server_is_one_line_naming_the_url(model_server):
    url = model_server.base_url.replace("http://", "https://")
    with pytest.raises(ProviderError) as info:
        AnthropicProvider("m", api_key="k", base_url=url, max_retries=0).complete(system="", messages=HELLO, tools=[])
    line = str(info.value)
    assert line.startswith(f"cannot connect securely to the Anthropic API at {url}: TLS handshake failed (")
    assert line.endswith("behind a TLS-inspecting proxy, set SSL_CERT_FILE to its CA bundle") and "\n" not in line


def test_an_unknown_host_names_the_url(openai_server, monkeypatch):
    url = "http://no-such-host.invalid:9/v1"
    real = socket.getaddrinfo

    def no_dns(host, *args, **kwargs):  # answer as a resolver would, without sending a query off the machine
        if host == "no-such-host.invalid":
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    with pytest.raises(ProviderError) as info:
        OpenAIProvider("m", api_key="k", base_url=url, max_retries=0).complete(system="", messages=HELLO, tools=[])
    assert str(info.value).startswith(f"cannot reach the OpenAI-compatible API at {url}: cannot resolve the host name")
    assert str(info.value).endswith("is the server running? (OPENAI_BASE_URL sets the URL)")


def test_a_request_over_the_size_limit_is_refused_before_it_is_sent(model_server):
    huge = [{"role": "user", "content": "z" * (MAX_REQUEST_BYTES + 1)}]
    with pytest.raises(ProviderError) as info:
        AnthropicProvider("m", api_key="k", base_url=model_server.base_url).complete(system="", messages=huge, tools=[])
    assert str(info.value).startswith("the request is 32.0 MB, over the Messages API's 32 MB limit; nothing was sent")
    assert model_server.requests == []
