"""Which providers there are: each declared once, by dotted path, with its default model and key.

    PROVIDERS["anthropic"] = ProviderEntry("evo_agent.providers.anthropic_provider:AnthropicProvider",
                                           "claude-sonnet-4-5", "ANTHROPIC_API_KEY")

A provider's module is imported only when it is made (start-up: `-p` with Anthropic never
imports the OpenAI provider). Adding a provider: its module, one row here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from evo_agent.session import plain_dataclass as dataclass

from .base import Provider, ProviderError


@dataclass(frozen=True)
class ProviderEntry:
    path: str  # "package.module:Class", imported when the provider is made
    default_model: str
    key_env: str | None = None  # chosen automatically (in table order) when this variable is set


PROVIDERS: dict[str, ProviderEntry] = {
    "anthropic": ProviderEntry("evo_agent.providers.anthropic_provider:AnthropicProvider", "claude-sonnet-4-5",
                               "ANTHROPIC_API_KEY"),
    "openai": ProviderEntry("evo_agent.providers.openai_provider:OpenAIProvider", "gpt-4.1", "OPENAI_API_KEY"),
    "demo": ProviderEntry("evo_agent.providers.demo_provider:DemoProvider", "demo"),
}
FALLBACK = "demo"  # what runs when nothing was chosen and no key is set

DEFAULT_MODELS: dict[str, str] = {name: entry.default_model for name, entry in PROVIDERS.items()}
_KEYS = [entry.key_env for entry in PROVIDERS.values() if entry.key_env]
DEMO_NOTICE = f"evo-agent: no {' or '.join(_KEYS)} set: offline demo provider"  # fits 80 columns


def provider_names() -> list[str]:
    return list(PROVIDERS)


def default_model(name: str) -> str:
    return PROVIDERS[name].default_model


def _check_name(name: str) -> str:
    clean = name.strip().lower()
    if clean not in PROVIDERS:
        names = provider_names()
        choices = ", ".join(names[:-1]) + " or " + names[-1]
        raise ProviderError(f"unknown provider {name.strip()!r} (choose {choices})")
    return clean


def choose_provider_name(explicit: str | None, env: Mapping[str, str]) -> tuple[str, str | None]:
    """(provider name, notice or None): --provider, else EVO_AGENT_PROVIDER, else by API key, else demo."""
    if explicit and explicit.strip():
        return _check_name(explicit), None
    from_env = env.get("EVO_AGENT_PROVIDER", "")
    if from_env and from_env.strip():
        return _check_name(from_env), None
    for name, entry in PROVIDERS.items():
        if entry.key_env and (env.get(entry.key_env) or "").strip():
            return name, None
    return FALLBACK, DEMO_NOTICE


def client_limits(env: Mapping[str, str]) -> dict[str, float | int]:
    """The model API client's bounds the user set: `timeout` (EVO_AGENT_API_TIMEOUT: the seconds the API may
    stay silent — for the answer's head, between streamed events — before the try is abandoned) and
    `max_retries` (EVO_AGENT_API_RETRIES: tries after the first). A value that is not one is a ProviderError
    naming the variable. Unset: the client's own (600 s, 4 retries). Only the user's environment sets them:
    a project's settings never set variables."""
    limits: dict[str, float | int] = {}
    raw = (env.get("EVO_AGENT_API_TIMEOUT") or "").strip()
    if raw:
        try:
            seconds = float(raw)
        except ValueError:
            seconds = 0.0
        if not 0 < seconds <= 86_400:  # NaN fails both
            raise ProviderError(f"EVO_AGENT_API_TIMEOUT must be a number of seconds above 0 (at most 86400), "
                                f"not {raw[:20]!r}")
        limits["timeout"] = seconds
    raw = (env.get("EVO_AGENT_API_RETRIES") or "").strip()
    if raw:
        if not (raw.isascii() and raw.isdigit() and int(raw) <= 20):
            raise ProviderError(f"EVO_AGENT_API_RETRIES must be a whole number from 0 to 20, not {raw[:20]!r}")
        limits["max_retries"] = int(raw)
    return limits


def make_provider(name: str, model: str | None = None) -> Provider:
    """A ready provider; `model` None or empty means the provider's default model. The API providers take
    the bounds of `client_limits` from the environment."""
    name = _check_name(name)
    entry = PROVIDERS[name]
    module_name, _, class_name = entry.path.partition(":")
    __import__(module_name)  # importlib.import_module without importing importlib (issue #30)
    provider_class = getattr(sys.modules[module_name], class_name)
    limits = client_limits(os.environ) if entry.key_env else {}
    provider: Provider = provider_class(model.strip() if model and model.strip() else entry.default_model, **limits)
    return provider
