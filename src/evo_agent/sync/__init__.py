"""evo_agent.sync — replicate sessions to a shared PostgreSQL store (SPEC §10, README "Team store").

The local JSONL stays the source of truth. With `EVO_AGENT_SYNC_URL` (or
`sync_url` in the user's config file) every session's complete lines are
copied, exactly once each, into PostgreSQL, where any clone of the same
repository can list, show and resume them.

Nothing here is imported unless sync is configured: `configured_url()` reads
the environment and one small TOML file; psycopg is imported only by `db.py`,
and only from the background thread or a `sessions … --remote` command.

Depends on evo_agent.session; the session library never imports this package.
"""

from .config import SyncConfigError, configured_url, redact_url

__all__ = ["SyncConfigError", "configured_url", "redact_url"]
