"""What a tool's process inherits: the user's environment minus the agent's own credentials.

A model that runs `printenv ANTHROPIC_API_KEY | sed 's/./& /g'` must find nothing: the keys
evo-agent reads are the agent's, not the tools'. Removed (README, "Permissions and safety"):
`ANTHROPIC_API_KEY`, `ANTHROPIC_AUTH_TOKEN`, `OPENAI_API_KEY`, `EVO_AGENT_SYNC_URL` (the team
store's connection string, which can hold a password), `PGPASSWORD`, and any `EVO_AGENT_*`
variable whose name says KEY, TOKEN, SECRET or PASSWORD.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from evo_agent.session import lazy_re

SECRET_VARS = frozenset({"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "EVO_AGENT_SYNC_URL",
                         "PGPASSWORD"})
_SECRET_NAME = lazy_re(r"\AEVO_AGENT_\w*(KEY|TOKEN|SECRET|PASSWORD)\w*\Z")


def is_secret_var(name: str) -> bool:
    return name in SECRET_VARS or bool(_SECRET_NAME.match(name))


def tool_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of `environ` (default: this process's) without the agent's credentials."""
    source = os.environ if environ is None else environ
    return {k: v for k, v in source.items() if not is_secret_var(k)}


__all__ = ["SECRET_VARS", "is_secret_var", "tool_environment"]
