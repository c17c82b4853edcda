"""Which providers there are: each declared once, by dotted path, with its default model and key.

    PROVIDERS["anthropic"] = ProviderEntry("evo_agent.providers.anthropic_provider:AnthropicProvider",
                                           "claude-sonnet-4-5", "ANTHROPIC_API_KEY")

A provider's module is imported only when it is made (start-up: `-p` with Anthropic never
imports the OpenAI provider). Adding a provider: its module, one row here.
"""

from __future__ import annotations

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


def make_provider(name: str, model: str | None = None) -> Provider:
    """A ready provider; `model` None or empty means the provider's default model."""
    name = _check_name(name)
    entry = PROVIDERS[name]
    module_name, _, class_name = entry.path.partition(":")
    __import__(module_name)  # importlib.import_module without importing importlib (issue #30)
    provider_class = getattr(sys.modules[module_name], class_name)
    provider: Provider = provider_class(model.strip() if model and model.strip() else entry.default_model)
    return provider
