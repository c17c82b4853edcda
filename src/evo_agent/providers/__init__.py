"""Model providers and how one is chosen.

    name, notice = choose_provider_name(args.provider, os.environ)
    if notice:
        print(notice, file=sys.stderr)
    provider = make_provider(name, args.model or os.environ.get("EVO_AGENT_MODEL"))

Provider modules are imported lazily: the demo provider never pays for importing an SDK.
"""

from __future__ import annotations

from collections.abc import Mapping

from .base import ModelResponse, Provider, ProviderCancelled, ProviderError, StreamCallbacks

DEFAULT_MODELS: dict[str, str] = {
    "anthropic": "claude-sonnet-4-5",
    "openai": "gpt-4.1",
    "demo": "demo",
}

# Automatic choice, in order: the first provider whose key is set in the environment.
_AUTO_BY_KEY: list[tuple[str, str]] = [("anthropic", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY")]

DEMO_NOTICE = "evo-agent: no ANTHROPIC_API_KEY or OPENAI_API_KEY set; using the offline demo provider"


def provider_names() -> list[str]:
    return list(DEFAULT_MODELS)


def _check_name(name: str) -> str:
    clean = name.strip().lower()
    if clean not in DEFAULT_MODELS:
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
    for name, key in _AUTO_BY_KEY:
        if (env.get(key) or "").strip():
            return name, None
    return "demo", DEMO_NOTICE


def make_provider(name: str, model: str | None = None) -> Provider:
    """A ready provider; `model` None or empty means the provider's default model."""
    name = _check_name(name)
    model = model.strip() if model and model.strip() else DEFAULT_MODELS[name]
    if name == "demo":
        from .demo_provider import DemoProvider

        return DemoProvider(model)
    if name == "anthropic":
        from .anthropic_provider import AnthropicProvider

        return AnthropicProvider(model)
    if name == "openai":
        from .openai_provider import OpenAIProvider

        return OpenAIProvider(model)
    raise ProviderError(f"provider {name!r} is not available in this version")  # pragma: no cover


__all__ = [
    "DEFAULT_MODELS",
    "DEMO_NOTICE",
    "ModelResponse",
    "Provider",
    "ProviderCancelled",
    "ProviderError",
    "StreamCallbacks",
    "choose_provider_name",
    "make_provider",
    "provider_names",
]
