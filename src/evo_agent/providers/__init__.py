"""Model providers and how one is chosen.

    name, notice = choose_provider_name(args.provider, os.environ)
    if notice:
        print(notice, file=sys.stderr)
    provider = make_provider(name, args.model or os.environ.get("EVO_AGENT_MODEL"))

The providers are declared in registry.py (dotted path, default model, key variable) and
imported lazily: the demo provider never pays for an HTTP client, `-p` with Anthropic never
imports the OpenAI provider.
"""

from __future__ import annotations

from .base import (
    ModelResponse,
    Provider,
    ProviderCancelled,
    ProviderError,
    Retrying,
    StreamCallbacks,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolNamed,
)
from .registry import (
    DEFAULT_MODELS,
    DEMO_NOTICE,
    PROVIDERS,
    choose_provider_name,
    client_limits,
    make_provider,
    provider_names,
)

__all__ = [
    "DEFAULT_MODELS",
    "DEMO_NOTICE",
    "PROVIDERS",
    "ModelResponse",
    "Provider",
    "ProviderCancelled",
    "ProviderError",
    "Retrying",
    "StreamCallbacks",
    "StreamEvent",
    "TextDelta",
    "ThinkingDelta",
    "ToolNamed",
    "choose_provider_name",
    "client_limits",
    "make_provider",
    "provider_names",
]
