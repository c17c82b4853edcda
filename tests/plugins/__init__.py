"""Fixture modules, registered once by `pytest_plugins` in tests/conftest.py.

Tests use these fixtures by naming them as arguments; nothing imports them (an import would shadow
the registered fixture and redefine it, ruff's F811). Plain helpers live in importable modules:
`tests/builders.py` (projects, sessions, messages), `tests/cli_runner.py` (the CLI as a subprocess
and in-process), `tests/fake_model_server.py` / `tests/fake_openai_server.py` (the fake APIs),
`tests/scripted_provider.py` (an in-process provider).
"""
