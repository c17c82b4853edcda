"""The agent's own secrets are masked in every spelling a tool can cheaply produce (issue #26)."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evo_agent.session import add_secret_value
from evo_agent.session.redact import redact_text, secret_env_values, secret_forms, use_environment

KEY = "sk-own-4f9a1c7e2d8b6a30"


@pytest.fixture
def own_key():
    use_environment({"OPENAI_API_KEY": KEY})
    yield KEY
    use_environment(None)


def test_exact_reversed_and_base64_forms_are_masked(own_key):
    for form in (own_key, own_key[::-1], base64.b64encode(own_key.encode()).decode(),
                 base64.urlsafe_b64encode(own_key.encode()).decode()):
        masked = redact_text(f"look: {form} end")
        assert form not in masked and "[REDACTED:" in masked, form


@settings(max_examples=200, deadline=None)
@given(prefix=st.binary(max_size=7), suffix=st.binary(max_size=7))
def test_the_key_inside_a_longer_base64_text_is_masked_at_every_alignment(prefix, suffix):
    use_environment({"OPENAI_API_KEY": KEY})
    try:
        encoded = base64.b64encode(prefix + KEY.encode() + suffix).decode()
        masked = redact_text(encoded)
        assert masked != encoded
        assert not any(form in masked for form in secret_forms(KEY)[2:])
    finally:
        use_environment(None)


def test_a_urls_password_is_a_secret_on_its_own():
    values = secret_env_values({"EVO_AGENT_SYNC_URL": "postgresql://team:S3cret-pass@db.example/x"})
    assert "S3cret-pass" in values
    use_environment({"EVO_AGENT_SYNC_URL": "postgresql://team:S3cret-pass@db.example/x"})
    try:
        assert "S3cret-pass" not in redact_text("password is S3cret-pass, reversed ssap-terc3S")
        assert "ssap-terc3S" not in redact_text("reversed ssap-terc3S")
    finally:
        use_environment(None)


def test_a_secret_added_later_is_masked_from_then_on():
    value = "cfg-file-password-91d"
    assert value in redact_text(f"x {value}")
    add_secret_value(value, "EVO_AGENT_SYNC_URL")
    try:
        assert value not in redact_text(f"x {value}") and value[::-1] not in redact_text(f"x {value[::-1]}")
    finally:
        from evo_agent.session import redact

        redact._added_values.pop(value, None)
        redact._start_values.pop(value, None)
        use_environment(None)


def test_the_team_stores_password_from_the_config_file_is_masked(tmp_path):
    from evo_agent.sync.config import configured_url

    value = "toml-pass-55e1a"
    config = tmp_path / "evo-agent" / "config.toml"
    config.parent.mkdir()
    config.write_text(f'sync_url = "postgresql://team:{value}@127.0.0.1/db"\n')
    try:
        assert configured_url({"XDG_CONFIG_HOME": str(tmp_path)}).endswith("/db")
        assert value not in redact_text(f"x {value}") and value[::-1] not in redact_text(f"x {value[::-1]}")
    finally:
        from evo_agent.session import redact

        redact._added_values.pop(value, None)
        redact._start_values.pop(value, None)
        use_environment(None)
