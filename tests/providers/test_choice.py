"""Which provider runs, and with which model."""

from __future__ import annotations

import pytest

from evo_agent.providers import DEFAULT_MODELS, DEMO_NOTICE, ProviderError, choose_provider_name, make_provider
from evo_agent.providers.demo_provider import DemoProvider


@pytest.mark.parametrize(
    "explicit,env,expected",
    [
        ("demo", {"EVO_AGENT_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "k"}, ("demo", None)),
        (" Anthropic ", {}, ("anthropic", None)),
        (None, {"EVO_AGENT_PROVIDER": "demo", "ANTHROPIC_API_KEY": "k"}, ("demo", None)),
        (None, {"ANTHROPIC_API_KEY": "k"}, ("anthropic", None)),
        ("", {"EVO_AGENT_PROVIDER": "", "ANTHROPIC_API_KEY": "  "}, ("demo", DEMO_NOTICE)),
        (None, {}, ("demo", DEMO_NOTICE)),
        (None, {"OPENAI_API_KEY": "k"}, ("openai", None)),
        (None, {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}, ("anthropic", None)),
        (None, {"ANTHROPIC_API_KEY": " ", "OPENAI_API_KEY": "k"}, ("openai", None)),
    ],
)
def test_choose_provider_name(explicit, env, expected):
    assert choose_provider_name(explicit, env) == expected


def test_notice_is_one_line():
    assert DEMO_NOTICE == "evo-agent: no ANTHROPIC_API_KEY or OPENAI_API_KEY set: offline demo provider"
    assert len(DEMO_NOTICE) <= 80  # printed before the app starts: on an 80-column terminal, one line


@pytest.mark.parametrize("explicit,env", [("gpt", {}), (None, {"EVO_AGENT_PROVIDER": "nope"})])
def test_unknown_provider(explicit, env):
    with pytest.raises(ProviderError) as info:
        choose_provider_name(explicit, env)
    name = explicit or env["EVO_AGENT_PROVIDER"]
    assert str(info.value) == f"unknown provider '{name}' (choose anthropic, openai or demo)"
    with pytest.raises(ProviderError):
        make_provider(name, None)


def test_make_provider_defaults(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    ANTHROPIC_DEFAULT = DEFAULT_MODELS["anthropic"]  # noqa: N806
    demo = make_provider("demo", None)
    assert isinstance(demo, DemoProvider) and demo.model == "demo" and demo.name == "demo"
    anthropic = make_provider("anthropic", None)
    assert (anthropic.name, anthropic.model) == ("anthropic", ANTHROPIC_DEFAULT)
    assert make_provider("anthropic", "claude-opus-4-1").model == "claude-opus-4-1"
    assert make_provider("demo", "").model == "demo"


def test_the_help_text_names_every_provider():
    from evo_agent.cli.help_text import ENVIRONMENT
    from evo_agent.cli.main import PROVIDER_CHOICES
    from evo_agent.providers import provider_names

    names = provider_names()
    assert ", ".join(names[:-1]) + " or " + names[-1] == PROVIDER_CHOICES
    assert dict(ENVIRONMENT)["EVO_AGENT_PROVIDER"].startswith(PROVIDER_CHOICES + " ")


def test_every_registered_provider_is_made_with_its_declared_default_model(monkeypatch):
    from evo_agent.providers import PROVIDERS

    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    for name, entry in PROVIDERS.items():
        made = make_provider(name)
        assert (made.name, made.model) == (name, entry.default_model)
        assert f"{type(made).__module__}:{type(made).__name__}" == entry.path


@pytest.mark.parametrize("chosen,never", [("anthropic", "openai"), ("openai", "anthropic"), ("demo", "http_client")])
def test_making_a_provider_imports_only_its_own_modules(chosen, never):
    """The registry imports by dotted path, lazily: `-p` with Anthropic never loads the OpenAI code."""
    import subprocess
    import sys

    code = ("import sys; from evo_agent.providers import make_provider; make_provider(sys.argv[1]); "
            "print('\\n'.join(m for m in sys.modules if m.startswith('evo_agent.providers.')))")
    env = {"PATH": "/usr/bin:/bin", "ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}
    loaded = subprocess.run([sys.executable, "-c", code, chosen], capture_output=True, text=True, env=env,
                            timeout=60, check=True).stdout.split()
    assert any(chosen in m for m in loaded) and not [m for m in loaded if never in m]
